#!/usr/bin/env python3
"""Writes the A100 measurements of the LLMCompass artifact (github.com/PrincetonUniversity/
LLMCompass, ae/figure5/*/real_hardware/*_A100.csv: an A100 80GB SXM, 2039 GB/s, measured by
the LLMCompass authors with PyTorch) as `sim gpu-calibrate` rows, and prints the HBM efficiency
they imply. No GPU was lent to this project's work.

  configs/calibration/a100_gemm_llmcompass_fit.json      fp16 GEMMs M x 12288 x 12288 (M = 64 ... 32768),
                                                          judged (this board ran 4-14% faster than the
                                                          configs' MAMF fit, published_gemm_fit.py), and
                                                          8192 x 64 x 64, which gives the host overhead
                                                          of the timing
  configs/calibration/a100_gemm_llmcompass_predict.json  fp16 GEMMs 8192 x N x N (N = 128 ... 32768): held out

Timing (software_model/*.py, run_on_gpu): host wall clock around one call and
torch.cuda.synchronize(), median of repeated runs, the inputs warm. So each time includes the
launch and synchronisation seen from Python: the 8192 x 64 x 64 GEMM (2 MFLOP) takes 29.6 us.
`sim gpu-calibrate` compares them with gpu.launch_overhead_us set to that row's time minus its
simulated kernel, 28.4 us (docs/gpu.md#calibration).

HBM efficiency: GELU over 2^29 fp16 elements (read and written once) in the host-timed time
minus that of 1024 elements (the launch and synchronisation):
  efficiency = 2 x 2 B x 2^29 / (t(2^29) - t(2^10)) / 2039 GB/s.

Usage: configs/calibration/llmcompass_a100.py LLMCOMPASS_CHECKOUT   (read at 2e015fd2)
"""
import json
import os
import sys

PEAK_GBPS = 2039.0


def read_csv(repo, rel):
    with open(os.path.join(repo, rel)) as f:
        return [[x.strip() for x in line.split(",")] for line in f if line.strip()]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    repo = sys.argv[1]
    src = "ae/figure5/ab/real_hardware/matmul_A100.csv"
    fit, predict = [], []
    for m, n, k, ms, _ in read_csv(repo, src):
        row = {"M": int(m), "N": int(n), "K": int(k), "ms": float(ms.removesuffix("ms")),
               "source": f"PrincetonUniversity/LLMCompass@2e015fd2 {src}"}
        tiny = row["N"] == 64 and row["K"] == 64  # the host overhead
        (fit if tiny or (row["N"] == 12288 and row["K"] == 12288) else predict).append(row)
    meta = {"device": "NVIDIA A100 80GB SXM (2039 GB/s)", "dtype": "fp16",
            "timing": "host wall clock around torch.bmm + torch.cuda.synchronize(), median; inputs warm",
            "written_by": "configs/calibration/llmcompass_a100.py"}
    for name, rows, note in [
            ("fit", fit, "Fitted: the host overhead of the timing (the 8192 x 64 x 64 row). The 12288 rows are "
                         "judged: gpu.matmul.mma_efficiency comes from a100_matmul_mamf.json."),
            ("predict", predict, "Held out: no key was fitted to these rows.")]:
        out = f"configs/calibration/a100_gemm_llmcompass_{name}.json"
        with open(out, "w") as f:
            json.dump({"meta": meta, "note": "cuBLAS fp16 GEMMs C[M,N] = A[M,K] B[K,N] on an A100 80GB, "
                       "measured by the LLMCompass authors. " + note, "rows": rows}, f, indent=1)
            f.write("\n")
        print(f"{out}: {len(rows)} rows")
    gelu = {int(e): float(g) for e, g in read_csv(repo, "ae/figure5/g/real_hardware/gelu_A100.csv")}
    seconds = {e: e / (g * 1e9) for e, g in gelu.items()}  # the CSV holds G elements per second
    big, small = max(seconds), min(seconds)
    gbps = 4.0 * big / (seconds[big] - seconds[small]) / 1e9
    print(f"GELU 2^{big.bit_length() - 1} fp16 elements: {seconds[big] * 1e3:.4f} ms, 2^{small.bit_length() - 1}: "
          f"{seconds[small] * 1e6:.1f} us -> {gbps:.0f} GB/s = {gbps / PEAK_GBPS:.3f} of {PEAK_GBPS:.0f} GB/s")


if __name__ == "__main__":
    main()
