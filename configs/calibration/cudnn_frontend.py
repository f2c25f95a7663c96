#!/usr/bin/env python3
"""Writes configs/calibration/h200_cudnn_sdpa_heldout.json and h200_cudnn_norms.json from the
benchmark results NVIDIA published in github.com/NVIDIA/cudnn-frontend (commit
3929da2ef4c1dba1bb8acb68727b9134f26f40c0): on an "NVIDIA H200", cuDNN's fused attention (SDPA)
forward for Llama-3.1-70B's heads (64 query, 8 K/V, head dim 128), causal (top_left), bf16 and
fp8, one sequence of 2k-32k tokens (benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn/
llama3.1_20260227_034703.csv), and RMSNorm / LayerNorm forward of model shapes (N tokens x C),
bf16, by cuDNN and by torch.compile (benchmark/norms/results/h200/all_models_20260227_035147.csv).
Times are kernel time (CUPTI via torch.profiler), warm.

Roles (configs/calibration/manifest.json): the attention rows are held out (nothing of the
attention model was changed or fitted on them); the norm rows are dev (the short-row schedule
of row-wise kernels was added after seeing their 131072 x 128 row; nothing fitted).

Usage: configs/calibration/cudnn_frontend.py SDPA_CSV NORMS_CSV   (the two files above, e.g. from
../shared/calibration_data/cudnn_frontend_sdpa_norms/)
"""
import csv
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMIT = "NVIDIA/cudnn-frontend@3929da2ef4c1dba1bb8acb68727b9134f26f40c0"


def write(name, kernel, path, rows):
    doc = {"meta": {"device": "NVIDIA H200", "kernel": kernel, "source": COMMIT + " " + path,
                    "written_by": "configs/calibration/cudnn_frontend.py"}, "rows": rows}
    with open(os.path.join(ROOT, "configs", "calibration", name), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main():
    sdpa, norms = sys.argv[1], sys.argv[2]
    rows = []
    with open(sdpa) as f:
        for r in csv.DictReader(f):
            if r["success"] != "True" or r["attn_mask"] != "top_left":
                continue
            rows.append({"batch": int(r["batch_size"]), "seq": int(r["q_seqlen"]), "kv_seq": int(r["kv_seqlen"]),
                         "q_heads": int(r["num_q_heads"]), "kv_heads": int(r["num_kv_heads"]), "head_dim": int(r["head_dim_qk"]),
                         "dtype": {"bfloat16": "bf16", "fp8": "fp8"}[r["data_type"]], "causal": True,
                         "fwd_ms": float(r["fwd_time_ms"])})
    write("h200_cudnn_sdpa_heldout.json", "cuDNN SDPA forward (cudnn 1.19.0, backend 91901)",
          "benchmark/sdpa_benchmark_training/results/h200_919_only_cudnn/llama3.1_20260227_034703.csv", rows)
    rows = []
    with open(norms) as f:
        for r in csv.DictReader(f):
            if r["success"] != "True" or r["backend"] not in ("cudnn", "torch_compile"):
                continue
            rows.append({"model": r["norm_name"], "norm": r["norm_type"], "backend": r["backend"], "dtype": "bf16", "rows": int(r["N"]),
                         "cols": int(r["C"]), "bias": r["has_bias"] == "True", "fwd_ms": float(r["fwd_time_ms"])})
    write("h200_cudnn_norms.json", "RMSNorm / LayerNorm forward: cuDNN, and torch.compile's generated kernel",
          "benchmark/norms/results/h200/all_models_20260227_035147.csv", rows)


if __name__ == "__main__":
    main()
