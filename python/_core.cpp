// npusim._core: the SystemC-free part of npusim, in the Python process (pybind11). Hardware
// descriptions are resolved and checked here, exactly as the CLI does it; everything that
// simulates runs the `sim` binary in a child process instead (SystemC elaborates once per
// process), see npusim/__init__.py. C++ InputErrors become npusim.InputError with the message
// the CLI prints after "sim: error: ".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/config/hw_paths.h"
#include "sim/ir/error.h"
#include "sim/llm/serving.h"

namespace py = pybind11;
using namespace npusim;

namespace {

const char* type_of(const std::string& key) {
  const config::ParamDecl* d = config::find_param(key);
  if (!d) return "str";
  switch (d->type) {
    case config::ParamType::Int: return "int";
    case config::ParamType::Double: return "float";
    case config::ParamType::Bool: return "bool";
    case config::ParamType::String: return "str";
  }
  return "str";
}

// (source, [(key, type, value text)]) of a resolved configuration, schema order.
std::tuple<std::string, std::vector<std::tuple<std::string, std::string, std::string>>> resolve_config(
    const std::string& hw, const std::vector<std::string>& overrides) {
  const config::HwConfig c = hw.empty() ? config::HwConfig::defaults(overrides) : config::HwConfig::load(hw, overrides);
  std::vector<std::tuple<std::string, std::string, std::string>> rows;
  for (const auto& [k, v] : c.resolved()) rows.emplace_back(k, type_of(k), v);
  return {c.source(), rows};
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "npusim's SystemC-free core: hardware descriptions resolved in-process";
  // ValueError subclasses: bad input, as the CLI's exit code 2.
  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      input_error(e.what());
    }
  });
  m.def("resolve_config", &resolve_config, py::arg("hw"), py::arg("overrides"),
        "(source, [(key, type, value text)]) of a hardware description with --set overrides; "
        "hw '' gives the schema defaults");
  m.def("resolve_hw", &config::resolve_hw, py::arg("value"),
        "the file a --hw value names (a path, or a shipped config's name)");
  m.def(
      "serving_options",
      [] {
        std::vector<std::tuple<std::string, std::string, std::string, double, double, std::string>> rows;
        for (const llm::ServingOption& o : llm::serving_options()) {
          const char* t = o.type == llm::OptionType::Int ? "int" : o.type == llm::OptionType::Number ? "float"
                          : o.type == llm::OptionType::Bool ? "bool" : "str";
          rows.emplace_back(o.name, t, o.default_value(), o.lo, o.hi, o.meaning);
        }
        return rows;
      },
      "sim llm's serving options (the one table, sim/llm/serving.h): (name, type, default, lo, hi, meaning)");
  m.def(
      "check_serving_option",
      [](const std::string& name, const std::string& value) {
        llm::ServingOptions o;
        llm::set_serving_option(o, name, value, "npusim.llm", name);
      },
      py::arg("name"), py::arg("value"), "raises InputError when value is not a valid text for serving option name");
  m.def("shipped_configs", &config::shipped_config_names, "short names of the shipped configurations");
  m.def("builtin_npu_yaml", &config::builtin_npu_yaml, "the default NPU description built into npusim");
  m.attr("BUILTIN_HW") = config::kBuiltinHw;
}
