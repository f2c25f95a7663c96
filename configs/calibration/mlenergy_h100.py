#!/usr/bin/env python3
"""Writes configs/calibration/h100_mlenergy_llama31_8b_heldout.json: the energy per output token of
Llama-3.1-8B-Instruct served by vLLM on one "NVIDIA H100 80GB HBM3" (TP 1, bf16), as the ML.ENERGY
leaderboard measured and published it (github.com/ml-energy/leaderboard, public/data/models/
meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat.json): per max_num_seqs, the output tokens per
second, the GPU's average power (NVML, GPU board only: no host), the energy per output token and
the median inter-token latency, and the distribution of output lengths the row's requests had
(the leaderboard's histogram: bin edges and counts).
Held out: no key of the power model (gpu.power.*) was fitted to these rows; docs/validation_energy.md.

Usage: configs/calibration/mlenergy_h100.py LEADERBOARD_FILE   (the JSON above)
"""
import json
import sys

SOURCE = "ml-energy/leaderboard@0cd52dab897c5d91a45f4d413038f3b8b4251b0f public/data/models/meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat.json"
OUT = "configs/calibration/h100_mlenergy_llama31_8b_heldout.json"


def main():
    with open(sys.argv[1]) as f:
        board = json.load(f)
    rows = []
    for c in board["configurations"]:
        if c["gpu_model"] != "H100" or c["num_gpus"] != 1:
            continue
        rows.append({"max_num_seqs": c["max_num_seqs"], "avg_batch_size": round(c["avg_batch_size"], 2),
                     "avg_output_len": round(c["avg_output_len"], 1),
                     "output_tokens_per_s": round(c["output_throughput_tokens_per_sec"], 1),
                     "avg_power_w": round(c["avg_power_watts"], 1),
                     "energy_per_token_j": round(c["energy_per_token_joules"], 4),
                     "median_itl_ms": round(c["median_itl_ms"], 2),
                     "output_length_distribution": {"bins": [round(b, 2) for b in c["output_length_distribution"]["bins"]],
                                                    "counts": c["output_length_distribution"]["counts"]},
                     "source": SOURCE})
    rows.sort(key=lambda r: r["max_num_seqs"])
    doc = {"meta": {"device": "NVIDIA H100 80GB HBM3 (SXM5)", "model": board["model_id"], "dtype": "bf16",
                    "serving": "vLLM, tensor parallel 1, LM-Arena chat prompts (task lm-arena-chat)",
                    "power": "GPU board power from NVML (the ML.ENERGY benchmark's Zeus): no host, no fans",
                    "written_by": "configs/calibration/mlenergy_h100.py"},
           "note": "Held out: judged, never fitted (docs/validation_energy.md).", "rows": rows}
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
