// Writes one zoo layer as Frontend IR. Key order per operation copies the real files
// (examples/frontend_ir/int8_resnet{34,50}.*): readers may ignore order, diffs and people don't.
#include <utility>

#include "frontends/zoo/zoo_builder.h"
#include "sim/ir/error.h"

namespace npusim::frontends::zoo {

using nlohmann::ordered_json;

namespace {

ordered_json lut(int on) { return ordered_json::array({on, on, on}); }

ordered_json files(const std::string& name, int inputs, bool weights) {
  ordered_json f;
  for (int i = 1; i <= inputs; ++i)
    f["input_activation" + std::to_string(i)] = name + "_input_activation" + std::to_string(i) + ".npy";
  f["output_activation1"] = name + "_output_activation1.npy";
  if (weights) {
    f["k"] = name + "_k.npy";
    f["b"] = name + "_b.npy";
  }
  return f;
}

ordered_json list(std::initializer_list<Shape> shapes) {
  ordered_json a = ordered_json::array();
  for (const Shape& s : shapes) a.push_back(s);
  return a;
}

ordered_json activation(Act a) {
  if (a == Act::kRelu) return "relu";
  if (a == Act::kRelu6) return "relu6";
  return nullptr;
}

// Per-input requantization into the VP's float domain: x_f = (q - z) / m.
struct VpInput {
  Shape shape;
  bool int8;
  double scale_inv, zero_point;
};

}  // namespace

ordered_json NetBuilder::batchdim_conv() const {
  // The unfused exporter marks the constant operand of conv/dense/GAP as batch-less (-1).
  return m_style.fused_bn ? ordered_json::array({0}) : ordered_json::array({0, -1});
}

// Real requantizations come first, then the shapes, then identity ones (1 / 0): the order the
// files use for maxpool and GAP (a real, b identity), int8 adds (both real) and quantize or
// float16 adds (both identity).
ordered_json NetBuilder::pre_cal(const Node& n) const {
  std::vector<VpInput> ins;
  for (int id : n.inputs) {
    if (id < 0)
      ins.push_back({{m_batch, 3, m_height, m_width}, false, 1, 0});
    else
      ins.push_back({m_nodes[id].out, m_nodes[id].out_int8, m_nodes[id].scale_inv,
                     m_nodes[id].zero_point});
  }
  if (n.kind == Kind::kAvgPool) ins.push_back({{1, 1, 1, 1}, false, 1, 0});
  ordered_json shapes = ordered_json::array();
  for (const VpInput& in : ins) shapes.push_back(in.shape);

  ordered_json j;
  auto put = [&](bool real) {
    for (size_t i = 0; i < ins.size(); ++i) {
      if (ins[i].int8 != real) continue;
      const std::string s(1, static_cast<char>('a' + i));
      if (real) {
        j["requan_scale_" + s] = 1.0 / ins[i].scale_inv;
        j["requan_zp_" + s] = (0.0 - ins[i].zero_point) / ins[i].scale_inv;
      } else {
        j["requan_scale_" + s] = 1;
        j["requan_zp_" + s] = 0;
      }
    }
  };
  put(true);
  j["input_shape"] = shapes;
  j["output_shape"] = shapes;
  put(false);
  return j;
}

ordered_json NetBuilder::post_cal(const Node& n) const {
  ordered_json j;
  if (n.out_int8) {
    j["mul_k"] = n.scale_inv;
    j["sum_b"] = n.zero_point;
    j["sumsub_mode"] = "add";
    j["carry_sel"] = "round";
    j["input_shape"] = list({n.out});
    j["output_shape"] = list({n.out});
  } else {
    j["input_shape"] = list({n.out});
    j["output_shape"] = list({n.out});
    j["mul_k"] = 1;
    j["sum_b"] = 0;
    j["sumsub_mode"] = "add";
  }
  return j;
}

ordered_json NetBuilder::quant_info(const Node& n) const {
  const Node& in = m_nodes.at(n.inputs.at(0));
  if (!in.out_int8) throw InternalError("zoo: " + n.name + " reads a float tensor in int8 mode");
  ordered_json q;
  q["input_scale1"] = 1.0 / in.scale_inv;
  q["input_zero_point1"] = 0.0 - in.zero_point;
  if (n.out_int8) {
    q["output_scale"] = n.scale_inv;
    q["output_zero_point"] = n.zero_point;
    q["round_type"] = "round";
  }
  return q;
}

ordered_json NetBuilder::emit(const Node& n, int index, int64_t const_base) const {
  ordered_json prev = ordered_json::array();
  for (int id : n.inputs) prev.push_back(in_name(id));
  std::string constant = n.fused_ordinal >= 0
                             ? "constant_" + std::to_string(const_base + 3 * n.fused_ordinal)
                             : n.constant;
  if (!constant.empty()) prev.push_back(constant);
  ordered_json next = ordered_json::array();
  for (int id : n.consumers) next.push_back(m_nodes[id].name);
  if (n.consumers.empty()) next.push_back("output1");

  auto in_int8 = [&](size_t i) { return n.inputs[i] >= 0 && m_nodes[n.inputs[i]].out_int8; };
  auto in_shape = [&](size_t i) {
    return n.inputs[i] < 0 ? Shape{m_batch, 3, m_height, m_width} : m_nodes[n.inputs[i]].out;
  };
  const char* weight_dt = m_int8 ? "int8" : m_float;

  ordered_json j;
  j["layer_index"] = index;
  j["name"] = n.name;
  switch (n.kind) {
    case Kind::kQuantize:
    case Kind::kDequantize:
      j["operation"] = "quantize";
      j["device"] = "npu";
      j["input_dtype"] = {dt(in_int8(0))};
      j["output_dtype"] = {dt(n.out_int8)};
      j["input_shape"] = list({in_shape(0)});
      j["output_shape"] = list({n.out});
      j["file_list"] = files(n.name, 1, false);
      j["previous_layer"] = prev;
      j["next_layer"] = next;
      j["tensor0_lut"] = lut(1);
      j["tensor_mode"] = 0;
      j["module_list"] = {{"pre_cal", pre_cal(n)}, {"post_cal", post_cal(n)}};
      if (!n.ori_name.empty()) j["ori_name"] = n.ori_name;
      j["input_batchdim"] = ordered_json::array({0});
      j["output_batchdim"] = ordered_json::array({0});
      break;

    case Kind::kConv:
    case Kind::kDense:
      j["operation"] = n.kind == Kind::kConv ? "conv2d" : "dense";
      j["device"] = "npu";
      j["input_dtype"] = {dt(in_int8(0)), weight_dt};
      j["output_dtype"] = {dt(n.out_int8)};
      j["input_shape"] = list({in_shape(0), n.weight});
      j["output_shape"] = list({n.out});
      if (m_int8) j["quant_info"] = quant_info(n);
      j["previous_layer"] = prev;
      j["next_layer"] = next;
      j["file_list"] = files(n.name, 2, true);
      j["input_batchdim"] = batchdim_conv();
      j["output_batchdim"] = ordered_json::array({0});
      j["activation_type"] = activation(n.act);
      j["activation_attr"] = nullptr;
      if (n.kind == Kind::kConv) {
        j["kernel_size"] = {n.kernel[0], n.kernel[1]};
        j["padding"] = {n.pad[0], n.pad[1], n.pad[2], n.pad[3]};
        j["stride"] = {n.stride[0], n.stride[1]};
        if (n.groups != 1) j["groups"] = n.groups;  // depthwise: weight is [C, 1, R, S]
      }
      if (!n.ori_name.empty()) j["ori_name"] = n.ori_name;
      break;

    case Kind::kMaxPool:
    case Kind::kAvgPool: {
      const bool avg = n.kind == Kind::kAvgPool;
      const Shape in = in_shape(0), scalar{1, 1, 1, 1};
      j["operation"] = avg ? "avg_pool2d" : "max_pool2d";
      j["device"] = "npu";
      j["pool_size"] = {n.kernel[0], n.kernel[1]};
      j["padding"] = {n.pad[0], n.pad[1], n.pad[2], n.pad[3]};
      j["stride"] = {n.stride[0], n.stride[1]};
      if (avg)
        j["ceil_mode"] = false;  // sic: the files write false here and 0 for max pools
      else
        j["ceil_mode"] = 0;
      j["file_list"] = files(n.name, avg ? 2 : 1, false);
      j["previous_layer"] = prev;
      j["next_layer"] = next;
      j["input_shape"] = avg ? list({in, scalar}) : list({in});
      j["output_shape"] = list({n.out});
      if (avg)
        j["input_dtype"] = {dt(in_int8(0)), m_int8 ? "float32" : m_float};
      else
        j["input_dtype"] = {dt(in_int8(0))};
      j["output_dtype"] = {dt(n.out_int8)};
      j["tensor0_lut"] = lut(1);
      if (avg) j["tensor1_lut"] = lut(0);
      ordered_json ml;
      ml["pre_cal"] = pre_cal(n);
      if (avg) {
        ordered_json mul;
        mul["mul_group_k_mux"] = "scalar";
        mul["act_mode"] = "others";
        // 1 / (window area), rounded to float32 as the files do (0.020408162847161293 = 1/49).
        mul["mul_group_k_scalar"] =
            static_cast<double>(static_cast<float>(1.0 / (double(n.kernel[0]) * n.kernel[1])));
        mul["input_shape"] = list({in, scalar});
        mul["output_shape"] = list({in});
        ml["fp32_mul_group"] = mul;
        ordered_json acc;
        acc["acc_tree_mode"] = "acc";
        acc["acc_dim"] = "kernel";
        acc["input_shape"] = list({in});
        acc["output_shape"] = list({n.out});
        ml["acc_tree_group"] = acc;
      } else {
        ordered_json cmp;
        cmp["cmp_mode"] = "cumulative";
        cmp["cmp_max_en"] = "max";
        cmp["cmp_dim"] = "kernel";
        cmp["input_shape"] = list({in});
        cmp["output_shape"] = list({n.out});
        ml["compare_group"] = cmp;
      }
      ml["post_cal"] = post_cal(n);
      j["module_list"] = ml;
      j["ori_name"] = n.ori_name;
      j["input_batchdim"] = avg ? batchdim_conv() : ordered_json::array({0});
      j["output_batchdim"] = ordered_json::array({0});
      break;
    }

    case Kind::kAdd: {
      const Shape a = in_shape(0), b = in_shape(1);
      j["operation"] = "element_wise_add";
      j["device"] = "npu";
      j["file_list"] = files(n.name, 2, false);
      j["previous_layer"] = prev;
      j["next_layer"] = next;
      j["input_shape"] = list({a, b});
      j["output_shape"] = list({n.out});
      j["input_dtype"] = {dt(in_int8(0)), dt(in_int8(1))};
      j["output_dtype"] = {dt(n.out_int8)};
      j["tensor0_lut"] = lut(1);
      j["tensor1_lut"] = lut(1);
      j["tensor_mode"] = 0;
      ordered_json ml;
      ml["pre_cal"] = pre_cal(n);
      ordered_json sum;
      sum["sumsub_group_mode"] = "add";
      sum["sumsub_group_b_mux"] = "vector";
      sum["input_shape"] = list({a, b});
      sum["output_shape"] = list({n.out});
      ml["fp32_sum_sub_group0"] = sum;
      if (n.act == Act::kRelu) {
        ml["relu_group"]["input_shape"] = list({n.out});
        ml["relu_group"]["output_shape"] = list({n.out});
      }
      ml["post_cal"] = post_cal(n);
      j["module_list"] = ml;
      j["ori_name"] = n.ori_name;
      j["input_batchdim"] = ordered_json::array({0, 0});
      j["output_batchdim"] = ordered_json::array({0});
      break;
    }

    case Kind::kReshape:
      j["operation"] = "reshape";
      j["device"] = n.on_cpu ? "cpu" : "npu";
      j["input_dtype"] = {dt(in_int8(0))};
      j["output_dtype"] = {dt(n.out_int8)};
      j["input_shape"] = list({in_shape(0)});
      j["output_shape"] = list({n.out});
      j["previous_layer"] = prev;
      j["next_layer"] = next;
      j["file_list"] = files(n.name, 1, false);
      j["input_batchdim"] = ordered_json::array({0});
      j["output_batchdim"] = ordered_json::array({0});
      j["ori_name"] = n.ori_name;
      j["nhwc_consistant"] = true;  // sic, the files' spelling
      break;
  }
  return j;
}

}  // namespace npusim::frontends::zoo
