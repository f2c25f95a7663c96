#!/usr/bin/env python3
"""The library plan against the H100 probes of measure_library.py (docs/gpu_library.md):
cuBLAS fp16 GEMMs of BERT / Llama shapes, int8 and fp32 / TF32 GEMMs, and the BERT-base encoder
in a CUDA graph. Each row: measured, predicted (`sim zoo ...` then `sim --ir ... --hw
configs/gpu_h100.yaml`, time_us, launch included as in do_bench), error. Which rows were fitted
is said per block. Usage: library_probe.py [--sim build/sim]   (standard library only)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def predict(sim, d, zoo_args, flags=()):
    f = os.path.join(d, "w.json")
    subprocess.run([sim, "zoo", *zoo_args, "-o", f], check=True, capture_output=True)
    r = os.path.join(d, "r.json")
    subprocess.run([sim, "--ir", f, "--hw", os.path.join(ROOT, "configs", "gpu_h100.yaml"), "-q", "--report", r,
                    *flags], check=True, capture_output=True)
    with open(r) as fh:
        return json.load(fh)["totals"]["time_us"]


def block(title, rows):
    print("\n" + title)
    errs = []
    for name, meas, pred in rows:
        e = 100.0 * (pred - meas) / meas
        errs.append(abs(e))
        print("  %-34s measured %10.2f us  predicted %10.2f us  %+7.1f%%" % (name, meas, pred, e))
    print("  median |error| over %d rows: %.1f%%, worst %.1f%%" % (len(errs), statistics.median(errs), max(errs)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "sim"))
    a = ap.parse_args()
    if not os.path.exists(a.sim):
        print("library_probe: no simulator at %s" % a.sim, file=sys.stderr)
        return 2
    os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")
    probe = json.load(open(os.path.join(HERE, "h100_library_probe.json")))["rows"]
    probe2 = json.load(open(os.path.join(HERE, "h100_library_probe_int8_small_gemm_bert.json")))["rows"]
    with tempfile.TemporaryDirectory() as d:
        rows = []
        for r in probe2:
            if r["kind"] == "gemm_cublas":
                args = ["op", "matmul", "m=%d" % r["M"], "n=%d" % r["N"], "k=%d" % r["K"], "--dtype", "fp16"]
                rows.append(("%s %dx%dx%d" % (r["what"], r["M"], r["N"], r["K"]), r["ms"] * 1000, predict(a.sim, d, args)))
        block("cuBLAS fp16 GEMMs (held out: nothing fitted on them)", rows)
        rows = []
        for r in probe + probe2:
            kind = r["kind"]
            dtypes = {"gemm_fp32": "fp32", "gemm_tf32": "fp32", "gemm_fp16": "fp16", "gemm_int8_colmajor_b": "int8",
                      "gemm_fp8_e4m3": "fp8"}
            if kind not in dtypes or "ms" not in r:
                continue
            dtype = dtypes[kind]
            args = ["op", "matmul", "m=%d" % r["M"], "n=%d" % r["N"], "k=%d" % r["K"], "--dtype", dtype]
            flags = ["--tf32"] if kind == "gemm_tf32" else []
            rows.append(("%s %d^3" % (kind, r["M"]), r["ms"] * 1000, predict(a.sim, d, args, flags)))
        block("square GEMMs by precision (int8 and fp8 rows: gpu.matmul.int8_mma_share and fp8_mma_share fitted on them)",
              rows)
        rows = []
        for r in probe2:
            if r["kind"] == "bert_base_encoder" and r["mode"] == "graph":
                args = ["bert-base", "--batch", str(r["batch"]), "--seq", str(r["seq"])]
                rows.append(("bert-base b%d s%d, CUDA graph" % (r["batch"], r["seq"]), r["ms"] * 1000,
                             predict(a.sim, d, args)))
        probe3 = json.load(open(os.path.join(HERE, "h100_library_probe_graph_kernels.json")))["rows"]
        rows_gemm, rows_row, rows_elt = [], [], []
        for r in probe3:
            k = r["kind"]
            if k == "linear":
                args, name = ["op", "matmul", "m=%d" % r["M"], "n=%d" % r["N"], "k=%d" % r["K"]], "%dx%dx%d" % (r["M"], r["N"], r["K"])
            elif k in ("layer_norm", "softmax"):
                args, name = ["op", k, "shape=%dx%d" % (r["rows"], r["cols"])], "%dx%d" % (r["rows"], r["cols"])
            elif k == "add":
                args, name = ["op", "element_wise_add", "shape=%d" % r["numel"], "shape2=%d" % r["numel"]], str(r["numel"])
            else:
                args, name = ["op", "gelu", "shape=%d" % r["numel"]], str(r["numel"])
            # One kernel of a CUDA graph: its span plus the graph's gap (the plan's per-kernel time).
            flags = ["--row-kernels", "looped"] if k in ("layer_norm", "softmax") else []
            pred = predict(a.sim, d, args + ["--dtype", "fp16"], flags) - 5.0 + 0.5
            row = ("%s %s" % (k, name), r["graph_us_per_kernel"], pred)
            (rows_gemm if k == "linear" else rows_row if k in ("layer_norm", "softmax") else rows_elt).append(row)
        for title, part in (("PyTorch ops in a CUDA graph, per kernel: cuBLAS GEMMs (held out)", rows_gemm),
                            ("... element-wise add and GELU (held out)", rows_elt),
                            ("... PyTorch's native layer_norm and softmax as looped row kernels (--row-kernels "
                             "looped; softmax's passes chosen on these rows)", rows_row)):
            block(title, part)
        block("BERT-base encoder, torch.nn.functional in one CUDA graph (held out; the zoo adds the "
              "embeddings, the plan fuses residual adds and GELU that PyTorch runs apart)", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
