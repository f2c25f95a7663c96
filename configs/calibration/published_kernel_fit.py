#!/usr/bin/env python3
"""The A100's tensor-core, HBM and L2 keys fitted on published kernel measurements, and the H100 judged
on the same kind of GEMM rows (docs/gpu.md#the-a100-configurations). Needs no GPU: every GEMM row
runs as the library plan of `sim zoo op matmul` (`--launch graph`, the kernel's time) on a
configuration.

  a100_matmul_mamf.json          bf16 Maximum Achievable Matmul FLOPS of an A100 SXM (stas00/
                                 ml-engineering): gpu.matmul.mma_efficiency is the value of the
                                 scan with the least rms log error of time over its rows
  a100_int8_gemm_sglang.json     int8 GEMMs on an A100 (sglang PR 2752): gpu.matmul.int8_mma_share
                                 likewise over the rows marked fit (M >= 1024), at that efficiency;
                                 gpu.matmul.warp_load_bytes_in_flight over the rows of M <= 128 (the
                                 weights stream through few warps), each run as the tile sgl-kernel
                                 dispatches it (`sim gpu-calibrate --gemm`, tiles below)
  h100_matmul_mamf_heldout.json  bf16 and fp8 MAMF of an H100 SXM: held out, printed
  a100_fp16_gemm_lightseq_heldout.json
                                 cuBLAS fp16 GEMMs of BERT-sized layers on an A100 (LightSeq's
                                 gemm_test): held out, printed; each row's kernel time plus
                                 gpu.launch.graph_gap_us, as in the benchmark's back-to-back calls
  a100_stream_gpubenches.json    STREAM-like bandwidth of an A100 80GB and a 40GB (te42kyfo/
                                 gpu-benches): gpu.hbm.efficiency = the measured GB/s over the
                                 datasheet's, two decimals
  a100_l2_gpubenches.json        L2 read bandwidth of an A100 80GB by data set (gpu-benches'
                                 gpu-l2-cache): gpu.l2.bandwidth_gbps = the median GB/s of the
                                 plateau (2-25 MiB), both A100 configurations

Prints each scan, `best:` lines, `config:` (what configs/gpu_a100_80gb.yaml and gpu_a100.yaml
hold, which must agree; `borrowed:` the other Ampere configurations, which take the A100's
warp_load_bytes_in_flight), every row at the configurations' values, `hbm:` and `l2:` lines (fit, config).
Usage: configs/calibration/published_kernel_fit.py [--sim build/sim] [-j N] [--near]
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
A100_CONFIGS = ["configs/gpu_a100_80gb.yaml", "configs/gpu_a100.yaml"]
EFFICIENCIES = [round(0.80 + 0.01 * i, 2) for i in range(18)]  # 0.80 ... 0.97
INT8_SHARES = [round(0.80 + 0.01 * i, 2) for i in range(21)]   # 0.80 ... 1.00
WARP_BYTES = list(range(3072, 8193, 256))                        # B a warp keeps in flight
STREAM_ROWS_MAX_M = 128
# Ampere configurations without a fit of their own: cp.async is the SM's, so they take the A100's.
AMPERE_BORROWING = ["configs/gpu_a30.yaml", "configs/gpu_rtx3090.yaml"]


def sgl_kernel_tile(m, n):
    """The CUTLASS 2.x tile sgl-kernel's int8_scaled_mm runs on sm80 (sm80_dispatch_shape in
    sgl-kernel/csrc/gemm/int8_gemm_kernel.cu, sgl-project/sglang@1f2840c9, the dispatch PR 2752
    says it tuned for sm80): threadblock TMxTNxTK, warps = threadblock / warp shape (a warp shape
    shorter than TK slices K across warps), stages."""
    if m <= 16:
        tb, warp, stages = (16, 64, 128), (16, 64, 64), 6 if n <= 4096 else 5
    elif m <= 32:
        tb, warp, stages = (32, 64, 128), (32, 64, 64), 6 if n <= 4096 else 5
    elif m <= 64:
        tb, warp, stages = ((64, 64, 128), (32, 64, 64), 5) if n <= 4096 else ((64, 128, 128), (64, 64, 64), 5)
    elif m <= 128 and n < 8192:
        tb, warp, stages = (64, 128, 128), (64, 64, 64), 5
    else:
        tb, warp, stages = (128, 128, 64), (64, 64, 64), 5
    warps = (tb[0] // warp[0]) * (tb[1] // warp[1]) * (tb[2] // warp[2])
    return "%dx%dx%d:%d:%d" % (tb + (warps, stages))


def rows(name, fit_only=False):
    with open(os.path.join(HERE, name)) as f:
        return [r for r in json.load(f)["rows"] if not fit_only or r.get("fit", True)]


def config_value(path, key):
    """A `key: value` of the config's gpu.matmul block (the files keep one such line each)."""
    with open(os.path.join(ROOT, path)) as f:
        m = re.search(r"^\s+%s:\s*([0-9.]+)" % key, f.read(), re.M)
    if not m:
        sys.exit("%s: no %s" % (path, key))
    return float(m.group(1))


def block_value(path, block, key):
    """gpu.<block>.<key> of a config (the `key:` line after `block:`)."""
    with open(os.path.join(ROOT, path)) as f:
        m = re.search(r"^  %s:\n(?:    .*\n)*?    %s:\s*([0-9.]+)" % (block, key), f.read(), re.M)
    if not m:
        sys.exit("%s: no gpu.%s.%s" % (path, block, key))
    return float(m.group(1))


def lightseq_table(sim, hw):
    """The held-out LightSeq rows: kernel time + the gap between back-to-back kernels."""
    rs = rows("a100_fp16_gemm_lightseq_heldout.json")
    gap = block_value(hw, "launch", "graph_gap_us")
    us = [u + gap for u in sim.many([(r, hw, {}) for r in rs])]
    print("a100_fp16_gemm_lightseq_heldout.json (held out) on %s, kernel + %.1f us:" % (os.path.basename(hw), gap))
    print("  %-6s %-6s %-6s %11s %11s %8s" % ("M", "N", "K", "measured_us", "model_us", "error"))
    errs = []
    for r, p in zip(rs, us):
        meas = r["ms"] * 1000
        errs.append(100 * (p - meas) / meas)
        print("  %-6d %-6d %-6d %11.1f %11.1f %+7.1f%%" % (r["M"], r["N"], r["K"], meas, p, errs[-1]))
    print("lightseq: median |error| %.1f%% median error %+.1f%% worst %.1f%% over %d rows" % (
        statistics.median(abs(e) for e in errs), statistics.median(errs), max(abs(e) for e in errs), len(errs)))


def hbm_efficiency(path):
    return block_value(path, "hbm", "efficiency")


class Sim:
    def __init__(self, sim, jobs):
        self.sim, self.jobs, self.dir = sim, jobs, tempfile.mkdtemp(prefix="gemm_fit_")
        self.env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")

    def workload(self, r):
        path = os.path.join(self.dir, "mm_%s_%d_%d_%d.json" % (r["dtype"], r["M"], r["N"], r["K"]))
        if not os.path.exists(path):
            subprocess.run([self.sim, "zoo", "op", "matmul", "m=%d" % r["M"], "n=%d" % r["N"], "k=%d" % r["K"],
                            "--dtype", r["dtype"], "-o", path], check=True, capture_output=True, env=self.env)
        return path

    def kernel_us(self, job):
        r, hw, sets = job
        ir = self.workload(r)
        with tempfile.NamedTemporaryFile(suffix=".json", dir=self.dir, delete=False) as out:
            report = out.name
        args = [self.sim, "--ir", ir, "--hw", os.path.join(ROOT, hw), "--launch", "graph", "-q", "--report", report]
        for k, v in sets.items():
            args += ["--set", "%s=%s" % (k, v)]
        subprocess.run(args, check=True, capture_output=True, env=self.env)
        with open(report) as f:
            us = json.load(f)["totals"]["kernel_us"]
        os.unlink(report)
        return us

    def many(self, jobs):
        for r, _, _ in jobs:  # workloads first, once each
            self.workload(r)
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as ex:
            return list(ex.map(self.kernel_us, jobs))


def own_tiles_us(sim, rs, hw, sets):
    """Each row's time as its own (sgl-kernel's) tile runs it: `sim gpu-calibrate --gemm` rows."""
    gemm = os.path.join(sim.dir, "own_tiles.json")
    with open(gemm, "w") as f:
        json.dump({"rows": [{"M": r["M"], "N": r["N"], "K": r["K"], "ms": r["ms"], "dtype": r["dtype"],
                             "tile": sgl_kernel_tile(r["M"], r["N"])} for r in rs]}, f)
    csv = os.path.join(sim.dir, "own_tiles.csv")
    args = [sim.sim, "gpu-calibrate", "--hw", os.path.join(ROOT, hw), "--gemm", gemm, "--csv", csv, "-j", str(sim.jobs)]
    for k, v in sets.items():
        args += ["--set", "%s=%s" % (k, v)]
    subprocess.run(args, check=True, capture_output=True, env=sim.env)
    with open(csv) as f:
        return [float(line.split(",")[4]) for line in f.read().splitlines()[1:] if line]


def rms_log(predicted_us, rs):
    return math.sqrt(sum(math.log(p / (r["ms"] * 1000)) ** 2 for p, r in zip(predicted_us, rs)) / len(rs))


def scan(sim, rs, hw, key, values, fixed):
    """rms log error of the rows at each value of key (the other keys as fixed says); the best value."""
    jobs = [(r, hw, dict(fixed, **{key: v})) for v in values for r in rs]
    us = sim.many(jobs)
    errs = [rms_log(us[i * len(rs):(i + 1) * len(rs)], rs) for i in range(len(values))]
    print("%s on %s (%d rows): value, rms log error" % (key, os.path.basename(hw), len(rs)))
    for v, e in zip(values, errs):
        print("  %.2f %.4f" % (v, e))
    best = min(range(len(values)), key=lambda i: (errs[i], values[i]))
    return values[best], errs[best]


def table(sim, name, rs, hw, fitted=True):
    us = sim.many([(r, hw, {}) for r in rs])
    print("%s on %s:" % (name, os.path.basename(hw)))
    print("  %-6s %-6s %-6s %-5s %4s %11s %11s %8s" % ("M", "N", "K", "dtype", "fit", "measured_us", "model_us", "error"))
    for r, p in zip(rs, us):
        meas = r["ms"] * 1000
        print("  %-6d %-6d %-6d %-5s %4s %11.1f %11.1f %+7.1f%%" % (r["M"], r["N"], r["K"], r["dtype"],
                                                                  "yes" if fitted and r.get("fit", True) else "-", meas, p,
                                                                  100 * (p - meas) / meas))


def scan_own_tiles(sim, rs, hw, key, values):
    errs = [rms_log(own_tiles_us(sim, rs, hw, {key: v}), rs) for v in values]
    print("%s on %s (%d rows, sgl-kernel's tiles): value, rms log error" % (key, os.path.basename(hw), len(rs)))
    for v, e in zip(values, errs):
        print("  %d %.4f" % (v, e))
    best = min(range(len(values)), key=lambda i: (errs[i], values[i]))
    return values[best], errs[best]


def own_tiles_table(sim, name, rs, hw):
    us = own_tiles_us(sim, rs, hw, {})
    print("%s on %s, sgl-kernel's tiles:" % (name, os.path.basename(hw)))
    print("  %-6s %-6s %-6s %-5s %4s %11s %11s %8s  %s" % ("M", "N", "K", "dtype", "fit", "measured_us", "model_us", "error",
                                                          "tile"))
    for r, p in zip(rs, us):
        meas = r["ms"] * 1000
        print("  %-6d %-6d %-6d %-5s %4s %11.1f %11.1f %+7.1f%%  %s" % (
            r["M"], r["N"], r["K"], r["dtype"], "yes" if r["M"] <= STREAM_ROWS_MAX_M else "-", meas, p,
            100 * (p - meas) / meas, sgl_kernel_tile(r["M"], r["N"])))


def hbm_fits():
    """(config, measured GB/s, datasheet GB/s, efficiency to two decimals) of each A100 board."""
    with open(os.path.join(HERE, "a100_stream_gpubenches.json")) as f:
        r80, r40 = json.load(f)["rows"]
    per_gpu = sorted(r40["gbps_per_gpu"])
    median40 = (per_gpu[len(per_gpu) // 2 - 1] + per_gpu[len(per_gpu) // 2]) / 2
    return [(A100_CONFIGS[0], r80["scale_gbps"], r80["peak_gbps"], round(r80["scale_gbps"] / r80["peak_gbps"], 2)),
            (A100_CONFIGS[1], median40, r40["peak_gbps"], round(median40 / r40["peak_gbps"], 2))]


def l2_fit():
    """(median GB/s of the L2 plateau, data sets in it): the A100 80GB's gpu-l2-cache rows of
    2-25 MiB, past the L1s and within one L2 section; both A100 configurations take it."""
    with open(os.path.join(HERE, "a100_l2_gpubenches.json")) as f:
        plateau = [r["gbps"] for r in json.load(f)["rows"] if 2048 <= r["data_set_kb"] <= 25600]
    return round(statistics.median(plateau)), len(plateau)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "sim"))
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--near", action="store_true",
                    help="scan each key at the configuration's value and the values beside it only (whether it is a "
                         "local best: what the test suite checks, at a fifth of the runs)")
    a = ap.parse_args()
    sim = Sim(a.sim, a.jobs)
    hw = A100_CONFIGS[0]

    def values(key, scanned):
        if not a.near:
            return scanned
        # The scanned value nearest the configuration's and those beside it: a value off the
        # scan never comes out as its best, as with the full scan.
        v = config_value(hw, key)
        i = min(range(len(scanned)), key=lambda k: abs(scanned[k] - v))
        return scanned[max(0, i - 1):i + 2]

    mamf = rows("a100_matmul_mamf.json")
    eff, eff_err = scan(sim, mamf, hw, "gpu.matmul.mma_efficiency", values("mma_efficiency", EFFICIENCIES), {})
    print("best: mma_efficiency %.2f rms log %.4f" % (eff, eff_err))
    int8 = rows("a100_int8_gemm_sglang.json", fit_only=True)
    share, share_err = scan(sim, int8, hw, "gpu.matmul.int8_mma_share", values("int8_mma_share", INT8_SHARES),
                             {"gpu.matmul.mma_efficiency": eff})
    print("best: int8_mma_share %.2f rms log %.4f" % (share, share_err))
    stream = [r for r in rows("a100_int8_gemm_sglang.json") if r["M"] <= STREAM_ROWS_MAX_M]
    warp_bytes, warp_err = scan_own_tiles(sim, stream, hw, "gpu.matmul.warp_load_bytes_in_flight",
                                          values("warp_load_bytes_in_flight", WARP_BYTES))
    print("best: warp_load_bytes_in_flight %d rms log %.4f" % (warp_bytes, warp_err))
    for c in A100_CONFIGS:
        print("config: %s mma_efficiency %.2f int8_mma_share %.2f warp_load_bytes_in_flight %d" % (
            c, config_value(c, "mma_efficiency"), config_value(c, "int8_mma_share"),
            config_value(c, "warp_load_bytes_in_flight")))
    for c in AMPERE_BORROWING:
        print("borrowed: %s warp_load_bytes_in_flight %d" % (c, config_value(c, "warp_load_bytes_in_flight")))
    table(sim, "a100_matmul_mamf.json", mamf, hw)
    table(sim, "a100_int8_gemm_sglang.json", rows("a100_int8_gemm_sglang.json"), hw)
    own_tiles_table(sim, "a100_int8_gemm_sglang.json", rows("a100_int8_gemm_sglang.json"), hw)
    for c, gbps, peak, fit in hbm_fits():
        print("hbm: %s measured %.0f of %.0f GB/s fit %.2f config %.2f" % (c, gbps, peak, fit, hbm_efficiency(c)))
    l2, sets = l2_fit()
    for c in A100_CONFIGS:
        print("l2: %s measured %d GB/s (median of %d data sets) config %.0f" % (c, l2, sets,
                                                                              block_value(c, "l2", "bandwidth_gbps")))
    table(sim, "h100_matmul_mamf_heldout.json (held out)", rows("h100_matmul_mamf_heldout.json"), "configs/gpu_h100.yaml",
          fitted=False)
    lightseq_table(sim, hw)


if __name__ == "__main__":
    main()
