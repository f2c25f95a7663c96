#!/usr/bin/python3
"""Plots of a `sim sweep` output directory (docs/sweeps.md#plots).

  /usr/bin/python3 scripts/plot_sweep.py OUT_DIR [-o PLOT_DIR] [--workload NAME]
                                         [--points 3,42,99] [--summary FILE.png]

Writes into PLOT_DIR (default OUT_DIR/plots):
  cycles_vs_<axis>.png  cycles against each axis (every point, and the best per value)
  pareto.png            cycles against PE count, coloured by L2 size; the Pareto front of
                        (cycles, pe_count, l2_bytes) ringed, as `sim sweep report` finds it
  layers.png            per-layer cycles stacked, for chosen points (default: the fastest,
                        the median and the slowest), coloured by operation; as shares of
                        each point's total (written above the bar) unless --absolute
GPU and system sweeps (the manifest's device) plot time_ms instead (time_vs_<axis>.png): the
Pareto front against SMs (GPU) or link bytes (system), the layer bars per kernel class or
supertask kind in microseconds.
--summary FILE.png writes the Pareto scatter and the layer bars side by side, small.
Needs Debian's python3-matplotlib (apt-get install -y python3-matplotlib).
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(out_dir, workload):
    with open(os.path.join(out_dir, "manifest.json")) as f:
        manifest = json.load(f)
    path = os.path.join(out_dir, "results.jsonl")
    if not os.path.exists(path):
        path = os.path.join(out_dir, "journal.jsonl")  # a sweep still running or killed
    rows = []
    with open(path) as f:
        for line in f:
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass  # torn last line of a journal
    workload = workload or manifest["workloads"][0]
    rows = [r for r in rows if r["workload"] == workload and r["status"] == "ok"]
    rows.sort(key=lambda r: r["point"])
    if not rows:
        sys.exit(f"plot_sweep: no finished points of workload {workload} in {out_dir}")
    return manifest["axis_keys"], workload, rows, DEVICES[manifest.get("device", "npu")]


# What each device's rows are plotted by (docs/sweeps.md#results): the time column and its
# label, the Pareto plot's cost axis (with its colour column, or None), and what a layer row's
# time and group are called. NPU rows count cycles; GPU rows kernels, system rows supertasks.
DEVICES = {
    "npu": {"time": "cycles", "label": "NPU cycles", "name": "cycles", "cost": "pe_count",
            "cost_label": "PE count (rows x cols)", "colour": "l2_bytes", "layer_time": "cycles", "layer_group": "op"},
    "gpu": {"time": "time_ms", "label": "time (ms)", "name": "time", "cost": "num_sms", "cost_label": "SMs",
            "colour": None, "layer_time": "time_us", "layer_group": "class"},
    "system": {"time": "time_ms", "label": "makespan (ms)", "name": "time", "cost": "link_bytes",
               "cost_label": "bytes over the links", "colour": None, "layer_time": "time_us", "layer_group": "op"},
    # Serving sweeps (llm: workloads): time to first token against time per output token; no layers.
    "llm": {"time": "ttft_ms", "label": "TTFT mean (ms)", "name": "ttft", "cost": "tpot_ms",
            "cost_label": "TPOT mean (ms)", "colour": None, "layer_time": "time_us", "layer_group": "op"},
}


def pareto(rows, keys):
    """Rows no other row beats or equals in every key while beating it in one (all minimised)."""
    front = []
    for r in sorted(rows, key=lambda r: [r[k] for k in keys]):
        if not any(all(f[k] <= r[k] for k in keys) and any(f[k] < r[k] for k in keys) for f in front):
            front.append(r)
    return front


def short(key):
    return key.split(".", 1)[-1] if key.count(".") > 1 else key


def plot_axis(ax, rows, key, dev):
    t = dev["time"]
    xs = [r[key] for r in rows]
    ax.scatter(xs, [r[t] for r in rows], s=12, alpha=0.5, label="every point")
    best = {}
    for r in rows:
        best[r[key]] = min(best.get(r[key], math.inf), r[t])
    if all(isinstance(x, (int, float)) for x in best):
        xb = sorted(best)
        ax.plot(xb, [best[x] for x in xb], "o-", color="C3", label="best")
        if min(xb) > 0 and max(xb) / min(xb) >= 8:
            ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(key)
    ax.set_ylabel(dev["label"])
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def plot_pareto(ax, fig, rows, dev):
    t, cost, colour = dev["time"], dev["cost"], dev["colour"]
    sc = ax.scatter([r[cost] for r in rows], [r[t] for r in rows], s=18,
                    c=[math.log2(max(1, r[colour]) / 2**20) for r in rows] if colour else None, cmap="viridis")
    front = pareto(rows, [t, cost] + ([colour] if colour else []))
    ax.scatter([r[cost] for r in front], [r[t] for r in front], s=60, facecolors="none",
               edgecolors="C3", label=f"Pareto front ({len(front)} of {len(rows)})")
    front2 = pareto(rows, [t, cost])
    ax.step([r[cost] for r in front2], [r[t] for r in front2], where="post", color="C3", lw=1)
    costs = [r[cost] for r in rows]
    if min(costs) > 0 and max(costs) / min(costs) >= 8:
        ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(dev["cost_label"])
    ax.set_ylabel(dev["label"])
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    if colour:
        cb = fig.colorbar(sc, ax=ax)
        cb.set_label("log2 L2 MiB")


def plot_layers(ax, rows, keys, ids, absolute, dev):
    """Stacked per-layer time (NPU cycles, GPU kernel or system supertask microseconds); as
    shares of each point's total unless absolute, since the totals of a sweep span orders of
    magnitude (the totals are written above the bars)."""
    lt, lg = dev["layer_time"], dev["layer_group"]
    chosen = [r for i in ids for r in rows if r["point"] == i]
    ops = []
    for r in chosen:
        for layer in r["layers"]:
            if layer[lg] not in ops:
                ops.append(layer[lg])
    colors = {op: f"C{i % 10}" for i, op in enumerate(ops)}
    for x, r in enumerate(chosen):
        total = sum(layer[lt] for layer in r["layers"]) or 1
        scale = 1 if absolute else 100 / total
        bottom = 0
        for layer in r["layers"]:
            ax.bar(x, layer[lt] * scale, bottom=bottom, color=colors[layer[lg]], width=0.6,
                   edgecolor="white", lw=0.2)
            bottom += layer[lt] * scale
        ax.text(x, bottom, f"{total:,}" if lt == "cycles" else f"{total:,.1f} us", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(chosen)))
    ax.set_xticklabels([f"#{r['point']}\n" + "\n".join(f"{short(k)}={r[k]}" for k in keys) for r in chosen], fontsize=6)
    unit = "cycles" if lt == "cycles" else "us"
    ax.set_ylabel(f"{unit} per layer" if absolute else f"% of the point's {unit}, per layer")
    if not absolute:
        ax.set_ylim(0, 112)
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colors[o]) for o in ops], labels=ops, fontsize=6,
              loc="upper left", bbox_to_anchor=(1.0, 1.0))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("-o", "--plots", help="folder for the PNGs (default OUT_DIR/plots)")
    p.add_argument("--workload", help="workload name (default: the first)")
    p.add_argument("--points", help="comma-separated point ids for the layer bars")
    p.add_argument("--absolute", action="store_true", help="layer bars in cycles, not shares")
    p.add_argument("--summary", help="write only one small figure (Pareto + layer bars) to this PNG")
    a = p.parse_args()
    keys, workload, rows, dev = load(a.out_dir, a.workload)
    if a.points:
        ids = [int(x) for x in a.points.split(",")]
    else:
        by_time = sorted(rows, key=lambda r: r[dev["time"]])
        ids = sorted({by_time[0]["point"], by_time[len(by_time) // 2]["point"], by_time[-1]["point"]})

    if a.summary:
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2.5]})
        plot_pareto(left, fig, rows, dev)
        plot_layers(right, rows, keys, ids, a.absolute, dev)
        fig.suptitle(f"{workload}: {len(rows)} points", fontsize=10)
        fig.tight_layout()
        fig.savefig(a.summary, dpi=80)
        print(a.summary)
        return

    plots = a.plots or os.path.join(a.out_dir, "plots")
    os.makedirs(plots, exist_ok=True)
    written = []
    name = dev["name"]
    for key in keys:
        fig, ax = plt.subplots(figsize=(6, 4))
        plot_axis(ax, rows, key, dev)
        ax.set_title(f"{workload}: {name} vs {key}", fontsize=9)
        fig.tight_layout()
        written.append(os.path.join(plots, f"{name}_vs_{key}.png"))
        fig.savefig(written[-1], dpi=100)
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 5))
    plot_pareto(ax, fig, rows, dev)
    ax.set_title(f"{workload}: {name} vs {dev['cost_label']}", fontsize=9)
    fig.tight_layout()
    written.append(os.path.join(plots, "pareto.png"))
    fig.savefig(written[-1], dpi=100)
    plt.close(fig)
    if any(r["layers"] for r in rows):  # serving rows have none
        fig, ax = plt.subplots(figsize=(max(4, 1.6 * len(ids)), 5))
        plot_layers(ax, rows, keys, ids, a.absolute, dev)
        ax.set_title(f"{workload}: per-layer {dev['layer_time'].replace('_us', '')}", fontsize=9)
        fig.tight_layout()
        written.append(os.path.join(plots, "layers.png"))
        fig.savefig(written[-1], dpi=100)
        plt.close(fig)
    print("\n".join(written))


if __name__ == "__main__":
    main()
