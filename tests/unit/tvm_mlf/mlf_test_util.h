// Shared by the TVM Model Library Format tests: the committed archives of
// tests/data/tvm_mlf (made by scripts/make_mlf.py), a scratch folder per test, and tar
// writing with libarchive (the plain .tar forms and the malformed archives are made here, so
// that no test needs Python).
#pragma once
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontends/json_util.h"
#include "tests/unit/expect_input_error.h"

namespace npusim::test {

namespace fs = std::filesystem;

inline std::string mlf_data(const std::string& rel) {
  return std::string(NPUSIM_SOURCE_DIR) + "/tests/data/tvm_mlf/" + rel;
}

inline std::string tvm_example() {
  return std::string(NPUSIM_SOURCE_DIR) + "/../shared/examples/tvm/graph_executor_test.graph.json";
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const std::string& path, const std::string& data) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// A fresh folder for one test, removed at the end.
class Scratch {
 public:
  Scratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::path(::testing::TempDir()) / ("npusim_tvm_" + std::string(info->test_suite_name()) + "_" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  std::string path(const std::string& rel) const { return (m_dir / rel).string(); }
  // A copy of a committed archive directory ("v5") under `name`.
  std::string copy_data_dir(const std::string& version, const std::string& name) const {
    const fs::path dst = m_dir / name;
    fs::copy(mlf_data(version), dst, fs::copy_options::recursive);
    return dst.string();
  }

 private:
  fs::path m_dir;
};

struct TarMember {
  enum Kind { File, Dir, Symlink, Hardlink };
  TarMember(std::string n, std::string d, Kind k = File, std::string l = "")
      : name(std::move(n)), data(std::move(d)), kind(k), link(std::move(l)) {}
  std::string name;
  std::string data;
  Kind kind = File;
  std::string link;  // Symlink / Hardlink target
};

// Writes a ustar archive (gzip-compressed if asked), members as given (names unchecked).
inline void write_tar(const std::string& path, const std::vector<TarMember>& members, bool gzip) {
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (gzip) archive_write_add_filter_gzip(a);
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK) << archive_error_string(a);
  for (const TarMember& m : members) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, m.name.c_str());
    archive_entry_set_mtime(e, 1655467200, 0);
    switch (m.kind) {
      case TarMember::File:
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, static_cast<la_int64_t>(m.data.size()));
        break;
      case TarMember::Dir:
        archive_entry_set_filetype(e, AE_IFDIR);
        archive_entry_set_perm(e, 0755);
        break;
      case TarMember::Symlink:
        archive_entry_set_filetype(e, AE_IFLNK);
        archive_entry_set_perm(e, 0777);
        archive_entry_set_symlink(e, m.link.c_str());
        break;
      case TarMember::Hardlink:
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_hardlink(e, m.link.c_str());
        archive_entry_set_size(e, 0);
        break;
    }
    ASSERT_EQ(archive_write_header(a, e), ARCHIVE_OK) << m.name << ": " << archive_error_string(a);
    if (m.kind == TarMember::File && !m.data.empty()) {
      ASSERT_EQ(archive_write_data(a, m.data.data(), m.data.size()), static_cast<la_ssize_t>(m.data.size()));
    }
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
}

// The members of a directory as TVM's exporter writes them: "./", "./codegen/", ...
inline std::vector<TarMember> dir_members(const std::string& dir) {
  std::vector<fs::path> paths;
  for (const auto& e : fs::recursive_directory_iterator(dir)) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  std::vector<TarMember> ms{TarMember("./", "", TarMember::Dir)};
  for (const fs::path& p : paths) {
    const std::string rel = "./" + p.lexically_relative(dir).generic_string();
    if (fs::is_directory(p)) {
      ms.emplace_back(rel + "/", "", TarMember::Dir);
    } else {
      ms.emplace_back(rel, slurp(p.string()));
    }
  }
  return ms;
}

inline void pack_dir(const std::string& dir, const std::string& tar, bool gzip) {
  write_tar(tar, dir_members(dir), gzip);
}

// Parses a JSON file of a copied archive, lets `edit` change it, writes it back.
template <typename F>
void edit_json(const std::string& path, F edit) {
  json::Json doc = json::read_json_file(path);
  edit(doc);
  spit(path, doc.dump(1));
}

}  // namespace npusim::test
