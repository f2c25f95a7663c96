// ARK plan files (frontends/ark): the reader, then the checks against an H100-sized device
// that `sim --plan` makes before lowering.
#include "frontends/ark/ark_reader.h"
#include "frontends/json_util.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    const gpu::Program plan = frontends::parse_ark_plan(json::parse_text(fuzz::as_text(data, size), "plan.json"), "plan.json");
    frontends::validate_against_device(plan, 132, 64, 227 * 1024);
    frontends::check_send_recv_pairs({plan});
  });
  return 0;
}
