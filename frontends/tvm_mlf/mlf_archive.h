// The members of a Model Library Format archive that the reader needs, from a directory or
// a tar archive (plain, gzip, bzip2 or xz; libarchive). One pass: metadata.json and the
// graph files (executor-config/graph/*.json, *.graph) are kept as text, every
// parameters/*.params file is parsed while it streams by (headers only, tensor data
// skipped). Member names are normalised ("./metadata.json" -> "metadata.json"); a name that
// is absolute or has a ".." component, a symbolic or hard link, a special file or a member
// given twice is an InputError(archive, member, what). Sizes are checked before anything is
// allocated: a JSON member above 512 MiB is refused.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontends/tvm_mlf/tvm_params.h"
#include "sim/ir/error.h"

namespace npusim::frontends::tvm {

// A parsed .params member, or the error parsing it gave (thrown when the file is used, so
// that a broken file of another module does not stop this one).
struct ParamsMember {
  std::vector<ParamInfo> params;
  std::optional<InputError> error;
};

struct MlfContents {
  std::string path;                               // as given
  bool is_directory = false;
  std::vector<std::string> members;               // every regular file, normalised, in order
  std::map<std::string, std::string> texts;       // metadata.json and graph files
  std::map<std::string, ParamsMember> params;     // parameters/*.params
  bool has(const std::string& member) const;
};

enum class InputKind { Missing, Directory, Archive, Json, Other };
// What a path is, from its type and its first bytes (tar "ustar" at 257; gzip 1f 8b;
// bzip2 "BZh"; xz fd 37 7a 58 5a 00; JSON: first non-space character '{').
InputKind classify_path(const std::string& path);
InputKind classify_bytes(std::string_view head);

constexpr uint64_t kMaxJsonMemberBytes = uint64_t{512} << 20;

// Reads a directory or an archive (InputError for anything else or a refused member).
// metadata_only: keeps metadata.json only (members are still listed and checked).
MlfContents read_mlf_contents(const std::string& path, bool metadata_only = false);

// Whether an archive (path, or bytes in memory) has a member called `member` (normalised);
// false on any error. Reads headers only.
bool archive_has_member(const std::string& path, const std::string& member);
bool archive_bytes_have_member(std::string_view bytes, const std::string& member);

// "./a//b" -> "a/b"; "." -> "". InputError(archive, raw, ...) for absolute names and "..".
std::string normalise_member(const std::string& archive, const std::string& raw);

}  // namespace npusim::frontends::tvm
