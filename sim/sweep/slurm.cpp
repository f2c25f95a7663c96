#include "sim/sweep/slurm.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "sim/config/hw_config.h"
#include "sim/ir/error.h"
#include "sim/sweep/points.h"
#include "sim/sweep/results.h"
#include "sim/sweep/sweep_dir.h"

namespace npusim::sweep {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "npusim-slurm/1";
constexpr int kDefaultArraySize = 16;

struct Job {
  std::string id;
  std::vector<int> shards;
};

struct Record {
  std::string fingerprint;
  int shards = 0, points = 0;
  std::vector<std::string> workloads;
  nlohmann::ordered_json spec;
  std::vector<Job> jobs;
};

std::string record_path(const std::string& dir) { return dir + "/submit.json"; }

std::optional<Record> read_record(const std::string& dir) {
  const std::string path = record_path(dir);
  if (!path_exists(path)) return std::nullopt;
  Record r;
  try {
    const Row j = Row::parse(read_file(path));
    if (j.value("format", "") != kFormat) throw InputError(path, "format", "not an npusim submit record");
    r.fingerprint = j.at("fingerprint").get<std::string>();
    r.shards = j.at("shards").get<int>();
    r.points = j.at("points").get<int>();
    r.workloads = j.at("workloads").get<std::vector<std::string>>();
    r.spec = j.at("spec");
    for (const auto& x : j.at("jobs")) r.jobs.push_back({x.at("id").get<std::string>(), x.at("shards").get<std::vector<int>>()});
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, "", std::string("damaged submit record: ") + e.what());
  }
  if (r.shards < 1) throw InputError(path, "shards", "must be at least 1");
  return r;
}

void write_record(const std::string& dir, const Record& r) {
  Row j;
  j["format"] = kFormat;
  j["fingerprint"] = r.fingerprint;
  j["shards"] = r.shards;
  j["points"] = r.points;
  j["workloads"] = r.workloads;
  j["spec"] = r.spec;
  j["jobs"] = Row::array();
  for (const auto& x : r.jobs) j["jobs"].push_back({{"id", x.id}, {"shards", x.shards}});
  write_file_atomic(record_path(dir), j.dump(2) + "\n");
}

std::string shard_dir(const std::string& dir, int i) { return dir + "/shard_" + std::to_string(i); }

// Runs of shard i of n: its points times the workloads.
int expected_rows(int points, size_t workloads, int i, int n) {
  const int pts = i < points ? (points - i + n - 1) / n : 0;
  return pts * static_cast<int>(workloads);
}

std::string quote(const std::string& s) {  // for the shell
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool on_path(const std::string& prog) {
  if (prog.find('/') != std::string::npos) return ::access(prog.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(ss, d, ':');)
    if (!d.empty() && ::access((d + "/" + prog).c_str(), X_OK) == 0) return true;
  return false;
}

// stdout of a shell command and its exit status (stderr passes through unless redirected).
std::pair<int, std::string> capture(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {-1, out};
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// "0-3,5,7-8"
std::string ranges(const std::vector<int>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size();) {
    size_t j = i;
    while (j + 1 < xs.size() && xs[j + 1] == xs[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(xs[i]) + (j > i ? "-" + std::to_string(xs[j]) : "");
    i = j + 1;
  }
  return s;
}

// Array tasks of the recorded jobs still in Slurm's queue: shard -> (state, "job_task").
std::map<int, std::pair<std::string, std::string>> queued_tasks(const Record& r) {
  std::map<int, std::pair<std::string, std::string>> q;
  if (r.jobs.empty() || !on_path("squeue")) return q;
  std::string ids;
  for (const auto& j : r.jobs) ids += (ids.empty() ? "" : ",") + j.id;
  // Bounded: squeue retries for a minute when SLURM_CONF names a missing file.
  const std::string limit = on_path("timeout") ? "timeout 20 " : "";
  const auto [rc, text] = capture(limit + "squeue -h -r -o '%i %T' -j " + quote(ids) + " 2>/dev/null");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string id, state;
    if (!(ls >> id >> state)) continue;
    const auto us = id.find('_');
    if (us == std::string::npos) continue;
    const std::string job = id.substr(0, us), task = id.substr(us + 1);
    if (task.empty() || !std::all_of(task.begin(), task.end(), ::isdigit)) continue;
    if (std::none_of(r.jobs.begin(), r.jobs.end(), [&](const Job& j) { return j.id == job; })) continue;
    std::string s = state;
    std::transform(s.begin(), s.end(), s.begin(), ::tolower);
    q[std::stoi(task)] = {s, id};
  }
  return q;
}

struct ShardProgress {
  bool started = false;  // has a manifest
  int done = 0, failed = 0, expected = 0;
};

ShardProgress progress_of(const std::string& dir, int expected) {
  ShardProgress p;
  p.expected = expected;
  p.started = path_exists(dir + "/manifest.json");
  for (const auto& e : Journal::index(dir + "/journal.jsonl", 0, false)) {
    ++p.done;
    p.failed += e.status != "ok";
  }
  return p;
}

std::string script_text(const SweepSpec& spec, const SubmitOptions& o, const std::string& out_dir, int n,
                        const std::string& sim) {
  std::string name = spec.source == "--set" ? "sweep" : fs::path(spec.source).stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Written by `sim sweep submit --slurm` (docs/sweeps.md#slurm). Array task i runs shard i of " << n << "\n"
    << "# of the sweep " << spec.source << " into shard_<i>/; a task that runs again resumes its shard.\n"
    << "# Submit again with the same command to rerun only unfinished shards; follow with\n"
    << "# `sim sweep status " << out_dir << "`, join with `sim sweep merge " << out_dir << " -o MERGED`.\n"
    << "#SBATCH --job-name=npusim-" << name << "\n"
    << "#SBATCH --array=0-" << n - 1 << "\n"
    << "#SBATCH --cpus-per-task=" << o.cpus_per_task << "\n"
    << "#SBATCH --output=" << out_dir << "/logs/shard_%a.job_%A.out\n";
  if (!o.partition.empty()) s << "#SBATCH --partition=" << o.partition << "\n";
  if (!o.time_limit.empty()) s << "#SBATCH --time=" << o.time_limit << "\n";
  s << "export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1\n"
    << "exec " << quote(sim) << " sweep --resume -o " << quote(out_dir) << "/shard_\"$SLURM_ARRAY_TASK_ID\" --shard \"$SLURM_ARRAY_TASK_ID/"
    << n << "\" -j \"${SLURM_CPUS_PER_TASK:-" << o.cpus_per_task << "}\"";
  if (o.timeout_s > 0) s << " --timeout " << o.timeout_s;
  s << "\n";
  return s.str();
}

}  // namespace

std::vector<std::string> submitted_shard_dirs(const std::string& dir) {
  const auto r = read_record(dir);
  std::vector<std::string> dirs;
  if (r)
    for (int i = 0; i < r->shards; ++i) dirs.push_back(shard_dir(dir, i));
  return dirs;
}

int submit_sweep(const SweepSpec* given, const SubmitOptions& o, std::ostream& out, std::ostream& log) {
  if (o.out_dir.empty()) throw InputError("--out", "", "name the output directory of the submitted sweep");
  if (o.array_size < 0) throw InputError("--array-size", std::to_string(o.array_size), "must be at least 1");
  if (o.cpus_per_task < 1) throw InputError("--cpus-per-task", std::to_string(o.cpus_per_task), "must be at least 1");
  const std::string dir = fs::absolute(o.out_dir).lexically_normal().string();
  if (path_exists(dir + "/manifest.json"))
    throw InputError(dir, "", "holds a sweep run without --slurm: choose another --out");
  const std::optional<Record> old = read_record(dir);
  SweepSpec spec;
  if (given) spec = *given;
  else if (old) spec = spec_from_json(old->spec, record_path(dir));
  else throw InputError(dir, "", "nothing was submitted here: give the sweep file");

  const SweepBase base = resolve_base(spec);
  const Expansion& ex = base.expansion;
  if (ex.points.empty()) throw InputError(spec.source, "constraints", "no point left to run");
  const std::string& fp = base.fingerprint;
  const int points = static_cast<int>(ex.points.size());
  int n = 0;
  if (old) {
    if (old->fingerprint != fp)
      throw InputError(record_path(dir), "", "holds a different sweep (another sweep file, base config or workload): choose another --out");
    if (o.array_size > 0 && o.array_size != old->shards)
      throw InputError("--array-size", std::to_string(o.array_size),
                       dir + " was submitted as " + std::to_string(old->shards) + " array tasks: submit again with that --array-size, or none");
    n = old->shards;
  } else {
    n = std::min(o.array_size > 0 ? o.array_size : kDefaultArraySize, points);
  }

  std::error_code ec;
  fs::create_directories(dir + "/logs", ec);
  if (ec) throw InputError(dir, "", "cannot create the output directory: " + ec.message());
  // Every shard directory gets its manifest now: a task needs nothing but its directory.
  std::vector<std::string> names;
  for (const auto& w : spec.workloads) names.push_back(w.name);
  for (int i = 0; i < n; ++i) {
    const std::string sd = shard_dir(dir, i);
    if (path_exists(sd + "/manifest.json")) {
      const Manifest m = read_manifest(sd);
      if (m.fingerprint != fp || m.shard.index != i || m.shard.count != n)
        throw InputError(sd, "", "holds another sweep or shard than " + Shard{i, n}.text() + " of this one");
      continue;
    }
    fs::create_directories(sd, ec);
    if (ec) throw InputError(sd, "", "cannot create the shard directory: " + ec.message());
    write_manifest(sd, make_manifest(spec, fp, Shard{i, n}, ex));
  }
  Record rec;
  if (old) rec = *old;
  rec.fingerprint = fp;
  rec.shards = n;
  rec.points = points;
  rec.workloads = names;
  rec.spec = spec_to_json(spec);
  write_record(dir, rec);  // the directory is prepared (also for --dry-run)

  std::string sim = o.sim_path;
  if (sim.empty()) {
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    sim = ec ? "sim" : self.string();
  }
  const std::string script = dir + "/sweep.sbatch";
  write_file_atomic(script, script_text(spec, o, dir, n, sim));
  ::chmod(script.c_str(), 0755);

  // Shards to (re)submit: neither complete nor still in the queue.
  const auto queued = queued_tasks(rec);
  std::vector<int> todo;
  int complete = 0, active = 0;
  for (int i = 0; i < n; ++i) {
    const ShardProgress p = progress_of(shard_dir(dir, i), expected_rows(points, names.size(), i, n));
    if (p.done >= p.expected) ++complete;
    else if (queued.count(i)) ++active;
    else todo.push_back(i);
  }
  log << "submit: " << points << " points x " << names.size() << " workload(s) in " << n << " shard(s)";
  if (complete || active) log << "; " << complete << " complete, " << active << " queued or running";
  log << "\n";
  if (todo.empty()) {
    log << "submit: nothing to submit; follow with: sim sweep status " << dir << "\n";
    return 0;
  }
  std::string cmd = std::string(on_path("timeout") ? "timeout 300 " : "") + "sbatch --parsable --array=" + ranges(todo);
  for (const auto& a : o.sbatch_args) cmd += " " + quote(a);
  cmd += " " + quote(script);
  if (o.dry_run) {
    out << cmd << "\n";
    log << "submit: dry run: " << script << " written, nothing submitted\n";
    return 0;
  }
  if (!on_path("sbatch"))
    throw InputError("--slurm", "", "sbatch not found: submit from a Slurm login node (the job script is written: " + script + ")");
  const auto [rc, text] = capture(cmd);
  std::string id = text.substr(0, text.find_first_of(";\n"));
  id.erase(0, id.find_first_not_of(" \t"));
  if (rc != 0 || id.empty() || !std::all_of(id.begin(), id.end(), ::isdigit))
    throw InputError("sbatch", "", "submitting " + script + " failed (exit " + std::to_string(rc) + ")" +
                                       (text.empty() ? "" : ": " + text));
  rec.jobs.push_back({id, todo});
  write_record(dir, rec);
  out << id << "\n";
  log << "submit: shard(s) " << ranges(todo) << " of " << n << " submitted as job " << id << " (" << script
      << "); follow with: sim sweep status " << dir << "\n";
  return 0;
}

int sweep_status(const std::string& dir, std::ostream& out) {
  const std::optional<Record> rec = read_record(dir);
  struct Line {
    int shard;
    std::string dir;
    ShardProgress p;
    std::string state;
  };
  std::vector<Line> lines;
  int n = 1, points = 0;
  size_t workloads = 0;
  std::map<int, std::pair<std::string, std::string>> queued;
  if (rec) {
    n = rec->shards;
    points = rec->points;
    workloads = rec->workloads.size();
    queued = queued_tasks(*rec);
    for (int i = 0; i < n; ++i) lines.push_back({i, shard_dir(dir, i), {}, ""});
  } else {
    if (!path_exists(dir + "/manifest.json"))
      throw InputError(dir, "", "not a sweep output directory (no manifest.json, no submit.json)");
    const Manifest m = read_manifest(dir);
    n = m.shard.count;
    points = m.points;
    workloads = m.workloads.size();
    lines.push_back({m.shard.index, dir, {}, ""});
  }
  int all_done = 0, all_expected = 0, all_failed = 0;
  bool complete = true;
  for (auto& l : lines) {
    l.p = progress_of(l.dir, expected_rows(points, workloads, l.shard, n));
    all_done += l.p.done;
    all_expected += l.p.expected;
    all_failed += l.p.failed;
    const auto q = queued.find(l.shard);
    if (l.p.done >= l.p.expected) {
      l.state = "done";
    } else {
      complete = false;
      if (q != queued.end())
        l.state = (q->second.first == "pending" ? std::string("queued") : q->second.first) + " (job " + q->second.second + ")";
      else if (!l.p.started || (l.p.done == 0 && !path_exists(l.dir + "/journal.jsonl")))
        l.state = "not started";
      else
        l.state = "incomplete: submit again to finish it";
    }
    if (q != queued.end() && l.state == "done") l.state += " (job " + q->second.second + " " + q->second.first + ")";
  }
  out << "sweep " << dir << ": " << points << " point(s) x " << workloads << " workload(s)";
  if (rec) {
    out << ", " << n << " shard(s)";
    if (!rec->jobs.empty()) {
      out << ", job(s)";
      for (const auto& j : rec->jobs) out << " " << j.id;
    }
  } else if (n > 1) {
    out << ", shard " << lines[0].shard << "/" << n;
  }
  out << "\n";
  out << std::setw(6) << "shard" << std::setw(12) << "done" << std::setw(8) << "failed" << "  state\n";
  for (const auto& l : lines)
    out << std::setw(6) << l.shard << std::setw(12) << (std::to_string(l.p.done) + "/" + std::to_string(l.p.expected))
        << std::setw(8) << l.p.failed << "  " << l.state << "\n";
  if (lines.size() > 1)
    out << std::setw(6) << "all" << std::setw(12) << (std::to_string(all_done) + "/" + std::to_string(all_expected))
        << std::setw(8) << all_failed << "  " << (complete ? "complete: sim sweep merge " + dir + " -o MERGED" : "") << "\n";
  return complete ? 0 : 1;
}

}  // namespace npusim::sweep
