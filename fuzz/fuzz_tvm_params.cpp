// TVM .params files (frontends/tvm_mlf/tvm_params.cpp): headers of the saved NDArray list.
#include <algorithm>
#include <cstring>

#include "frontends/tvm_mlf/tvm_params.h"
#include "fuzz/fuzz_common.h"

namespace {
class MemStream : public npusim::frontends::tvm::ByteStream {
 public:
  MemStream(const uint8_t* d, size_t n) : m_d(d), m_n(n) {}
  size_t read(char* dst, size_t n) override {
    const size_t k = std::min(n, m_n - m_pos);
    if (k) std::memcpy(dst, m_d + m_pos, k);
    m_pos += k;
    return k;
  }

 private:
  const uint8_t* m_d;
  size_t m_n, m_pos = 0;
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    MemStream in(data, size);
    (void)frontends::tvm::parse_params(in, size, "fuzz.params", "");
  });
  return 0;
}
