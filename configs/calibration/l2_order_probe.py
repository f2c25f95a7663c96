#!/usr/bin/env python3
"""Runs the Triton GEMM of measure_hopper.py once per case (shape, tile, tile order) so that Nsight
Compute can read each launch's DRAM and L2 traffic: does row-major order cost HBM bytes or L2
time? Run on the GPU machine, from configs/calibration (PROBE_SET=order, the default, reuse or
narrow):

  ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,\
lts__t_sector_hit_rate.pct,lts__t_sectors_op_read.sum,gpu__time_duration.sum \
      --csv python3 l2_order_probe.py > probe.csv
  python3 l2_order_probe.py --json probe.csv > h100_l2_order_probe.json
Then `build/sim gpu-calibrate --hw configs/gpu_h100.yaml --gemm configs/calibration/h100_l2_order_probe.json
--csv c.csv` puts the model's HBM megabytes (hbm_mb) beside them.
"""
import csv
import json
import os
import sys

# (M, N, K, BM, BN, BK, warps, stages, group_m). Set "order": tile order at 8192^3. Set "reuse":
# row-major tiles of 1-3 per SM on B panels larger and smaller than the L2.
SETS = {
    "order": [(8192, 8192, 8192) + t for t in [(64, 128, 64, 4, 3, 1), (64, 128, 64, 4, 3, 8),
                                                (128, 256, 64, 8, 3, 1), (128, 256, 64, 8, 3, 8),
                                                (64, 64, 64, 4, 4, 1), (64, 64, 64, 4, 4, 8)]],
    "reuse": [s + t for s in [(512, 11008, 4096), (2048, 8192, 8192), (4096, 4096, 4096), (8192, 4096, 4096),
                              (8192, 2048, 8192)]
              for t in [(64, 64, 64, 4, 4, 1), (64, 128, 64, 4, 3, 1), (128, 128, 64, 4, 4, 1), (128, 64, 64, 4, 4, 1)]],
}
# Set "narrow": tall tiles (128x64) that the chip runs 10-12% faster in row-major than in grouped
# order where B fits the L2 (dev rows at 4096^3), beside a wide tile that does not (64x128).
SETS["narrow"] = [s + t for s in [(4096, 4096, 4096), (8192, 2048, 2048)]
                  for t in [(128, 64, 64, 4, 4, 1), (128, 64, 64, 4, 4, 8), (64, 128, 64, 4, 3, 1), (64, 128, 64, 4, 3, 8)]]
CASES = SETS[os.environ.get("PROBE_SET", "order")]


def run():
    import torch
    import triton
    from measure_hopper import matmul_kernel
    for (M, N, K, bm, bn, bk, w, s, g) in CASES:
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                            c.stride(1), BM=bm, BN=bn, BK=bk, GROUP_M=g, num_warps=w, num_stages=s)
        torch.cuda.synchronize()


def to_json(path):
    """ncu's --csv output (one row per kernel launch and metric) -> one row per case."""
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    # Only the GEMM's launches (ncu without a kernel filter also profiles the inputs' fills).
    launches = sorted({int(r["ID"]) for r in rows if "matmul_kernel" in r.get("Kernel Name", "matmul_kernel")})
    out = []
    for i, case in zip(launches, CASES):
        M, N, K, bm, bn, bk, w, s, g = case
        row = {"M": M, "N": N, "K": K, "tile": f"{bm}x{bn}x{bk}:{w}:{s}", "group_m": g}
        for r in rows:
            if int(r["ID"]) == i:
                try:  # the sections' rows include text values and empty ones: numbers only
                    row[r["Metric Name"] + " (" + r["Metric Unit"] + ")"] = float(r["Metric Value"].replace(",", ""))
                except ValueError:
                    pass
        # The kernel's own duration as "ms": `sim gpu-calibrate --gemm` reads the file as it is
        # (its hbm_mb column against dram__bytes_read.sum; the time has no launch in it).
        row["ms"] = row["gpu__time_duration.sum (ns)"] / 1e6
        out.append(row)
    json.dump({"meta": {"written_by": "configs/calibration/l2_order_probe.py", "tool": "ncu --clock-control none"},
               "rows": out}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--json":
        to_json(sys.argv[2])
    else:
        run()
