#!/usr/bin/python3
"""Generates the malformed-input suite: tests/malformed/files/<family>/* and
tests/malformed/cases.tsv (docs/hardening.md).

Every case is a broken (or hostile) input, the `sim` command line that reads it, the exit code
`sim` must give and the substrings its output must contain: the file (or flag) and the place
in it (JSON pointer, YAML line, byte offset, line of a trace) followed by what is wrong. The
suite runs under ctest (tests/integration/malformed_test.cpp, one test per case).

Bases are small valid inputs written here, or read from the repository (tests/data/tvm_mlf,
configs/) and ../shared/examples at generation time; the outputs are committed, so running
the suite needs neither. Needs python3-onnx for the ONNX family (scripts/setup --models).
Usage: scripts/make_malformed.py
"""
import copy
import io
import json
import os
import shutil
import struct
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "malformed")
FILES = os.path.join(OUT, "files")
SHARED = os.path.join(ROOT, "..", "shared", "examples")

cases = []  # (name, args, exit, [expected substrings])


def write(family, name, data):
    d = os.path.join(FILES, family)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return "{M}/" + family + "/" + name


def case(name, args, code, *expect):
    assert all("\t" not in e and " && " not in e for e in expect), name
    assert name not in {c[0] for c in cases}, name
    cases.append((name, args, code, list(expect)))


def compact(doc):
    return json.dumps(doc, separators=(",", ":"))


def set_path(doc, path, value):
    """path: list of keys/indices; value DELETE removes the member."""
    d = doc
    for k in path[:-1]:
        d = d[k]
    if value is DELETE:
        del d[path[-1]]
    else:
        d[path[-1]] = value
    return doc


DELETE = object()


def pointer(path):
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


def deep(n, open_="[", close="]"):
    return open_ * n + close * n


# ---------------------------------------------------------------- Frontend IR
CONV = {
    "conv": {"layer_index": 0, "name": "conv", "operation": "conv2d", "device": "npu",
             "input_dtype": ["float16", "float16"], "output_dtype": ["float16"],
             "input_shape": [[1, 4, 8, 8], [4, 4, 3, 3]], "output_shape": [[1, 4, 8, 8]],
             "previous_layer": ["input1", "constant_weight"], "next_layer": ["relu"],
             "input_batchdim": [0, -1], "output_batchdim": [0], "activation_type": None, "activation_attr": None,
             "kernel_size": [3, 3], "padding": [1, 1, 1, 1], "stride": [1, 1]},
    "relu": {"layer_index": 1, "name": "relu", "operation": "relu", "device": "npu",
             "input_dtype": ["float16"], "output_dtype": ["float16"],
             "input_shape": [[1, 4, 8, 8]], "output_shape": [[1, 4, 8, 8]],
             "previous_layer": ["conv"], "next_layer": ["output1"],
             "input_batchdim": [0], "output_batchdim": [0]},
}


def frontend_ir():
    fam = "ir"
    good = write(fam, "good.json", compact(CONV))
    case("ir_good_control", f"--ir {good} -q", 0)

    def text(name, data, code, *expect, args="--ir {f} -q"):
        f = write(fam, name, data)
        case(name.rsplit(".", 1)[0], args.format(f=f), code, *expect)

    def mut(name, path, value, where=None, what="", args="--ir {f} -q"):
        doc = set_path(copy.deepcopy(CONV), path, value)
        w = pointer(path) if where is None else where
        text(name, compact(doc), 2, f"{name}: {w}" if w else name, *([what] if what else []), args=args)

    c = compact(CONV)
    text("ir_empty.json", "", 2, "ir_empty.json", "empty")
    text("ir_blank.json", "  \n\t\n", 2, "ir_blank.json", "empty")
    text("ir_truncated.json", c[: len(c) // 2], 2, "ir_truncated.json: line 1, column", "malformed JSON")
    text("ir_trailing_comma.json", c[:-1] + ",}", 2, "ir_trailing_comma.json: line 1, column", "malformed JSON")
    text("ir_two_documents.json", c + "\n" + c, 2, "ir_two_documents.json: line 2, column", "malformed JSON")
    text("ir_dup_layer.json", c[:-1] + ',"conv":' + compact(CONV["conv"]) + "}", 2,
         "ir_dup_layer.json: /conv", "duplicate key 'conv'")
    text("ir_dup_field.json", c.replace('"operation":"conv2d"', '"operation":"conv2d","operation":"relu"', 1), 2,
         "ir_dup_field.json: /conv/operation", "duplicate key 'operation'")
    text("ir_deep_ignored.json", c.replace('"activation_attr":null', '"activation_attr":' + deep(5000), 1), 2,
         "ir_deep_ignored.json: /conv/activation_attr/0/0", "nested deeper than 256")
    text("ir_deep_objects.json", '{"a":' * 300 + "1" + "}" * 300, 2, "ir_deep_objects.json: /a/a/a", "nested deeper than 256")
    text("ir_deep_257.json", deep(257), 2, "ir_deep_257.json: /0/0", "nested deeper than 256")
    text("ir_number_overflow.json", c.replace('"stride":[1,1]', '"stride":[1e999,1]'), 2,
         "ir_number_overflow.json: line 1, column", "number overflow")
    text("ir_bad_utf8.json", c.replace('"name":"conv"', '"name":"co\xffnv"').encode("latin-1"), 2,
         "ir_bad_utf8.json: line 1, column", "malformed JSON")
    text("ir_nul_byte.json", c[:40] + "\0" + c[40:], 2, "ir_nul_byte.json: line 1, column", "malformed JSON")
    text("ir_comment.json", "// a comment\n" + c, 2, "ir_comment.json", "not a workload format")
    text("ir_comment_forced.json", "// a comment\n" + c, 2, "ir_comment_forced.json", "not JSON",
         args="--ir {f} --format frontend_ir -q")
    text("ir_top_array.json", "[1, 2, 3]", 2, "ir_top_array.json", "not a workload format")
    text("ir_top_scalar.json", "42", 2, "ir_top_scalar.json", "not a workload format")
    text("ir_top_array_forced.json", "[1, 2, 3]", 2, "ir_top_array_forced.json", "expected an object",
         args="--ir {f} --format frontend_ir -q")
    text("ir_empty_object.json", "{}", 2, "ir_empty_object.json", "not a workload format")
    text("ir_empty_object_forced.json", "{}", 2, "ir_empty_object_forced.json", "no layers",
         args="--ir {f} --format frontend_ir -q")
    text("ir_binary.json", bytes(range(256)) * 4, 2, "ir_binary.json: not a workload format")
    text("ir_nul_first.json", b"\0" + c.encode(), 2, "ir_nul_first.json: not a workload format")
    text("ir_layer_scalar.json", compact({"conv": 5, "relu": CONV["relu"]}), 2, "ir_layer_scalar.json: /conv",
         args="--ir {f} --format frontend_ir -q")
    mut("ir_missing_operation.json", ["conv", "operation"], DELETE, what="missing required field 'operation'")
    mut("ir_operation_number.json", ["conv", "operation"], 5, what="expected a string")
    mut("ir_unknown_operation.json", ["conv", "operation"], "frobnicate", what="frobnicate")
    mut("ir_input_shape_string.json", ["conv", "input_shape"], "1x4x8x8")
    mut("ir_negative_dim.json", ["conv", "input_shape", 0, 1], -4)
    mut("ir_huge_dims.json", ["conv", "input_shape", 0], [1, 4, 2 ** 40, 2 ** 40], where="/conv/input_shape/0")
    mut("ir_dim_float.json", ["conv", "input_shape", 0, 2], 8.5)
    mut("ir_dim_2_63.json", ["conv", "input_shape", 0, 2], 2 ** 63)
    mut("ir_dim_1e30.json", ["conv", "output_shape", 0, 2], 1e30)
    mut("ir_layer_index_negative.json", ["conv", "layer_index"], -1)
    mut("ir_layer_index_huge.json", ["conv", "layer_index"], 2 ** 40)
    mut("ir_layer_index_string.json", ["conv", "layer_index"], "0")
    mut("ir_layer_index_dup.json", ["relu", "layer_index"], 0, what="duplicate layer_index 0")
    mut("ir_kernel_one.json", ["conv", "kernel_size"], [3])
    mut("ir_stride_zero.json", ["conv", "stride"], [0, 1])
    mut("ir_padding_negative.json", ["conv", "padding"], [-1, 1, 1, 1])
    mut("ir_padding_huge.json", ["conv", "padding"], [2 ** 40, 1, 1, 1])
    mut("ir_dtype_unknown.json", ["conv", "input_dtype", 0], "float13")
    mut("ir_dtype_count.json", ["conv", "input_dtype"], ["float16"])
    mut("ir_output_shape_wrong.json", ["conv", "output_shape"], [[1, 4, 9, 9]], where="/conv/output_shape/0",
        what="should be [1,4,8,8]")
    mut("ir_next_unknown.json", ["conv", "next_layer"], ["nowhere"], where="/conv/next_layer/0", what="'nowhere'")
    mut("ir_previous_unknown.json", ["relu", "previous_layer"], ["ghost"], where="/relu/previous_layer/0", what="'ghost'")
    mut("ir_shape_list_empty.json", ["conv", "input_shape"], [])
    mut("ir_batchdim_bad.json", ["conv", "input_batchdim"], [7, -1])
    mut("ir_device_unknown.json", ["conv", "device"], "tpu")
    mut("ir_name_mismatch.json", ["conv", "name"], 17)
    # the limits of the files themselves
    case("ir_directory", "--ir {M}/ir -q", 2, "files/ir: cannot open: is a directory")
    case("ir_dev_zero", "--ir /dev/zero -q", 2, "/dev/zero: cannot open: a character device, not a regular file")
    case("ir_fifo", "--ir {FIFO} -q", 2, "fifo: cannot open: a FIFO, not a regular file")
    case("ir_missing_file", "--ir {M}/ir/no_such.json -q", 2, "no_such.json: cannot open: no such file")
    case("ir_format_unknown", f"--ir {good} --format yaml -q", 2, "--format: yaml: unknown workload format")
    case("ir_module_not_archive", f"--ir {good} --module m -q", 2, "--module: m", "only TVM Model Library Format")


# ---------------------------------------------------------------- ARK model and plan
def ark():
    fam = "ark"
    src = os.path.join(SHARED, "ark", "tutorial_v2")
    with open(os.path.join(src, "model.json")) as f:
        model = json.load(f)
    with open(os.path.join(src, "plan.json")) as f:
        plan = json.load(f)
    # smaller bases: the first node / task only
    model["Nodes"] = model["Nodes"][:1]
    model["Nodes"][0]["ConsumerNodeIds"] = []
    plan["TaskInfos"] = plan["TaskInfos"][:1]
    plan["ProcessorGroups"] = plan.get("ProcessorGroups", [])[:1]
    good_m = write(fam, "model_good.json", compact(model))
    good_p = write(fam, "plan_good.json", compact(plan))
    case("ark_model_good_control", f"--ir {good_m} -q", 0)
    case("ark_plan_good_control", f"--plan {good_p} -q", 0)

    def mut(base, name, path, value, args, where=None, what=""):
        doc = set_path(copy.deepcopy(base), path, value)
        f = write(fam, name, compact(doc))
        w = pointer(path) if where is None else where
        case(name.rsplit(".", 1)[0], args.format(f=f), 2, f"{name}: {w}", *([what] if what else []))

    m = lambda name, path, value, **kw: mut(model, name, path, value, "--ir {f} -q", **kw)
    p = lambda name, path, value, **kw: mut(plan, name, path, value, "--plan {f} -q", **kw)
    op = ["Nodes", 0, "Op"]
    m("ark_model_nodes_object.json", ["Nodes"], {}, what="expected an array")
    m("ark_model_op_type_unknown.json", op + ["Type"], "Frobnicate")
    m("ark_model_op_missing.json", ["Nodes", 0, "Op"], DELETE)
    m("ark_model_dtype_unknown.json", op + ["ReadTensors", 0, "DataType"], "FP13")
    m("ark_model_shape_negative.json", op + ["ReadTensors", 0, "Shape", 1], -512)
    m("ark_model_shape_huge.json", op + ["ReadTensors", 0, "Shape"], [2 ** 31, 2 ** 31, 2 ** 31],
      where="/Nodes/0/Op/ReadTensors/0/Shape")
    m("ark_model_shape_string.json", op + ["ReadTensors", 0, "Shape"], "1x512")
    m("ark_model_readtensors_missing.json", op + ["ReadTensors"], DELETE)
    m("ark_model_consumer_unknown.json", ["Nodes", 0, "ConsumerNodeIds"], [99], where="/Nodes/0/ConsumerNodeIds")
    m("ark_model_worldsize_zero.json", ["WorldSize"], 0)
    m("ark_model_args_bad.json", op + ["Args", "TransposeInput"], {"BOOL": "yes"}, where="/Nodes/0/Op/Args/TransposeInput")
    task = ["TaskInfos", 0]
    p("ark_plan_taskinfos_object.json", ["TaskInfos"], {})
    p("ark_plan_numwarps_zero.json", task + ["NumWarps"], 0)
    p("ark_plan_numwarps_huge.json", task + ["NumWarps"], 2 ** 40)
    p("ark_plan_sram_negative.json", task + ["SramBytes"], -1)
    p("ark_plan_processors_zero.json", ["NumProcessors"], 0)
    p("ark_plan_op_type_unknown.json", task + ["Ops", 0, "Type"], "Frobnicate")
    p("ark_plan_tile_zero.json", task + ["Ops", 0, "Config", "TileShapeMNK"], [0, 256, 64])
    p("ark_plan_numtasks_negative.json", task + ["Ops", 0, "Config", "NumTasks"], -5)
    p("ark_plan_numtasks_huge.json", task + ["Ops", 0, "Config", "NumTasks"], 2 ** 41)
    p("ark_plan_dtype_unknown.json", task + ["Ops", 0, "ReadTensors", 0, "DataType"], "FP13")
    f = write(fam, "ark_plan_deep.json", compact(plan)[:-1] + ',"Extra":' + deep(5000) + "}")
    case("ark_plan_deep", f"--plan {f} -q", 2, "ark_plan_deep.json: /Extra/0/0", "nested deeper than 256")
    f = write(fam, "ark_plan_truncated.json", compact(plan)[:300])
    case("ark_plan_truncated", f"--plan {f} -q", 2, "ark_plan_truncated.json: line 1, column", "malformed JSON")
    case("ark_plan_dev_zero", "--plan /dev/zero -q", 2, "/dev/zero: cannot open: a character device")
    case("ark_plan_directory", "--plan {M}/ark -q", 2, "files/ark: cannot open: is a directory")
    case("ark_model_dev_zero", "--model /dev/zero -q", 2, "/dev/zero: cannot open: a character device")
    case("ark_model_as_plan", f"--plan {good_m} -q", 2, "model_good.json")
    case("ark_plan_as_ir", f"--ir {good_p} -q", 2, "plan_good.json", "--plan")


# ---------------------------------------------------------------- hardware YAML and --set
def hw():
    fam = "hw"
    IR = "{M}/ir/good.json"

    def y(name, text, *expect, code=2, extra=""):
        f = write(fam, name, text)
        case(name.rsplit(".", 1)[0], f"--ir {IR} --hw {f} {extra}-q", code, *expect)

    y("hw_good.yaml", "name: ok\nnpu:\n  pe_array:\n    rows: 16\n", code=0)
    y("hw_empty.yaml", "", "hw_empty.yaml", "empty file")
    y("hw_comments_only.yaml", "# nothing\n# here\n", "hw_comments_only.yaml", "empty file")
    y("hw_tab_indent.yaml", "npu:\n\tpe_array: 1\n", "hw_tab_indent.yaml: line 2, column", "malformed YAML")
    y("hw_unclosed_flow.yaml", "npu: {pe_array: {rows: 16}\n", "hw_unclosed_flow.yaml: line", "malformed YAML")
    y("hw_bad_indent.yaml", "npu:\n  pe_array:\n    rows: 16\n   cols: 8\n", "hw_bad_indent.yaml: line 4", "malformed YAML")
    y("hw_dup_top.yaml", "name: a\nclock_mhz: 1000\nname: b\n", "hw_dup_top.yaml: name (line 3)", "duplicate key 'name'",
      "first given at line 1")
    y("hw_dup_nested.yaml", "npu:\n  pe_array:\n    rows: 16\n    rows: 32\n", "hw_dup_nested.yaml: npu.pe_array.rows (line 4)",
      "duplicate key 'rows'")
    y("hw_dup_section.yaml", "npu:\n  pe_array:\n    rows: 16\nnpu:\n  l2:\n    size_kib: 1024\n",
      "hw_dup_section.yaml: npu (line 4)", "duplicate key 'npu'")
    y("hw_dup_flow.yaml", "npu: {pe_array: {rows: 16, rows: 8}}\n", "hw_dup_flow.yaml: npu.pe_array.rows (line 1)",
      "duplicate key 'rows'")
    y("hw_two_documents.yaml", "name: a\n---\nname: b\n", "hw_two_documents.yaml: line 3", "a second YAML document")
    y("hw_three_documents.yaml", "---\nname: a\n---\nname: b\n---\nname: c\n", "hw_three_documents.yaml: line 4",
      "a second YAML document")
    y("hw_empty_second_document.yaml", "name: a\n---\n", "hw_empty_second_document.yaml: line", "a second YAML document")
    y("hw_leading_commas.yaml", "# c\n,,,,# x\nname: a\n", "hw_leading_commas.yaml: line 2, column 1", "malformed YAML")
    y("hw_lone_comma.yaml", ",", "hw_lone_comma.yaml: line 1, column 1", "malformed YAML")
    y("hw_top_list.yaml", "- name: a\n", "hw_top_list.yaml", "expected a mapping of keys")
    y("hw_top_scalar.yaml", "just text\n", "hw_top_scalar.yaml", "expected a mapping of keys")
    y("hw_unknown_key.yaml", "npu:\n  pe_aray:\n    rows: 16\n", "hw_unknown_key.yaml: npu.pe_aray.rows (line 3)",
      "unknown key", "did you mean")
    y("hw_wrong_type.yaml", "npu:\n  pe_array:\n    rows: sixteen\n", "hw_wrong_type.yaml: npu.pe_array.rows (line 3)",
      "expected an integer")
    y("hw_list_value.yaml", "npu:\n  pe_array:\n    rows: [16, 32]\n", "hw_list_value.yaml: npu.pe_array.rows (line 3)",
      "not a list")
    y("hw_missing_value.yaml", "npu:\n  pe_array:\n    rows:\n", "hw_missing_value.yaml: npu.pe_array.rows (line 3)",
      "missing value")
    y("hw_zero_rows.yaml", "npu:\n  pe_array:\n    rows: 0\n", "hw_zero_rows.yaml: npu.pe_array.rows (line 3)")
    y("hw_rows_2_63.yaml", "npu:\n  pe_array:\n    rows: 9223372036854775808\n", "hw_rows_2_63.yaml: npu.pe_array.rows (line 3)")
    y("hw_rows_1e30.yaml", "npu:\n  pe_array:\n    rows: 1e30\n", "hw_rows_1e30.yaml: npu.pe_array.rows (line 3)")
    y("hw_clock_huge.yaml", "clock_mhz: 1e308\n", "hw_clock_huge.yaml: clock_mhz (line 1)")
    y("hw_clock_nan.yaml", "clock_mhz: .nan\n", "hw_clock_nan.yaml: clock_mhz (line 1)", "expected a number")
    y("hw_clock_inf.yaml", "clock_mhz: .inf\n", "hw_clock_inf.yaml: clock_mhz (line 1)", "expected a number")
    y("hw_bandwidth_tiny.yaml", "memory:\n  dram:\n    bandwidth_gbps: 1e-300\n",
      "hw_bandwidth_tiny.yaml: memory.dram.bandwidth_gbps (line 3)")
    y("hw_bandwidth_negative.yaml", "memory:\n  dram:\n    bandwidth_gbps: -8\n",
      "hw_bandwidth_negative.yaml: memory.dram.bandwidth_gbps (line 3)", "must not be negative")
    y("hw_latency_huge.yaml", "memory:\n  dram:\n    latency_ns: 1e300\n", "hw_latency_huge.yaml: memory.dram.latency_ns (line 3)")
    y("hw_gpu_key_on_npu.yaml", "name: x\ngpu:\n  num_sms: 4\n", "hw_gpu_key_on_npu.yaml: gpu.num_sms (line 3)",
      "is a GPU key")
    y("hw_npu_key_on_gpu.yaml", "device: gpu\nnpu:\n  pe_array:\n    rows: 8\n",
      "hw_npu_key_on_gpu.yaml: npu.pe_array.rows (line 4)", "is an NPU key")
    y("hw_device_unknown.yaml", "device: tpu\n", "hw_device_unknown.yaml: device (line 1)", "is not one of")
    y("hw_complex_key.yaml", "? [a, b]\n: 1\n", "hw_complex_key.yaml: / (line 1)", "a key must be a plain name")
    y("hw_alias_bomb.yaml",
      "a: &a {k: 1}\n" + "".join(f"l{i}: &l{i} {{x: *{'a' if i == 0 else 'l' + str(i - 1)}, "
                                   f"y: *{'a' if i == 0 else 'l' + str(i - 1)}}}\n" for i in range(40)),
      "hw_alias_bomb.yaml", "more than 1000000 nodes")
    y("hw_deep_yaml.yaml", "a: " + "[" * 5000 + "]" * 5000 + "\n", "hw_deep_yaml.yaml")
    y("hw_binary.yaml", bytes(range(1, 256)), "hw_binary.yaml")
    y("hw_bad_utf8.yaml", b"name: \xff\xfe\n", "hw_bad_utf8.yaml: line 1, column 7", "not UTF-8")
    case("hw_directory", f"--ir {IR} --hw {{M}}/hw -q", 2, "files/hw: cannot open: is a directory")
    case("hw_dev_zero", f"--ir {IR} --hw /dev/zero -q", 2, "/dev/zero: cannot open: a character device")
    case("hw_fifo", f"--ir {IR} --hw {{FIFO}} -q", 2, "fifo: cannot open: a FIFO")
    case("hw_unknown_name", f"--ir {IR} --hw npu9 -q", 2, "npu9: cannot open: no such file, and not a shipped config")
    # --set: the flag is named, not the base YAML
    for n, (assign, expect) in enumerate([
        ("npu.pe_array.rows=0", "--set: npu.pe_array.rows"),
        ("npu.pe_array.rows=abc", "--set: npu.pe_array.rows"),
        ("npu.pe_array.rows=1e30", "--set: npu.pe_array.rows"),
        ("npu.pe_aray.rows=16", "--set: npu.pe_aray.rows"),
        ("memory.dram.bandwidth_gbps=0", "--set: memory.dram.bandwidth_gbps"),
        ("memory.dram.bandwidth_gbps=nan", "--set: memory.dram.bandwidth_gbps"),
        ("clock_mhz=-5", "--set: clock_mhz"),
        ("=5", "--set: =5"),
        ("novalue", "--set: novalue"),
        ("gpu.num_sms=4", "--set: gpu.num_sms"),
    ]):
        case(f"set_{n:02d}_{assign.split('=')[0].replace('.', '_') or 'empty'}", f"--ir {IR} --set {assign} -q", 2, expect)


# ---------------------------------------------------------------- system descriptions
def system():
    fam = "system"
    P = write(fam, "pipeline.json", compact(PIPE))
    case("system_pipeline_good_control", f"--ir {P} --hw system_2x_npu -q", 0)

    def y(name, text, *expect):
        f = write(fam, name, text)
        case(name.rsplit(".", 1)[0], f"--ir {P} --hw {f} -q", 2, *expect)

    base = "name: s\nsystem:\n  devices:\n    - {config: npu, count: 2}\n"
    y("sys_devices_empty.yaml", "name: s\nsystem:\n  devices: []\n", "sys_devices_empty.yaml", "system.devices")
    y("sys_unknown_key.yaml", base + "  lnk:\n    topology: ring\n", "sys_unknown_key.yaml", "system.lnk (line 5)", "unknown key")
    y("sys_count_zero.yaml", "name: s\nsystem:\n  devices:\n    - {config: npu, count: 0}\n", "sys_count_zero.yaml",
      "system.devices[0].count")
    y("sys_count_huge.yaml", "name: s\nsystem:\n  devices:\n    - {config: npu, count: 1e9}\n", "sys_count_huge.yaml",
      "system.devices[0].count")
    y("sys_device_missing.yaml", "name: s\nsystem:\n  devices:\n    - no_such_device.yaml\n", "sys_device_missing.yaml",
      "system.devices[0]", "device config")
    y("sys_topology_bad.yaml", base + "  link:\n    topology: torus\n", "sys_topology_bad.yaml", "system.link.topology (line 6)",
      "torus")
    y("sys_bandwidth_zero.yaml", base + "  link:\n    bandwidth_gbps: 0\n", "sys_bandwidth_zero.yaml",
      "system.link.bandwidth_gbps (line 6)")
    y("sys_latency_negative.yaml", base + "  link:\n    latency_us: -1\n", "sys_latency_negative.yaml",
      "system.link.latency_us (line 6)")
    y("sys_algo_bad.yaml", base + "  collectives:\n    all_reduce: magic\n", "sys_algo_bad.yaml",
      "system.collectives.all_reduce (line 6)")
    y("sys_dup_key.yaml", base + "  link:\n    topology: ring\n  link:\n    topology: switch\n", "sys_dup_key.yaml",
      "system.link (line 7)", "duplicate key 'link'")
    y("sys_two_documents.yaml", base + "---\n" + base, "sys_two_documents.yaml: line 6", "a second YAML document")
    y("sys_name_map.yaml", "name: {a: 1}\nsystem:\n  devices:\n    - npu\n", "sys_name_map.yaml: line 1, column 7",
      "expected a single value")


# ---------------------------------------------------------------- pipelines and safetensors
PIPE = {
    "name": "tiny", "devices": {"0": "npu:0:*", "1": "npu:1:*"},
    "tensors": {"x": {"shape": [4, 8], "dtype": "bf16"}, "h": {"shape": [4, 8], "dtype": "bf16"},
                "g": {"shape": [4, 8], "dtype": "bf16"}},
    "supertasks": {"0": {"kind": "input", "inputs": [], "outputs": ["x"]},
                   "1": {"kind": "dfg", "inputs": ["x"], "outputs": ["h"], "device": "0", "data": "AA=="},
                   "2": {"kind": "send", "inputs": ["h"], "outputs": [], "device": "0", "group": "p", "device_idx": 0,
                         "metadata": {}},
                   "3": {"kind": "recv", "inputs": [], "outputs": ["g"], "device": "1", "group": "p", "device_idx": 1,
                         "metadata": {}},
                   "4": {"kind": "output", "inputs": ["g"], "outputs": []}},
}


def pipeline():
    fam = "pipeline"

    def mut(name, path, value, where=None, what=""):
        doc = set_path(copy.deepcopy(PIPE), path, value)
        f = write(fam, name, compact(doc))
        w = pointer(path) if where is None else where
        case(name.rsplit(".", 1)[0], f"--ir {f} --hw system_2x_npu -q", 2, f"{name}: {w}", *([what] if what else []))

    mut("pipe_device_bad.json", ["devices", "0"], "npu::", where="/devices/0")
    mut("pipe_tensor_shape_negative.json", ["tensors", "x", "shape", 0], -4)
    mut("pipe_tensor_shape_huge.json", ["tensors", "x", "shape"], [2 ** 40, 2 ** 40], where="/tensors/x/shape")
    mut("pipe_tensor_dtype_bad.json", ["tensors", "x", "dtype"], "f13")
    mut("pipe_kind_unknown.json", ["supertasks", "1", "kind"], "magic")
    mut("pipe_input_unknown.json", ["supertasks", "1", "inputs"], ["nope"], where="/supertasks/1/inputs/0")
    mut("pipe_device_unknown.json", ["supertasks", "1", "device"], "7")
    mut("pipe_recv_unpaired.json", ["supertasks", "3", "group"], "q", where="/supertasks/2/group", what="no recv")
    mut("pipe_metadata_extra.json", ["supertasks", "2", "metadata"], {"dim": 0}, where="/supertasks/2/metadata/dim")
    mut("pipe_cycle.json", ["supertasks", "1", "inputs"], ["g"], where="/supertasks")
    mut("pipe_device_idx_huge.json", ["supertasks", "2", "device_idx"], 2 ** 40)
    doc = copy.deepcopy(PIPE)
    doc["tensors"]["w"] = {"shape": [8, 8], "dtype": "bf16",
                           "value": {"param_file": "0", "name": "w", "placements": [[0, 8], [0, 8]]}}
    doc["param_files"] = {"0": {"path": "broken.safetensors", "format": "safetensors"}}
    doc["supertasks"]["1"]["inputs"] = ["x", "w"]
    f = write(fam, "pipe_param_broken.json", compact(doc))
    write(fam, "broken.safetensors", struct.pack("<Q", 10 ** 12) + b"{}")
    case("pipe_param_broken", f"--ir {f} --hw system_2x_npu --format pipeline -q", 2, "broken.safetensors: byte 0",
         "header length")
    case("pipe_dev_zero", "--ir /dev/zero --format pipeline --hw system_2x_npu -q", 2, "/dev/zero: cannot open")
    # a pipeline given a single-device config, and a system config given a plain workload
    f = write(fam, "pipe_good.json", compact(PIPE))
    case("pipe_on_npu_config", f"--ir {f} --hw npu -q", 2, "npu: a pipeline runs on a system")


def safetensors():
    """safetensors files are read by the pipeline reader: unit-level cases through a pipeline."""
    fam = "safetensors"
    hdr = {"w": {"dtype": "BF16", "shape": [8, 8], "data_offsets": [0, 128]}}

    def st(name, data, where, what=""):
        doc = copy.deepcopy(PIPE)
        doc["tensors"]["w"] = {"shape": [8, 8], "dtype": "bf16",
                               "value": {"param_file": "0", "name": "w", "name_in_graph": "w",
                                         "placements": [[0, 8], [0, 8]]}}
        doc["param_files"] = {"0": {"path": name, "format": "safetensors"}}
        doc["supertasks"]["1"]["inputs"] = ["x", "w"]
        write(fam, name, data)
        f = write(fam, name.replace(".safetensors", ".json"), compact(doc))
        place = f"{name}: {where}" if where else name.replace(".safetensors", ".json: /tensors/w/value/name")
        case(name.rsplit(".", 1)[0], f"--ir {f} --hw system_2x_npu --format pipeline -q", 2, place,
             *([what] if what else []))

    def blob(h, data_len):
        t = compact(h).encode()
        return struct.pack("<Q", len(t)) + t + bytes(data_len)

    st("st_short.safetensors", b"\x01\x02", "byte 0", "8-byte header length")
    st("st_len_past_end.safetensors", struct.pack("<Q", 1000) + b"{}", "byte 0", "runs past the end")
    st("st_len_huge.safetensors", struct.pack("<Q", 2 ** 63) + b"{}", "byte 0")
    st("st_not_object.safetensors", struct.pack("<Q", 2) + b"[]", "byte 8")
    st("st_bad_json.safetensors", struct.pack("<Q", 5) + b'{"w":', "byte")
    st("st_offsets_past_end.safetensors", blob({"w": {"dtype": "BF16", "shape": [8, 8], "data_offsets": [0, 4096]}}, 128),
       "/w/data_offsets", "past the data section")
    st("st_offsets_reversed.safetensors", blob({"w": {"dtype": "BF16", "shape": [8, 8], "data_offsets": [128, 0]}}, 128),
       "/w/data_offsets", "out of order")
    st("st_size_mismatch.safetensors", blob({"w": {"dtype": "BF16", "shape": [8, 9], "data_offsets": [0, 128]}}, 128), "/w/data_offsets",
       "needs 144 bytes")
    st("st_dtype_unknown.safetensors", blob({"w": {"dtype": "Q7", "shape": [8, 8], "data_offsets": [0, 128]}}, 128), "/w/dtype", "Q7")
    st("st_missing_tensor.safetensors", blob({"v": hdr["w"]}, 128), "", "is not stored in")


# ---------------------------------------------------------------- .npy (sim --check)
Q0 = {"q0": {"layer_index": 0, "name": "q0", "operation": "quantize", "device": "npu",
             "input_dtype": ["float16"], "output_dtype": ["int8"], "input_shape": [[1, 1, 1, 2]],
             "output_shape": [[1, 1, 1, 2]],
             "file_list": {"input_activation1": "q0_in.npy", "output_activation1": "q0_out.npy"},
             "previous_layer": ["input1"], "next_layer": ["output1"], "tensor0_lut": [1, 1, 1], "tensor_mode": 0,
             "module_list": {"pre_cal": {"input_shape": [[1, 1, 1, 2]], "output_shape": [[1, 1, 1, 2]],
                                         "requan_scale_a": 1, "requan_zp_a": 0},
                             "post_cal": {"mul_k": 2.0, "sum_b": 1.0, "sumsub_mode": "add", "carry_sel": "round",
                                          "input_shape": [[1, 1, 1, 2]], "output_shape": [[1, 1, 1, 2]]}},
             "input_batchdim": [0], "output_batchdim": [0]}}


def raw_npy_header(d):
    d = d + " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode()


def npy_header(descr, shape, fortran=False, version=1, extra=""):
    sh = "(" + "".join(f"{s}, " for s in shape) + ")" if len(shape) != 1 else f"({shape[0]},)"
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, %s}" % (descr, "True" if fortran else "False", sh, extra)
    pre = 10 if version == 1 else 12
    d = d + " " * ((64 - (pre + len(d) + 1) % 64) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) if version == 1 else
            b"\x93NUMPY\x02\x00" + struct.pack("<I", len(d))) + d.encode()


def npy():
    fam = "npy"
    write(fam, "q0.json", compact(Q0))
    good_in = npy_header("<f2", (1, 1, 1, 2)) + struct.pack("<2e", 4.25, -2.25)
    good_out = npy_header("|i1", (1, 1, 1, 2)) + struct.pack("<2b", 10, -4)
    d = write(fam + "/good", "q0_in.npy", good_in)
    write(fam + "/good", "q0_out.npy", good_out)
    case("npy_good_control", "--ir {M}/npy/q0.json --check-only --npy-dir {M}/npy/good", 0)

    def bad(name, data, *expect):
        write(f"{fam}/{name}", "q0_in.npy", data)
        write(f"{fam}/{name}", "q0_out.npy", good_out)
        case(name, f"--ir {{M}}/npy/q0.json --check-only --npy-dir {{M}}/npy/{name}", 2, *expect)

    bad("npy_empty", b"", "q0_in.npy")
    bad("npy_bad_magic", b"\x93NUMPZ\x01\x00" + good_in[8:], "q0_in.npy", "byte 0")
    bad("npy_version_9", b"\x93NUMPY\x09\x00" + good_in[8:], "q0_in.npy", "byte 6")
    bad("npy_header_len_past_end", good_in[:8] + struct.pack("<H", 60000) + good_in[10:], "q0_in.npy", "byte 8")
    bad("npy_header_not_dict", good_in[:10] + b"[1, 2]".ljust(len(good_in) - 11) + b"\n" + good_in[len(good_in) - 4:],
        "q0_in.npy", "byte 10")
    bad("npy_descr_unknown", npy_header("<c16", (1, 1, 1, 2)) + bytes(32), "q0_in.npy", "descr")
    bad("npy_descr_object", npy_header("|O", (1, 1, 1, 2)) + bytes(16), "q0_in.npy", "descr")
    bad("npy_shape_negative", npy_header("<f2", (1, -1, 1, 2)) + bytes(4), "q0_in.npy", "shape")
    bad("npy_shape_huge", npy_header("<f2", (2 ** 40, 2 ** 40)) + bytes(4), "q0_in.npy", "shape")
    bad("npy_data_short", npy_header("<f2", (1, 1, 1, 2)) + bytes(2), "q0_in.npy", "byte")
    bad("npy_data_long", npy_header("<f2", (1, 1, 1, 2)) + bytes(40), "q0_in.npy", "byte")
    bad("npy_wrong_shape", npy_header("<f2", (1, 2)) + bytes(4), "q0_in.npy", "shape")
    bad("npy_wrong_dtype", npy_header("<i8", (1, 1, 1, 2)) + bytes(16), "q0_in.npy")
    bad("npy_missing_key", raw_npy_header("{'descr': '<f2', 'shape': (1, 1, 1, 2), }") + bytes(4),
        "q0_in.npy", "fortran_order")
    bad("npy_extra_key", npy_header("<f2", (1, 1, 1, 2), extra="'x': 1, ") + bytes(4), "q0_in.npy", "'x'")
    bad("npy_truncated_header", good_in[:20], "q0_in.npy", "byte")
    # the file itself: a directory where q0_in.npy belongs
    os.makedirs(os.path.join(FILES, fam, "npy_is_directory", "q0_in.npy"), exist_ok=True)
    write(f"{fam}/npy_is_directory/q0_in.npy", "keep", "")
    write(f"{fam}/npy_is_directory", "q0_out.npy", good_out)
    case("npy_is_directory", "--ir {M}/npy/q0.json --check-only --npy-dir {M}/npy/npy_is_directory", 2,
         "q0_in.npy: not a regular file")
    case("npy_dump_onto_file", "--ir {M}/npy/q0.json --check-only --npy-dir {M}/npy/good --dump {M}/npy/q0.json", 2,
         "--dump: ", "q0.json: exists and is not a folder")


# ---------------------------------------------------------------- ZeBu traces (sim compare-trace)
def zebu():
    fam = "zebu"
    IR = "{M}/ir/good.json"
    MAP = "{'slyr': 0, 'clyr': [], 's_flyr': 0, 'c_flyr': [], 'wkl': 0, 'tile': -1}"
    good = f"[pe_conv, {MAP}, {{'inst_idx': 1, 'time': [0, 38]}}, {{'PS': 0}}]\n"
    f = write(fam, "good_sim.txt", good)
    case("zebu_good_control", f"compare-trace --trace {f} --ir {IR}", 0)

    def t(name, text, *expect):
        f = write(fam, name, text)
        case(name.rsplit(".", 1)[0], f"compare-trace --trace {f} --ir {IR}", 2, *expect)

    t("zt_empty.txt", "", "zt_empty.txt", "empty trace")
    t("zt_blank.txt", "\n\n  \n", "zt_blank.txt", "empty trace")
    t("zt_unknown_name.txt", good.replace("pe_conv", "foo_bar"), "zt_unknown_name.txt: line 1", "unknown instruction 'foo_bar'")
    t("zt_no_compute.txt", good.replace("pe_conv", "lda_mov"), "zt_no_compute.txt", "no compute instruction")
    t("zt_only_cfg.txt", good.replace("pe_conv", "pe_cfg_fm"), "zt_only_cfg.txt", "no compute instruction")
    t("zt_line3_syntax.txt", good * 2 + "[pe_conv, {'slyr': 0\n", "zt_line3_syntax.txt: line 3")
    t("zt_missing_time.txt", good + good.replace("'time': [0, 38]", "'t': [0, 38]"), "zt_missing_time.txt: line 2",
      "missing 'time'")
    t("zt_end_before_start.txt", good.replace("[0, 38]", "[38, 0]"), "zt_end_before_start.txt: line 1", "ends before")
    t("zt_negative_start.txt", good.replace("[0, 38]", "[-5, 38]"), "zt_negative_start.txt: line 1", "negative")
    t("zt_time_float.txt", good.replace("[0, 38]", "[0.5, 38]"), "zt_time_float.txt: line 1", "'time'")
    t("zt_time_huge.txt", good.replace("[0, 38]", "[0, 99999999999999999999999]"), "zt_time_huge.txt: line 1")
    t("zt_slyr_string.txt", good.replace("'slyr': 0", "'slyr': 'a'"), "zt_slyr_string.txt: line 1", "'slyr'")
    t("zt_slyr_huge.txt", good.replace("'slyr': 0", "'slyr': 4294967296"), "zt_slyr_huge.txt: line 1", "'slyr'")
    t("zt_slyr_unknown_layer.txt", good.replace("'slyr': 0", "'slyr': 7"), "zt_slyr_unknown_layer.txt: layer 7")
    t("zt_unclosed_string.txt", good.replace("{'PS': 0}", "{'PS': 'x}"), "zt_unclosed_string.txt: line 1")
    t("zt_deep.txt", good.replace("{'PS': 0}", "{'PS': " + "[" * 5000 + "]" * 5000 + "}"), "zt_deep.txt: line 1")
    t("zt_trailing_text.txt", good.rstrip("\n") + " extra\n", "zt_trailing_text.txt: line 1", "unexpected text")
    t("zt_binary.txt", bytes(range(1, 256)), "zt_binary.txt: line 1")
    t("zt_json_not_python.txt", '["pe_conv", {"slyr": 0}]\n', "zt_json_not_python.txt: line 1")
    case("zt_dev_zero", f"compare-trace --trace /dev/zero --ir {IR}", 2, "/dev/zero: cannot open: a character device")
    case("zt_directory", f"compare-trace --trace {{M}}/zebu --ir {IR}", 2, "files/zebu: cannot open: is a directory")
    case("zt_fifo", f"compare-trace --trace {{FIFO}} --ir {IR}", 2, "fifo: cannot open: a FIFO")


# ---------------------------------------------------------------- sweep specs (sim sweep)
def sweep():
    fam = "sweep"
    base = ("workloads:\n  - zoo: resnet18\n    batch: 1\nhw: npu\naxes:\n"
            "  - npu.pe_array.rows: [8, 16]\n")

    def s(name, text, *expect):
        f = write(fam, name, text)
        case(name.rsplit(".", 1)[0], f"sweep {f} -o {{T}}/out -j1 -q", 2, *expect)

    s("sw_empty.yaml", "", "sw_empty.yaml")
    s("sw_top_list.yaml", "- a\n- b\n", "sw_top_list.yaml", "expected a mapping")
    s("sw_unknown_field.yaml", base + "axis:\n  - x: [1]\n", "sw_unknown_field.yaml", "axis")
    s("sw_dup_field.yaml", base + "hw: gemini_zebu\n", "sw_dup_field.yaml: hw (line 7)", "duplicate key 'hw'")
    s("sw_two_documents.yaml", base + "---\n" + base, "sw_two_documents.yaml: line 8", "a second YAML document")
    s("sw_axis_unknown_key.yaml", base.replace("npu.pe_array.rows", "npu.pe_aray.rows"), "sw_axis_unknown_key.yaml",
      "npu.pe_aray.rows")
    s("sw_axis_bad_value.yaml", base.replace("[8, 16]", "[8, sixteen]"), "sw_axis_bad_value.yaml", "sixteen")
    s("sw_axis_out_of_range.yaml", base.replace("[8, 16]", "[8, 0]"), "sw_axis_out_of_range.yaml", "npu.pe_array.rows")
    s("sw_range_zero_step.yaml", base.replace("[8, 16]", "8:16:0"), "sw_range_zero_step.yaml", "8:16:0")
    s("sw_range_too_many.yaml", base.replace("[8, 16]", "1:10000000:1"), "sw_range_too_many.yaml", "more than")
    s("sw_grid_too_big.yaml", "workloads:\n  - zoo: resnet18\nhw: npu\naxes:\n" +
      "".join(f"  - {k}: 1:1000:1\n" for k in ["npu.pe_array.rows", "npu.pe_array.cols", "npu.l2.size_kib"]),
      "sw_grid_too_big.yaml", "axes", "more than 10000000 points")
    s("sw_constraint_syntax.yaml", base + "constraints:\n  - npu.pe_array.rows <=\n", "sw_constraint_syntax.yaml")
    s("sw_constraint_unknown.yaml", base + "constraints:\n  - foo.bar < 3\n", "sw_constraint_unknown.yaml", "foo.bar")
    s("sw_workload_missing.yaml", base.replace("  - zoo: resnet18\n    batch: 1\n", "  - no_such_ir.json\n"),
      "no_such_ir.json: cannot open: no such file")
    s("sw_zoo_unknown.yaml", base.replace("resnet18", "resnet7"), "unknown model 'resnet7'")
    s("sw_hw_missing.yaml", base.replace("hw: npu", "hw: no_such_hw.yaml"), "no_such_hw.yaml: cannot open: no such file")
    s("sw_workloads_map.yaml", base.replace("workloads:\n  - zoo: resnet18\n    batch: 1\n", "workloads: {a: 1}\n"),
      "sw_workloads_map.yaml", "workloads (line 1)")
    s("sw_malformed.yaml", "axes: [\n", "sw_malformed.yaml: line", "malformed YAML")
    s("sw_alias_bomb.yaml", "a: &a [1, 1]\n" + "".join(
        f"l{i}: &l{i} [*{'a' if i == 0 else 'l' + str(i - 1)}, *{'a' if i == 0 else 'l' + str(i - 1)}]\n"
        for i in range(40)), "sw_alias_bomb.yaml", "more than 1000000 nodes")
    case("sw_dev_zero", "sweep /dev/zero -o {T}/out -q", 2, "/dev/zero: cannot open")
    s("sw_workload_dev_zero.yaml", base.replace("  - zoo: resnet18\n    batch: 1\n", "  - /dev/zero\n"),
      "/dev/zero: cannot open: a character device")
    case("sw_ir_dev_zero", "sweep --ir /dev/zero --set npu.pe_array.rows=8,16 -o {T}/out -j1 -q", 2,
         "/dev/zero: cannot open: a character device")
    case("sw_ir_fifo", "sweep --ir {FIFO} --set npu.pe_array.rows=8,16 -o {T}/out -j1 -q", 2, "fifo: cannot open: a FIFO")
    case("sw_directory", "sweep {M}/sweep -o {T}/out -q", 2, "files/sweep: cannot open")


# ---------------------------------------------------------------- ONNX
def onnx_family():
    fam = "onnx"
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError:
        sys.exit("make_malformed: python3-onnx is needed for the ONNX family (scripts/setup --models)")
    f32 = TensorProto.FLOAT
    vi = helper.make_tensor_value_info

    def model(nodes, inputs, outputs, inits=(), opset=13, ir=8):
        g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="npusim-malformed")
        m.ir_version = ir
        return m

    W = helper.make_tensor("W", f32, [4, 3, 3, 3], [0.0] * 108)
    good = model([helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
                 [vi("x", f32, [1, 3, 8, 8])], [vi("y", f32, None)], [W])
    gb = good.SerializeToString()
    f = write(fam, "good.onnx", gb)
    case("onnx_good_control", f"--ir {f} -q", 0)

    def o(name, data, *expect, forced=True):
        f = write(fam, name, data if isinstance(data, bytes) else data.SerializeToString())
        case(name.rsplit(".", 1)[0], f"--ir {f}{' --format onnx' if forced else ''} -q", 2, *expect)

    o("onnx_garbage.onnx", bytes(range(256)) * 3, "onnx_garbage.onnx")
    o("onnx_truncated.onnx", gb[: len(gb) // 2], "onnx_truncated.onnx")
    o("onnx_empty.onnx", b"", "onnx_empty.onnx")
    o("onnx_no_graph.onnx", onnx.ModelProto(ir_version=8), "onnx_no_graph.onnx")
    m = copy.deepcopy(good)
    del m.opset_import[:]
    o("onnx_no_opset.onnx", m, "onnx_no_opset.onnx")
    o("onnx_undefined_input.onnx", model([helper.make_node("Relu", ["nope"], ["y"])], [vi("x", f32, [1, 4])],
                                         [vi("y", f32, None)]), "onnx_undefined_input.onnx", "nope")
    o("onnx_conv_bad_weight.onnx",
      model([helper.make_node("Conv", ["x", "W"], ["y"])], [vi("x", f32, [1, 5, 8, 8])], [vi("y", f32, None)], [W]),
      "onnx_conv_bad_weight.onnx")
    o("onnx_matmul_mismatch.onnx",
      model([helper.make_node("MatMul", ["x", "B"], ["y"])], [vi("x", f32, [2, 8])], [vi("y", f32, None)],
            [helper.make_tensor("B", f32, [7, 4], [0.0] * 28)]), "onnx_matmul_mismatch.onnx")
    o("onnx_negative_dim.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", f32, [1, -3])],
                                      [vi("y", f32, None)]), "onnx_negative_dim.onnx")
    o("onnx_huge_dims.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", f32, [2 ** 40, 2 ** 40])],
                                   [vi("y", f32, None)]), "onnx_huge_dims.onnx")
    big = TensorProto(name="B", data_type=f32, dims=[2 ** 20, 2 ** 20])  # no data at all
    o("onnx_init_no_data.onnx", model([helper.make_node("MatMul", ["x", "B"], ["y"])], [vi("x", f32, [2, 2 ** 20])],
                                      [vi("y", f32, None)], [big]), "onnx_init_no_data.onnx")
    ext = TensorProto(name="B", data_type=f32, dims=[8, 4])
    ext.data_location = TensorProto.EXTERNAL
    e = ext.external_data.add()
    e.key, e.value = "location", "../../../../etc/missing.bin"
    o("onnx_external_missing.onnx", model([helper.make_node("MatMul", ["x", "B"], ["y"])], [vi("x", f32, [2, 8])],
                                          [vi("y", f32, None)], [ext]), "onnx_external_missing.onnx")
    o("onnx_cycle.onnx", model([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])],
                               [vi("x", f32, [1, 4])], [vi("b", f32, None)]), "onnx_cycle.onnx")
    o("onnx_opset_future.onnx", model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", f32, [1, 4])],
                                      [vi("y", f32, None)], opset=99), "onnx_opset_future.onnx")
    o("onnx_reshape_bad.onnx",
      model([helper.make_node("Reshape", ["x", "S"], ["y"])], [vi("x", f32, [2, 8])], [vi("y", f32, None)],
            [helper.make_tensor("S", TensorProto.INT64, [2], [3, 5])]), "onnx_reshape_bad.onnx")
    o("onnx_json_named.onnx", b'{"graph": 1}', "onnx_json_named.onnx")
    n = helper.make_node("Relu", ["x"], ["y"], name="relu")
    bad = model([n], [vi("x", f32, [1, 4])], [vi("y", f32, None)]).SerializeToString().replace(b"relu", b"r\xffl\xfe")
    f = write(fam, "onnx_name_not_utf8.onnx", bad)
    case("onnx_name_not_utf8", f"--ir {f} --report {{T}}/r.json -q", 2, "onnx_name_not_utf8.onnx: /graph/node/0/name",
         "not UTF-8")


# ---------------------------------------------------------------- TVM: graph.json, .params, MLF archives
def tvm():
    fam = "tvm"
    with open(os.path.join(SHARED, "tvm", "graph_executor_test.graph.json")) as f:
        G = json.load(f)
    f = write(fam, "good.graph.json", compact(G))
    case("tvm_good_control", f"--ir {f} -q", 0)

    def mut(name, path, value, where=None, what=""):
        doc = set_path(copy.deepcopy(G), path, value)
        f = write(fam, name, compact(doc))
        w = pointer(path) if where is None else where
        case(name.rsplit(".", 1)[0], f"--ir {f} --format tvm_mlf -q", 2, f"{name}: {w}", *([what] if what else []))

    mut("tvm_nodes_object.json", ["nodes"], {})
    mut("tvm_input_out_of_range.json", ["nodes", 2, "inputs", 0, 0], 99)
    mut("tvm_input_self.json", ["nodes", 2, "inputs", 0, 0], 2)
    mut("tvm_shape_negative.json", ["attrs", "shape", 1, 0, 0], -10)
    mut("tvm_shape_huge.json", ["attrs", "shape", 1, 0], [2 ** 40, 2 ** 40], where="/attrs/shape/1/0")
    mut("tvm_dltype_unknown.json", ["attrs", "dltype", 1, 0], "float13")
    mut("tvm_row_ptr_bad.json", ["node_row_ptr"], [0, 1, 5, 3])
    mut("tvm_heads_bad.json", ["heads", 0, 0], 42)
    mut("tvm_storage_count.json", ["attrs", "storage_id", 1], [0, 1])
    mut("tvm_op_missing.json", ["nodes", 2, "op"], DELETE)
    mut("tvm_num_outputs_bad.json", ["nodes", 2, "attrs", "num_outputs"], "many")

    # .params in an MLF directory: v7 copied with a broken parameter file
    src = os.path.join(ROOT, "tests", "data", "tvm_mlf", "v7")

    def mlf_dir(name, params):
        d = os.path.join(FILES, fam, name)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(src, d, ignore=shutil.ignore_patterns("*.c", "*.relay", "src"))
        with open(os.path.join(d, "parameters", "tiny.params"), "wb") as f:
            f.write(params)
        case(name, f"--ir {{M}}/{fam}/{name} --module tiny -q", 2, "tiny.params", "byte")

    with open(os.path.join(src, "parameters", "tiny.params"), "rb") as f:
        P = f.read()
    mlf_dir("params_bad_magic", b"\0" * 8 + P[8:])
    mlf_dir("params_truncated", P[: len(P) // 2])
    mlf_dir("params_count_huge", P[:16] + struct.pack("<Q", 2 ** 62) + P[24:])
    mlf_dir("params_name_len_huge", P[:24] + struct.pack("<Q", 2 ** 62) + P[32:])
    mlf_dir("params_empty", b"")

    # archives
    with open(os.path.join(ROOT, "tests", "data", "tvm_mlf", "v7.tar.gz"), "rb") as f:
        T = f.read()
    for name, data, expect in [("mlf_truncated.tar.gz", T[: len(T) // 2], "mlf_truncated.tar.gz"),
                               ("mlf_garbage.tar", b"\x1f\x8b" + bytes(range(200)), "mlf_garbage.tar")]:
        f = write(fam, name, data)
        case(name.split(".")[0], f"--ir {f} --format tvm_mlf -q", 2, expect)

    def tar(name, members):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as t:
            for n, data in members.items():
                ti = tarfile.TarInfo(n)
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
        return write(fam, name, buf.getvalue())

    f = tar("mlf_metadata_broken.tar", {"./metadata.json": b'{"modules": ', "./executor-config/graph/x.graph": b"{}"})
    case("mlf_metadata_broken", f"--ir {f} --format tvm_mlf -q", 2, "metadata.json")
    f = tar("mlf_no_metadata.tar", {"./executor-config/graph/x.graph": b"{}"})
    case("mlf_no_metadata", f"--ir {f} --format tvm_mlf -q", 2, "mlf_no_metadata.tar")
    f = tar("mlf_escape_path.tar", {"../../metadata.json": b"{}"})
    case("mlf_escape_path", f"--ir {f} --format tvm_mlf -q", 2, "mlf_escape_path.tar")


# ---------------------------------------------------------------- gpu-calibrate (--gemm, --conv, --ops)
def gpu_calibrate():
    with open(os.path.join(ROOT, "configs", "gpu_h100.yaml")) as f:
        hw = write("gpu_calibrate", "h100.yaml", f.read())
    ops_row = {"kind": "relu_squared", "M": 256, "N": 512, "dtype": "bf16", "row_inputs": 1, "col_vectors": 0,
               "row_outputs": 1, "row_stats": 0, "flops_per_element": 2, "warps": 4, "ms": 0.01}
    gemm_row = {"M": 256, "N": 256, "K": 256, "ms": 0.006}

    def run(name, flag, doc, code, *expect, extra=""):
        f = write("gpu_calibrate", name + ".json", compact(doc) if not isinstance(doc, str) else doc)
        case(name, f"gpu-calibrate --hw {hw} {flag} {f} -j1{extra}", code, *expect)

    run("ops_good_control", "--ops", {"rows": [ops_row]}, 0, "median |error| over 1 rows")
    run("gemm_good_control", "--gemm", {"rows": [gemm_row]}, 0, "median |error| over 1 rows")
    for name, key, value, what in [
        ("ops_ms_zero", "ms", 0, "must be a positive time"),
        ("ops_ms_negative", "ms", -1.5, "must be a positive time"),
        ("ops_ms_string", "ms", "fast", ""),
        ("ops_dtype_int8", "dtype", "int8", "must be fp32, fp16 or bf16"),
        ("ops_warps_zero", "warps", 0, "between 1 and 32"),
        ("ops_warps_above_block", "warps", 64, "between 1 and 32"),
        ("ops_rows_zero", "M", 0, ""),
        ("ops_cols_huge", "N", 1 << 40, ""),
        ("ops_no_outputs", "row_outputs", 0, ""),
        ("ops_inputs_negative", "row_inputs", -1, ""),
        ("ops_flops_negative", "flops_per_element", -2, "between 0 and 1000000"),
        ("ops_flops_overflow", "flops_per_element", 999999, ""),
        ("ops_transcendentals_nan", "transcendentals_per_element", "x", ""),
        ("ops_missing_kind", "kind", DELETE, "kind"),
        ("ops_missing_warps", "warps", DELETE, "warps"),
    ]:
        row = set_path(copy.deepcopy(ops_row), [key], value)
        if name == "ops_flops_overflow":
            row.update(M=1 << 24, N=1 << 24)
        where = "/rows/0" if value is DELETE else "/rows/0/" + key
        run(name, "--ops", {"rows": [row]}, 2, name + ".json", where, *([what] if what else []))
    run("ops_rows_not_array", "--ops", {"rows": {"a": 1}}, 2, "ops_rows_not_array.json", "/rows")
    run("ops_no_rows", "--ops", {"meta": {}}, 2, "ops_no_rows.json", "rows")
    run("ops_truncated", "--ops", compact({"rows": [ops_row]})[:40], 2, "ops_truncated.json")
    run("gemm_ms_zero", "--gemm", {"rows": [dict(gemm_row, ms=0)]}, 2, "gemm_ms_zero.json", "/rows/0/ms",
        "must be a positive time")
    run("gemm_missing_k", "--gemm", {"rows": [{"M": 1, "N": 1, "ms": 1}]}, 2, "gemm_missing_k.json", "/rows/0", "K")
    run("gemm_m_zero", "--gemm", {"rows": [dict(gemm_row, M=0)]}, 2, "gemm_m_zero.json", "/rows/0/M", "between 1 and")
    run("gemm_row_not_object", "--gemm", {"rows": [3]}, 2, "gemm_row_not_object.json", "/rows/0")
    run("ops_with_tile", "--ops", {"rows": [ops_row]}, 2, "--tile", "--gemm and --conv rows only", extra=" --tile 64x64x64:4")
    run("gemm_tile_bad", "--gemm", {"rows": [dict(gemm_row, tile="128x256:8")]}, 2, "gemm_tile_bad.json",
        "/rows/0/tile", "expected TMxTNxTK:WARPS")
    run("gemm_tile_one_stage", "--gemm", {"rows": [dict(gemm_row, tile="64x64x64:4:1")]}, 2,
        "gemm_tile_one_stage.json", "/rows/0/tile", "2-64 stages")
    run("gemm_tile_too_big", "--gemm", {"rows": [dict(gemm_row, tile="512x512x128:8:4")]}, 2,
        "gemm_tile_too_big.json", "/rows/0/tile", "no tile fits the shared memory")
    run("gemm_mma_unknown", "--gemm", {"rows": [dict(gemm_row, mma="hmma")]}, 2, "gemm_mma_unknown.json",
        "/rows/0/mma", "wgmma or mma.sync")
    run("gemm_dtype_int4", "--gemm", {"rows": [dict(gemm_row, dtype="int4")]}, 2, "gemm_dtype_int4.json",
        "/rows/0/dtype", "fp32, fp16, bf16, int8 or fp8")
    run("gemm_cluster_too_big", "--gemm", {"rows": [dict(gemm_row, cluster="8x4")]}, 2, "gemm_cluster_too_big.json",
        "/rows/0/cluster", "at most 16")
    run("gemm_group_zero", "--gemm", {"rows": [dict(gemm_row, group_m=0)]}, 2, "gemm_group_zero.json",
        "/rows/0/group_m", "between 1 and")
    conv_row = {"N": 2, "C": 64, "H": 28, "W": 28, "K": 64, "R": 3, "S": 3, "stride": 1, "pad": 1, "dtype": "fp16",
                "ms": 0.01}
    run("conv_good_control", "--conv", {"rows": [conv_row]}, 0, "median |error| over 1 rows")
    for name, key, value, what in [
        ("conv_stride_zero", "stride", 0, "between 1 and 64"),
        ("conv_pad_negative", "pad", -1, "between 0 and 64"),
        ("conv_kernel_too_big", "R", 40, "exceeds the padded input height"),
        ("conv_width_kernel_too_big", "S", 31, "exceeds the padded input width"),
        ("conv_dtype_int8", "dtype", "int8", "must be fp32, fp16 or bf16"),
        ("conv_ms_zero", "ms", 0, "must be a positive time"),
        ("conv_channels_huge", "C", 1 << 21, "between 1 and"),
        ("conv_missing_k", "K", DELETE, "K"),
    ]:
        row = set_path(copy.deepcopy(conv_row), [key], value)
        where = "/rows/0" if value is DELETE else "/rows/0/" + key
        run(name, "--conv", {"rows": [row]}, 2, name + ".json", where, what)
    run("conv_too_many_elements", "--conv", {"rows": [dict(conv_row, N=1 << 20, H=64, W=64, R=1, S=1, pad=0)]}, 2,
        "conv_too_many_elements.json", "/rows/0/N", "2^31 or more elements")
    run("conv_with_ops_rows", "--conv", {"rows": [ops_row]}, 2, "conv_with_ops_rows.json", "/rows/0", "C")
    case("calibrate_neither", f"gpu-calibrate --hw {hw}", 2, "give one of --gemm, --conv or --ops")
    f = write("gpu_calibrate", "both.json", compact({"rows": [gemm_row]}))
    case("calibrate_both", f"gpu-calibrate --hw {hw} --gemm {f} --ops {f}", 2, "give one of --gemm, --conv or --ops")
    case("calibrate_conv_and_gemm", f"gpu-calibrate --hw {hw} --gemm {f} --conv {f}", 2,
         "give one of --gemm, --conv or --ops")


# ---------------------------------------------------------------- extreme but legal values
# Every numeric hardware key at the ends of its range (docs/config.md), on the small Frontend
# IR: `sim` must finish or refuse with exit 2 (the exit column "0|2"), never overflow or crash;
# the sanitizer build (scripts/test --sanitize) checks the arithmetic of every one.
EXACT = {"1.04858e+06": 1 << 20, "1.07374e+09": 1 << 30}


def extremes():
    import subprocess
    sim = os.path.join(ROOT, "build", "sim")
    try:
        table = subprocess.run([sim, "config", "--markdown"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        sys.exit("make_malformed: the extreme-values family needs a built build/sim (sim config --markdown)")
    for row in table.splitlines()[2:]:
        if not row.startswith("|"):
            break  # the key table ends; the rules between keys follow
        cols = [c.strip().strip("`") for c in row.split("|")[1:-1]]
        key, typ, rng = cols[0], cols[1], cols[4]
        if typ not in ("int", "number") or not rng:
            continue
        lo_s, hi_s = rng[1:-1].split(", ")
        hi_open = rng.endswith(")")
        ends = []
        for v, side in ((lo_s, "min"), (hi_s, "max")):
            x = EXACT.get(v, float(v))
            if typ == "int":
                x = int(x)
            elif side == "max" and hi_open:
                x = x * (1 - 1e-9)
            ends.append((side, repr(x) if typ == "number" else str(x)))
        hw = "gpu_h100" if key.startswith("gpu.") else "npu"
        for side, v in ends:
            case(f"extreme_{key.replace('.', '_')}_{side}", f"--ir {{M}}/ir/good.json --hw {hw} --set {key}={v} -q", "0|2")


# ---------------------------------------------------------------- fuzzer findings (fuzz/crashers)
# Every input a fuzz target found (crash, leak, timeout, out-of-memory) stays a case here:
# fuzz/crashers/<target>-<n>-<what>.<ext>, run the way `sim` reads that format.
CRASHER_ARGS = {
    "hw_yaml": ("--ir {M}/ir/good.json --hw {f} -q", 2, ["{name}"]),
    "sweep_spec": ("sweep {f} -o {T}/out -j1 -q", 2, ["{name}"]),
    "frontend_ir": ("--ir {f} --format frontend_ir -q", 2, ["{name}"]),
    "ark_model": ("--ir {f} --format ark_model -q", 2, ["{name}"]),
    "ark_plan": ("--plan {f} -q", 2, ["{name}"]),
    "zebu_trace": ("compare-trace --trace {f} --ir {M}/ir/good.json", 2, ["{name}"]),
    "gemini_program": ("program --program {f}", 2, ["{name}"]),
    "onnx": ("--ir {f} --format onnx -q", 2, ["{name}"]),
    "tvm_graph": ("--ir {f} --format tvm_mlf -q", 2, ["{name}"]),
    "tvm_mlf": ("--ir {f} --format tvm_mlf -q", 2, ["{name}"]),
    "pipeline": ("--ir {f} --format pipeline --hw system_2x_npu -q", 2, ["{name}"]),
}


# Findings read another way than their target's default (a system file: as `sim config` reads it).
CRASHER_FILE_ARGS = {
    "hw_yaml-4-system-device-name-too-long.yaml": "config --hw {f}",
}


# What each finding must give now that it is fixed (default: exit 2 naming the file).
CRASHER_EXPECT = {
    "hw_yaml-1-yaml-cpp-loadall-loop.yaml": (2, ["{name}: line 3, column 1", "malformed YAML"]),
    "hw_yaml-2-alias-cycle-stack-overflow.yaml": (2, ["{name}: na*e[0].np[0]", "an alias inside the node its anchor names"]),
    "hw_yaml-3-alias-cycle-in-a-mapping.yaml": (2, ["{name}: nk.nk.nk", "nested deeper than 256 levels"]),
    "hw_yaml-4-system-device-name-too-long.yaml": (2, ["{name}: system.devices[1]", "device config"]),
    "sweep_spec-1-yaml-cpp-loadall-loop.yaml": (2, ["{name}: line 2, column 4", "malformed YAML"]),
    "sweep_spec-2-range-int64-overflow.yaml": (2, ["{name}: axes/zip/npu.pe_array.cols (line 5)"]),
    "onnx-1-libonnx-conv-rank2.onnx": (2, ["{name}: /graph/node/0 (Conv)", "no static shape"]),
    "tvm_graph-1-tensor-reference-use-after-free.json": (0, []),  # a valid graph: it runs
    "gemini_program-1-queue-name-not-utf8.txt": (2, ["{name}: line 1", "not a queue"]),
}


def crashers():
    d = os.path.join(ROOT, "fuzz", "crashers")
    for fn in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        target = fn.split("-")[0]
        if target not in CRASHER_ARGS:
            continue  # npy, safetensors, tvm_params: covered by the unit-level families above
        with open(os.path.join(d, fn), "rb") as f:
            data = f.read()
        path = write("fuzz", fn, data)
        args, code, expect = CRASHER_ARGS[target]
        args = CRASHER_FILE_ARGS.get(fn, args)
        code, expect = CRASHER_EXPECT.get(fn, (code, expect))
        case("fuzz_" + fn.split(".")[0].replace("-", "_"), args.replace("{f}", path), code,
             *[e.replace("{name}", fn) for e in expect])


def main():
    if os.path.isdir(FILES):
        shutil.rmtree(FILES)
    os.makedirs(FILES)
    frontend_ir()
    ark()
    hw()
    system()
    pipeline()
    safetensors()
    npy()
    zebu()
    sweep()
    onnx_family()
    tvm()
    gpu_calibrate()
    crashers()
    extremes()
    with open(os.path.join(OUT, "cases.tsv"), "w") as f:
        f.write("# Generated by scripts/make_malformed.py: do not edit (docs/hardening.md).\n"
                "# name<TAB>sim arguments<TAB>exit code (or codes: 0|2)<TAB>substrings of the output, joined by ' && '\n"
                "# {M}: tests/malformed/files  {T}: a scratch folder  {FIFO}: a FIFO in it\n")
        for name, args, code, expect in cases:
            f.write(f"{name}\t{args}\t{code}\t{' && '.join(expect)}\n")
    print(f"make_malformed: {len(cases)} cases in tests/malformed/cases.tsv")


if __name__ == "__main__":
    main()
