// Typed errors that travel up to the CLI (docs/exit_codes.md).
// InputError: bad input (file, place in it, what is wrong) -> exit 2.
// InternalError: a broken invariant of ours -> exit 3.
#pragma once
#include <stdexcept>
#include <string>

namespace npusim {

class InputError : public std::runtime_error {
 public:
  // file: path or name of the input; where: JSON pointer / YAML path / "line N" (may be empty).
  InputError(const std::string& file, const std::string& where, const std::string& what)
      : std::runtime_error(format(file, where, what)), m_file(file), m_where(where), m_what(what) {}
  const std::string& file() const { return m_file; }
  const std::string& where() const { return m_where; }
  const std::string& detail() const { return m_what; }

 private:
  static std::string format(const std::string& file, const std::string& where, const std::string& what) {
    std::string s = file;
    if (!where.empty()) s += (s.empty() ? "" : ": ") + where;
    return s + (s.empty() ? "" : ": ") + what;
  }
  std::string m_file, m_where, m_what;
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error("internal error: " + what) {}
};

}  // namespace npusim
