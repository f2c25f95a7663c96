#!/usr/bin/env python3
"""PyTorch's own row kernels, as Liger-Kernel's maintainers timed them beside theirs and published
in benchmark/data/all_benchmark_data.csv (github.com/linkedin/Liger-Kernel; triton.testing.do_bench,
median, L2 flushed before each run), against the looped row kernels of the GPU library plan
(`--launch eager --fusion off`: PyTorch eager; docs/gpu_library.md#looped-row-kernels).

  rtx3090_torch_softmax.json           torch.nn.Softmax(dim=-1) over 2048 x N, fp32 and bf16, on an
                                       RTX 3090: fit. gpu.row.block_exchange_cycles (a block
                                       reduction's exchange between warps through shared memory:
                                       rows over 1,024 columns, 1,024-thread blocks) is the value of
                                       the scan with the least rms log error of time over its rows.
  a100_torch_layer_norm_heldout.json   torch.nn.LayerNorm over 4096 x N fp32 on an A100 80GB and an
  h100_torch_layer_norm_heldout.json   H100: held out, printed.

Prints the scan, `best:`, `config:` (each GPU configuration's value, which must be the best) and
every row at the configurations' values (`--near`: the scan of the fitted configuration's value
and the steps beside it only, an eighth of the runs: whether it is a local best, what the test
suite checks).
Usage: configs/calibration/torch_rowwise.py [--sim build/sim] [-j N] [--near]
       configs/calibration/torch_rowwise.py --write LIGER_CHECKOUT   (writes the three files)
"""
import argparse
import concurrent.futures
import csv
import io
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
STEPS = list(range(60, 1020, 40))  # gpu.row.block_exchange_cycles scanned: 60, 100 ... 1000
CONFIGS = ["configs/gpu_rtx3090.yaml", "configs/gpu_a100.yaml", "configs/gpu_a100_80gb.yaml", "configs/gpu_a30.yaml",
           "configs/gpu_h100.yaml", "configs/gpu_h200.yaml", "configs/gpu_mi300x.yaml"]
# file -> (GPU name in the CSV, configuration, benchmark kernel, provider, op, commit adding the rows, role)
FILES = {
    "rtx3090_torch_softmax.json": ("NVIDIA GeForce RTX 3090", "configs/gpu_rtx3090.yaml", "softmax", "torch", "softmax",
                                   "5d25e468", "fit"),
    "a100_torch_layer_norm_heldout.json": ("NVIDIA A100-SXM4-80GB", "configs/gpu_a100_80gb.yaml", "layer_norm",
                                           "huggingface", "layer_norm", "b5672a15", "held-out"),
    "h100_torch_layer_norm_heldout.json": ("NVIDIA H100 80GB HBM3", "configs/gpu_h100.yaml", "layer_norm", "huggingface",
                                           "layer_norm", "6a2c4913", "held-out"),
}


def write(repo):
    for name, (device, _, bench, provider, op, commit, role) in FILES.items():
        commit = subprocess.run(["git", "-C", repo, "rev-parse", commit], check=True, capture_output=True,
                                text=True).stdout.strip()
        text = subprocess.run(["git", "-C", repo, "show", f"{commit}:benchmark/data/all_benchmark_data.csv"], check=True,
                              capture_output=True, text=True).stdout
        rows = []
        for r in csv.DictReader(io.StringIO(text)):
            if (r["kernel_name"], r["kernel_provider"], r["kernel_operation_mode"], r["metric_name"], r["gpu_name"]) != (
                    bench, provider, "forward", "speed", device):
                continue
            extra = json.loads(r["extra_benchmark_config_str"])
            rows.append({"op": op, "M": extra["M"], "N": int(float(r["x_value"])),
                         "dtype": {"torch.float32": "fp32", "torch.bfloat16": "bf16"}[extra["dtype"]],
                         "ms": float(r["y_value_50"]),
                         "source": f"linkedin/Liger-Kernel@{commit[:8]} benchmark/data/all_benchmark_data.csv, "
                                   f"{bench}/{provider} forward, {r['timestamp']}, liger {r['liger_version']}"})
        rows.sort(key=lambda x: (x["dtype"], x["N"]))
        doc = {"meta": {"device": device, "kernel": f"PyTorch's native {op} (Liger's '{provider}' baseline)",
                        "timing": "median of triton.testing.do_bench (L2 flushed before each run)",
                        "written_by": "configs/calibration/torch_rowwise.py"},
               "note": ("Fitted: gpu.row.block_exchange_cycles (configs/calibration/torch_rowwise.py)." if role == "fit" else
                        "Held out: no key of the GPU configurations was fitted to these rows."),
               "rows": rows}
        with open(os.path.join(HERE, name), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"{name}: {len(rows)} rows")


def config_value(path):
    with open(os.path.join(ROOT, path)) as f:
        m = re.search(r"^\s+block_exchange_cycles:\s*([0-9.]+)", f.read(), re.M)
    if not m:
        sys.exit(f"{path}: no gpu.row.block_exchange_cycles")
    return float(m.group(1))


class Sim:
    def __init__(self, sim):
        self.sim, self.dir = sim, tempfile.mkdtemp(prefix="torch_rowwise_")
        self.env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")

    def us(self, job):
        r, hw, step = job
        ir = os.path.join(self.dir, "%s_%d_%d_%s.json" % (r["op"], r["M"], r["N"], r["dtype"]))
        if not os.path.exists(ir):
            subprocess.run([self.sim, "zoo", "op", r["op"], "shape=%dx%d" % (r["M"], r["N"]), "--dtype", r["dtype"], "-o",
                            ir + ".tmp"], check=True, capture_output=True, env=self.env)
            os.replace(ir + ".tmp", ir)
        fd, report = tempfile.mkstemp(suffix=".json", dir=self.dir)
        os.close(fd)
        args = [self.sim, "--ir", ir, "--hw", os.path.join(ROOT, hw), "--launch", "eager", "--fusion", "off", "-q",
                "--report", report]
        if step is not None:
            args += ["--set", "gpu.row.block_exchange_cycles=%g" % step]
        subprocess.run(args, check=True, capture_output=True, env=self.env)
        with open(report) as f:
            return json.load(f)["totals"]["time_us"]


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return json.load(f)["rows"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "sim"))
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--write", metavar="LIGER_CHECKOUT")
    ap.add_argument("--near", action="store_true", help="scan the fitted configuration's value and its neighbours only")
    a = ap.parse_args()
    if a.write:
        write(a.write)
        return
    sim = Sim(a.sim)
    fit_name = "rtx3090_torch_softmax.json"
    fit_rows, fit_hw = load(fit_name), FILES[fit_name][1]
    steps = STEPS
    if a.near:
        v = config_value(fit_hw)
        i = min(range(len(STEPS)), key=lambda k: abs(STEPS[k] - v))  # off the scan: never its best
        steps = STEPS[max(0, i - 1):i + 2]
    with concurrent.futures.ThreadPoolExecutor(a.j) as ex:
        jobs = [(r, fit_hw, s) for s in steps for r in fit_rows]
        times = list(ex.map(sim.us, jobs))
        scan = {}
        for (r, _, s), t in zip(jobs, times):
            scan.setdefault(s, []).append(math.log(t / (1000 * r["ms"])) ** 2)
        print("scan: gpu.row.block_exchange_cycles -> rms log error of time over %d rows of %s" % (len(fit_rows), fit_name))
        for s in steps:
            print("  %4d  %.4f" % (s, math.sqrt(sum(scan[s]) / len(scan[s]))))
        best = min(steps, key=lambda s: (sum(scan[s]), s))
        print("best: block_exchange_cycles %d" % best)
        for path in CONFIGS:
            print("config: %s block_exchange_cycles %g" % (path, config_value(path)))
        for name, (device, hw, *_rest) in FILES.items():
            rows = load(name)
            print("%s (%s, %s; %s)" % (name, device, hw, FILES[name][6]))
            print("  %-10s %6s %6s %5s %10s %10s %8s" % ("op", "M", "N", "dtype", "meas us", "model us", "error"))
            errs = []
            for r, t in zip(rows, ex.map(sim.us, [(r, hw, None) for r in rows])):
                err = 100 * (t / (1000 * r["ms"]) - 1)
                errs.append(abs(err))
                print("  %-10s %6d %6d %5s %10.1f %10.1f %+7.1f%%" % (r["op"], r["M"], r["N"], r["dtype"], 1000 * r["ms"], t,
                                                                    err))
            print("  median |error| %.1f%%, worst %.1f%% over %d rows" % (statistics.median(errs), max(errs), len(errs)))


if __name__ == "__main__":
    main()
