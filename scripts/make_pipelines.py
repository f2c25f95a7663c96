#!/usr/bin/python3
"""Writes the example pipelines of examples/pipelines/ by hand (docs/format_pipeline.md).

Usage: scripts/make_pipelines.py [OUTDIR]     (default OUTDIR: examples/pipelines)

The pipeline format is furiosa-llm's intermediate pipeline (../shared/specs/pipeline_format.en.md,
../shared/notes/format_notes.md section 4). Compute supertasks carry "fx" payloads: base64 of the
torch.export graph-schema JSON (torch/_export/serde/schema.py: a Graph with inputs, outputs,
nodes, tensor_values...) plus the producer's extra "metadata" key, as furiosa-llm's serialize_gm
writes them. Debian's torch 1.13 has no torch.export, so the graphs are written here node by node
from the schema: arguments are unions ({"as_tensor": {"name": ...}}, {"as_int": 3}...), tensor
metadata gives each value's ScalarType number and sizes.

Writes three pipelines and their safetensors parameter files (all weights zero, bf16):
  tp2_mlp.json              2 devices, tensor-parallel MLP: per device mm -> gelu -> mm on
                            column / row shards, all_reduce(sum), bias add. 2025 producer form
                            (device strings, param_files, blobs + data_blob, kind "fx").
  pp4_transformer.json      4 devices, pipeline parallel: one transformer block per device
                            (layer norm, q/k/v/o linears, 2 heads, softmax attention, MLP),
                            stages joined by send/recv pairs. 2025 producer form, one shared blob.
  ag_rs8_layer.json         8 devices, sequence-parallel MLP: all_gather(dim 0) -> linear ->
                            gelu -> linear -> reduce_scatter(dim 0, sum). The spec's own form
                            (devices {kind, idx}, values {path, format, ...}, kind "FX", inline
                            data).
The MAC counts the tests expect are in the comments of each builder.
Standard library only; the output is byte-for-byte deterministic.
"""
import base64
import json
import os
import struct
import sys

# torch.export ScalarType numbers (schema.py, torch >= 2.1) and bytes per element.
SCALAR = {"bf16": 13, "f16": 6, "f32": 7, "i64": 5, "i32": 4, "bool": 12}
ST_DTYPE = {"bf16": ("BF16", 2), "f16": ("F16", 2), "f32": ("F32", 4), "i64": ("I64", 8)}


def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# ---- torch.export graph schema ----

def T(name):
    return {"as_tensor": {"name": name}}


def I(v):
    return {"as_int": v}


def INTS(v):
    return {"as_ints": list(v)}


def F(v):
    return {"as_float": float(v)}


def B(v):
    return {"as_bool": v}


NONE = {"as_none": True}


class Fx:
    """A torch.export Graph built node by node; values are named as torch names them (mm, mm_1...)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.inputs, self.outputs, self.nodes = [], [], []
        self.tensor_values = {}
        self.counts = {}

    def _meta(self, name, shape, dtype):
        strides, s = [], 1
        for d in reversed(shape):
            strides.insert(0, s)
            s *= d
        self.tensor_values[name] = {
            "dtype": SCALAR[dtype],
            "sizes": [{"as_int": d} for d in shape],
            "requires_grad": False,
            "device": {"type": "cpu", "index": None},
            "strides": [{"as_int": d} for d in strides],
            "storage_offset": {"as_int": 0},
            "layout": 7,
        }

    def _name(self, base):
        k = self.counts.get(base, 0)
        self.counts[base] = k + 1
        return base if k == 0 else "%s_%d" % (base, k)

    def input(self, shape, dtype=None):
        name = "arg%d_1" % len(self.inputs)
        self._meta(name, shape, dtype or self.dtype)
        self.inputs.append(T(name))
        return name

    def call(self, op, args, shapes, base=None, overload="default", dtype=None):
        """One aten node; args: [(schema name, Argument)]; shapes: one shape or a list of them."""
        multi = isinstance(shapes[0], list) if shapes else False
        outs = []
        for shape in (shapes if multi else [shapes]):
            name = self._name(base or op.lstrip("_"))
            self._meta(name, shape, dtype or self.dtype)
            outs.append(name)
        self.nodes.append({
            "target": "torch.ops.aten.%s.%s" % (op, overload),
            "inputs": [{"name": n, "arg": a, "kind": 1} for n, a in args],
            "outputs": [T(o) for o in outs],
            "metadata": {},
        })
        return outs if multi else outs[0]

    def output(self, *names):
        self.outputs = [T(n) for n in names]

    def payload(self):
        """base64(JSON) as furiosa-llm's serialize_gm writes it: the Graph plus its "metadata"."""
        g = {
            "inputs": self.inputs,
            "outputs": self.outputs,
            "nodes": self.nodes,
            "tensor_values": self.tensor_values,
            "sym_int_values": {},
            "sym_bool_values": {},
            "is_single_tensor_return": False,
            "custom_obj_values": {},
            "metadata": {
                "node_metas": {},
                "node_dynamo_source_info": {},
                "node_names": [n["outputs"][0]["as_tensor"]["name"] for n in self.nodes],
                "constant_saved_info": {"param_files": {}, "tensor_to_saved_file_id_and_saved_name": {}, "blob": None},
                "getattr_node_targets": {},
            },
        }
        text = json.dumps(g, sort_keys=False, separators=(",", ":"))
        return base64.b64encode(text.encode("utf-8")).decode("ascii")

    # ---- the aten ops the examples use ----
    def mm(self, a, b, shape):
        return self.call("mm", [("self", T(a)), ("mat2", T(b))], shape)

    def bmm(self, a, b, shape):
        return self.call("bmm", [("self", T(a)), ("mat2", T(b))], shape)

    def linear(self, x, w, b, shape):
        return self.call("linear", [("input", T(x)), ("weight", T(w)), ("bias", T(b) if b else NONE)], shape)

    def gelu(self, x, shape):
        return self.call("gelu", [("self", T(x))], shape)

    def add(self, a, b, shape):
        return self.call("add", [("self", T(a)), ("other", T(b))], shape, overload="Tensor")


# ---- safetensors ----

def safetensors_bytes(tensors):
    """tensors: [(name, shape, dtype)] -> the file (zero data), header padded with spaces to 8 bytes."""
    header, offset = {}, 0
    for name, shape, dtype in tensors:
        st, size = ST_DTYPE[dtype]
        n = prod(shape) * size
        header[name] = {"dtype": st, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + bytes(offset)


# ---- helpers for pipelines ----

def tensor(shape, dtype):
    return {"shape": list(shape), "dtype": dtype}


def param(shape, dtype, file_id, name, placements):
    """A constant, 2025 form (ParamValue.param_file)."""
    return {"shape": list(shape), "dtype": dtype,
            "value": {"param_file": file_id, "name": name, "name_in_graph": name.replace(".", "_"),
                      "placements": [list(p) for p in placements]}}


def full(shape):
    return [[0, d] for d in shape]


def pipeline(name, devices, tensors, supertasks, metadata, blobs=None, param_files=None):
    p = {"name": name, "devices": devices, "tensors": tensors, "supertasks": supertasks, "metadata": metadata}
    if blobs is not None:
        p["blobs"] = blobs
    if param_files is not None:
        p["param_files"] = param_files
    p["device_constraints"] = []
    p["version"] = "0.1.0"
    return p


def slice_meta(placements, origin, dtype, device):
    return {"placements": [list(p) for p in placements], "origin": origin, "dtype": dtype, "device": device}


# ---- example 1: 2-device tensor-parallel MLP ----

def tp2_mlp():
    """x [T, D] on both devices; W1 [D, F] column shards, W2 [F, D] row shards; all_reduce; + b2.
    T=32, D=64, F=256, 2 devices (shards F/2 = 128).
    MACs per device: mm 32*64*128 + mm 32*128*64 = 262144 + 262144 = 524288."""
    T_, D, F_, n, dt = 32, 64, 256, 2, "bf16"
    f = F_ // n
    up = Fx(dt)
    x, w1, w2 = up.input([T_, D]), up.input([D, f]), up.input([f, D])
    h = up.mm(x, w1, [T_, f])
    g = up.gelu(h, [T_, f])
    y = up.mm(g, w2, [T_, D])
    up.output(y)
    bias = Fx(dt)
    r, b = bias.input([T_, D]), bias.input([D])
    bias.output(bias.add(r, b, [T_, D]))
    bias_payload = bias.payload()

    devices = {str(d): "npu:%d:*" % d for d in range(n)}
    tensors, st = {}, {}
    st["0"] = {"kind": "input", "inputs": [], "outputs": ["x_%d" % d for d in range(n)]}
    sid = 1
    for d in range(n):
        tensors["x_%d" % d] = tensor([T_, D], dt)
        tensors["w1_%d" % d] = param([D, f], dt, "0", "mlp.w1", [(0, D), (d * f, (d + 1) * f)])
        tensors["w2_%d" % d] = param([f, D], dt, "0", "mlp.w2", [(d * f, (d + 1) * f), (0, D)])
        tensors["b2_%d" % d] = param([D], dt, "0", "mlp.b2", [(0, D)])
        tensors["partial_%d" % d] = tensor([T_, D], dt)
        tensors["reduced_%d" % d] = tensor([T_, D], dt)
        tensors["y_%d" % d] = tensor([T_, D], dt)
    for d in range(n):
        st[str(sid)] = {"kind": "fx", "inputs": ["x_%d" % d, "w1_%d" % d, "w2_%d" % d], "outputs": ["partial_%d" % d],
                        "device": str(d), "data": None, "data_blob": "mlp_up_down"}
        sid += 1
    for d in range(n):
        st[str(sid)] = {"kind": "all_reduce", "inputs": ["partial_%d" % d], "outputs": ["reduced_%d" % d],
                        "device": str(d), "group": "all_reduce_0", "device_idx": d, "metadata": {"reduce_op": "sum"}}
        sid += 1
    for d in range(n):
        # The first bias add carries its payload inline (data), the second shares it as a blob.
        st[str(sid)] = {"kind": "fx", "inputs": ["reduced_%d" % d, "b2_%d" % d], "outputs": ["y_%d" % d],
                        "device": str(d), "data": bias_payload if d == 0 else None,
                        "data_blob": None if d == 0 else "bias_add"}
        sid += 1
    st[str(sid)] = {"kind": "output", "inputs": ["y_%d" % d for d in range(n)], "outputs": []}
    metadata = {
        "tensors": {"inputs": {"x": {"shape": [T_, D], "dtype": dt, "idx": 0}},
                    "outputs": {"y": {"shape": [T_, D], "dtype": dt, "idx": 0}}},
        "tensor_slices": {
            "inputs": {"x_%d" % d: slice_meta(full([T_, D]), "x", dt, str(d)) for d in range(n)},
            "outputs": {"y_%d" % d: slice_meta(full([T_, D]), "y", dt, str(d)) for d in range(n)}},
    }
    params = [("mlp.b2", [D], dt), ("mlp.w1", [D, F_], dt), ("mlp.w2", [F_, D], dt)]
    p = pipeline("tp2_mlp", devices, tensors, st, metadata,
                 blobs={"mlp_up_down": up.payload(), "bias_add": bias_payload},
                 param_files={"0": {"path": "tp2_mlp.safetensors", "format": "safetensors"}})
    return p, params


# ---- example 2: 4-stage pipeline-parallel transformer ----

def transformer_block(S, D, H, F_, dt):
    """One pre-norm block: ln -> q/k/v linears -> 2-head attention -> o linear -> residual ->
    ln -> linear -> gelu -> linear -> residual. S=16, D=32, H=2 (dh 16), F=64.
    MACs: q, k, v, o: 4 * 16*32*32 = 65536; scores bmm 2*16*16*16 = 8192; context bmm 8192;
    MLP 16*32*64 + 16*64*32 = 65536; total 147456."""
    dh = D // H
    g = Fx(dt)
    x = g.input([S, D])
    names = ["ln1_w", "ln1_b", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "ln2_w", "ln2_b", "w1", "b1", "w2", "b2"]
    shapes = {"ln1_w": [D], "ln1_b": [D], "wq": [D, D], "bq": [D], "wk": [D, D], "bk": [D], "wv": [D, D], "bv": [D],
              "wo": [D, D], "bo": [D], "ln2_w": [D], "ln2_b": [D], "w1": [F_, D], "b1": [F_], "w2": [D, F_], "b2": [D]}
    p = {n: g.input(shapes[n]) for n in names}
    ln, _, _ = g.call("native_layer_norm", [("input", T(x)), ("normalized_shape", INTS([D])), ("weight", T(p["ln1_w"])),
                                            ("bias", T(p["ln1_b"])), ("eps", F(1e-5))],
                      [[S, D], [S, 1], [S, 1]], base="native_layer_norm", dtype=dt)
    q = g.linear(ln, p["wq"], p["bq"], [S, D])
    k = g.linear(ln, p["wk"], p["bk"], [S, D])
    v = g.linear(ln, p["wv"], p["bv"], [S, D])
    qh = g.call("permute", [("self", T(g.call("view", [("self", T(q)), ("size", INTS([S, H, dh]))], [S, H, dh]))),
                            ("dims", INTS([1, 0, 2]))], [H, S, dh])
    kt = g.call("permute", [("self", T(g.call("view", [("self", T(k)), ("size", INTS([S, H, dh]))], [S, H, dh]))),
                            ("dims", INTS([1, 2, 0]))], [H, dh, S])
    vh = g.call("permute", [("self", T(g.call("view", [("self", T(v)), ("size", INTS([S, H, dh]))], [S, H, dh]))),
                            ("dims", INTS([1, 0, 2]))], [H, S, dh])
    scores = g.bmm(qh, kt, [H, S, S])
    scaled = g.call("div", [("self", T(scores)), ("other", F(dh ** 0.5))], [H, S, S], overload="Tensor")
    attn = g.call("_softmax", [("self", T(scaled)), ("dim", I(-1)), ("half_to_float", B(False))], [H, S, S])
    ctx = g.bmm(attn, vh, [H, S, dh])
    ctx = g.call("permute", [("self", T(ctx)), ("dims", INTS([1, 0, 2]))], [S, H, dh])
    ctx = g.call("clone", [("self", T(ctx)), ("memory_format", {"as_memory_format": 1})], [S, H, dh])
    ctx = g.call("_unsafe_view", [("self", T(ctx)), ("size", INTS([S, D]))], [S, D])
    o = g.linear(ctx, p["wo"], p["bo"], [S, D])
    res1 = g.add(x, o, [S, D])
    ln2 = g.call("layer_norm", [("input", T(res1)), ("normalized_shape", INTS([D])), ("weight", T(p["ln2_w"])),
                                ("bias", T(p["ln2_b"])), ("eps", F(1e-5)), ("cudnn_enable", B(True))], [S, D])
    up = g.gelu(g.linear(ln2, p["w1"], p["b1"], [S, F_]), [S, F_])
    down = g.linear(up, p["w2"], p["b2"], [S, D])
    g.output(g.add(res1, down, [S, D]))
    return g, names, shapes


def pp4_transformer():
    S, D, H, F_, n, dt = 16, 32, 2, 64, 4, "bf16"
    block, names, shapes = transformer_block(S, D, H, F_, dt)
    devices = {str(d): "npu:%d:*" % d for d in range(n)}
    tensors, st, params = {"x": tensor([S, D], dt)}, {}, []
    st["0"] = {"kind": "input", "inputs": [], "outputs": ["x"]}
    sid = 1
    for d in range(n):
        stored = {nm: "layers.%d.%s" % (d, nm) for nm in names}
        for nm in names:
            tensors["l%d_%s" % (d, nm)] = param(shapes[nm], dt, "0", stored[nm], full(shapes[nm]))
            params.append((stored[nm], shapes[nm], dt))
        x_in = "x" if d == 0 else "x_%d" % d
        out = "h_%d" % d
        tensors[out] = tensor([S, D], dt)
        st[str(sid)] = {"kind": "fx", "inputs": [x_in] + ["l%d_%s" % (d, nm) for nm in names], "outputs": [out],
                        "device": str(d), "data": None, "data_blob": "block"}
        sid += 1
        if d + 1 < n:
            tensors["x_%d" % (d + 1)] = tensor([S, D], dt)
            group = "pp_%d_%d" % (d, d + 1)
            st[str(sid)] = {"kind": "send", "inputs": [out], "outputs": [], "device": str(d), "group": group,
                            "device_idx": 0, "metadata": {}}
            st[str(sid + 1)] = {"kind": "recv", "inputs": [], "outputs": ["x_%d" % (d + 1)], "device": str(d + 1),
                                "group": group, "device_idx": 1, "metadata": {}}
            sid += 2
    st[str(sid)] = {"kind": "output", "inputs": ["h_%d" % (n - 1)], "outputs": []}
    metadata = {
        "tensors": {"inputs": {"x": {"shape": [S, D], "dtype": dt, "idx": 0}},
                    "outputs": {"y": {"shape": [S, D], "dtype": dt, "idx": 0}}},
        "tensor_slices": {"inputs": {"x": slice_meta(full([S, D]), "x", dt, "0")},
                          "outputs": {"h_%d" % (n - 1): slice_meta(full([S, D]), "y", dt, str(n - 1))}},
    }
    params.sort()
    p = pipeline("pp4_transformer", devices, tensors, st, metadata, blobs={"block": block.payload()},
                 param_files={"0": {"path": "pp4_transformer.safetensors", "format": "safetensors"}})
    return p, params


# ---- example 3: 8-device all_gather + reduce_scatter layer ----

def ag_rs8_layer():
    """Sequence parallel: x [S/n, D] per device -> all_gather(dim 0) -> [S, D] -> linear (W1 row
    shard [F/n, D] + b1 shard) -> gelu -> linear (W2 column shard [D, F/n], no bias) -> partial
    [S, D] -> reduce_scatter(dim 0, sum) -> [S/n, D]. S=64, D=64, F=256, 8 devices (F/n = 32).
    MACs per device: 64*64*32 + 64*32*64 = 131072 + 131072 = 262144."""
    S, D, F_, n, dt = 64, 64, 256, 8, "bf16"
    s, f = S // n, F_ // n
    g = Fx(dt)
    xg, w1, b1, w2 = g.input([S, D]), g.input([f, D]), g.input([f]), g.input([D, f])
    h = g.gelu(g.linear(xg, w1, b1, [S, f]), [S, f])
    g.output(g.linear(h, w2, None, [S, D]))
    data = g.payload()
    devices = {"npu%d" % d: {"kind": "npu", "idx": d} for d in range(n)}
    tensors, st = {}, {}
    st["input"] = {"kind": "input", "inputs": [], "outputs": ["x_%d" % d for d in range(n)]}

    def value(shape, name, placements):
        return {"shape": list(shape), "dtype": dt,
                "value": {"path": "ag_rs8_layer.safetensors", "format": "safetensors", "name": name,
                          "name_in_graph": name.replace(".", "_"), "placements": [list(p) for p in placements]}}

    for d in range(n):
        dev = "npu%d" % d
        tensors["x_%d" % d] = tensor([s, D], dt)
        tensors["xg_%d" % d] = tensor([S, D], dt)
        tensors["w1_%d" % d] = value([f, D], "mlp.w1", [(d * f, (d + 1) * f), (0, D)])
        tensors["b1_%d" % d] = value([f], "mlp.b1", [(d * f, (d + 1) * f)])
        tensors["w2_%d" % d] = value([D, f], "mlp.w2", [(0, D), (d * f, (d + 1) * f)])
        tensors["partial_%d" % d] = tensor([S, D], dt)
        tensors["y_%d" % d] = tensor([s, D], dt)
        st["gather_%d" % d] = {"kind": "all_gather", "inputs": ["x_%d" % d], "outputs": ["xg_%d" % d], "device": dev,
                               "group": "ag", "device_idx": d, "metadata": {"dim": 0}}
        st["mlp_%d" % d] = {"kind": "FX", "inputs": ["xg_%d" % d, "w1_%d" % d, "b1_%d" % d, "w2_%d" % d],
                            "outputs": ["partial_%d" % d], "device": dev, "data": data}
        st["scatter_%d" % d] = {"kind": "reduce_scatter", "inputs": ["partial_%d" % d], "outputs": ["y_%d" % d],
                                "device": dev, "group": "rs", "device_idx": d,
                                "metadata": {"reduce_op": "sum", "dim": 0}}
    st["output"] = {"kind": "output", "inputs": ["y_%d" % d for d in range(n)], "outputs": []}
    metadata = {
        "tensors": {"inputs": {"x": {"shape": [S, D], "dtype": dt, "idx": 0}},
                    "outputs": {"y": {"shape": [S, D], "dtype": dt, "idx": 0}}},
        "tensor_slices": {
            "inputs": {"x_%d" % d: slice_meta([(d * s, (d + 1) * s), (0, D)], "x", dt, "npu%d" % d) for d in range(n)},
            "outputs": {"y_%d" % d: slice_meta([(d * s, (d + 1) * s), (0, D)], "y", dt, "npu%d" % d) for d in range(n)}},
    }
    params = [("mlp.b1", [F_], dt), ("mlp.w1", [F_, D], dt), ("mlp.w2", [D, F_], dt)]
    return pipeline("ag_rs8_layer", devices, tensors, st, metadata), params


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "examples", "pipelines")
    os.makedirs(out, exist_ok=True)
    for name, build in (("tp2_mlp", tp2_mlp), ("pp4_transformer", pp4_transformer), ("ag_rs8_layer", ag_rs8_layer)):
        p, params = build()
        with open(os.path.join(out, name + ".json"), "w") as fh:
            fh.write(json.dumps(p, indent=4) + "\n")
        with open(os.path.join(out, name + ".safetensors"), "wb") as fh:
            fh.write(safetensors_bytes(params))
        print("wrote", os.path.join(out, name + ".json"))


if __name__ == "__main__":
    main()
