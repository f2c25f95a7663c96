// One YAML document from a text, with the checks yaml-cpp leaves out (docs/hardening.md):
// a second document ("---" then more) and a key given twice in one mapping are InputErrors
// naming the line, so are a key that is not a plain name and text that is not UTF-8, and a
// document whose aliases expand past kMaxYamlNodes nodes is refused before anything walks it.
// Header-only: hardware descriptions, system configs, sweep specs.
#pragma once
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/ir/error.h"
#include "sim/ir/input_file.h"

namespace npusim::config {

// Most nodes a YAML document may expand to (aliases counted every time they are used).
inline constexpr uint64_t kMaxYamlNodes = 1'000'000;
// Deepest nesting of mappings and sequences. An alias inside the node its anchor names (`&a`
// on a mapping holding `k: *a`) makes a cycle, which only this limit stops (fuzz finding).
inline constexpr int kMaxYamlDepth = 256;

namespace yaml_detail {

inline std::string line_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.line >= 0 ? "line " + std::to_string(m.line + 1) : std::string();
}

// Depth-first over the document; duplicate keys of a mapping are an InputError at the second.
inline void check_node(const YAML::Node& n, const std::string& path, const std::string& source, uint64_t& budget,
                       int depth = 0) {
  if (budget == 0)
    throw InputError(source, "", "the YAML document expands to more than " + std::to_string(kMaxYamlNodes) +
                                     " nodes (aliases?); the limit is in docs/hardening.md");
  --budget;
  if (depth > kMaxYamlDepth && (n.IsMap() || n.IsSequence()))
    throw InputError(source, (path.size() > 80 ? path.substr(0, 80) + "..." : path) + (line_of(n).empty() ? "" : " (" + line_of(n) + ")"),
                     "nested deeper than " + std::to_string(kMaxYamlDepth) +
                         " levels, or an alias inside the node its anchor names (a cycle)");
  if (n.IsMap()) {
    std::map<std::string, YAML::Node> seen;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar())
        throw InputError(source, (path.empty() ? std::string("/") : path) +
                                     (line_of(kv.first).empty() ? "" : " (" + line_of(kv.first) + ")"),
                         "a key must be a plain name, not a list or mapping");
      const std::string key = kv.first.Scalar();
      const std::string p = path.empty() ? key : path + "." + key;
      {
        auto [it, fresh] = seen.emplace(key, kv.first);
        if (!fresh) {
          const std::string first = line_of(it->second);
          throw InputError(source, p + (line_of(kv.first).empty() ? "" : " (" + line_of(kv.first) + ")"),
                           "duplicate key '" + key + "'" + (first.empty() ? "" : " (first given at " + first + ")"));
        }
      }
      check_node(kv.second, p, source, budget, depth + 1);
    }
  } else if (n.IsSequence()) {
    size_t i = 0;
    for (const auto& e : n) check_node(e, path + "[" + std::to_string(i++) + "]", source, budget, depth + 1);
  }
}

// Counts the documents of a YAML text without building them (yaml-cpp's LoadAll loops forever
// on some malformed texts such as a line starting with ',': it yields empty documents at the
// same place without consuming anything, jbeder/yaml-cpp#1040).
class DocumentCounter : public YAML::EventHandler {
 public:
  int events = 0;
  bool lone_null = false;
  YAML::Mark first;
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { note(m, true); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { note(m, false); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { note(m, false); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note(m, false);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note(m, false);
  }
  void OnMapEnd() override {}

 private:
  void note(const YAML::Mark& m, bool null) {
    if (events++ == 0) first = m, lone_null = null;
    else lone_null = false;
  }
};

inline std::string line_col(const YAML::Mark& m) {
  return "line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1);
}

}  // namespace yaml_detail

// Parses `text` (named `source` in messages) as exactly one YAML document: malformed YAML is
// an InputError at "line L, column C"; a text with no document gives a null node.
inline YAML::Node load_yaml_document(const std::string& text, const std::string& source) {
  if (const size_t bad = invalid_utf8_at(text); bad != std::string::npos) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < bad; ++i) text[i] == '\n' ? (++line, col = 1) : ++col;
    throw InputError(source, "line " + std::to_string(line) + ", column " + std::to_string(col),
                     "not UTF-8 text (byte " + std::to_string(bad) + ")");
  }
  YAML::Node root;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    std::vector<yaml_detail::DocumentCounter> docs;
    for (int i = 0; i < 3; ++i) {
      yaml_detail::DocumentCounter d;
      if (!parser.HandleNextDocument(d)) break;
      // Two empty documents at one place: yaml-cpp is stuck on text it cannot read.
      if (!docs.empty() && d.lone_null && docs.back().lone_null && d.first.pos == docs.back().first.pos)
        throw InputError(source, yaml_detail::line_col(d.first), "malformed YAML: unexpected text here");
      docs.push_back(d);
      if (docs.size() == 2 && !d.lone_null) break;
    }
    if (docs.size() > 1)
      throw InputError(source, yaml_detail::line_col(docs[1].first),
                       "a second YAML document (after '---'): one file holds one document");
    if (docs.empty()) return YAML::Node();
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(source, yaml_detail::line_col(e.mark), "malformed YAML: " + e.msg);
  }
  uint64_t budget = kMaxYamlNodes;
  yaml_detail::check_node(root, "", source, budget);
  return root;
}

}  // namespace npusim::config
