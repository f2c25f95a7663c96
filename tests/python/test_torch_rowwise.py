#!/usr/bin/python3
"""configs/calibration/torch_rowwise.py (docs/gpu_library.md#looped-row-kernels): every GPU
configuration holds the same gpu.row.block_exchange_cycles, better than the steps beside it in the
scan (`--near`; the full scan, eight times the runs, found it), and the fitted rows the key
moves (PyTorch's block softmax, over 1,024 columns) come out within 10% at that value.
Usage: test_torch_rowwise.py SOURCE_DIR SIM."""
import os
import re
import subprocess
import sys

src, sim = sys.argv[1], sys.argv[2]
out = subprocess.run([sys.executable, os.path.join(src, "configs", "calibration", "torch_rowwise.py"), "--sim", sim, "-j", "2", "--near"],
                     cwd=src, capture_output=True, text=True)
failures = []
if out.returncode != 0:
    failures.append(f"exit {out.returncode}: {out.stderr}")
else:
    best = re.search(r"^best: block_exchange_cycles (\d+)$", out.stdout, re.M)
    configs = re.findall(r"^config: (\S+) block_exchange_cycles ([\d.]+)$", out.stdout, re.M)
    rows = re.findall(r"^  softmax\s+(\d+)\s+(\d+)\s+(\w+)\s+([\d.]+)\s+([\d.]+)\s+([+-][\d.]+)%$", out.stdout, re.M)
    if not best or len(configs) != 7 or len(rows) != 12:
        failures.append(f"unexpected output:\n{out.stdout}")
    else:
        for path, value in configs:
            if float(value) != float(best[1]):
                failures.append(f"{path}: block_exchange_cycles {value}; {best[1]} beside it fits better")
        wide = [r for r in rows if int(r[1]) > 1024]
        if len(wide) != 4:
            failures.append(f"expected 4 rows over 1024 columns, got {len(wide)}")
        for m, n, dtype, _, _, err in wide:
            if abs(float(err)) > 10:
                failures.append(f"fitted row {m}x{n} {dtype}: {err}% (limit 10%)")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
