#!/usr/bin/python3
"""configs/calibration/fa2_nvbench_a30.py on held-out FlashAttention-2 kernels of an A30
(docs/gpu_library.md#attention-on-an-a30): Llama-2-7B's causal prefill from 2,048 tokens and the
grouped-query decode of 32 and 64 sequences from 2,048 cached tokens (each K/V head read once for
its 4 query heads) come out within 15%.
Usage: test_fa2_nvbench_a30.py SOURCE_DIR SIM."""
import os
import re
import subprocess
import sys

src, sim = sys.argv[1], sys.argv[2]
args = [sys.executable, os.path.join(src, "configs", "calibration", "fa2_nvbench_a30.py"), "--sim", sim, "-j", "2"]
for f in ("llama2-7b", "batch-scaling-32", "batch-scaling-64"):
    args += ["--file", f]
out = subprocess.run(args, cwd=src, capture_output=True, text=True)
failures = []
if out.returncode != 0:
    failures.append(f"exit {out.returncode}: {out.stderr}")
else:
    rows = re.findall(r"^(prefill|decode)\s+(\S+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([+-][\d.]+)%$",
                      out.stdout, re.M)
    judged = [r for r in rows if int(r[3]) >= 2048 and
              ((r[0] == "prefill" and r[1] == "llama2-7b") or (r[0] == "decode" and r[1].startswith("batch-scaling")))]
    if len(judged) != 3 + 5 + 4:
        failures.append(f"expected 12 judged rows, got {len(judged)}:\n{out.stdout}")
    for kind, f, seqs, length, err in judged:
        if abs(float(err)) > 15.0:
            failures.append(f"{kind} {f} {seqs} x {length}: {err}% (limit 15%)")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
