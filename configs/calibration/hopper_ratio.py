#!/usr/bin/env python3
"""The same Triton GEMM kernels on the H200 and on the H100 (measure_hopper.py ran one program on
both: h200_triton_gemm*.json, h100_triton_gemm*.json, dev and heldout). Per tile shape, the median
(and range) of H200 time / H100 time over the rows both files hold; with --sim, the model's ratio
for the same rows (configs/gpu_h200.yaml over configs/gpu_h100.yaml, `sim gpu-calibrate --csv`).
The two chips are one GH100 with other HBM and L2 sizes: a ratio below what the HBM explains is
the clock or the L2 (docs/gpu.md#h200-against-h100). Needs no GPU.

Usage: configs/calibration/hopper_ratio.py [--sim build/sim]
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = ("triton_gemm", "triton_gemm_heldout")


def key(row):
    return (row["M"], row["N"], row["K"], row["tile"], row.get("group_m", 1), row.get("mma", "wgmma"))


def paired(h100_rows, h200_rows):
    """(row index in the H200 file, H200 ms / H100 ms, tile shape "TMxTN") for each fixed-tile
    Triton row of the H200 file that the H100 file holds too; and how many found no twin."""
    h100 = {key(r): r["ms"] for r in h100_rows if r.get("kind") == "gemm_triton" and "tile" in r}
    out, alone = [], 0
    for i, r in enumerate(h200_rows):
        if r.get("kind") != "gemm_triton" or "tile" not in r:
            continue
        if key(r) not in h100:
            alone += 1
            continue
        out.append((i, r["ms"] / h100[key(r)], "x".join(r["tile"].split(":")[0].split("x")[:2])))
    return out, alone


def model_us(sim, gpu, path):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "c.csv")
        hw = os.path.join(HERE, "..", f"gpu_{gpu}.yaml")
        subprocess.run([sim, "gpu-calibrate", "--hw", hw, "--gemm", path, "--csv", out], check=True, stdout=subprocess.DEVNULL)
        return [float(r["predicted_us"]) for r in csv.DictReader(open(out))]


def main(argv):
    sim = None
    if argv[:1] == ["--sim"] and len(argv) == 2:
        sim = argv[1]
    elif argv:
        print("usage: hopper_ratio.py [--sim build/sim]", file=sys.stderr)
        return 2
    by_shape, alone = {}, 0
    for s in SETS:
        rows = {g: json.load(open(os.path.join(HERE, f"{g}_{s}.json")))["rows"] for g in ("h100", "h200")}
        pairs, n = paired(rows["h100"], rows["h200"])
        alone += n
        model = {}
        if sim:
            try:
                m100, m200 = (model_us(sim, g, os.path.join(HERE, f"{g}_{s}.json")) for g in ("h100", "h200"))
            except (OSError, subprocess.CalledProcessError) as e:
                print(f"hopper_ratio.py: {sim} gpu-calibrate failed: {e}", file=sys.stderr)
                return 2
            model = {i: m200[i] / m100[i] for i in range(len(m200))}
        for i, ratio, shape in pairs:
            by_shape.setdefault(shape, []).append((ratio, model.get(i)))
    print(f"{'tile':>8} {'rows':>4} {'chip H200/H100':>14} {'range':>11}" + ("  model" if sim else ""))
    for shape, v in sorted(by_shape.items(), key=lambda kv: statistics.median(r for r, _ in kv[1])):
        chip = [r for r, _ in v]
        line = f"{shape:>8} {len(v):>4} {statistics.median(chip):14.3f} {min(chip):5.2f}-{max(chip):4.2f}"
        if sim:
            line += f"  {statistics.median(m for _, m in v):.3f}"
        print(line)
    print(f"{sum(len(v) for v in by_shape.values())} rows paired, {alone} H200 rows without an H100 twin")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
