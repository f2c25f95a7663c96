#!/usr/bin/python3
"""Fits the instruction model's constants (npu.isa.*, docs/timing.md#compiled-programs) on the
calibration run only: the ZeBu trace of int8 ResNet-50 at batch 1
(../shared/examples/gemini_npu/int8_resnet50.sim_quantized_b1_c1_bw16_sim.txt) against `sim program`
on the same program (its assembler output beside it). The other six traces are never read here.

- pe_conv: npu.isa.pe_fixed_cycles x pe_stall_share x weight_stream_overlap over a grid, scored by
  the cycle-weighted mean |error| of the 151 pe_conv durations (sum |sim - measured| / sum measured).
- vector instructions: npu.isa.vp_pipeline_cycles = the median of measured - simulated at 0.
- control instructions: npu.isa.control_cycles = the median measured ct_* duration.

Prints the grid, each key's best, and the configuration's values with their scores.
Usage: gemini_isa_fit.py --sim build/sim [--hw configs/gemini_zebu.yaml] [-j 2]"""
import argparse
import concurrent.futures
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(SRC, "..", "shared", "examples", "gemini_npu")
TRACE = os.path.join(EXAMPLES, "int8_resnet50.sim_quantized_b1_c1_bw16_sim.txt")
PROGRAM = os.path.join(EXAMPLES, "int8_resnet50.sim_quanti_b1_c1_bw16_asm.txt")
FIXED = [25, 50, 75, 100, 125, 150, 175, 200, 225, 250]
STALL = [0.0, 0.004, 0.008, 0.012, 0.016, 0.02, 0.024]
OVERLAP = [0.0, 0.125, 0.25, 0.375, 0.5]


def measured():
    rows = []
    for line in open(TRACE):
        m = re.match(r"\[(\w+),.*'time': \[(\d+), (\d+)\]", line)
        if m:
            rows.append((m[1], int(m[3]) - int(m[2])))
    return rows


def simulated(sim, hw, sets):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "i.csv")
        cmd = [sim, "program", "--program", PROGRAM, "--hw", hw, "--instructions", out]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        return [(row["name"], int(row["cycles"])) for row in csv.DictReader(open(out))]


def pe_error(meas, sim):
    pairs = [(m, s) for (n, m), (_, s) in zip(meas, sim) if n == "pe_conv"]
    return sum(abs(s - m) for m, s in pairs) / sum(m for m, _ in pairs)


def config_value(sim, hw, key):
    out = subprocess.run([sim, "config", "--hw", hw], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith(key + " = "):
            return line.split(" = ", 1)[1].strip()
    sys.exit(f"{key} not in `sim config --hw {hw}`")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sim", default=os.path.join(SRC, "build", "sim"))
    ap.add_argument("--hw", default=os.path.join(SRC, "configs", "gemini_zebu.yaml"))
    ap.add_argument("-j", type=int, default=2)
    a = ap.parse_args(argv)
    meas = measured()
    grid = [(f, s, o) for f in FIXED for s in STALL for o in OVERLAP]
    sets = lambda f, s, o: [f"npu.isa.pe_fixed_cycles={f}", f"npu.isa.pe_stall_share={s}", f"npu.isa.weight_stream_overlap={o}"]
    with concurrent.futures.ThreadPoolExecutor(a.j) as pool:
        errs = list(pool.map(lambda g: pe_error(meas, simulated(a.sim, a.hw, sets(*g))), grid))
    print(f"pe_conv: {sum(1 for n, _ in meas if n == 'pe_conv')} durations of the ResNet-50 b1 trace; "
          "cycle-weighted mean |error| by pe_fixed_cycles (rows) x pe_stall_share (columns), best overlap each:")
    print("  fixed " + " ".join(f"{s:>8}" for s in STALL))
    for f in FIXED:
        print(f"  {f:5d} " + " ".join(f"{100 * min(e for g, e in zip(grid, errs) if g[:2] == (f, s)):7.3f}%" for s in STALL))
    best_err, best = min(zip(errs, grid))
    print(f"best: pe_fixed_cycles {best[0]} pe_stall_share {best[1]} weight_stream_overlap {best[2]} error {100 * best_err:.3f}%")

    vp = [(m, s) for (n, m), (_, s) in zip(meas, simulated(a.sim, a.hw, ["npu.isa.vp_pipeline_cycles=0"]))
          if n in ("vp_self", "vp_pool")]
    pipeline = int(round(statistics.median(m - s for m, s in vp)))
    print(f"best: vp_pipeline_cycles {pipeline} (median of measured - simulated at 0 over {len(vp)} vector instructions)")
    control = int(round(statistics.median(m for n, m in meas if n.startswith("ct_"))))
    print(f"best: control_cycles {control} (median of {sum(1 for n, _ in meas if n.startswith('ct_'))} ct_* durations)")

    keys = ["pe_fixed_cycles", "pe_stall_share", "weight_stream_overlap", "vp_pipeline_cycles", "control_cycles"]
    conf = {k: config_value(a.sim, a.hw, "npu.isa." + k) for k in keys}
    err = pe_error(meas, simulated(a.sim, a.hw, []))
    print("config: " + " ".join(f"{k} {conf[k]}" for k in keys) + f" error {100 * err:.3f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
