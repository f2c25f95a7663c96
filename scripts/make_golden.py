#!/usr/bin/python3
"""Golden data for `sim --check`: every .npy a Frontend IR's file_list names, computed by PyTorch.

PyTorch is the independent reference: every layer is computed with torch ops following the
rules (and their PyTorch recipes) in docs/functional.md; npusim's C++ kernels are never used.
Run with Debian's Python (`/usr/bin/python3`), which has python3-torch and python3-numpy
(`scripts/setup --golden` installs them). Usage and the layout of the output: docs/golden.md.

  make_golden.py IR.json -o OUT [--seed N] [--copy-ir] [--weights-dir DIR]
  make_golden.py --torchvision resnet18 --quantize fx [--batch 2] [--input 64x64] -o OUT
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
             "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1), "bool": (0, 1)}
NP_TYPE = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16, "int32": np.int32,
           "int64": np.int64, "bool": np.bool_, "float16": np.float16, "float32": np.float32,
           "float64": np.float64}
ALIASES = {"fp16": "float16", "half": "float16", "fp32": "float32", "float": "float32",
           "bf16": "bfloat16", "i8": "int8", "u8": "uint8"}


def canon(dt):
    return ALIASES.get(dt, dt)


def is_int(dt):
    return canon(dt) in INT_RANGE


def f32(v):
    """A constant as the float32 scalar tensor the hardware uses."""
    return torch.tensor(np.float32(v))


# ---- numerics (docs/functional.md) ----

def round_mode(t, mode):
    mode = mode or "round"
    if mode == "round":  # ties away from zero; torch.round alone rounds ties to even
        return torch.where((t - t.trunc()).abs() == 0.5, t.trunc() + t.sign(), t.round())
    if mode == "floor":
        return t.floor()
    if mode == "ceil":
        return t.ceil()
    raise ValueError("unsupported round mode " + repr(mode))


def to_dtype(t, dt):
    """Float32 values -> the values of dtype dt (float formats round to nearest even; integers
    round half away from zero and saturate, NaN -> 0), kept as a float32 tensor."""
    dt = canon(dt)
    if dt == "float16":
        return t.half().float()
    if dt == "bfloat16":
        return t.bfloat16().float()
    if dt in ("float32", "float64"):
        return t.float()
    lo, hi = INT_RANGE[dt]
    return torch.nan_to_num(round_mode(t.float(), "round"), nan=0.0).clamp(lo, hi)


def requantize(x, k, b, sub, mode, out_dt):
    """post_cal / the PE array's output quantizer: fl32(fl32(x*k) +- b), then carry_sel rounding
    and saturation (integers) or rounding to the float format."""
    p = x.float() * f32(k)
    t = p - f32(b) if sub else p + f32(b)
    if not is_int(out_dt):
        return to_dtype(t, out_dt)
    lo, hi = INT_RANGE[canon(out_dt)]
    return torch.nan_to_num(round_mode(t, mode), nan=0.0).clamp(lo, hi)


def pool_out(n, k, s, lo, hi, d, ceil):
    num = n + lo + hi - d * (k - 1) - 1
    o = (-(-num // s) if ceil else num // s) + 1
    if ceil and (o - 1) * s >= n + lo:
        o -= 1
    return o


def window(layer):
    k = layer.get("pool_size") or layer.get("kernel_size") or [1, 1]
    return dict(k=tuple(k), s=tuple(layer.get("stride", [1, 1])), p=tuple(layer.get("padding", [0, 0, 0, 0])),
                d=tuple(layer.get("dilation", [1, 1])), ceil=bool(layer.get("ceil_mode", False)))


def _padded_pool(x, w, fill, fn):
    """Runs a torch pooling fn with any (asymmetric) padding: pad explicitly with `fill`, pool,
    then crop to the output size of docs/functional.md (PyTorch's rule for ceil_mode)."""
    t, b, l, r = w["p"]
    H, W = x.shape[2], x.shape[3]
    oh = pool_out(H, w["k"][0], w["s"][0], t, b, w["d"][0], w["ceil"])
    ow = pool_out(W, w["k"][1], w["s"][1], l, r, w["d"][1], w["ceil"])
    y = fn(F.pad(x, (l, r, t, b), value=fill))
    return y[:, :, :oh, :ow]


def max_pool(x, w, use_max=True):
    sign = 1.0 if use_max else -1.0
    y = _padded_pool(sign * x.float(), w, -math.inf,
                     lambda z: F.max_pool2d(z, w["k"], w["s"], 0, w["d"], ceil_mode=w["ceil"]))
    return sign * y


def window_sum(x, w):
    """Sum of the in-bounds taps (padding adds 0), in float64, rounded to float32 once."""
    if w["d"] != (1, 1):
        raise ValueError("window sums take no dilation")
    return _padded_pool(x.double(), w, 0.0, lambda z: F.avg_pool2d(
        z, w["k"], w["s"], 0, ceil_mode=w["ceil"], count_include_pad=True, divisor_override=1)).float()


def avg_pool(x, w):
    """F.avg_pool2d with count_include_pad: divisor = window clipped to the padded input."""
    return _padded_pool(x.double(), w, 0.0, lambda z: F.avg_pool2d(
        z, w["k"], w["s"], 0, ceil_mode=w["ceil"], count_include_pad=True)).float()


def activation(y, act):
    if not act:
        return y
    if act == "relu":
        return torch.relu(y)
    if act == "relu6":
        return y.clamp(0, 6)
    raise ValueError("unsupported activation " + repr(act))


def run_module_list(layer, inputs):
    a = inputs[0].float()
    b = inputs[1].float() if len(inputs) > 1 else None
    out_dt = layer["output_dtype"][0]
    quantized = False
    for kind, st in layer["module_list"].items():
        if kind == "pre_cal":
            a = a * f32(st["requan_scale_a"]) + f32(st.get("requan_zp_a", 0))
            if b is not None and "requan_scale_b" in st:
                b = b * f32(st["requan_scale_b"]) + f32(st.get("requan_zp_b", 0))
        elif kind == "compare_group":
            use_max = st.get("cmp_max_en", "max") == "max"
            if st.get("cmp_dim", "kernel") == "kernel":
                a = max_pool(a, window(layer), use_max)
            else:
                a = a.amax(1, keepdim=True) if use_max else a.amin(1, keepdim=True)
        elif kind.startswith("fp32_sum_sub_group"):
            sub = st.get("sumsub_group_mode", "add") == "sub"
            o = f32(st["sumsub_group_b_scalar"]) if st.get("sumsub_group_b_mux", "vector") == "scalar" else b
            a = a - o if sub else a + o
        elif kind == "relu_group":
            a = torch.relu(a)
        elif kind == "fp32_mul_group":
            a = a * (f32(st["mul_group_k_scalar"]) if st.get("mul_group_k_mux", "scalar") == "scalar" else b)
        elif kind == "acc_tree_group":
            if st.get("acc_dim", "kernel") == "kernel":
                a = window_sum(a, window(layer))
            else:
                a = a.double().sum(1, keepdim=True).float()
        elif kind == "post_cal":
            a = requantize(a, st["mul_k"], st.get("sum_b", 0), st.get("sumsub_mode", "add") == "sub",
                           st.get("carry_sel", "round"), out_dt)
            quantized = True
        else:
            raise ValueError(f"{layer['name']}: unknown module {kind}")
    if not quantized:
        if is_int(out_dt):
            raise ValueError(f"{layer['name']}: integer output without post_cal")
        a = to_dtype(a, out_dt)
    return a


def real_input(layer, x, i=0):
    """Dequantize: (q + input_zero_point) * input_scale in float32 for integer inputs."""
    if not is_int(layer["input_dtype"][i]):
        return x.float()
    q = layer.get("quant_info") or {}
    s, zp = q[f"input_scale{i + 1}"], q.get(f"input_zero_point{i + 1}", 0.0)
    return (x.float() + f32(zp)) * f32(s)


def finish_pe(layer, y):
    out_dt = layer["output_dtype"][0]
    q = layer.get("quant_info") or {}
    if is_int(out_dt):
        return requantize(y, q["output_scale"], q.get("output_zero_point", 0.0), False,
                          q.get("round_type") or "round", out_dt)
    return to_dtype(y, out_dt)


def conv_real(layer, xr, w, b):
    """float32 real input and weights -> float32 y before requantization (float64 sums)."""
    t, bo, l, r = layer.get("padding", [0, 0, 0, 0])
    y = F.conv2d(F.pad(xr.double(), (l, r, t, bo)), w.double(), None if b is None else b.double(),
                 stride=tuple(layer.get("stride", [1, 1])), dilation=tuple(layer.get("dilation", [1, 1])),
                 groups=layer.get("groups", 1))
    return activation(y.float(), layer.get("activation_type"))


def dense_real(layer, xr, w, b):
    n = xr.shape[0]
    y = F.linear(xr.reshape(n, -1).double(), w.reshape(w.shape[0], -1).double(),
                 None if b is None else b.double())
    return activation(y.float(), layer.get("activation_type"))


def run_plain_vp(layer, inputs):
    """A vector-processor op without module_list, on real values
    (docs/functional.md#layers-run_layerlayer-inputs-params)."""
    op, out_dt = layer["operation"], layer["output_dtype"][0]
    x = real_input(layer, inputs[0])
    if op == "max_pool2d":
        y = max_pool(x, window(layer))
    elif op == "avg_pool2d":
        y = avg_pool(x, window(layer))
    elif op == "element_wise_add":
        y = activation(x + real_input(layer, inputs[1], 1), layer.get("activation_type"))
    else:
        y = x
    q = layer.get("quant_info") or {}
    if is_int(out_dt) and "output_scale" not in q:
        return to_dtype(y, out_dt)
    return finish_pe(layer, y)


# ---- drawing inputs and weights ----

class Drawer:
    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)

    def uniform(self, shape, lo, hi):
        return torch.rand(shape, generator=self.g, dtype=torch.float64) * (hi - lo) + lo

    def normal(self, shape, std=1.0):
        return torch.randn(shape, generator=self.g, dtype=torch.float64) * std

    def ints(self, shape, lo, hi):
        return torch.randint(lo, hi + 1, shape, generator=self.g).float()


def quant_range(layer):
    """Real range a quantizing layer maps onto its integer output, or None."""
    out_dt = layer["output_dtype"][0]
    if not is_int(out_dt):
        return None
    lo, hi = INT_RANGE[canon(out_dt)]
    ml = layer.get("module_list") or {}
    if "post_cal" in ml:
        k, b = ml["post_cal"]["mul_k"], ml["post_cal"].get("sum_b", 0.0)
        pre = ml.get("pre_cal", {})
        s, z = pre.get("requan_scale_a", 1.0), pre.get("requan_zp_a", 0.0)
        return sorted((((lo - b) / k - z) / s, ((hi - b) / k - z) / s))
    q = layer.get("quant_info") or {}
    if "output_scale" in q:
        k, b = q["output_scale"], q.get("output_zero_point", 0.0)
        return sorted(((lo - b) / k, (hi - b) / k))
    return None


def draw_graph_input(drawer, shape, dt, consumer):
    dt = canon(dt)
    if is_int(dt):
        lo, hi = INT_RANGE[dt]
        return drawer.ints(shape, max(lo, -128), min(hi, 127))
    rng = quant_range(consumer) if consumer.get("operation") == "quantize" else None
    if rng:  # cover the quantizer's range and a little beyond it (saturation)
        lo, hi = rng
        pad = 0.05 * (hi - lo)
        return to_dtype(drawer.uniform(shape, lo - pad, hi + pad).float(), dt)
    return to_dtype(drawer.normal(shape).float(), dt)


def target_std(layer, consumers):
    """Spread wanted for a PE layer's real output: a quarter of the range its output quantizer
    (its own, or the first consumer's) covers; 1 for float networks."""
    rng = quant_range(layer)
    for c in consumers:
        if rng is None:
            rng = quant_range(c)
    return 1.0 if rng is None else (rng[1] - rng[0]) / 4.0


def draw_weights(drawer, wshape):
    """int8 weights, bell-shaped over [-127, 127]."""
    return drawer.normal(wshape, 40.0).round().clamp(-127, 127).float()


def calibrate(drawer, layer, xr, q, consumers):
    """A power-of-two scale per output channel, picked so that the output spreads over the
    quantizer's range on this input (real weights q * 2^e are exact in float32 and float16),
    and a small bias exact in float16. Returns (scale, bias)."""
    op = layer["operation"]
    y0 = conv_real(dict(layer, activation_type=None), xr, q, None) if op == "conv2d" else \
        dense_real(dict(layer, activation_type=None), xr, q, None)
    # RMS, not std: with batch 1-2 a dense layer has too few samples per channel for a std.
    rms = y0.double().transpose(0, 1).reshape(y0.shape[1], -1).pow(2).mean(1).sqrt()
    rms = torch.where(rms > 0, rms, torch.ones_like(rms))
    target = target_std(layer, consumers)
    scale = torch.exp2(torch.round(torch.log2(target / rms))).float()
    bias = to_dtype((drawer.normal([q.shape[0]], 0.1 * target)).float(), "float16")
    return scale, bias


def real_weights(q, scale):
    return q * scale.reshape(-1, *([1] * (q.dim() - 1)))


class WeightStore:
    """--weights-dir: int8 weight patterns shared by every layer (and network) with the same
    weight shape, k_<shape>.npy, and per layer <layer>_k_scale.npy and <layer>_b.npy. Files
    already there are reused, so two networks (the int8 and fp16 ResNet-18) share them."""

    def __init__(self, wdir, out):
        self.dir, self.rel = wdir, os.path.relpath(wdir, out)
        os.makedirs(wdir, exist_ok=True)

    def names(self, layer):
        shape = "x".join(str(d) for d in layer["input_shape"][1])
        return {"k": f"k_{shape}.npy", "k_scale": f"{layer['name']}_k_scale.npy", "b": f"{layer['name']}_b.npy"}

    def _load(self, name):
        p = os.path.join(self.dir, name)
        return torch.from_numpy(np.load(p).astype(np.float32)) if os.path.exists(p) else None

    def get(self, drawer, layer, xr, consumers):
        n = self.names(layer)
        q = self._load(n["k"])
        if q is None:
            q = draw_weights(drawer, layer["input_shape"][1])
            save(os.path.join(self.dir, n["k"]), q, "int8")
        scale, b = self._load(n["k_scale"]), self._load(n["b"])
        if scale is None or b is None:
            scale, b = calibrate(drawer, layer, xr, q, consumers)
            save(os.path.join(self.dir, n["k_scale"]), scale, "float32")
            save(os.path.join(self.dir, n["b"]), b, "float32")
        return q, scale, b

    def point_file_list(self, layer):
        fl = layer.setdefault("file_list", {})
        for role, name in self.names(layer).items():
            fl[role] = os.path.join(self.rel, name)
        fl.pop("input_activation2", None)  # the weights are k (int8) with k_scale; no second copy


# ---- the IR walk ----

def save(path, values, dt):
    dt = canon(dt)
    if dt == "bfloat16":
        arr = values.bfloat16().view(torch.int16).numpy().view("<u2")
    else:
        arr = values.numpy().astype(NP_TYPE[dt])
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    np.save(path, arr)


def generate(ir, out, seed, weights_dir=None, verbose=True):
    """Computes every layer and writes the file_list .npy files into `out`. With weights_dir,
    conv/dense weights are stored there as int8 k + k_scale + b (reused when present) and the
    layer's file_list is rewritten to name them; returns the (possibly rewritten) IR."""
    layers = sorted(ir.values(), key=lambda l: l["layer_index"])
    by_name = {l["name"]: l for l in layers}
    drawer = Drawer(seed)
    store = WeightStore(weights_dir, out) if weights_dir else None
    values = {}  # producer name -> float32 tensor of the values it outputs
    t_all = time.time()
    for layer in layers:
        t0 = time.time()
        name, op, fl = layer["name"], layer["operation"], layer.get("file_list", {})
        consumers = [by_name[n] for n in layer.get("next_layer", []) if n in by_name]
        ins = []
        for i, prev in enumerate(layer.get("previous_layer", [])):
            shape, dt = layer["input_shape"][i], layer["input_dtype"][i]
            if prev in values:
                v = values[prev]
                if list(v.shape) != list(shape):
                    v = v.reshape(shape)
                ins.append(to_dtype(v, dt))
            elif prev in by_name:
                raise ValueError(f"{name}: input {prev} is not computed yet (layer order)")
            elif i == 1 and op in ("conv2d", "dense"):
                ins.append(None)  # weights, drawn below
            elif i == 1 and op == "avg_pool2d":  # the VP's constant 1/(kh*kw)
                k = window(layer)["k"]
                ins.append(to_dtype(torch.full(shape, 1.0 / (k[0] * k[1])), dt))
            else:
                v = draw_graph_input(drawer, shape, dt, layer)
                values[prev] = v
                ins.append(v)
        extra = {}
        if op in ("conv2d", "dense"):
            xr = real_input(layer, ins[0])
            if store:
                q, scale, b = store.get(drawer, layer, xr, consumers)
            else:
                q = draw_weights(drawer, layer["input_shape"][1])
                scale, b = calibrate(drawer, layer, xr, q, consumers)
            w = real_weights(q, scale)
            wdt = layer["input_dtype"][1] if len(layer["input_dtype"]) > 1 else "float32"
            y = conv_real(layer, xr, w, b) if op == "conv2d" else dense_real(layer, xr, w, b)
            y = finish_pe(layer, y).reshape(layer["output_shape"][0])
            if len(ins) > 1:
                ins[1] = q if is_int(wdt) else to_dtype(w, wdt)
            if store:
                store.point_file_list(layer)
                fl = layer["file_list"]
            else:  # docs/functional.md: k holds the real weights (float), b the real bias
                kdt = "float32" if is_int(wdt) else wdt
                extra = {"k": (w, kdt), "b": (b, kdt)}
        elif op == "reshape":
            y = to_dtype(ins[0], layer["output_dtype"][0]).reshape(layer["output_shape"][0])
        elif layer.get("module_list"):
            y = run_module_list(layer, ins)
        else:
            y = run_plain_vp(layer, ins)
        if list(y.shape) != list(layer["output_shape"][0]):
            raise ValueError(f"{name}: computed {list(y.shape)}, the IR says {layer['output_shape'][0]}")
        values[name] = y
        for role, fname in fl.items():
            if role.startswith("input_activation"):
                i = int(role[len("input_activation"):]) - 1
                if i < len(ins) and ins[i] is not None:
                    save(os.path.join(out, fname), ins[i], layer["input_dtype"][i])
            elif role == "output_activation1":
                save(os.path.join(out, fname), y, layer["output_dtype"][0])
            elif role in extra:
                save(os.path.join(out, fname), *extra[role])
        if verbose:
            odt = layer["output_dtype"][0]
            stats = f"min {y.min().item():.4g} max {y.max().item():.4g}"
            if is_int(odt):
                lo, hi = INT_RANGE[canon(odt)]
                stats += f" at_lo {(y == lo).float().mean().item():.3f} at_hi {(y == hi).float().mean().item():.3f}"
            else:
                stats += f" std {y.float().std().item():.4g}"
            print(f"{layer['layer_index']:4d} {name:34s} {op:17s} {odt:8s} {stats}  {time.time() - t0:.2f}s")
    if verbose:
        print(f"{len(layers)} layers in {time.time() - t_all:.1f}s")
    return ir


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ir", nargs="?", help="Frontend IR (.json)")
    ap.add_argument("-o", "--out", required=True, help="output folder for the .npy files")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--copy-ir", action="store_true", help="write the IR (same file name) and meta.json into OUT")
    ap.add_argument("--weights-dir", help="store conv/dense weights here as int8 k + k_scale + b (reused if "
                    "present) and point file_list at them (implies --copy-ir)")
    ap.add_argument("--hw", default="configs/npu.yaml", help="hardware recorded in meta.json for `sim regress`")
    ap.add_argument("--source", help="how the IR was made, recorded in meta.json (e.g. the sim zoo command)")
    ap.add_argument("--torchvision", help="instead of an IR: a torchvision model (resnet18, resnet50...)")
    ap.add_argument("--quantize", choices=["fx"], help="with --torchvision: FX post-training quantization")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--input", default="224x224", help="with --torchvision: HxW")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(2)
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    if a.torchvision:
        if a.ir:
            ap.error("give an IR or --torchvision, not both")
        import make_golden_fx  # noqa: E402 (only needs torchvision when asked for)
        h, w = (int(v) for v in a.input.lower().split("x"))
        ir = make_golden_fx.generate_fx(a.torchvision, a.quantize, a.batch, h, w, a.seed, a.out, not a.quiet)
        source = f"--torchvision {a.torchvision} --quantize {a.quantize} --batch {a.batch} --input {a.input}"
        ir_name = f"{a.torchvision}_{a.quantize}_b{a.batch}_{h}x{w}.json"
        copy = True
    else:
        if not a.ir:
            ap.error("give a Frontend IR or --torchvision")
        with open(a.ir) as f:
            ir = json.load(f)
        ir = generate(ir, a.out, a.seed, a.weights_dir, not a.quiet)
        ir_name = os.path.basename(a.ir)
        source = a.source or ir_name
        copy = a.copy_ir or bool(a.weights_dir)
    if copy:
        with open(os.path.join(a.out, ir_name), "w") as f:
            json.dump(ir, f, indent=1)
            f.write("\n")
        meta = {"ir": ir_name, "hw": a.hw, "source": source, "seed": a.seed,
                "generator": "scripts/make_golden.py", "torch": torch.__version__}
        with open(os.path.join(a.out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
    if not a.quiet:
        print(f"make_golden: wrote {a.out} in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
