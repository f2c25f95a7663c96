#!/usr/bin/env python3
"""Writes configs/calibration/{h100,a100,rtx3090}_rowwise_ops.json: forward times of Liger-Kernel's
fused row-wise Triton kernels on an "NVIDIA H100 80GB HBM3" and an "NVIDIA A100-SXM4-80GB", as
Liger's maintainers measured and published them in benchmark/data/all_benchmark_data.csv
(github.com/linkedin/Liger-Kernel). No GPU was lent to this project's work; these public
measurements are the held-out check of the GPU model's memory-bound path (`sim gpu-calibrate
--ops`, docs/gpu.md). None of the GPU model's keys was fitted to them.

Usage: configs/calibration/liger_ops.py LIGER_CHECKOUT [h100|a100|rtx3090 ...]
Reads the CSV as committed at the commit named in KERNELS for each kernel and GPU (rows are
replaced as kernels change; the kernel source read at that commit gives the launch and the
tensors below).

Each kernel runs one Triton program per row (grid = (n_rows,)) with BLOCK_SIZE =
next_power_of_2(n_cols) and num_warps from liger_kernel.ops.utils.calculate_settings:
4 warps below 2048, 8 from 2048, 16 from 8192, 32 from 32768. Times: median of
triton.testing.do_bench (which flushes the L2 before every run).
"""
import csv
import io
import json
import subprocess
import sys

# What each kernel reads and writes, read off its source (the same at every commit used below).
KERNELS = {
    # _layer_norm_forward_kernel: loads X, W, B; stores Y, Mean, RSTD.
    # mean (1), center (1), square and sum (2), * rstd (1), * W (1), + B (1); rsqrt per row.
    "layer_norm": dict(row_inputs=1, col_vectors=2, row_outputs=1, row_stats=2,
                       flops_per_element=7, transcendentals_per_element=0),
    # _rms_norm_forward_kernel: loads X, W; stores Y, RSTD. square and sum (2), * rstd (1), * W (1-2).
    "rms_norm": dict(row_inputs=1, col_vectors=1, row_outputs=1, row_stats=1,
                     flops_per_element=5, transcendentals_per_element=0),
    # _fused_add_rms_norm_forward_kernel: loads X, R, W; stores Y, S = X + R, RSTD.
    # add (1), square and sum (2), * rstd (1), * W (1).
    "fused_add_rms_norm": dict(row_inputs=2, col_vectors=1, row_outputs=2, row_stats=1,
                               flops_per_element=5, transcendentals_per_element=0),
    # _relu_squared_forward_kernel: loads X; stores max(X, 0)^2.
    "relu_squared": dict(row_inputs=1, col_vectors=0, row_outputs=1, row_stats=0,
                         flops_per_element=2, transcendentals_per_element=0),
    # LigerFusedGateUpSiLUMulFunction: loads the gate and up halves of one [rows, 2 x ffn] row;
    # stores silu(gate) * up. sigmoid = 1 / (1 + exp(-x)): exp and div (2 transcendentals),
    # negate, add, * gate, * up (4).
    "swiglu": dict(row_inputs=2, col_vectors=0, row_outputs=1, row_stats=0,
                   flops_per_element=4, transcendentals_per_element=2),
    # _softmax_single_block_forward_kernel (every N here fits one block): loads X; stores
    # exp(X - max) / sum. max (1), subtract (1), sum (1), divide (1); exp (1 transcendental).
    "softmax": dict(row_inputs=1, col_vectors=0, row_outputs=1, row_stats=0,
                    flops_per_element=4, transcendentals_per_element=1),
}

# gpu -> (device name in the CSV, output, [(kind, benchmark kernel_name, provider, commit)]):
# the commit that added the measurements, at which the kernel source was read.
GPUS = {
    "h100": ("NVIDIA H100 80GB HBM3", "configs/calibration/h100_rowwise_ops.json", [
        ("layer_norm", "layer_norm", "liger", "6a2c4913"),
        # LigerMegatronRMSNorm -> _rms_norm_forward_kernel, casting "llama", bfloat16
        ("rms_norm", "megatron_rms_norm", "liger", "27fe47e2"),
        ("fused_add_rms_norm", "fused_add_rms_norm", "liger_fused_add_rms_norm", "b7025a70"),
        ("relu_squared", "relu_squared", "liger", "39a1f454"),
        ("swiglu", "megatron_swiglu", "liger", "2120862b"),
    ]),
    "a100": ("NVIDIA A100-SXM4-80GB", "configs/calibration/a100_rowwise_ops.json", [
        ("layer_norm", "layer_norm", "liger", "b5672a15"),
        ("rms_norm", "rms_norm", "liger", "b5672a15"),
    ]),
    # Liger publishes its softmax on this GPU only, in float32 and bfloat16.
    "rtx3090": ("NVIDIA GeForce RTX 3090", "configs/calibration/rtx3090_rowwise_ops.json", [
        ("softmax", "softmax", "liger", "5d25e468"),
    ]),
}


def warps_for(n):
    block = 1
    while block < n:
        block *= 2
    return 32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def write(repo, gpu):
    device, out, kernels = GPUS[gpu]
    rows = []
    for kind, bench, provider, commit in kernels:
        k = KERNELS[kind]
        commit = git(repo, "rev-parse", commit).strip()
        text = git(repo, "show", f"{commit}:benchmark/data/all_benchmark_data.csv")
        picked = {}
        for r in csv.DictReader(io.StringIO(text)):
            if (r["kernel_name"], r["kernel_provider"], r["kernel_operation_mode"], r["metric_name"], r["gpu_name"]) != (
                    bench, provider, "forward", "speed", device):
                continue
            extra = json.loads(r["extra_benchmark_config_str"])
            m = extra["M"] if "M" in extra else extra["S"] * extra["B"]
            dtype = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}[
                extra.get("dtype", "torch.bfloat16")]  # the Megatron benchmarks run bfloat16
            n = int(float(r["x_value"]))
            picked[(dtype, n)] = {
                "kind": kind, "M": m, "N": n, "dtype": dtype, **k,
                "warps": warps_for(n), "ms": float(r["y_value_50"]),
                "source": f"linkedin/Liger-Kernel@{commit[:8]} benchmark/data/all_benchmark_data.csv, "
                          f"{bench}/{provider} forward, {r['timestamp']}, liger {r['liger_version']}",
            }
        if not picked:
            sys.exit(f"no {device} rows of {bench}/{provider} at {commit}")
        rows += [picked[key] for key in sorted(picked)]
    doc = {
        "meta": {"device": device, "timing": "median of triton.testing.do_bench (L2 flushed before each run)",
                 "written_by": "configs/calibration/liger_ops.py"},
        "note": "Forward times of Liger-Kernel's fused row-wise Triton kernels, published by its maintainers. "
                "One program per row of warps warps; row_inputs / row_outputs: M x N tensors read / written; "
                "col_vectors: N-long weights every program reads; row_stats: M-long fp32 statistics written. "
                "Held out: no key of the GPU configurations was fitted to these rows.",
        "rows": rows,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"{out}: {len(rows)} rows")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for gpu in sys.argv[2:] or sorted(GPUS):
        if gpu not in GPUS:
            sys.exit(f"unknown GPU {gpu!r} (known: {', '.join(sorted(GPUS))})")
        write(sys.argv[1], gpu)


if __name__ == "__main__":
    main()
