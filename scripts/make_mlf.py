#!/usr/bin/python3
"""Builds small TVM Model Library Format archives by hand, for the tests of frontends/tvm_mlf.

Usage: scripts/make_mlf.py [OUTDIR] [--plain-tar]     (default OUTDIR: tests/data/tvm_mlf)

Writes, for each metadata version 5, 6 and 7:
  OUTDIR/v<N>/         the archive as a directory
  OUTDIR/v<N>.tar.gz   the same as a gzip-compressed tar (members "./metadata.json"..., as
                       TVM's export_model_library_format writes them: tar.add(dir, arcname="."))
  OUTDIR/v<N>.tar      with --plain-tar: the same uncompressed (TVM writes this form)

tests/data/tvm_mlf holds the output without --plain-tar (a plain .tar is 10 KiB records of
mostly zeros): the tests pack the .tar forms themselves with libarchive.

Versions 5 and 6 hold one model ("default": conv2d+add+relu, max_pool2d, batch_flatten,
dense+add, softmax). Version 7 holds two modules: "cnn" (the same model) and "tiny" (a
stride-2 conv, an unrecognised fused function that becomes an opaque op, avg_pool2d,
layout_transform, reshape, dense, multiply+add), float16.

Layouts follow docs/arch/model_library_format.rst and the TVM notes of the project
(metadata v5: target is a dict; v6: a list; v7: a "modules" map; graph in
executor-config/graph/graph.json up to v6 and executor-config/graph/<module>.graph in v7;
parameters/<model or module>.params in tvm.relay.save_param_dict's binary layout).
Standard library only; the output is byte-for-byte deterministic.
"""
import gzip
import io
import json
import os
import shutil
import struct
import sys
import tarfile

LIST_MAGIC = 0xF7E58D4F05049CB7  # kTVMNDArrayListMagic
ARRAY_MAGIC = 0xDD5E40F096B4A13F  # kTVMNDArrayMagic
DTYPES = {"float32": (2, 32, "<f"), "float16": (2, 16, "<e"), "int8": (0, 8, "<b"), "int32": (0, 32, "<i")}
DATETIME = "2022-06-17 12:00:00Z"


def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def params_bytes(params):
    """tvm.relay.save_param_dict: names, then one DLTensor per name, matched by position."""
    out = io.BytesIO()
    out.write(struct.pack("<QQQ", LIST_MAGIC, 0, len(params)))
    for name, _, _ in params:
        b = name.encode()
        out.write(struct.pack("<Q", len(b)) + b)
    out.write(struct.pack("<Q", len(params)))
    for k, (name, shape, dtype) in enumerate(params):
        code, bits, fmt = DTYPES[dtype]
        out.write(struct.pack("<QQiiiBBH", ARRAY_MAGIC, 0, 1, 0, len(shape), code, bits, 1))
        out.write(struct.pack("<%dq" % len(shape), *shape))
        n = prod(shape)
        out.write(struct.pack("<q", n * ((bits + 7) // 8)))
        # Deterministic small values.
        vals = [((i * 37 + k * 11) % 17 - 8) / 16.0 for i in range(n)]
        out.write(b"".join(struct.pack(fmt, v if dtype.startswith("float") else int(v * 16)) for v in vals))
    return out.getvalue()


class GraphBuilder:
    """A GraphExecutor graph.json: nodes, per-entry attrs, storage ids reused as TVM's planner would."""

    def __init__(self, device_index):
        self.nodes, self.shapes, self.dltypes, self.sids = [], [], [], []
        self.arg_nodes, self.params, self.device_index = [], [], device_index

    def null(self, name, shape, dtype, sid, param=False):
        self.arg_nodes.append(len(self.nodes))
        self.nodes.append({"op": "null", "name": name, "inputs": []})
        self._entry(shape, dtype, sid)
        if param:
            self.params.append((name, shape, dtype))
        return len(self.nodes) - 1

    def op(self, func, inputs, shape, dtype, sid):
        self.nodes.append({
            "op": "tvm_op", "name": func,
            "attrs": {"num_outputs": "1", "num_inputs": str(len(inputs)), "flatten_data": "0",
                      "func_name": func, "hash": "%016x" % (len(self.nodes) * 0x9E3779B1)},
            "inputs": [[i, 0, 0] for i in inputs]})
        self._entry(shape, dtype, sid)
        return len(self.nodes) - 1

    def _entry(self, shape, dtype, sid):
        self.shapes.append(list(shape))
        self.dltypes.append(dtype)
        self.sids.append(sid)

    def json(self, head):
        attrs = {"dltype": ["list_str", self.dltypes], "storage_id": ["list_int", self.sids],
                 "shape": ["list_shape", self.shapes]}
        if self.device_index:
            attrs["device_index"] = ["list_int", [1] * len(self.shapes)]
        g = {"nodes": self.nodes, "arg_nodes": self.arg_nodes, "heads": [[head, 0, 0]], "attrs": attrs,
             "node_row_ptr": list(range(len(self.nodes) + 1))}
        return json.dumps(g, indent=2) + "\n"

    def sids_memory(self):
        """metadata "memory.sids": the first entry of each storage id, as MLF writes it."""
        seen, r = set(), []
        for i, sid in enumerate(self.sids):
            if sid in seen:
                continue
            seen.add(sid)
            code, bits, _ = DTYPES[self.dltypes[i]]
            r.append({"storage_id": sid, "size_bytes": prod(self.shapes[i]) * bits // 8})
        return r


def cnn(prefix, device_index):
    """conv2d(3->4, 3x3, pad 1)+bias+relu, max_pool2d 2x2, batch_flatten, dense 64->10 + bias, softmax."""
    g = GraphBuilder(device_index)
    f = "tvmgen_%s_fused_" % prefix
    data = g.null("data", [1, 3, 8, 8], "float32", 0)
    p0 = g.null("p0", [4, 3, 3, 3], "float32", 1, True)
    p1 = g.null("p1", [4, 1, 1], "float32", 2, True)
    conv = g.op(f + "nn_conv2d_add_nn_relu", [data, p0, p1], [1, 4, 8, 8], "float32", 3)
    pool = g.op(f + "nn_max_pool2d", [conv], [1, 4, 4, 4], "float32", 4)
    flat = g.op(f + "nn_batch_flatten", [pool], [1, 64], "float32", 3)
    p2 = g.null("p2", [10, 64], "float32", 5, True)
    p3 = g.null("p3", [10], "float32", 6, True)
    dense = g.op(f + "nn_dense_add", [flat, p2, p3], [1, 10], "float32", 4)
    soft = g.op(f + "nn_softmax", [dense], [1, 10], "float32", 7)
    return g, g.json(soft)


def tiny(prefix, device_index):
    """float16: conv2d stride 2 + bias + relu, an unknown fused function (nn_lrn), avg_pool2d,
    layout_transform NCHW->NHWC, reshape, dense, multiply+add."""
    g = GraphBuilder(device_index)
    f = "tvmgen_%s_fused_" % prefix
    x = g.null("input_1", [1, 3, 9, 9], "float16", 0)
    p0 = g.null("p0", [4, 3, 3, 3], "float16", 1, True)
    p1 = g.null("p1", [1, 4, 1, 1], "float16", 2, True)
    conv = g.op(f + "nn_conv2d_add_nn_relu", [x, p0, p1], [1, 4, 5, 5], "float16", 3)
    lrn = g.op(f + "nn_lrn", [conv], [1, 4, 5, 5], "float16", 4)
    pool = g.op(f + "nn_avg_pool2d", [lrn], [1, 4, 2, 2], "float16", 3)
    lt = g.op(f + "layout_transform", [pool], [1, 2, 2, 4], "float16", 4)
    rs = g.op(f + "reshape", [lt], [1, 16], "float16", 3)
    p2 = g.null("p2", [2, 16], "float16", 5, True)
    dense = g.op(f + "nn_dense", [rs, p2], [1, 2], "float16", 4)
    p3 = g.null("p3", [1, 2], "float16", 6, True)
    p4 = g.null("p4", [1, 2], "float16", 7, True)
    out = g.op(f + "multiply_add", [dense, p3, p4], [1, 2], "float16", 8)
    return g, g.json(out)


def module_metadata(version, name, g, target):
    funcs = sorted({n["attrs"]["func_name"] for n in g.nodes if n["op"] == "tvm_op"})
    m = {
        "model_name": name,
        "export_datetime": DATETIME,
        "memory": {
            "sids": g.sids_memory(),
            "functions": {
                "main": [{"device": 1, "workspace_size_bytes": 0, "constants_size_bytes": 0,
                          "io_size_bytes": 0}],
                "operator_functions": [{"function_name": fn, "workspace": [{"device": 1, "workspace_size_bytes": 0}]}
                                       for fn in funcs],
            },
        },
        "target": {"1": target} if version == 5 else [target],
        "executors": ["graph"],
        "style": "full-model",
    }
    if version >= 6:
        m["external_dependencies"] = []
    return m


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def make_dir(root, version):
    target = "c -keys=cpu -link-params=0"
    if os.path.exists(root):
        shutil.rmtree(root)
    if version < 7:
        g, gj = cnn("default", version == 6)
        meta = {"version": version}
        meta.update(module_metadata(version, "default", g, target))
        write(os.path.join(root, "executor-config/graph/graph.json"), gj)
        write(os.path.join(root, "parameters/default.params"), params_bytes(g.params))
        write(os.path.join(root, "codegen/host/src/default_lib0.c"), "// generated operator code (stub)\n")
        write(os.path.join(root, "src/relay.txt"), "#[version = \"0.0.5\"]\n// relay source (stub)\n")
    else:
        meta = {"version": 7, "modules": {}}
        for name, build in (("cnn", cnn), ("tiny", tiny)):
            g, gj = build(name, True)
            meta["modules"][name] = module_metadata(7, name, g, target)
            write(os.path.join(root, "executor-config/graph/%s.graph" % name), gj)
            write(os.path.join(root, "parameters/%s.params" % name), params_bytes(g.params))
            write(os.path.join(root, "codegen/host/src/%s_lib0.c" % name), "// generated operator code (stub)\n")
            write(os.path.join(root, "src/%s.relay" % name), "#[version = \"0.0.5\"]\n// relay source (stub)\n")
    write(os.path.join(root, "metadata.json"), json.dumps(meta, indent=2, sort_keys=True) + "\n")


def reset(info):
    """As TVM's exporter: no owner, and a fixed time so that the output is reproducible."""
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = 1655467200
    return info


def make_tar(root, path, compress):
    raw = open(path, "wb")
    fileobj = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if compress else raw
    with tarfile.open(fileobj=fileobj, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        tar.add(root, arcname=".", filter=reset)
    if compress:
        fileobj.close()
    raw.close()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    args = [a for a in sys.argv[1:] if a != "--plain-tar"]
    plain = "--plain-tar" in sys.argv[1:]
    out = os.path.normpath(args[0] if args else os.path.join(here, "..", "tests", "data", "tvm_mlf"))
    os.makedirs(out, exist_ok=True)
    for v in (5, 6, 7):
        root = os.path.join(out, "v%d" % v)
        make_dir(root, v)
        if plain:
            make_tar(root, root + ".tar", False)
        elif os.path.exists(root + ".tar"):
            os.remove(root + ".tar")
        make_tar(root, root + ".tar.gz", True)
        print("wrote %s/, %s%s.tar.gz" % (root, root + ".tar, " if plain else "", root))


if __name__ == "__main__":
    main()
