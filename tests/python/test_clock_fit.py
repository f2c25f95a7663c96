#!/usr/bin/python3
"""configs/calibration/clock_fit.py: its least squares on a case made by hand, and what the
committed H100 probe files say (docs/gpu.md#the-clock-under-load): the clock falls with the
tensor flops and the L2 traffic, within 60 MHz rms. Usage: test_clock_fit.py SOURCE_DIR."""
import glob
import os
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(src, "configs", "calibration"))
import clock_fit as cf  # noqa: E402

failures = []
# Four kernels on f = 2.0 - 0.5 PF - 0.01 L2 exactly: the fit gives those back.
made = [{"pflops": p, "l2_tbs": l, "ghz": 2.0 - 0.5 * p - 0.01 * l} for p, l in [(0, 0), (1, 0), (0, 10), (0.5, 4)]]
a, b, c = cf.fit(made)
if max(abs(a - 2.0), abs(b - 0.5), abs(c - 0.01)) > 1e-9:
    failures.append(f"hand case: got a={a}, b={b}, c={c}, expected 2.0, 0.5, 0.01")
paths = sorted(glob.glob(os.path.join(src, "configs", "calibration", "h100_kernel_probe_*.json")) +
               glob.glob(os.path.join(src, "configs", "calibration", "h100_l2_narrow_probe.json")))
ks = [k for p in paths for k in cf.kernels(p)]
if len(ks) < 40:
    failures.append(f"expected at least 40 kernels with SM Frequency in {paths}, found {len(ks)}")
else:
    a, b, c = cf.fit(ks)
    rms = (sum((a - b * k["pflops"] - c * k["l2_tbs"] - k["ghz"]) ** 2 for k in ks) / len(ks)) ** 0.5
    if not (b > 0 and c > 0 and rms < 0.06):
        failures.append(f"probe fit: a={a:.3f} b={b:.3f} c={c:.4f} rms {rms:.3f} GHz: expected b, c > 0, rms < 0.06")
for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
