// TVM Model Library Format archives (frontends/tvm_mlf/mlf_archive.cpp): a .tar / .tar.gz
// through libarchive, metadata.json, the graph and the .params members.
#include "frontends/tvm_mlf/tvm_mlf_reader.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  const std::string path = fuzz::write_scratch("model.tar", fuzz::as_text(data, size));
  fuzz::expect_input_errors_only([&] { (void)frontends::read_tvm_mlf_detailed(path); });
  return 0;
}
