#!/usr/bin/python3
"""npusim from Python in five steps: zoo -> simulate -> sweep -> plot -> serving (docs/python.md).

Build tree:  PYTHONPATH=build/python /usr/bin/python3 docs/python_tutorial.py
Installed:   /usr/bin/python3 /usr/share/doc/npusim/python_tutorial.py   (the .deb; or
             PYTHONPATH=P/lib/python3/dist-packages after cmake --install --prefix P)

Writes into the working folder: tutorial_run.png (the run's pictures), tutorial_sweep/ (the
sweep's results) and tutorial_sweep.png. Takes a few seconds. Each step is what you would type
into a notebook cell.
"""
import npusim

# 1. A workload: ResNet-50 at batch 1 from the zoo, as a dict (the Frontend IR, layer by layer).
#    npusim.zoo("op", "matmul", m=512, n=4096, k=4096) gives one operation; any file that
#    `sim --ir` reads works as a workload too.
net = npusim.zoo("resnet50", batch=1)
print("1. zoo: %s, %d layers" % (net.name, len(net)))

# 2. Simulate it on the default NPU (configs/npu.yaml, shipped as "npu"), then on a smaller PE
#    array. The report is the JSON report as Python objects; .layers is a list of dicts.
rep = npusim.simulate(net, "npu")
t = rep.totals
print("2. simulate: %d cycles = %.3f ms, PE utilization %.1f%%" % (t["npu_cycles"], t["time_ms"], 100 * t["pe_utilization"]))
for layer in sorted(rep.layers, key=lambda l: -l["cycles"])[:3]:
    print("   %-12s %-8s %9d cycles  %s-bound" % (layer["name"], layer["op"], layer["cycles"], layer["bound"]))
small = npusim.simulate(net, "npu", overrides={"npu.pe_array.rows": 32, "npu.pe_array.cols": 32})
print("   with 32x32 PEs: %.2fx the cycles" % (small.totals["npu_cycles"] / t["npu_cycles"]))
try:
    npusim.simulate(net, "npu", overrides={"npu.pe_array.rowz": 32})
except npusim.InputError as e:  # the message `sim` would print
    print("   a typo is an InputError:", e)

# 3. Pictures of the run: cycles per layer by bound, and the roofline.
print("3. plot:", npusim.plot(rep, "tutorial_run.png"))

# 4. A sweep: 4 PE arrays (rows and cols zipped) x 3 DRAM bandwidths = 12 points, each in a
#    forked worker of one `sim sweep`. resume=True: running the tutorial again reuses them.
spec = {
    "workloads": [net],
    "hw": "npu",
    "axes": [
        {"zip": {"npu.pe_array.rows": [16, 32, 64, 128], "npu.pe_array.cols": [16, 32, 64, 128]}},
        {"memory.dram.bandwidth_gbps": [16, 32, 64]},
    ],
}
res = npusim.sweep(spec, "tutorial_sweep", resume=True)
print("4. sweep: %d points, %d failed; best:" % (len(res.rows), len(res.failed)))
best = min(res.ok, key=lambda r: r["time_ms"])
print("   %dx%d PEs at %d GB/s: %.3f ms" % (best["npu.pe_array.rows"], best["npu.pe_array.cols"],
                                          best["memory.dram.bandwidth_gbps"], best["time_ms"]))

# ... and a picture of it with matplotlib: time against PE count, one line per bandwidth.
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, ax = plt.subplots(figsize=(6, 4))
for bw in sorted({r["memory.dram.bandwidth_gbps"] for r in res.ok}):
    rows = sorted((r for r in res.ok if r["memory.dram.bandwidth_gbps"] == bw), key=lambda r: r["pe_count"])
    ax.plot([r["pe_count"] for r in rows], [r["time_ms"] for r in rows], "o-", label="%d GB/s" % bw)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("PEs (rows x cols)")
ax.set_ylabel("time (ms)")
ax.set_title("ResNet-50 b1 on the NPU: PE array x DRAM bandwidth")
ax.legend()
ax.grid(alpha=0.3)
fig.savefig("tutorial_sweep.png", dpi=100, bbox_inches="tight")
print("   plot: tutorial_sweep.png")

# 5. Serving: GPT-2 on an H100 answering Poisson arrivals, with and without recompute
#    preemption (the serving options are sim llm's, checked against its one table).
for preempt in (False, True):
    srv = npusim.llm("gpt2", "gpu_h100", overrides={"gpu.hbm.capacity_gib": 0.4}, input=128, output=64,
                     arrival_rate=400, requests=30, max_batch_tokens=512, preempt=preempt)
    print("5. llm (preempt=%s): TTFT %.2f ms, %.0f output tokens/s over %d simulated passes"
          % (preempt, srv.totals["ttft_ms"], srv.totals["output_tokens_per_s"], len(srv.steps)))

# With pandas installed (python3-pandas), tables are one call away:
#   res.to_pandas()   one row per point;   rep.to_pandas()   one row per layer
