// TVM GraphExecutor graph.json (frontends/tvm_mlf): the executor graph and its lowering.
#include "frontends/json_util.h"
#include "frontends/tvm_mlf/tvm_mlf_reader.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    (void)frontends::read_tvm_graph_json(json::parse_text(fuzz::as_text(data, size), "graph.json"), "graph.json");
  });
  return 0;
}
