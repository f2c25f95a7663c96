#include "frontends/calibration/calibration_rows.h"

#include <cmath>
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

}  // namespace

std::vector<GemmRow> parse_gemm_rows(const json::Json& doc, const std::string& source) {
  json::Cursor root(doc, source);
  std::vector<GemmRow> rows;
  for (const json::Cursor& r : root.at("rows").elements()) {
    r.expect_object();
    const int64_t max = int64_t{1} << 31;
    rows.push_back({r.at("M").as_int_in(1, max), r.at("N").as_int_in(1, max), r.at("K").as_int_in(1, max), measured_us(r)});
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
    row.dtype_name = r.get_string("dtype");
    if (row.dtype_name == "fp32") row.dtype = gpu::DataType::FP32;
    else if (row.dtype_name == "fp16") row.dtype = gpu::DataType::FP16;
    else if (row.dtype_name == "bf16") row.dtype = gpu::DataType::BF16;
    else r.at("dtype").fail("must be fp32, fp16 or bf16");
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
