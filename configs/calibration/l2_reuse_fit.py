#!/usr/bin/env python3
"""How well the GPU model's L2 pass (docs/gpu.md#l2-reuse-in-time) predicts the DRAM bytes that
Nsight Compute measured for Triton GEMMs on an H100 (l2_order_probe.py; the three
h100_l2_*_probe.json files here), over a grid of gpu.l2.partitions x gpu.l2.drift_waves, then over
gpu.l2.jitter_per_wave at the configuration's partitions and drift. Needs
no GPU: it runs `sim gpu-calibrate --csv` and compares its hbm_mb (read + written) with the
chip's dram__bytes_read + dram__bytes_write.

Usage: configs/calibration/l2_reuse_fit.py [--sim build/sim] [--hw configs/gpu_h100.yaml] [--rows] [--no-grid] [--near]
Prints, per grid point, the rms of log(model / chip), its range and the median factor off; then
the best point and the configuration's own (`--rows`: every row at the configuration's values;
`--no-grid`: the configuration's line only; `--near`: only the configuration's neighbours on the
grid and the jitter scan, with one shared L2 in step: whether the configuration is a local best,
at a third of the runs, what the test suite checks).
"""
import csv
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GRID = [(p, d) for p in (1, 2, 4) for d in (0, 1, 2, 3, 4, 8)]
JITTER = (0, 0.01, 0.02, 0.025, 0.03, 0.05, 0.1)


def probe_rows():
    for path in sorted(glob.glob(os.path.join(HERE, "h100_l2_*_probe.json"))):
        for r in json.load(open(path))["rows"]:
            chip = r["dram__bytes_read.sum (byte)"] + r["dram__bytes_write.sum (byte)"]
            yield path, r, chip


def model_bytes(sim, hw, path, sets):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "c.csv")
        cmd = [sim, "gpu-calibrate", "--hw", hw, "--gemm", path, "--csv", out, "-j", "1"]
        for s in sets:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return [float(row["hbm_mb"]) * 1e6 for row in csv.DictReader(open(out))]


def score(sim, hw, sets):
    """[(row, chip bytes, model bytes)] and (rms log, min ratio, max ratio, median factor)."""
    rows = list(probe_rows())
    model = {}
    for path in sorted({p for p, _, _ in rows}):
        model[path] = iter(model_bytes(sim, hw, path, sets))
    out = [(r, chip, next(model[p])) for p, r, chip in rows]
    logs = [math.log(m / c) for _, c, m in out]
    factors = sorted(math.exp(abs(x)) for x in logs)
    rms = math.sqrt(sum(x * x for x in logs) / len(logs))
    return out, (rms, math.exp(min(logs)), math.exp(max(logs)), factors[len(factors) // 2])


def config_value(sim, hw, key):
    # The value the simulator resolves (the file's, else the schema's default): `sim config`
    # prints one "key = value" line per parameter.
    out = subprocess.run([sim, "config", "--hw", hw], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        name, _, value = line.partition(" = ")
        if name == "gpu.l2." + key:
            return float(value)
    raise SystemExit(f"l2_reuse_fit.py: {sim} config --hw {hw} prints no gpu.l2.{key}")


def neighbours(values, v):
    """The scanned value nearest v and those beside it: a configuration off the scan never
    comes out as its best, as with the full scan."""
    i = min(range(len(values)), key=lambda k: abs(values[k] - v))
    return values[max(0, i - 1):i + 2]


def main(argv):
    sim, hw, rows, grid, near = "build/sim", "configs/gpu_h100.yaml", False, True, False
    i = 0
    while i < len(argv):
        if argv[i] == "--sim":
            sim, i = argv[i + 1], i + 2
        elif argv[i] == "--hw":
            hw, i = argv[i + 1], i + 2
        elif argv[i] == "--rows":
            rows, i = True, i + 1
        elif argv[i] == "--no-grid":
            grid, i = False, i + 1
        elif argv[i] == "--near":
            near, i = True, i + 1
        else:
            print(f"l2_reuse_fit.py: unknown argument {argv[i]}", file=sys.stderr)
            return 2
    part, drift = int(config_value(sim, hw, "partitions")), config_value(sim, hw, "drift_waves")
    jitter = config_value(sim, hw, "jitter_per_wave")
    if grid:
        print(f"{'partitions':>10} {'drift':>5} {'rms log':>8} {'min':>5} {'max':>5} {'median x':>8}")
        best = None
        points, jitters = GRID, JITTER
        if near:  # a cross on the grid around the configuration, and one shared L2 in step
            parts, drifts = sorted({p for p, _ in GRID}), sorted({d for _, d in GRID})
            points = sorted({(p, drift) for p in neighbours(parts, part)} | {(part, d) for d in neighbours(drifts, drift)} |
                            {(1, 0)})
            jitters = neighbours(list(JITTER), jitter)
        for p, d in points:
            _, (rms, lo, hi, med) = score(sim, hw, [f"gpu.l2.partitions={p}", f"gpu.l2.drift_waves={d}"])
            print(f"{p:>10} {d:>5g} {rms:8.3f} {lo:5.2f} {hi:5.2f} {med:8.2f}")
            if best is None or rms < best[2]:
                best = (p, d, rms)
        print(f"best: partitions {best[0]} drift_waves {best[1]:g} rms log {best[2]:.3f}")
        print(f"{'jitter':>10} {'rms log':>8} {'min':>5} {'max':>5} {'median x':>8}  (partitions {part}, drift {drift:g})")
        best = None
        for j in jitters:
            _, (rms, lo, hi, med) = score(sim, hw, [f"gpu.l2.jitter_per_wave={j}"])
            print(f"{j:>10} {rms:8.3f} {lo:5.2f} {hi:5.2f} {med:8.2f}")
            if best is None or rms < best[1]:
                best = (j, rms)
        print(f"best: jitter_per_wave {best[0]} rms log {best[1]:.3f}")
    out, (rms, lo, hi, med) = score(sim, hw, [])
    print(f"config: partitions {part} drift_waves {drift:g} jitter_per_wave {jitter:g} rms log {rms:.3f}, model / chip "
          f"{lo:.2f}-{hi:.2f}, median factor {med:.2f} over {len(out)} kernels")
    if rows:
        print(f"{'chip GB':>8} {'model GB':>8}  kernel")
        for r, chip, model in out:
            print(f"{chip / 1e9:8.2f} {model / 1e9:8.2f}  {r['M']}x{r['N']}x{r['K']} {r['tile']} group_m {r['group_m']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
