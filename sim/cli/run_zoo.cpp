// `sim zoo <model>`: write a Frontend IR for a known network.
#include <fstream>
#include <iostream>
#include <regex>

#include "frontends/zoo/zoo.h"
#include "sim/cli/commands.h"
#include "sim/ir/error.h"

namespace npusim::cli {

int run_zoo(const ZooCliOptions& o) {
  frontends::zoo::ZooOptions z;
  z.model = o.model;
  z.batch = o.batch;
  z.dtype = o.dtype;
  if (!o.input.empty()) {
    std::smatch m;
    static const std::regex re("([0-9]+)x([0-9]+)");
    if (!std::regex_match(o.input, m, re)) throw InputError("zoo", "--input", "expected HxW, e.g. 224x224, got '" + o.input + "'");
    z.height = std::stoi(m[1]);
    z.width = std::stoi(m[2]);
  }
  const std::string text = frontends::zoo::make_frontend_ir(z).dump(3) + "\n";
  if (o.out.empty()) {
    std::cout << text;
  } else {
    std::ofstream f(o.out, std::ios::binary);
    if (!f) throw InputError(o.out, "", "cannot open for writing");
    f << text;
  }
  return kOk;
}

}  // namespace npusim::cli
