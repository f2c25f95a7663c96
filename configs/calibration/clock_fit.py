#!/usr/bin/env python3
"""How the H100's SM clock falls with the load, from the Nsight Compute metrics kept beside the
probe times (kernel_probe.py, l2_order_probe.py PROBE_SET=narrow; ncu --clock-control none, so
the clock is what the chip chose). Needs no GPU.

Usage: configs/calibration/clock_fit.py [PROBE_FILE...]   (default: the H100 probe files here)
Prints, per kernel, its `SM Frequency`, the tensor flops it did per second (the problem's flops
over `Duration`), the L2 sector reads and the DRAM reads per second, then the least-squares fit
    f [GHz] = a - b * PFLOP/s - c * L2 TB/s
and its residuals. docs/gpu.md#the-clock-under-load says what it showed.
"""
import glob
import json
import os
import sys


def num(x):
    return float(str(x).replace(",", ""))


def flops(r):
    if "C" in r:  # a convolution: 2 N P Q K C R S
        p = (r["H"] + 2 * r["pad"] - r["R"]) // r["stride"] + 1
        q = (r["W"] + 2 * r["pad"] - r["S"]) // r["stride"] + 1
        return 2 * r["N"] * p * q * r["K"] * r["C"] * r["R"] * r["S"]
    return 2 * r["M"] * r["N"] * r["K"]


def kernels(path):
    rows = json.load(open(path))
    rows = rows["rows"] if isinstance(rows, dict) else rows
    for r in rows:
        n = r.get("ncu", r)  # kernel_probe keeps the metrics under "ncu", the L2 probes in the row
        if "SM Frequency (hz)" not in n or "Duration (ns)" not in n:
            continue
        secs = num(n["Duration (ns)"]) * 1e-9
        yield {
            "file": os.path.basename(path),
            "what": r.get("layer") or f"{r['M']}x{r['N']}x{r['K']} {r.get('tile', '')}",
            "ghz": num(n["SM Frequency (hz)"]) / 1e9,
            "pflops": flops(r) / secs / 1e15,
            "l2_tbs": num(n.get("lts__t_sectors_srcunit_tex_op_read.sum (sector)", 0)) * 32 / secs / 1e12,
            "dram_tbs": num(n.get("dram__bytes_read.sum (byte)", 0)) / secs / 1e12,
            "us": secs * 1e6,
        }


def solve(a, b):
    """Gaussian elimination for the small normal equations a x = b."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(m[k][i]))
        m[i], m[p] = m[p], m[i]
        for k in range(i + 1, n):
            f = m[k][i] / m[i][i]
            for j in range(i, n + 1):
                m[k][j] -= f * m[i][j]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (m[i][n] - sum(m[i][j] * x[j] for j in range(i + 1, n))) / m[i][i]
    return x


def fit(ks):
    xs = [[1.0, k["pflops"], k["l2_tbs"]] for k in ks]
    ys = [k["ghz"] for k in ks]
    ata = [[sum(x[i] * x[j] for x in xs) for j in range(3)] for i in range(3)]
    aty = [sum(x[i] * y for x, y in zip(xs, ys)) for i in range(3)]
    a, b, c = solve(ata, aty)
    return a, -b, -c


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    paths = argv or sorted(glob.glob(os.path.join(here, "h100_kernel_probe_*.json")) +
                           glob.glob(os.path.join(here, "h100_l2_narrow_probe.json")))
    ks = [k for p in paths for k in kernels(p)]
    if len(ks) < 4:
        print(f"clock_fit.py: {len(ks)} kernels with SM Frequency and Duration in {paths}: too few to fit", file=sys.stderr)
        return 2
    a, b, c = fit(ks)
    print(f"{'GHz':>6} {'fit':>6} {'PFLOP/s':>8} {'L2 TB/s':>8} {'DRAM TB/s':>9} {'us':>8}  kernel")
    res = []
    for k in sorted(ks, key=lambda k: k["ghz"]):
        pred = a - b * k["pflops"] - c * k["l2_tbs"]
        res.append(pred - k["ghz"])
        print(f"{k['ghz']:6.3f} {pred:6.3f} {k['pflops']:8.3f} {k['l2_tbs']:8.2f} {k['dram_tbs']:9.2f} {k['us']:8.1f}  "
              f"{k['file']}: {k['what']}")
    rms = (sum(r * r for r in res) / len(res)) ** 0.5
    print(f"f = {a:.3f} GHz - {b:.3f} GHz per PFLOP/s - {c:.4f} GHz per L2 TB/s over {len(ks)} kernels: "
          f"rms {rms * 1000:.0f} MHz, worst {max(abs(r) for r in res) * 1000:.0f} MHz; "
          f"highest clock seen {max(k['ghz'] for k in ks):.3f} GHz")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
