// Resolution of --hw values to configuration files (hw_paths.h).
#include "sim/config/hw_paths.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "sim/ir/error.h"

namespace npusim::config {

namespace fs = std::filesystem;

namespace {

bool has_yaml_ext(const fs::path& p) { return p.extension() == ".yaml" || p.extension() == ".yml"; }

}  // namespace

std::vector<std::string> shipped_config_dirs() {
  std::vector<fs::path> candidates;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && !exe.empty()) candidates.push_back(exe.parent_path() / ".." / "share" / "npusim" / "configs");
#ifdef NPUSIM_SOURCE_DIR
  candidates.push_back(fs::path(NPUSIM_SOURCE_DIR) / "configs");
#endif
  candidates.push_back(fs::path("configs"));
  std::vector<std::string> dirs;
  for (const fs::path& d : candidates) {
    std::error_code e;
    if (!fs::is_directory(d, e)) continue;
    const std::string s = d.lexically_normal().string();
    if (std::find(dirs.begin(), dirs.end(), s) == dirs.end()) dirs.push_back(s);
  }
  return dirs;
}

std::vector<std::string> shipped_config_names() {
  std::set<std::string> names;
  for (const std::string& d : shipped_config_dirs()) {
    std::error_code ec;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code e;
      if (it->is_regular_file(e) && has_yaml_ext(it->path())) names.insert(it->path().stem().string());
    }
  }
  std::vector<std::string> r;
  if (names.erase("npu")) r.push_back("npu");  // the default first
  r.insert(r.end(), names.begin(), names.end());
  return r;
}

std::string resolve_hw(const std::string& value) {
  std::error_code ec;
  const fs::file_status st = fs::status(value, ec);
  if (fs::is_regular_file(st)) return value;
  if (fs::is_directory(st)) throw InputError(value, "", "cannot open: is a directory, expected a YAML hardware description");
  // A name of a shipped config: "npu", "npu.yaml", "configs/npu.yaml". A path into any other
  // folder is taken as the user meant it: a missing file.
  const fs::path p(value);
  const fs::path parent = p.parent_path().lexically_normal();
  const bool name_only = !value.empty() && (parent.empty() || parent == "configs" || parent == "configs/");
  if (name_only) {
    std::vector<std::string> files;
    const std::string f = p.filename().string();
    if (has_yaml_ext(p)) files = {f};
    else files = {f + ".yaml", f + ".yml"};
    for (const std::string& d : shipped_config_dirs())
      for (const std::string& file : files) {
        const fs::path c = fs::path(d) / file;
        std::error_code e;
        if (fs::is_regular_file(c, e)) return c.lexically_normal().string();
      }
  }
  std::string list;
  for (const std::string& n : shipped_config_names()) list += (list.empty() ? "" : ", ") + n;
  throw InputError(value, "", "cannot open: no such file, and not a shipped config; shipped: " +
                                  (list.empty() ? std::string("none found") : list));
}

}  // namespace npusim::config
