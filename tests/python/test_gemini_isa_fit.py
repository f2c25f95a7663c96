#!/usr/bin/python3
"""configs/calibration/gemini_isa_fit.py (docs/calibration.md#compiled-programs): configs/gemini_zebu.yaml
holds the values the fit on the ResNet-50 b1 trace finds for the instruction model's keys, and
the fitted pe_conv durations are within 2.5% (cycle-weighted) of the trace's.
Usage: test_gemini_isa_fit.py SOURCE_DIR SIM."""
import os
import re
import subprocess
import sys

src, sim = sys.argv[1], sys.argv[2]
out = subprocess.run([sys.executable, os.path.join(src, "configs", "calibration", "gemini_isa_fit.py"), "--sim", sim, "-j", "2"],
                     cwd=src, capture_output=True, text=True)
failures = []
if out.returncode != 0:
    failures.append(f"exit {out.returncode}: {out.stdout}{out.stderr}")
else:
    best = {}
    for m in re.finditer(r"^best: (.*)$", out.stdout, re.M):
        words = m[1].split()
        for k, v in zip(words[0::2], words[1::2]):
            if k in ("pe_fixed_cycles", "pe_stall_share", "weight_stream_overlap", "vp_pipeline_cycles", "control_cycles"):
                best[k] = float(v)
        if words[-2] == "error":
            best["error"] = float(words[-1].rstrip("%"))
    conf = re.search(r"^config: (.*) error ([\d.]+)%$", out.stdout, re.M)
    if len(best) != 6 or not conf:
        failures.append(f"unexpected output:\n{out.stdout}")
    else:
        words = conf[1].split()
        for k, v in zip(words[0::2], words[1::2]):
            if float(v) != best[k]:
                failures.append(f"configs/gemini_zebu.yaml has npu.isa.{k} {v}; the fit's best is {best[k]:g}")
        if best["error"] > 2.5:
            failures.append(f"fitted pe_conv durations {best['error']}% off the trace (limit 2.5%)")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
