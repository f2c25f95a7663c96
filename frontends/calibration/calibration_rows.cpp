#include "frontends/calibration/calibration_rows.h"

#include <cmath>
#include <cstdio>
#include <optional>

namespace npusim::frontends {

namespace {

// A measured time: "ms", a positive number of milliseconds.
double measured_us(const json::Cursor& row) {
  const json::Cursor ms = row.at("ms");
  const double v = ms.as_double();
  if (!(v > 0) || !std::isfinite(v)) ms.fail("must be a positive time in milliseconds");
  return v * 1000.0;
}

// An optional per-element count (0 when absent).
double per_element(const json::Cursor& row, const std::string& key, bool required) {
  const std::optional<json::Cursor> c = required ? std::optional<json::Cursor>(row.at(key)) : row.find(key);
  const double v = c ? c->as_double() : 0.0;
  if (!(v >= 0) || v > 1e6) row.at(key).fail("must be between 0 and 1000000");
  return v;
}

gpu::DataType parse_dtype(const json::Cursor& row, std::string* name) {
  *name = row.get_string("dtype");
  if (*name == "fp32") return gpu::DataType::FP32;
  if (*name == "fp16") return gpu::DataType::FP16;
  if (*name != "bf16") row.at("dtype").fail("must be fp32, fp16 or bf16");
  return gpu::DataType::BF16;
}

// A GEMM row's operand type: the convolutions' three or the tensor cores' int8 and fp8 (e4m3).
gpu::DataType parse_gemm_dtype(const json::Cursor& row) {
  const std::string name = row.get_string("dtype");
  if (name == "int8") return gpu::DataType::INT8;
  if (name == "fp8") return gpu::DataType::FP8_E4M3;
  if (name != "fp32" && name != "fp16" && name != "bf16") row.at("dtype").fail("must be fp32, fp16, bf16, int8 or fp8");
  std::string ignored;
  return parse_dtype(row, &ignored);
}

// A row's "mma": true for "mma.sync" (warp-level MMA), false for "wgmma" or when absent.
bool warp_mma(const json::Cursor& row) {
  if (!row.find("mma")) return false;
  const std::string v = row.get_string("mma");
  if (v != "wgmma" && v != "mma.sync") row.at("mma").fail("must be wgmma or mma.sync, got \"" + v + "\"");
  return v == "mma.sync";
}

// A row's "cluster": "CMxCN", CM tiles along M by CN along N (Hopper's thread-block clusters hold
// at most 16 thread blocks); 1 x 1 when absent.
void parse_cluster(const json::Cursor& row, int64_t* cm, int64_t* cn) {
  *cm = *cn = 1;
  if (!row.find("cluster")) return;
  const std::string v = row.get_string("cluster");
  long long m = 0, n = 0;
  char tail;
  if (std::sscanf(v.c_str(), "%lldx%lld%c", &m, &n, &tail) != 2 || m < 1 || n < 1 || m * n > 16)
    row.at("cluster").fail("expected CMxCN, thread blocks along M and N, at most 16 in all (e.g. 2x1), got \"" + v + "\"");
  *cm = m, *cn = n;
}

// A row's "tile" (the kernel's own), checked; "" when absent.
std::string optional_tile(const json::Cursor& row) {
  if (!row.find("tile")) return "";
  const std::string tile = row.get_string("tile");
  TileText t;
  if (!parse_tile_text(tile, &t))
    row.at("tile").fail("expected TMxTNxTK:WARPS[:STAGES] (sizes up to 65536, 2-64 stages), e.g. 128x256x64:8:3");
  return tile;
}


}  // namespace

bool parse_tile_text(const std::string& s, TileText* out) {
  long long tm, tn, tk;
  int w, stages = 3;
  char tail;
  const int got = std::sscanf(s.c_str(), "%lldx%lldx%lld:%d:%d%c", &tm, &tn, &tk, &w, &stages, &tail);
  if ((got != 4 && got != 5) || tm < 1 || tn < 1 || tk < 1 || w < 1 || stages < 2 || tm > (1 << 16) ||
      tn > (1 << 16) || tk > (1 << 16) || w > 1024 || stages > 64)
    return false;
  *out = {tm, tn, tk, w, stages};
  return true;
}

std::vector<GemmRow> parse_gemm_rows(const json::Json& doc, const std::string& source) {
  json::Cursor root(doc, source);
  std::vector<GemmRow> rows;
  for (const json::Cursor& r : root.at("rows").elements()) {
    r.expect_object();
    const int64_t max = int64_t{1} << 31;
    GemmRow row;
    row.m = r.at("M").as_int_in(1, max), row.n = r.at("N").as_int_in(1, max), row.k = r.at("K").as_int_in(1, max);
    row.measured_us = measured_us(r);
    row.pointer = r.pointer();
    row.tile = optional_tile(r);
    if (r.find("group_m")) row.group_m = r.at("group_m").as_int_in(1, 1 << 20);
    if (r.find("kind")) row.kind = r.get_string("kind");
    row.warp_mma = warp_mma(r);
    parse_cluster(r, &row.cluster_m, &row.cluster_n);
    if (r.find("dtype")) row.dtype = parse_gemm_dtype(r);
    rows.push_back(row);
  }
  return rows;
}

std::vector<ConvRow> parse_conv_rows(const json::Json& doc, const std::string& source) {
  json::Cursor root(doc, source);
  std::vector<ConvRow> rows;
  for (const json::Cursor& r : root.at("rows").elements()) {
    r.expect_object();
    ConvRow row;
    row.pointer = r.pointer();
    const int64_t max = int64_t{1} << 20;
    row.n = r.at("N").as_int_in(1, max), row.c = r.at("C").as_int_in(1, max);
    row.h = r.at("H").as_int_in(1, max), row.w = r.at("W").as_int_in(1, max);
    row.k = r.at("K").as_int_in(1, max), row.r = r.at("R").as_int_in(1, max), row.s = r.at("S").as_int_in(1, max);
    row.stride = r.at("stride").as_int_in(1, 64);
    row.pad = r.at("pad").as_int_in(0, 64);
    if (row.r > row.h + 2 * row.pad) r.at("R").fail("exceeds the padded input height H + 2 x pad");
    if (row.s > row.w + 2 * row.pad) r.at("S").fail("exceeds the padded input width W + 2 x pad");
    row.p = (row.h + 2 * row.pad - row.r) / row.stride + 1;
    row.q = (row.w + 2 * row.pad - row.s) / row.stride + 1;
    // The implicit GEMM's sizes (and the tensors) must stay countable.
    const double gemm_m = static_cast<double>(row.n) * row.p * row.q, gemm_k = static_cast<double>(row.c) * row.r * row.s;
    const double input = static_cast<double>(row.n) * row.c * row.h * row.w;
    if (gemm_m >= 2147483648.0 || gemm_k >= 2147483648.0 || input >= 2147483648.0)
      r.at("N").fail("gives a convolution of 2^31 or more elements (N x P x Q, C x R x S or N x C x H x W)");
    row.dtype = parse_dtype(r, &row.dtype_name);
    if (r.find("layer")) row.layer = r.get_string("layer");
    row.tile = optional_tile(r);
    row.warp_mma = warp_mma(r);
    parse_cluster(r, &row.cluster_m, &row.cluster_n);
    row.measured_us = measured_us(r);
    rows.push_back(row);
  }
  return rows;
}

std::vector<RowKernelRow> parse_rowwise_rows(const json::Json& doc, const std::string& source, int max_warps) {
  json::Cursor root(doc, source);
  std::vector<RowKernelRow> rows;
  for (const json::Cursor& r : root.at("rows").elements()) {
    r.expect_object();
    RowKernelRow row;
    row.pointer = r.pointer();
    row.kind = r.get_string("kind");
    row.m = r.at("M").as_int_in(1, 1 << 24);
    row.n = r.at("N").as_int_in(1, 1 << 24);
    row.dtype = parse_dtype(r, &row.dtype_name);
    row.row_inputs = static_cast<int>(r.at("row_inputs").as_int_in(0, 16));
    row.row_outputs = static_cast<int>(r.at("row_outputs").as_int_in(1, 16));
    row.col_vectors = static_cast<int>(r.at("col_vectors").as_int_in(0, 16));
    row.row_stats = static_cast<int>(r.at("row_stats").as_int_in(0, 16));
    row.flops_per_element = per_element(r, "flops_per_element", true);
    row.transcendentals_per_element = per_element(r, "transcendentals_per_element", false);
    row.warps = static_cast<int>(r.at("warps").as_int_in(1, max_warps));
    row.measured_us = measured_us(r);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace npusim::frontends
