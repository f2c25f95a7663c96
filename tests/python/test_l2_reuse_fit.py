#!/usr/bin/python3
"""configs/calibration/l2_reuse_fit.py against the committed H100 probe files
(docs/gpu.md#l2-reuse-in-time): the H100 configuration's gpu.l2.partitions and drift_waves fit
the DRAM bytes better than their neighbours on the script's grid (and its jitter_per_wave better
than its neighbours in the scan: `--near`, a third of the full scan's runs), and much better
than one shared L2 with tiles in step.
Usage: test_l2_reuse_fit.py SOURCE_DIR SIM."""
import os
import re
import subprocess
import sys

src, sim = sys.argv[1], sys.argv[2]
out = subprocess.run([sys.executable, os.path.join(src, "configs", "calibration", "l2_reuse_fit.py"), "--sim", sim,
                      "--hw", os.path.join(src, "configs", "gpu_h100.yaml"), "--near"],
                     cwd=src, capture_output=True, text=True)
failures = []
if out.returncode != 0:
    failures.append(f"exit {out.returncode}: {out.stderr}")
else:
    grid = {(int(m[1]), float(m[2])): float(m[3])
            for m in re.finditer(r"^\s+(\d+)\s+([\d.]+)\s+([\d.]+)(?:\s+[\d.]+){3}\s*$", out.stdout, re.M)}
    best = re.search(r"^best: partitions (\d+) drift_waves ([\d.]+) rms log ([\d.]+)", out.stdout, re.M)
    best_jitter = re.search(r"^best: jitter_per_wave ([\d.]+) rms log ([\d.]+)", out.stdout, re.M)
    conf = re.search(r"^config: partitions (\d+) drift_waves ([\d.]+) jitter_per_wave ([\d.]+) rms log ([\d.]+), "
                     r"model / chip ([\d.]+)-([\d.]+), median factor ([\d.]+) over (\d+) kernels", out.stdout, re.M)
    if len(grid) < 5 or (1, 0.0) not in grid or not best or not best_jitter or not conf:
        failures.append(f"unexpected output:\n{out.stdout}")
    else:
        if (int(conf[1]), float(conf[2])) != (int(best[1]), float(best[2])):
            failures.append(f"configs/gpu_h100.yaml has partitions {conf[1]} drift_waves {conf[2]}; its neighbour "
                            f"partitions {best[1]} drift_waves {best[2]} fits better")
        if float(conf[3]) != float(best_jitter[1]):
            failures.append(f"configs/gpu_h100.yaml has jitter_per_wave {conf[3]}; its neighbour {best_jitter[1]} fits better")
        if int(conf[8]) != 34:
            failures.append(f"expected 34 probe kernels, got {conf[8]}")
        if not float(conf[4]) < 0.5 * grid[(1, 0.0)]:
            failures.append(f"config rms log {conf[4]} is not below half of one L2 in step ({grid[(1, 0.0)]})")
        if not (float(conf[5]) > 0.5 and float(conf[6]) < 2.0):
            failures.append(f"model / chip DRAM bytes {conf[5]}-{conf[6]}: expected within 0.5-2")
for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
