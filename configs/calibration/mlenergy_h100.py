#!/usr/bin/env python3
"""Writes the ML.ENERGY leaderboard's H100 rows of one model as a held-out file of
configs/calibration: the energy per output token of the model served by vLLM on "NVIDIA H100 80GB
HBM3" GPUs (bf16, tensor parallel over the row's GPUs), as the leaderboard measured and published
it (github.com/ml-energy/leaderboard, public/data/models/<model>__lm-arena-chat.json): per
max_num_seqs, the output tokens per second, the GPUs' average power (NVML, the GPU boards only: no
host), the energy per output token, the median inter-token latency, and the distribution of output
lengths the row's requests had (the leaderboard's histogram: bin edges and counts).
Held out: no key of the power model (gpu.power.*) was fitted to these rows; docs/validation_energy.md.

Usage: configs/calibration/mlenergy_h100.py LEADERBOARD_FILE OUT
  meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat.json  -> h100_mlenergy_llama31_8b_heldout.json
  meta-llama__Llama-3.1-70B-Instruct__lm-arena-chat.json -> h100x4_mlenergy_llama31_70b_heldout.json
"""
import json
import os
import sys

COMMIT = "0cd52dab897c5d91a45f4d413038f3b8b4251b0f"


def main():
    path, out = sys.argv[1], sys.argv[2]
    source = f"ml-energy/leaderboard@{COMMIT} public/data/models/{os.path.basename(path)}"
    with open(path) as f:
        board = json.load(f)
    rows = []
    for c in board["configurations"]:
        if c["gpu_model"] != "H100" or c["parallelization"]["tensor_parallel"] != c["num_gpus"]:
            continue
        rows.append({"max_num_seqs": c["max_num_seqs"], "num_gpus": c["num_gpus"], "avg_batch_size": round(c["avg_batch_size"], 2),
                     "avg_output_len": round(c["avg_output_len"], 1),
                     "output_tokens_per_s": round(c["output_throughput_tokens_per_sec"], 1),
                     "avg_power_w": round(c["avg_power_watts"], 1),
                     "energy_per_token_j": round(c["energy_per_token_joules"], 4),
                     "median_itl_ms": round(c["median_itl_ms"], 2),
                     "output_length_distribution": {"bins": [round(b, 2) for b in c["output_length_distribution"]["bins"]],
                                                    "counts": c["output_length_distribution"]["counts"]},
                     "source": source})
    rows.sort(key=lambda r: r["max_num_seqs"])
    gpus = sorted({r["num_gpus"] for r in rows})
    doc = {"meta": {"device": "NVIDIA H100 80GB HBM3 (SXM5)" + (f", {gpus[0]} GPUs" if gpus != [1] else ""),
                    "model": board["model_id"], "dtype": "bf16",
                    "serving": f"vLLM, tensor parallel {gpus[0]}, LM-Arena chat prompts (task lm-arena-chat)",
                    "power": "GPU board power from NVML (the ML.ENERGY benchmark's Zeus), summed over the GPUs: no host, no fans",
                    "written_by": "configs/calibration/mlenergy_h100.py"},
           "note": "Held out: judged, never fitted (docs/validation_energy.md).", "rows": rows}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
