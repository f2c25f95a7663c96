// Model Library Format members from a directory or a tar archive (mlf_archive.h).
#include "frontends/tvm_mlf/mlf_archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

namespace npusim::frontends::tvm {

namespace fs = std::filesystem;

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& x) {
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

bool is_graph_member(const std::string& m) {
  return starts_with(m, "executor-config/graph/") && (ends_with(m, ".json") || ends_with(m, ".graph"));
}
bool is_text_member(const std::string& m) { return m == "metadata.json" || is_graph_member(m); }
bool is_params_member(const std::string& m) { return starts_with(m, "parameters/") && ends_with(m, ".params"); }

std::string size_str(uint64_t n) { return std::to_string(n) + " bytes"; }

void check_text_size(const std::string& path, const std::string& member, uint64_t size) {
  if (size > kMaxJsonMemberBytes)
    throw InputError(path, member, "is " + size_str(size) + "; npusim reads JSON members up to 512 MiB");
}

// ---- libarchive ----

struct ArchiveDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveDeleter>;

ArchivePtr new_reader() {
  ArchivePtr a(archive_read_new());
  if (!a) throw InternalError("archive_read_new failed");
  archive_read_support_filter_gzip(a.get());
  archive_read_support_filter_bzip2(a.get());
  archive_read_support_filter_xz(a.get());
  archive_read_support_format_tar(a.get());
  return a;
}

std::string archive_error(archive* a) {
  const char* e = archive_error_string(a);
  return e ? e : "unknown libarchive error";
}

// The data of the current entry.
class EntryStream : public ByteStream {
 public:
  EntryStream(archive* a, std::string path, std::string member)
      : m_a(a), m_path(std::move(path)), m_member(std::move(member)) {}
  size_t read(char* dst, size_t n) override {
    const la_ssize_t k = archive_read_data(m_a, dst, n);
    if (k < 0) {
      m_failed = true;
      throw InputError(m_path, m_member, "cannot read the member: " + archive_error(m_a));
    }
    return static_cast<size_t>(k);
  }
  bool failed() const { return m_failed; }

 private:
  archive* m_a;
  std::string m_path, m_member;
  bool m_failed = false;
};

class FileStream : public ByteStream {
 public:
  FileStream(std::ifstream& in) : m_in(in) {}
  size_t read(char* dst, size_t n) override {
    m_in.read(dst, static_cast<std::streamsize>(n));
    return static_cast<size_t>(m_in.gcount());
  }
  uint64_t skip(uint64_t n) override {
    const auto here = m_in.tellg();
    m_in.seekg(0, std::ios::end);
    const auto end = m_in.tellg();
    const uint64_t can = end > here ? static_cast<uint64_t>(end - here) : 0;
    const uint64_t k = std::min(n, can);
    m_in.seekg(here + static_cast<std::streamoff>(k));
    return k;
  }

 private:
  std::ifstream& m_in;
};

std::string read_entry_text(archive* a, const std::string& path, const std::string& member, uint64_t size) {
  check_text_size(path, member, size);
  std::string s(static_cast<size_t>(size), '\0');
  EntryStream in(a, path, member);
  size_t got = 0;
  while (got < s.size()) {
    const size_t k = in.read(s.data() + got, s.size() - got);
    if (k == 0) throw InputError(path, member, "truncated: the archive says " + size_str(size) + ", found " + size_str(got));
    got += k;
  }
  return s;
}

// Each regular member once, with the name normalised; links and special files refused.
void add_member(MlfContents& c, const std::string& member) {
  for (const std::string& m : c.members)
    if (m == member) throw InputError(c.path, member, "appears twice in the archive");
  c.members.push_back(member);
}

ParamsMember parse_params_member(ByteStream& in, uint64_t size, const std::string& path, const std::string& member,
                                 const EntryStream* entry) {
  ParamsMember pm;
  try {
    pm.params = parse_params(in, size, path, member + ": ");
  } catch (const InputError& e) {
    if (entry && entry->failed()) throw;  // the archive itself is broken
    pm.error = e;
  }
  return pm;
}

MlfContents read_archive(const std::string& path, bool metadata_only) {
  MlfContents c;
  c.path = path;
  ArchivePtr a = new_reader();
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK)
    throw InputError(path, "", "cannot open the archive: " + archive_error(a.get()));
  std::string last;
  for (;;) {
    archive_entry* e = nullptr;
    const int r = archive_read_next_header(a.get(), &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN)
      throw InputError(path, last.empty() ? "" : "after member " + last,
                       "cannot read the archive: " + archive_error(a.get()));
    const char* raw_c = archive_entry_pathname(e);
    if (!raw_c) raw_c = archive_entry_pathname_utf8(e);
    const std::string raw = raw_c ? raw_c : "";
    const std::string member = normalise_member(path, raw);
    last = raw;
    if (const char* target = archive_entry_hardlink(e))
      throw InputError(path, raw, std::string("is a hard link to '") + target + "'; links are refused");
    const mode_t type = archive_entry_filetype(e);
    if (type == AE_IFLNK) {
      const char* target = archive_entry_symlink(e);
      throw InputError(path, raw, std::string("is a symbolic link to '") + (target ? target : "") + "'; links are refused");
    }
    if (type == AE_IFDIR) continue;
    if (type != AE_IFREG) throw InputError(path, raw, "is not a regular file or a directory");
    if (member.empty()) throw InputError(path, raw, "a file member without a name");
    add_member(c, member);
    if (!archive_entry_size_is_set(e) || archive_entry_size(e) < 0)
      throw InputError(path, raw, "the archive gives no size for this member");
    const uint64_t size = static_cast<uint64_t>(archive_entry_size(e));
    if (metadata_only && member != "metadata.json") continue;
    if (is_text_member(member)) {
      c.texts[member] = read_entry_text(a.get(), path, member, size);
    } else if (is_params_member(member)) {
      EntryStream in(a.get(), path, member);
      c.params[member] = parse_params_member(in, size, path, member, &in);
    }
    // Whatever was not read is skipped by the next archive_read_next_header.
  }
  return c;
}

// ---- directories ----

MlfContents read_directory(const std::string& path, bool metadata_only) {
  MlfContents c;
  c.path = path;
  c.is_directory = true;
  const fs::path root(path);
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end;
  if (ec) throw InputError(path, "", "cannot list the directory: " + ec.message());
  std::vector<std::string> files;
  for (; it != end; it.increment(ec)) {
    if (ec) throw InputError(path, "", "cannot list the directory: " + ec.message());
    const fs::directory_entry& de = *it;
    const std::string rel = de.path().lexically_relative(root).generic_string();
    if (de.is_symlink(ec)) {
      std::error_code ec2;
      const fs::path target = fs::read_symlink(de.path(), ec2);
      throw InputError(path, rel, "is a symbolic link to '" + target.string() + "'; links are refused");
    }
    if (de.is_directory(ec)) continue;
    if (!de.is_regular_file(ec)) throw InputError(path, rel, "is not a regular file or a directory");
    files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  for (const std::string& member : files) {
    add_member(c, member);
    if (!is_text_member(member) && !is_params_member(member)) continue;
    if (metadata_only && member != "metadata.json") continue;
    const fs::path file = root / member;
    const uint64_t size = fs::file_size(file, ec);
    if (ec) throw InputError(path, member, "cannot read: " + ec.message());
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError(path, member, std::string("cannot open: ") + std::strerror(errno));
    if (is_text_member(member)) {
      check_text_size(path, member, size);
      std::string s(static_cast<size_t>(size), '\0');
      in.read(s.data(), static_cast<std::streamsize>(size));
      if (static_cast<uint64_t>(in.gcount()) != size) throw InputError(path, member, "cannot read the whole file");
      c.texts[member] = std::move(s);
    } else {
      FileStream fsin(in);
      c.params[member] = parse_params_member(fsin, size, path, member, nullptr);
    }
  }
  return c;
}

bool has_member(archive* a, const std::string& member) {
  for (int n = 0; n < 1000000; ++n) {
    archive_entry* e = nullptr;
    const int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF || r < ARCHIVE_WARN) return false;
    const char* raw = archive_entry_pathname(e);
    if (!raw) continue;
    try {
      if (normalise_member("", raw) == member && archive_entry_filetype(e) == AE_IFREG) return true;
    } catch (const InputError&) {
      continue;  // a refused name: the reader reports it
    }
  }
  return false;
}

}  // namespace

bool MlfContents::has(const std::string& member) const {
  for (const std::string& m : members)
    if (m == member) return true;
  return false;
}

std::string normalise_member(const std::string& archive, const std::string& raw) {
  if (raw.empty()) return "";
  if (raw[0] == '/' || raw[0] == '\\')
    throw InputError(archive, raw, "is an absolute path; members must be relative to the archive root");
  if (raw.size() >= 2 && raw[1] == ':' && std::isalpha(static_cast<unsigned char>(raw[0])))
    throw InputError(archive, raw, "is an absolute path; members must be relative to the archive root");
  std::string out;
  size_t i = 0;
  while (i <= raw.size()) {
    size_t j = raw.find_first_of("/\\", i);
    if (j == std::string::npos) j = raw.size();
    const std::string part = raw.substr(i, j - i);
    if (part == "..") throw InputError(archive, raw, "has a '..' component; members must stay inside the archive");
    if (!part.empty() && part != ".") out += (out.empty() ? "" : "/") + part;
    i = j + 1;
  }
  return out;
}

InputKind classify_bytes(std::string_view head) {
  auto at = [&](size_t i) { return i < head.size() ? static_cast<unsigned char>(head[i]) : 0u; };
  if (at(0) == 0x1f && at(1) == 0x8b) return InputKind::Archive;                       // gzip
  if (head.substr(0, 3) == "BZh") return InputKind::Archive;                            // bzip2
  if (at(0) == 0xfd && head.substr(1, 5) == std::string_view("7zXZ\0", 5)) return InputKind::Archive;  // xz
  if (head.size() >= 262 && head.substr(257, 5) == "ustar") return InputKind::Archive;  // tar
  for (char ch : head) {
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') continue;
    return ch == '{' ? InputKind::Json : InputKind::Other;
  }
  return InputKind::Other;
}

InputKind classify_path(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return InputKind::Missing;
  if (fs::is_directory(st)) return InputKind::Directory;
  std::ifstream in(path, std::ios::binary);
  if (!in) return InputKind::Other;
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return classify_bytes(head);
}

MlfContents read_mlf_contents(const std::string& path, bool metadata_only) {
  switch (classify_path(path)) {
    case InputKind::Missing: throw InputError(path, "", "cannot open: no such file or directory");
    case InputKind::Directory: return read_directory(path, metadata_only);
    case InputKind::Archive: return read_archive(path, metadata_only);
    default:
      throw InputError(path, "", "not a TVM Model Library Format directory or tar archive (.tar, .tar.gz)");
  }
}

bool archive_has_member(const std::string& path, const std::string& member) {
  ArchivePtr a = new_reader();
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK) return false;
  return has_member(a.get(), member);
}

bool archive_bytes_have_member(std::string_view bytes, const std::string& member) {
  ArchivePtr a = new_reader();
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) return false;
  return has_member(a.get(), member);
}

}  // namespace npusim::frontends::tvm
