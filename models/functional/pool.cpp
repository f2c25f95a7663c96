#include "models/functional/pool.h"

#include <algorithm>
#include <limits>

#include "sim/ir/error.h"

namespace npusim::functional {

int64_t pool_output_size(int64_t in, int k, int s, int d, int lo, int hi, bool ceil_mode) {
  int64_t span = in + lo + hi - static_cast<int64_t>(d) * (k - 1) - 1;
  if (k < 1 || s < 1 || d < 1 || span < 0) return 0;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + lo) --out;
  return out;
}

ir::Shape pool_output_shape(const ir::Shape& x, const PoolParams& p, std::string* why) {
  auto fail = [&](const std::string& m) {
    if (why) *why = m;
    return ir::Shape{};
  };
  if (x.size() != 4) return fail("input " + ir::shape_str(x) + " is not [N,C,H,W]");
  for (int v : p.padding)
    if (v < 0) return fail("negative padding");
  // PyTorch also requires pad <= kernel/2; not enforced here: a window lying wholly in the
  // padding gives max -inf, sum 0 (docs/functional.md#pooling-poolh).
  int64_t oh = pool_output_size(x[2], p.kernel[0], p.stride[0], p.dilation[0], p.padding[0], p.padding[1], p.ceil_mode);
  int64_t ow = pool_output_size(x[3], p.kernel[1], p.stride[1], p.dilation[1], p.padding[2], p.padding[3], p.ceil_mode);
  if (oh < 1 || ow < 1) return fail("no window fits (kernel, stride or dilation < 1, or window larger than the padded input)");
  return {x[0], x[1], oh, ow};
}

namespace {
// Calls f(plane data, W, window, dh, dw) for every output element.
struct Window {
  int64_t h0, h1, w0, w1;  // in-bounds rows [h0, h1) and cols [w0, w1) (step = dilation)
  int64_t padded_area;     // window clipped to the padded input (avg divisor)
};

template <class F>
Tensor for_windows(const Tensor& x, const PoolParams& p, const char* what, F&& f) {
  std::string why;
  ir::Shape os = pool_output_shape(x.shape, p, &why);
  if (os.empty()) throw InternalError(std::string(what) + ": " + why);
  const int64_t h = x.shape[2], w = x.shape[3], oh_ = os[2], ow_ = os[3], planes = os[0] * os[1];
  const int dh = p.dilation[0], dw = p.dilation[1];
  Tensor y(os, ir::DType::Float32);
  for (int64_t pl = 0; pl < planes; ++pl) {
    const float* xp = x.data.data() + pl * h * w;
    for (int64_t oh = 0; oh < oh_; ++oh)
      for (int64_t ow = 0; ow < ow_; ++ow) {
        int64_t hs = oh * p.stride[0] - p.padding[0], ws = ow * p.stride[1] - p.padding[2];
        int64_t he = hs + static_cast<int64_t>(dh) * (p.kernel[0] - 1) + 1;
        int64_t we = ws + static_cast<int64_t>(dw) * (p.kernel[1] - 1) + 1;
        Window win;
        win.padded_area = (std::min(he, h + p.padding[1]) - hs) * (std::min(we, w + p.padding[3]) - ws);
        // First in-bounds tap on the dilation grid.
        win.h0 = hs < 0 ? hs + ((-hs + dh - 1) / dh) * dh : hs;
        win.w0 = ws < 0 ? ws + ((-ws + dw - 1) / dw) * dw : ws;
        win.h1 = std::min(he, h);
        win.w1 = std::min(we, w);
        y.data[(pl * oh_ + oh) * ow_ + ow] = f(xp, w, win, dh, dw);
      }
  }
  return y;
}

template <class Better>
Tensor extreme_pool(const Tensor& x, const PoolParams& p, float init, Better better, const char* what) {
  return for_windows(x, p, what, [&](const float* xp, int64_t w, const Window& win, int dh, int dw) {
    float m = init;
    for (int64_t i = win.h0; i < win.h1; i += dh)
      for (int64_t j = win.w0; j < win.w1; j += dw)
        if (better(xp[i * w + j], m)) m = xp[i * w + j];
    return m;
  });
}
}  // namespace

Tensor max_pool2d(const Tensor& x, const PoolParams& p) {
  return extreme_pool(x, p, -std::numeric_limits<float>::infinity(), [](float a, float b) { return a > b; }, "max_pool2d");
}

Tensor min_pool2d(const Tensor& x, const PoolParams& p) {
  return extreme_pool(x, p, std::numeric_limits<float>::infinity(), [](float a, float b) { return a < b; }, "min_pool2d");
}

Tensor window_sum(const Tensor& x, const PoolParams& p) {
  return for_windows(x, p, "window_sum", [](const float* xp, int64_t w, const Window& win, int dh, int dw) {
    double s = 0.0;
    for (int64_t i = win.h0; i < win.h1; i += dh)
      for (int64_t j = win.w0; j < win.w1; j += dw) s += xp[i * w + j];
    return static_cast<float>(s);
  });
}

Tensor avg_pool2d(const Tensor& x, const PoolParams& p) {
  if (p.dilation[0] != 1 || p.dilation[1] != 1) throw InternalError("avg_pool2d: dilation must be 1");
  return for_windows(x, p, "avg_pool2d", [&](const float* xp, int64_t w, const Window& win, int, int) {
    double s = 0.0;
    for (int64_t i = win.h0; i < win.h1; ++i)
      for (int64_t j = win.w0; j < win.w1; ++j) s += xp[i * w + j];
    int64_t div = p.count_include_pad ? win.padded_area
                                      : std::max<int64_t>(0, win.h1 - win.h0) * std::max<int64_t>(0, win.w1 - win.w0);
    if (div <= 0) return 0.0f;  // a window wholly in the padding
    return static_cast<float>(s / static_cast<double>(div));
  });
}

}  // namespace npusim::functional
