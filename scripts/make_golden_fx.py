"""Second golden source for make_golden.py: a torchvision model quantized by PyTorch's FX
post-training quantization (qnnpack engine), run with torch's own quantized kernels, written as
a Frontend IR plus the activations every file_list names (docs/golden.md#torchvision-and-fx-post-training-quantization).

Mapping (quint8 activations become int8 by subtracting 128, so zero points move by -128):
  quantize_per_tensor        -> quantize   float32 -> int8  pre_cal(1, 0), post_cal(fl32(1/s), zp)
  Conv2d / ConvReLU2d        -> conv2d     quant_info from the input / output qparams; k = real
                                           weights (dequantized), b = bias as qnnpack rounds it
  MaxPool2d                  -> max_pool2d pre_cal, compare_group, post_cal (same qparams)
  quantized.add / add_relu   -> element_wise_add  pre_cal(a, b), fp32_sum_sub_group0, [relu_group], post_cal
  AdaptiveAvgPool2d((1, 1))  -> avg_pool2d pre_cal, fp32_mul_group(1/(H*W)), acc_tree_group, post_cal
  flatten                    -> nothing (dense reads [N, C, 1, 1])
  Linear                     -> dense      int8 -> int8, output [N, K, 1, 1]
  dequantize                 -> quantize   int8 -> float32  pre_cal(s, izp*s), post_cal(1, 0)
  (output)                   -> reshape on cpu [N, K, 1, 1] -> [N, K]
torch's kernels round differently in places (quantize ties to even, qnnpack's fixed-point add),
so a few elements may differ by 1 LSB from the documented float emulation: within tolerance.
"""
import os
import time

import numpy as np
import torch

import make_golden as mg


def _randomize_bn(model, g):
    """Non-trivial folded biases and scales: random BatchNorm statistics and affine terms."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=g) * 1.5 + 0.5)
            m.weight.data.copy_(torch.rand(c, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(c, generator=g) * 0.1)


def _int8(t):
    """quint8 tensor -> its int8 values (q - 128) as float32."""
    return t.int_repr().float() - 128.0


def _qparams(t):
    return float(t.q_scale()), int(t.q_zero_point())


def _f32(v):
    return float(np.float32(v))


def _pre_cal(shape, s, zp, b=None):
    """Dequantize int8 q: real = (q + 128 - zp) * s = q*s + (128 - zp)*s."""
    d = {"input_shape": [shape] + ([b[0]] if b else []), "output_shape": [shape] + ([b[0]] if b else []),
         "requan_scale_a": s, "requan_zp_a": _f32((128 - zp) * s)}
    if b:
        d["requan_scale_b"], d["requan_zp_b"] = b[1], b[2]
    return d


def _post_cal(shape, s, zp):
    """Quantize to int8: q = round(real / s) + zp - 128, as torch: inv_scale = 1.0f / scale."""
    return {"mul_k": _f32(np.float32(1.0) / np.float32(s)), "sum_b": float(zp - 128), "sumsub_mode": "add",
            "carry_sel": "round", "input_shape": [shape], "output_shape": [shape]}


class _IrBuilder:
    def __init__(self):
        self.layers, self.values = [], {}  # values: layer name -> {role: (tensor, dtype)}

    def add(self, name, op, ins, outs, extra, files):
        """ins: [(producer, shape, dtype, tensor)], outs: (shape, dtype, tensor)."""
        layer = {"layer_index": len(self.layers), "name": name, "operation": op,
                 "device": "cpu" if op == "reshape" else "npu",
                 "input_dtype": [i[2] for i in ins], "output_dtype": [outs[1]],
                 "input_shape": [i[1] for i in ins], "output_shape": [outs[0]],
                 "previous_layer": [i[0] for i in ins], "next_layer": [], "file_list": {},
                 "input_batchdim": [0 if not (i[0].startswith("constant_") or i[0].endswith("_constant1")) else -1
                                    for i in ins],
                 "output_batchdim": [0]}
        layer.update(extra)
        vals = {}
        for k, (_, shape, dt, t) in enumerate(ins):
            role = f"input_activation{k + 1}"
            layer["file_list"][role] = f"{name}_{role}.npy"
            vals[role] = (t.reshape(shape), dt)
        layer["file_list"]["output_activation1"] = f"{name}_output_activation1.npy"
        vals["output_activation1"] = (outs[2].reshape(outs[0]), outs[1])
        for role, (t, dt) in files.items():
            layer["file_list"][role] = f"{name}_{role}.npy"
            vals[role] = (t, dt)
        self.layers.append(layer)
        self.values[name] = vals

    def finish(self, out):
        by_name = {l["name"]: l for l in self.layers}
        for l in self.layers:
            for p in l["previous_layer"]:
                if p in by_name:
                    by_name[p]["next_layer"].append(l["name"])
        self.layers[-1]["next_layer"] = ["output1"]
        for l in self.layers:
            for role, (t, dt) in self.values[l["name"]].items():
                mg.save(os.path.join(out, l["file_list"][role]), t.float(), dt)
        return {l["name"]: l for l in self.layers}


def generate_fx(model_name, quantize, batch, h, w, seed, out, verbose=True):
    import torchvision
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    if quantize != "fx":
        raise ValueError("only --quantize fx is supported")
    t0 = time.time()
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)  # torchvision's weight init
    torch.backends.quantized.engine = "qnnpack"
    model = getattr(torchvision.models, model_name)(weights=None).eval()
    _randomize_bn(model, g)
    shape = (batch, 3, h, w)
    prepared = prepare_fx(model, get_default_qconfig_mapping("qnnpack"), (torch.randn(shape, generator=g),))
    with torch.no_grad():
        for _ in range(4):  # calibration
            prepared(torch.randn(shape, generator=g))
        qmodel = convert_fx(prepared)
        env = {}

        class Recorder(torch.fx.Interpreter):
            def run_node(self, n):
                env[n.name] = super().run_node(n)
                return env[n.name]

        Recorder(qmodel).run(torch.randn(shape, generator=g))
    mods = dict(qmodel.named_modules())
    b = _IrBuilder()
    alias = {}  # FX node name -> IR producer name

    def src(n):
        return alias.get(n.name, n.name)

    for n in qmodel.graph.nodes:
        v = env.get(n.name)
        if n.op == "placeholder":
            alias[n.name] = "input1"
        elif n.op in ("get_attr", "output"):
            continue
        elif n.op == "call_function" and n.target is torch.quantize_per_tensor:
            x = env[n.args[0].name]
            s, zp = _qparams(v)
            sh = list(x.shape)
            b.add(n.name, "quantize", [(src(n.args[0]), sh, "float32", x)], (sh, "int8", _int8(v)),
                  {"module_list": {"pre_cal": {"input_shape": [sh], "output_shape": [sh], "requan_scale_a": 1,
                                               "requan_zp_a": 0}, "post_cal": _post_cal(sh, s, zp)}}, {})
        elif n.op == "call_module" and type(mods[n.target]).__name__ in ("Conv2d", "ConvReLU2d", "Linear", "LinearReLU"):
            m, x = mods[n.target], env[n.args[0].name]
            s_in, zp_in = _qparams(x)
            s_out, zp_out = _qparams(v)
            wq = m.weight()
            wr = wq.dequantize()
            if wq.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
                ws = torch.full((wr.shape[0],), float(wq.q_scale()), dtype=torch.float64)
            else:
                ws = wq.q_per_channel_scales().double()
            bias = m.bias()
            bias = torch.zeros(wr.shape[0]) if bias is None else bias.detach()
            bsc = ws * s_in  # qnnpack rounds the bias to int32 in units of s_in * s_w
            bias = ((bias.double() / bsc).round() * bsc).float()
            conv = "Conv" in type(m).__name__
            xs = list(x.shape) if conv else list(x.shape) + [1] * (4 - x.dim())
            ys = list(v.shape) if conv else list(v.shape) + [1] * (4 - v.dim())
            w4 = wr if conv else wr.reshape(wr.shape[0], wr.shape[1], 1, 1)
            extra = {"quant_info": {"input_scale1": s_in, "input_zero_point1": float(128 - zp_in),
                                    "output_scale": 1.0 / s_out, "output_zero_point": float(zp_out - 128),
                                    "round_type": "round"},
                     "activation_type": "relu" if "ReLU" in type(m).__name__ else None, "activation_attr": None}
            if conv:
                extra.update({"kernel_size": list(m.kernel_size), "padding": [m.padding[0]] * 2 + [m.padding[1]] * 2,
                              "stride": list(m.stride)})
                if tuple(m.dilation) != (1, 1):
                    extra["dilation"] = list(m.dilation)
                if m.groups != 1:
                    extra["groups"] = m.groups
            q_w = wq.int_repr().float().reshape(w4.shape) - float(wq.q_zero_point() if wq.qscheme() in (
                torch.per_tensor_affine, torch.per_tensor_symmetric) else 0)
            b.add(n.name, "conv2d" if conv else "dense",
                  [(src(n.args[0]), xs, "int8", _int8(x)), (f"constant_{n.name}_weight", list(w4.shape), "int8", q_w)],
                  (ys, "int8", _int8(v)), extra, {"k": (w4, "float32"), "b": (bias, "float32")})
        elif n.op == "call_module" and type(mods[n.target]).__name__ == "MaxPool2d":
            m, x = mods[n.target], env[n.args[0].name]
            s, zp = _qparams(x)
            so, zo = _qparams(v)
            k, st, p = (m.kernel_size,) * 2 if isinstance(m.kernel_size, int) else m.kernel_size, \
                (m.stride,) * 2 if isinstance(m.stride, int) else m.stride, \
                (m.padding,) * 2 if isinstance(m.padding, int) else m.padding
            xs, ys = list(x.shape), list(v.shape)
            b.add(n.name, "max_pool2d", [(src(n.args[0]), xs, "int8", _int8(x))], (ys, "int8", _int8(v)),
                  {"pool_size": list(k), "padding": [p[0], p[0], p[1], p[1]], "stride": list(st),
                   "ceil_mode": bool(m.ceil_mode),
                   "module_list": {"pre_cal": _pre_cal(xs, s, zp),
                                   "compare_group": {"cmp_mode": "cumulative", "cmp_max_en": "max", "cmp_dim": "kernel",
                                                     "input_shape": [xs], "output_shape": [ys]},
                                   "post_cal": _post_cal(ys, so, zo)}}, {})
        elif n.op == "call_function" and n.target in (torch.ops.quantized.add, torch.ops.quantized.add_relu):
            xa, xb = env[n.args[0].name], env[n.args[1].name]
            (sa, za), (sb, zb), (so, zo) = _qparams(xa), _qparams(xb), _qparams(v)
            sh = list(v.shape)
            ml = {"pre_cal": _pre_cal(sh, sa, za, (sh, sb, _f32((128 - zb) * sb))),
                  "fp32_sum_sub_group0": {"sumsub_group_mode": "add", "sumsub_group_b_mux": "vector",
                                          "input_shape": [sh, sh], "output_shape": [sh]}}
            if n.target is torch.ops.quantized.add_relu:
                ml["relu_group"] = {"input_shape": [sh], "output_shape": [sh]}
            ml["post_cal"] = _post_cal(sh, so, zo)
            b.add(n.name, "element_wise_add", [(src(n.args[0]), sh, "int8", _int8(xa)), (src(n.args[1]), sh, "int8", _int8(xb))],
                  (sh, "int8", _int8(v)), {"module_list": ml}, {})
        elif n.op == "call_module" and type(mods[n.target]).__name__ == "AdaptiveAvgPool2d":
            x = env[n.args[0].name]
            s, zp = _qparams(x)
            so, zo = _qparams(v)
            xs, ys = list(x.shape), list(v.shape)
            if ys[2:] != [1, 1]:
                raise ValueError(f"{n.name}: only global average pooling (output 1x1) is mapped")
            area = xs[2] * xs[3]
            one = [1, 1, 1, 1]
            b.add(n.name, "avg_pool2d", [(src(n.args[0]), xs, "int8", _int8(x)),
                                         (f"{n.name}_constant1", one, "float32", torch.full(one, _f32(1.0 / area)))],
                  (ys, "int8", _int8(v)),
                  {"pool_size": xs[2:], "padding": [0, 0, 0, 0], "stride": [1, 1], "ceil_mode": False,
                   "module_list": {"pre_cal": _pre_cal(xs, s, zp, (one, 1, 0)),
                                   "fp32_mul_group": {"mul_group_k_mux": "scalar", "act_mode": "others",
                                                      "mul_group_k_scalar": _f32(1.0 / area),
                                                      "input_shape": [xs, one], "output_shape": [xs]},
                                   "acc_tree_group": {"acc_tree_mode": "acc", "acc_dim": "kernel",
                                                      "input_shape": [xs], "output_shape": [ys]},
                                   "post_cal": _post_cal(ys, so, zo)}}, {})
        elif n.op == "call_function" and n.target is torch.flatten:
            alias[n.name] = src(n.args[0])
        elif n.op == "call_method" and n.target == "dequantize":
            x = env[n.args[0].name]
            s, zp = _qparams(x)
            sh = list(x.shape) + [1] * (4 - x.dim())
            b.add(n.name, "quantize", [(src(n.args[0]), sh, "int8", _int8(x))], (sh, "float32", v),
                  {"module_list": {"pre_cal": _pre_cal(sh, s, zp),
                                   "post_cal": {"mul_k": 1, "sum_b": 0, "sumsub_mode": "add",
                                                "input_shape": [sh], "output_shape": [sh]}}}, {})
            if x.dim() < 4:  # the network's [N, K] output, as the real files end: a host reshape
                b.add(n.name + "_reshape_output0", "reshape", [(n.name, sh, "float32", v)],
                      (list(v.shape), "float32", v), {"nhwc_consistant": True}, {})
        else:
            raise ValueError(f"no Frontend IR mapping for FX node {n.name} ({n.op} {n.target})")
    ir = b.finish(out)
    if verbose:
        print(f"{model_name}: FX/qnnpack, {len(ir)} IR layers, batch {batch}, {h}x{w}, {time.time() - t0:.1f}s")
    return ir
