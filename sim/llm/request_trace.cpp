#include "sim/llm/request_trace.h"

#include <cctype>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "sim/ir/error.h"
#include "sim/ir/input_file.h"

namespace npusim::llm {

namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> f;
  std::string cur;
  for (char ch : line) {
    if (ch == ',') f.push_back(cur), cur.clear();
    else cur += ch;
  }
  f.push_back(cur);
  for (std::string& s : f) {  // surrounding spaces and quotes
    while (!s.empty() && (s.front() == ' ' || s.front() == '"')) s.erase(s.begin());
    while (!s.empty() && (s.back() == ' ' || s.back() == '"')) s.pop_back();
  }
  return f;
}

bool number(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return *end == '\0' && std::isfinite(v);
}

bool whole(const std::string& s, long long& v) {
  double d = 0;
  if (!number(s, d) || d != std::floor(d) || std::fabs(d) > 1e15) return false;
  v = static_cast<long long>(d);
  return true;
}

// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// "2023-11-16 18:15:46.6805900" (Azure's TIMESTAMP; a T between date and time, or no fraction,
// also) in seconds since 1970; false when it is not one.
bool azure_time(const std::string& s, double& seconds) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, n = 0;
  double sec = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%*[ T]%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6) return false;
  if (static_cast<size_t>(n) != s.size() || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || !(sec >= 0) ||
      sec >= 61)
    return false;
  seconds = static_cast<double>(days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) * 86400.0 +
            h * 3600.0 + mi * 60.0 + sec;
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

RequestTrace parse_request_trace(const std::string& text, const std::string& source, double scale) {
  if (!(scale > 0) || !std::isfinite(scale)) throw InputError(source, "--trace-scale", "must be a number > 0");
  RequestTrace r;
  std::istringstream f(text);
  std::string line;
  int n = 0;
  size_t columns = 0;
  int t_col = 0, in_col = 0, out_col = 0;
  double first = 0;
  auto where = [&] { return "line " + std::to_string(n); };
  while (std::getline(f, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    if (line.empty()) continue;
    const std::vector<std::string> fields = split_csv(line);
    if (r.format.empty()) {
      const std::string h = lower(line);
      if (h == "arrival_s,input_tokens,output_tokens") r.format = "npusim", t_col = 0, in_col = 1, out_col = 2;
      else if (h == "timestamp,contexttokens,generatedtokens") r.format = "azure", t_col = 0, in_col = 1, out_col = 2;
      else if (h == "timestamp,model,request tokens,response tokens,total tokens,log type")
        r.format = "burstgpt", t_col = 0, in_col = 2, out_col = 3;
      else
        throw InputError(source, "line " + std::to_string(n),
                         "not a request trace header: expected arrival_s,input_tokens,output_tokens (npusim), "
                         "TIMESTAMP,ContextTokens,GeneratedTokens (Azure LLM inference 2023/2024) or "
                         "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type (BurstGPT), got '" +
                             line.substr(0, 80) + "'");
      columns = fields.size();
      continue;
    }
    if (fields.size() != columns)
      throw InputError(source, where(), "expected " + std::to_string(columns) + " comma-separated values, got " +
                                            std::to_string(fields.size()));
    double t = 0;
    long long in = 0, out = 0;
    const bool time_ok = r.format == "azure" ? azure_time(fields[t_col], t) : number(fields[t_col], t);
    if (!time_ok || !whole(fields[in_col], in) || !whole(fields[out_col], out))
      throw InputError(source, where(), std::string(r.format == "azure" ? "expected a date and time (YYYY-MM-DD HH:MM:SS[.f]) and two "
                                                                          "token counts"
                                                                        : "not numbers") +
                                            ": '" + line.substr(0, 80) + "'");
    if (r.format != "npusim" && out == 0) {  // a request that produced nothing (failed): not served
      ++r.skipped;
      continue;
    }
    if (r.format != "npusim") {  // arrivals from the first request served
      if (r.requests.empty()) first = t;
      t -= first;
    }
    const double ns = t * 1e9 / scale;
    if (!r.requests.empty() && ns < r.requests.back().arrival_ns) throw InputError(source, where(), "arrivals must not go back in time");
    if (!(t >= 0) || t > 1e9 || in < 1 || out < 1 || in + out > (1 << 20))
      throw InputError(source, where(), "arrival must be in [0, 1e9] s from the first, input and output tokens at least 1 and "
                                        "together at most 2^20");
    if (r.requests.size() >= 1000000) throw InputError(source, where(), "more than 10^6 requests");
    r.requests.push_back({ns, in, out});
  }
  if (r.format.empty()) throw InputError(source, "", "empty: no header and no requests");
  if (r.requests.empty()) throw InputError(source, "", "no requests");
  return r;
}

RequestTrace read_request_trace(const std::string& path, double scale) {
  return parse_request_trace(read_input_file(path, "a request trace (CSV)", uint64_t{256} << 20), path, scale);
}

}  // namespace npusim::llm
