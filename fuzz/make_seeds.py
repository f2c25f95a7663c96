#!/usr/bin/python3
"""Writes the small committed seed inputs of the fuzz targets into fuzz/seeds/<target>/.

scripts/fuzz adds the repository's own files and ../shared/examples to these at run time;
the files here are the small, valid inputs that libFuzzer mutates fastest. Needs a built
`sim` (for `sim zoo op ...`) and, for the ONNX seeds, python3-onnx (scripts/setup --models).
Usage: fuzz/make_seeds.py [path/to/sim]   (default: build/sim)
"""
import json
import os
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(ROOT, "fuzz", "seeds")


def put(target, name, data):
    d = os.path.join(SEEDS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def frontend_ir(sim):
    ops = [
        "op matmul m=8 n=8 k=8",
        "op conv2d n=1 c=4 h=8 w=8 k=4 r=3 s=3 pad=1",
        "op dense n=2 c=16 k=8",
        "op max_pool2d n=1 c=4 h=8 w=8 r=2 s=2 stride=2",
        "op element_wise_add shape=4x4",
        "op softmax shape=4x8",
        "op layer_norm shape=4x8",
        "op transpose shape=4x8",
        "op concat shape=4x8",
        "op gather vocab=16 dim=8 indices=4",
    ]
    for i, op in enumerate(ops):
        r = subprocess.run([sim, "zoo"] + op.split(), capture_output=True, text=True)
        if r.returncode == 0:
            # compact JSON: the fuzzer mutates fewer bytes of white space
            put("frontend_ir", f"op{i}_{op.split()[1]}.json", json.dumps(json.loads(r.stdout), separators=(",", ":")))
        else:
            print(f"make_seeds: skipped zoo {op}: {r.stderr.strip()}", file=sys.stderr)


def hw_yaml():
    put("hw_yaml", "small.yaml", "name: fuzz\nclock_mhz: 1000\nnpu:\n  pe_array:\n    rows: 16\n    cols: 16\n"
        "memory:\n  dram:\n    bandwidth_gbps: 32\n")
    put("hw_yaml", "with_set.yaml", "name: fuzz\nnpu:\n  l2:\n    size_kib: 1024\n#--set\n"
        "npu.pe_array.rows=8\nmemory.dram.bandwidth_gbps=0.5\n")
    put("hw_yaml", "gpu.yaml", "name: g\ndevice: gpu\nclock_mhz: 1500\n")
    put("hw_yaml", "multicore.yaml", "name: chip\nnpu:\n  cores: 4\n  noc:\n    topology: mesh\n    link_gbps: 64\n"
        "    hop_latency_ns: 2\n    mesh_cols: 2\n    injection_ports: 2\nmapping:\n  multicore: channels\n#--set\n"
        "npu.cores=8\nnpu.noc.topology=crossbar\nmapping.multicore=rows\n")
    put("hw_yaml", "system.yaml", "name: sys\nsystem:\n  devices:\n    - npu\n    - {config: npu, count: 2}\n"
        "  link:\n    topology: ring\n    bandwidth_gbps: 50\n    latency_us: 1\n"
        "  collectives:\n    all_reduce: tree\n")
    put("hw_yaml", "system_with_set.yaml", "name: sys\nsystem:\n  devices:\n    - npu\n    - gpu_h100\n"
        "  link:\n    topology: switch\n    bandwidth_gbps: 50\n#--set\n"
        "system.link.bandwidth_gbps=100\nsystem.collectives.all_reduce=ring\ngpu.hbm.bandwidth_gbps=1000\n")


def npy_header(descr, shape, fortran=False, version=1):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, "True" if fortran else "False", "".join(f"{s}, " for s in shape) if len(shape) != 1 else f"{shape[0]},")
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(d) + 1) % 64) % 64
    d = d + " " * pad + "\n"
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode()
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(d)) + d.encode()


def npy():
    put("npy", "f4_2x3.npy", npy_header("<f4", (2, 3)) + struct.pack("<6f", 0, 1, -2, 3.5, 1e30, -0.0))
    put("npy", "f2_4.npy", npy_header("<f2", (4,)) + struct.pack("<4H", 0x3c00, 0x7c00, 0xfc00, 0x0001))
    put("npy", "i1_2x2_fortran.npy", npy_header("|i1", (2, 2), fortran=True) + bytes([1, 0xff, 3, 4]))
    put("npy", "u1_scalar.npy", npy_header("|u1", ()) + b"\x07")
    put("npy", "b1_3.npy", npy_header("|b1", (3,)) + b"\x01\x00\x01")
    put("npy", "i8_be.npy", npy_header(">i8", (2,)) + struct.pack(">2q", 1, -1))
    put("npy", "f8_v2.npy", npy_header("<f8", (1, 1), version=2) + struct.pack("<d", 2.0))
    put("npy", "i4_empty.npy", npy_header("<i4", (0, 5)))


def zebu_trace():
    src = os.path.join(ROOT, "..", "shared", "examples", "gemini_npu", "int8_resnet50.sim_quantized_b1_c1_bw16_sim.txt")
    if os.path.exists(src):
        with open(src) as f:
            lines = f.readlines()
        put("zebu_trace", "head40_sim.txt", "".join(lines[:40]))
        # the instructions of the first layers that compute, for the attribution
        body = [l for l in lines if l.startswith(("[pe_", "[vp_", "[lw_", "[ld_", "[st_"))][:30]
        put("zebu_trace", "compute30_sim.txt", "".join(body))
    put("zebu_trace", "tiny_sim.txt",
        "[ct_st, {'slyr': 0, 'clyr': [], 's_flyr': 0, 'c_flyr': [], 'wkl': 0, 'tile': -1}, "
        "{'inst_idx': 1, 'time': [0, 38]}, {'Prev_Insts': [], 'Next_Insts': []}]\n"
        "[pe_conv, {'slyr': 1, 'clyr': [1], 's_flyr': 1, 'c_flyr': [], 'wkl': 0, 'tile': 2}, "
        "{'inst_idx': 2, 'time': [38, 90]}, {'DataFmt': <DataFmt.INT8: 0>, 'x': -1.5e3, 's': 'a\\'b', 't': (1, None, True)}]\n")


def sweep_spec():
    put("sweep_spec", "small.yaml", "workloads:\n  - zoo: resnet18\n    batch: 2\nhw: npu\naxes:\n"
        "  - zip:\n      npu.pe_array.rows: 8:32:x2\n      npu.pe_array.cols: [8, 16, 32]\n"
        "  - memory.dram.bandwidth_gbps: 8:16:4\nconstraints:\n  - npu.pe_array.rows * npu.pe_array.cols <= 512\n")


def onnx_models():
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError:
        print("make_seeds: no python3-onnx: ONNX seeds skipped (scripts/setup --models)", file=sys.stderr)
        return

    def save(name, nodes, inputs, outputs, inits=(), opset=13):
        g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="npusim-fuzz")
        m.ir_version = 8
        put("onnx", name + ".onnx", m.SerializeToString())

    f = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    w = helper.make_tensor("W", f, [4, 3, 3, 3], [0.0] * 108)
    save("conv_relu", [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
                       helper.make_node("Relu", ["c"], ["y"])],
         [vi("x", f, [1, 3, 8, 8])], [vi("y", f, None)], [w])
    b = helper.make_tensor("B", f, [8, 4], [0.0] * 32)
    save("matmul_add_softmax", [helper.make_node("MatMul", ["x", "B"], ["m"]),
                                helper.make_node("Add", ["m", "m"], ["a"]),
                                helper.make_node("Softmax", ["a"], ["y"], axis=-1)],
         [vi("x", f, [2, 8])], [vi("y", f, None)], [b])
    shape = helper.make_tensor("S", TensorProto.INT64, [2], [4, 4])
    save("reshape_transpose_pool", [helper.make_node("Reshape", ["x", "S"], ["r"]),
                                    helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
                                    helper.make_node("Unsqueeze", ["t", "ax"], ["u"]),
                                    helper.make_node("ReduceMean", ["u"], ["y"], keepdims=0)],
         [vi("x", f, [2, 8])], [vi("y", f, None)],
         [shape, helper.make_tensor("ax", TensorProto.INT64, [1], [0])])
    save("gemm_gelu", [helper.make_node("Gemm", ["x", "G", "C"], ["g"], transB=1),
                       helper.make_node("Erf", ["g"], ["e"]),
                       helper.make_node("Mul", ["g", "e"], ["y"])],
         [vi("x", f, ["batch", 4])], [vi("y", f, None)],
         [helper.make_tensor("G", f, [6, 4], [0.0] * 24), helper.make_tensor("C", f, [6], [0.0] * 6)])


def safetensors():
    header = {"__metadata__": {"format": "pt"},
              "w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
              "b": {"dtype": "BF16", "shape": [3], "data_offsets": [16, 22]}}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    put("safetensors", "two.safetensors", struct.pack("<Q", len(h)) + h + bytes(22))


def tvm_params():
    def arr(shape, code, bits, data):
        out = struct.pack("<QQiii", 0xDD5E40F096B4A13F, 0, 1, 0, len(shape)) + struct.pack("<BBH", code, bits, 1)
        out += b"".join(struct.pack("<q", s) for s in shape) + struct.pack("<q", len(data)) + data
        return out
    names = [b"p0", b"weight"]
    out = struct.pack("<QQQ", 0xF7E58D4F05049CB7, 0, len(names)) + b"".join(struct.pack("<Q", len(n)) + n for n in names)
    out += struct.pack("<Q", 2) + arr([2, 2], 2, 32, bytes(16)) + arr([3], 0, 8, bytes(3))
    put("tvm_params", "two.params", out)


def ark():
    """The smallest ARK model and plans (one op, one task), in the shape of the examples."""
    def tensor(i, buf, shape=(64,)):
        return {"Id": i, "DataType": "FP16", "Shape": list(shape), "Strides": list(shape), "Offsets": [0] * len(shape),
                "PaddedShape": list(shape), "Buffer": {"Id": buf, "Rank": -1, "SendTags": [], "RecvTags": []}}
    op = {"Type": "Mul", "Name": "mul", "IsVirtual": False, "ReadTensors": [tensor(0, 0), tensor(1, 1)],
          "WriteTensors": [tensor(2, 2)], "ResultTensors": [tensor(3, 2)], "Args": {}}
    model = {"Rank": 0, "WorldSize": 1, "Nodes": [{"Id": 0, "ProducerNodeIds": [], "ConsumerNodeIds": [], "Op": op}]}
    put("ark_model", "mul.json", json.dumps(model, separators=(",", ":")))
    task_op = dict(op, Config={"NumTasks": 1, "NumWarps": 1, "SramBytes": 0, "Tile": [1, 64]})
    plan = {"Rank": 0, "WorldSize": 1, "NumProcessors": 1, "NumWarpsPerProcessor": 1,
            "TaskInfos": [{"Id": 0, "NumWarps": 1, "SramBytes": 0, "Ops": [task_op]}],
            "ProcessorGroups": [{"ProcessorRange": [0, 1], "ResourceGroups": [
                {"ProcessorRange": [0, 1], "WarpRange": [0, 1], "SramRange": [0, 0],
                 "TaskGroups": [{"TaskId": 0, "TaskRange": [0, 1], "Granularity": 1}]}]}]}
    put("ark_plan", "mul.json", json.dumps(plan, separators=(",", ":")))
    sync = {"Type": "DeviceSync", "Name": "device_sync", "IsVirtual": False, "ReadTensors": [tensor(0, 0)],
            "WriteTensors": [tensor(1, 0)], "ResultTensors": [tensor(2, 0)],
            "Args": {"Rank": {"INT": 0}, "PeerNum": {"INT": 1}},
            "Config": {"ChannelType": "Sm", "NumTasks": 1, "NumWarps": 1, "SramBytes": 0}}
    plan2 = json.loads(json.dumps(plan))
    plan2["WorldSize"] = 2
    plan2["TaskInfos"][0]["Ops"] = [sync]
    put("ark_plan", "sync.json", json.dumps(plan2, separators=(",", ":")))


def pipeline():
    p = {"name": "tiny", "devices": {"0": "npu:0:*", "1": "npu:1:*"},
         "tensors": {"x": {"shape": [4, 8], "dtype": "bf16"}, "h": {"shape": [4, 8], "dtype": "bf16"},
                     "g": {"shape": [4, 8], "dtype": "bf16"}},
         "supertasks": {"0": {"kind": "input", "inputs": [], "outputs": ["x"]},
                        "1": {"kind": "dfg", "inputs": ["x"], "outputs": ["h"], "device": "0", "data": "AA=="},
                        "2": {"kind": "send", "inputs": ["h"], "outputs": [], "device": "0", "group": "p",
                              "device_idx": 0, "metadata": {}},
                        "3": {"kind": "recv", "inputs": [], "outputs": ["g"], "device": "1", "group": "p",
                              "device_idx": 1, "metadata": {}},
                        "4": {"kind": "output", "inputs": ["g"], "outputs": []}}}
    put("pipeline", "send_recv.json", json.dumps(p, separators=(",", ":")))
    p["supertasks"]["2"] = {"kind": "all_reduce", "inputs": ["h"], "outputs": ["g"], "device": "0", "group": "r",
                            "device_idx": 0, "metadata": {"reduce_op": "sum"}}
    del p["supertasks"]["3"]
    put("pipeline", "all_reduce.json", json.dumps(p, separators=(",", ":")))


def main():
    sim = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "sim")
    frontend_ir(sim)
    hw_yaml()
    npy()
    zebu_trace()
    sweep_spec()
    onnx_models()
    safetensors()
    tvm_params()
    ark()
    pipeline()


if __name__ == "__main__":
    main()
