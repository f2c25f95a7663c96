#!/usr/bin/env python3
"""Writes configs/calibration/h100_vllm_fused_moe_mixtral_heldout.json: the time of one MoE layer of
Mixtral-8x7B as vLLM's fused_moe (Triton) runs it in bf16 on an "NVIDIA H800" (Hopper: the H100
SXM's 132 SMs and 3.35 TB/s HBM3; only NVLink is cut, which a one-GPU kernel does not use), for M
tokens of hidden size 4096, w1 [8, 28672, 4096] (gate and up), w2 [8, 4096, 14336], top-2: the
"Torch Latency (ms)" column (vLLM's kernel, the reference FlagGems compares itself with) of the
benchmark logs that FlagGems' maintainers published in two pull requests. The two runs disagree
(0.52 ms and 0.96 ms at M = 4): both are kept, as published. Held out: nothing of the GPU model
was fitted to them (docs/validation_moe.md).

Usage: configs/calibration/vllm_fused_moe.py   (the rows are transcribed below)
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "configs", "calibration", "h100_vllm_fused_moe_mixtral_heldout.json")

# (tokens M, vLLM fused_moe ms) per published run, as printed in the pull request's log.
RUNS = {
    "https://github.com/flagos-ai/FlagGems/pull/2081 (test_vllm_perf.py, fused_moe_gems_vs_vllm, bf16)": [
        (1, 0.331936), (4, 0.516704), (16, 1.271760), (64, 1.304672)],
    "https://github.com/flagos-ai/FlagGems/pull/2230 (test_vllm_perf.py, fused_moe_gems_vs_vllm, bf16)": [
        (1, 0.275072), (4, 0.958016), (16, 0.963904), (64, 0.961808), (128, 1.007296)],
}


def main():
    rows = [{"tokens": m, "vllm_fused_moe_ms": ms, "source": src} for src, pts in RUNS.items() for m, ms in pts]
    doc = {"meta": {"device": "NVIDIA H800 (Hopper SXM: H100's SMs and HBM3)", "model": "Mixtral-8x7B MoE layer: E 8, top-2, d 4096, expert width 14336",
                    "dtype": "bf16", "kernel": "vLLM fused_moe (Triton): align, GEMM w1 (gate and up), silu_and_mul, GEMM w2, sum over top-k",
                    "routing": "the benchmark's own top-2 choices (not published); runs disagree at 4 and 16 tokens",
                    "written_by": "configs/calibration/vllm_fused_moe.py"},
           "rows": rows}
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
