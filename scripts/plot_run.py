#!/usr/bin/python3
"""Pictures of one npusim run from its JSON report (`sim --report R.json`, or `sim --plot`).

usage: plot_run.py REPORT.json [-o OUT.png] [--only bars|roofline|timeline] [--title T]

NPU runs: per-layer cycles as bars coloured by what bounds each layer (compute, memory,
vector, host) with the run's cycles by bound as one stacked bar below, and a roofline: every
layer with MACs as a point, arithmetic intensity (MAC per DRAM byte) against achieved MAC per
cycle, under the configuration's peak (hardware.peak_macs_per_cycle) and DRAM roof
(hardware.dram_bytes_per_cycle). GPU runs: the same per processor group, in us and TFLOP/s
against the config's tensor and HBM roofs. Multi-device runs (a report with "supertasks"): a
per-device timeline of supertasks, critical path outlined. Multi-core NPU runs (a report with
"multicore") add a timeline of each layer's span on each core. LLM serving reports (`sim llm`):
output tokens/s, TTFT and end-to-end latency and the KV cache over time. Debian:
python3-matplotlib.
Exit status 2 on a report it cannot read, with the reason.
"""
import argparse
import json
import math
import os
import sys
import textwrap

BOUND_COLORS = {
    "compute": "#4c72b0", "memory": "#dd8452", "vector": "#55a868", "host": "#8c8c8c",
    # GPU bounds
    "latency": "#c44e52", "hbm": "#dd8452", "l2": "#da8bc3", "link": "#937860", "smem": "#64b5cd",
    "tensor": "#4c72b0", "sm": "#4c72b0",
}
# Supertask kinds (the pipeline's names): communication on the lower part of a lane, in warm
# colours; everything else is compute, in cool ones.
COMM_KINDS = {"send", "recv", "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
              "gather", "scatter", "communication", "collective", "p2p"}
COMM_COLORS = ["#dd8452", "#c44e52", "#ccb974", "#937860", "#da8bc3"]
COMPUTE_COLORS = ["#4c72b0", "#55a868", "#8172b3", "#64b5cd", "#8c8c8c"]
FALLBACK = ["#8172b3", "#ccb974", "#64b5cd", "#937860", "#da8bc3"]


def fail(msg):
    print("plot_run.py: error: " + msg, file=sys.stderr)
    sys.exit(2)


def color_of(table, key, seen):
    if key in table:
        return table[key]
    if key not in seen:
        seen[key] = FALLBACK[len(seen) % len(FALLBACK)]
    return seen[key]


# ---- what a report holds, as plain rows --------------------------------------------------

def npu_rows(rep):
    """(rows, roofs): rows of name/time/bound/work/bytes; roofs for the roofline."""
    hw = rep.get("hardware", {})
    rows = []
    for l in rep["layers"]:
        # Layers overlap (the next one's loads start early): "cycles" is a layer's share of the
        # run, its span (end - start) the time it ran in, which gives its achieved rate.
        span = float(l.get("end_cycle", 0)) - float(l.get("start_cycle", 0))
        rows.append({"name": l.get("name", "?"), "op": l.get("op", ""), "time": float(l.get("cycles", 0)),
                     "span": span if span > 0 else float(l.get("cycles", 0)),
                     "bound": l.get("bound", "?"),
                     "work": float(l.get("macs", 0)),
                     "bytes": float(l.get("dram_read_bytes", 0)) + float(l.get("dram_write_bytes", 0))})
    roofs = {"peak": [("peak %g MAC/cycle" % hw.get("peak_macs_per_cycle", 0), float(hw.get("peak_macs_per_cycle", 0)))],
             "bw": float(hw.get("dram_bytes_per_cycle", 0)), "bw_label": "DRAM %.3g B/cycle" % hw.get("dram_bytes_per_cycle", 0),
             "work_name": "MACs", "time_unit": "cycles", "row": "layer", "x_label": "arithmetic intensity (MAC / DRAM byte)",
             "y_label": "achieved MAC / cycle (over the layer's span)",
             "rate": lambda r: r["work"] / r["span"]}
    return rows, roofs


def gpu_rows(rep):
    cfg = rep.get("config", {})
    rows = []
    for k in rep.get("layers", []) if "ranks" not in rep else []:  # the library plan: one row per kernel
        rows.append({"name": k.get("name", "?")[-40:], "op": k.get("op", ""), "time": float(k.get("time_us", 0)),
                     "bound": k.get("bound", "?"), "work": float(k.get("flops", 0)), "bytes": float(k.get("hbm_bytes", 0))})
    for rank in rep.get("ranks", []):
        for g in rank.get("processor_groups", []):
            name = g.get("ops", "?")
            rows.append({"name": ("r%s " % rank.get("rank") if len(rep["ranks"]) > 1 else "") + name.split(" (")[0][-40:],
                         "op": "", "time": float(g.get("time_us", 0)), "bound": g.get("bound", "?"),
                         "work": float(g.get("flops", 0)), "bytes": float(g.get("hbm_bytes", 0))})

    def num(key):
        try:
            return float(cfg.get(key, "nan"))
        except ValueError:
            return float("nan")
    peaks = []
    for key, label in (("gpu.tensor_tflops.fp16", "tensor fp16"), ("gpu.tensor_tflops.fp32", "tensor fp32"),
                       ("gpu.vector_tflops", "vector")):
        if not math.isnan(num(key)):
            peaks.append(("%s %g TFLOP/s" % (label, num(key)), num(key)))
    bw = num("gpu.hbm.bandwidth_gbps")
    roofs = {"peak": peaks, "bw": (bw / 1e3) if not math.isnan(bw) else 0.0,  # TFLOP/s per FLOP/B
             "bw_label": "HBM %g GB/s" % bw, "work_name": "FLOPs", "time_unit": "us", "row": "processor group" if "ranks" in rep else "kernel", "x_label": "arithmetic intensity (FLOP / HBM byte)",
             "y_label": "achieved TFLOP/s", "rate": lambda r: r["work"] / (r["time"] * 1e6)}
    return rows, roofs


# ---- the pictures -------------------------------------------------------------------------

def draw_bars(fig, spec, rows, unit, title, row="layer"):
    """Per-layer time coloured by bound, and the run's time by bound as one stacked bar."""
    import matplotlib.gridspec as gridspec
    named = len(rows) <= 40  # layer names under the bars
    inner = gridspec.GridSpecFromSubplotSpec(2, 1, subplot_spec=spec, height_ratios=[5, 1], hspace=0.9 if named else 0.55)
    ax = fig.add_subplot(inner[0])
    seen = {}
    colors = [color_of(BOUND_COLORS, r["bound"], seen) for r in rows]
    xs = list(range(len(rows)))
    ax.bar(xs, [r["time"] for r in rows], width=0.85 if len(rows) < 60 else 1.0, color=colors,
           edgecolor="white", linewidth=0.3 if len(rows) < 150 else 0)
    ax.set_xlim(-0.7, len(rows) - 0.3)
    ax.set_ylabel("%s per %s" % (unit, row))
    ax.set_title(textwrap.fill(title, 90), fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    if named:
        ax.set_xticks(xs)
        ax.set_xticklabels([r["name"][:18] for r in rows], rotation=90, fontsize=6)
    else:
        ax.set_xlabel(row + " index")
    # The longest layers named (those far enough apart to be read).
    named = []
    for i in sorted(range(len(rows)), key=lambda i: -rows[i]["time"]):
        if len(named) == 3:
            break
        if all(abs(i - j) > max(2, len(rows) / 12) for j in named):
            named.append(i)
            ax.annotate(rows[i]["name"][:22], (i, rows[i]["time"]), textcoords="offset points", xytext=(0, 2),
                        ha="center", fontsize=6)
    totals = {}
    for r in rows:
        totals[r["bound"]] = totals.get(r["bound"], 0.0) + r["time"]
    all_t = sum(totals.values()) or 1.0
    ax2 = fig.add_subplot(inner[1])
    left = 0.0
    for b, t in sorted(totals.items(), key=lambda kv: -kv[1]):
        c = color_of(BOUND_COLORS, b, seen)
        ax2.barh([0], [t / all_t * 100], left=left, color=c, label="%s %.0f%%" % (b, t / all_t * 100))
        left += t / all_t * 100
    ax2.set_xlim(0, 100)
    ax2.set_yticks([])
    ax2.set_xlabel("share of the run's %s by bound (%%)" % unit)
    ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.9), ncol=max(1, len(totals)), fontsize=7, frameon=False)


def draw_roofline(fig, spec, rows, roofs, title):
    ax = fig.add_subplot(spec)
    pts = [r for r in rows if r["work"] > 0 and r["time"] > 0 and r.get("span", 1) > 0]
    skipped = len(rows) - len(pts)
    if not pts:
        ax.text(0.5, 0.5, "no layer with MACs / FLOPs", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    finite = [r["work"] / r["bytes"] for r in pts if r["bytes"] > 0]
    ys = [roofs["rate"](r) for r in pts]
    peak = max((p for _, p in roofs["peak"]), default=max(ys))
    bw = roofs["bw"]
    x_lo = min(finite) / 3 if finite else 1.0
    x_hi = max(finite) * 3 if finite else 10.0
    if bw > 0 and peak > 0:
        x_lo = min(x_lo, peak / bw / 10)
        x_hi = max(x_hi, peak / bw * 4)
    if len(finite) < len(pts):
        x_hi *= 3  # room at the right edge for the layers without DRAM traffic
    no_traffic_x = x_hi / 1.7
    xs = [r["work"] / r["bytes"] if r["bytes"] > 0 else no_traffic_x for r in pts]
    # Roofs: the DRAM slope up to each peak.
    grid = [x_lo * (x_hi / x_lo) ** (i / 200) for i in range(201)]
    styles = ["-", "--", ":"]
    for i, (label, p) in enumerate(roofs["peak"]):
        ys_roof = [min(p, bw * x) if bw > 0 else p for x in grid]
        ax.plot(grid, ys_roof, styles[i % 3], color="black", linewidth=1.2 if i == 0 else 0.8,
                label=label if i else label + (" / " + roofs["bw_label"] if bw > 0 else ""))
    if bw > 0 and roofs["peak"]:
        ridge = roofs["peak"][0][1] / bw
        ax.axvline(ridge, color="grey", linewidth=0.5, linestyle=":")
        ax.annotate("ridge %.3g" % ridge, (ridge, roofs["peak"][0][1]), textcoords="offset points", xytext=(3, -12),
                    fontsize=7, color="grey")
    seen = {}
    total = sum(r["time"] for r in pts) or 1.0
    sizes = [12 + 400 * r["time"] / total for r in pts]
    bounds = sorted({r["bound"] for r in pts})
    for b in bounds:
        for on_chip in (False, True):  # layers without DRAM traffic: triangles at the right edge
            idx = [i for i, r in enumerate(pts) if r["bound"] == b and (r["bytes"] <= 0) == on_chip]
            if not idx:
                continue
            label = "%s-bound (%d)" % (b, len(idx)) if not on_chip else "%s-bound, no DRAM traffic (%d)" % (b, len(idx))
            ax.scatter([xs[i] for i in idx], [ys[i] for i in idx], s=[sizes[i] for i in idx],
                       color=color_of(BOUND_COLORS, b, seen), alpha=0.75, edgecolors="white", linewidths=0.5,
                       marker=">" if on_chip else "o", label=label, zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    y_lo = min(ys) / 3
    ax.set_ylim(max(y_lo, 1e-6), (peak if peak > 0 else max(ys)) * 2.5)
    ax.set_xlabel(roofs["x_label"])
    ax.set_ylabel(roofs["y_label"])
    note = "point area: share of time"
    if skipped:
        note += "; %d %s(s) without %s not shown" % (skipped, roofs["row"], roofs["work_name"])
    ax.set_title(textwrap.fill(title, 60) + "\n" + note, fontsize=9)
    ax.grid(which="both", alpha=0.2)
    ax.legend(fontsize=7, loc="lower right")


def draw_timeline(fig, spec, rep, title):
    ax = fig.add_subplot(spec)
    tasks = [t for t in rep.get("supertasks", []) if t.get("device")]
    devices = [d["name"] for d in rep.get("devices", [])]
    for t in tasks:
        if t["device"] not in devices:
            devices.append(t["device"])
    if not tasks:
        ax.text(0.5, 0.5, "no supertask on a device", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    kinds = sorted({t.get("kind", "compute") for t in tasks})
    comm_kinds = [k for k in kinds if k.lower() in COMM_KINDS]
    comp_kinds = [k for k in kinds if k.lower() not in COMM_KINDS]
    color = {k: COMM_COLORS[i % len(COMM_COLORS)] for i, k in enumerate(comm_kinds)}
    color.update({k: COMPUTE_COLORS[i % len(COMPUTE_COLORS)] for i, k in enumerate(comp_kinds)})
    span = max(t["end_us"] for t in tasks) - min(t["start_us"] for t in tasks) or 1.0
    labelled = set()
    lane_h = 0.8
    for t in tasks:
        y = devices.index(t["device"])
        kind = t.get("kind", "compute")
        comm = kind in comm_kinds
        # Compute on the upper part of a lane, communication on the lower: they overlap in time.
        h = lane_h * (0.35 if comm else 0.6)
        y0 = y + lane_h / 2 - h if comm else y - lane_h / 2
        width = max(t["end_us"] - t["start_us"], 1e-9)
        ax.broken_barh([(t["start_us"], width)], (y0, h), facecolors=color[kind],
                       edgecolors="black" if t.get("critical") else "white",
                       linewidth=1.0 if t.get("critical") else 0.3,
                       label=(kind + (" (communication)" if comm else "")) if kind not in labelled else None,
                       alpha=0.6 if t.get("estimated") else 1.0)
        labelled.add(kind)
        if width > span * 0.08 and len(devices) <= 16:
            ax.text(t["start_us"] + width / 2, y0 + h / 2, str(t.get("id", ""))[:24], ha="center", va="center",
                    fontsize=6, color="white", clip_on=True)
    ax.set_yticks(range(len(devices)))
    ax.set_yticklabels(devices, fontsize=8)
    ax.set_ylim(len(devices) - 0.5, -0.5)
    ax.set_xlabel("time (us)")
    span = rep.get("totals", {}).get("makespan_us")
    ax.set_title(title + ("\nmakespan %.4g us; critical path outlined" % span if span else ""), fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, fontsize=7, loc="upper right")


def draw_core_timeline(fig, spec, rep, title):
    """A multi-core NPU run: one row per core, each layer's compute span on it, coloured by the
    layer's bound (multicore.layers[].spans)."""
    ax = fig.add_subplot(spec)
    mc = rep.get("multicore", {})
    cores = int(mc.get("cores", 1))
    bound = {l.get("name"): l.get("bound", "?") for l in rep.get("layers", [])}
    labelled = set()
    end = 0
    for l in mc.get("layers", []):
        b = bound.get(l.get("name"), "?")
        for core, start, stop in l.get("spans", []):
            ax.broken_barh([(start, max(stop - start, 1))], (core - 0.4, 0.8), facecolors=BOUND_COLORS.get(b, "#8c8c8c"),
                           edgecolors="white", linewidth=0.2, label=b if b not in labelled else None)
            labelled.add(b)
            end = max(end, stop)
    ax.set_yticks(range(cores))
    ax.set_yticklabels(["core %d" % c for c in range(cores)], fontsize=8)
    ax.set_ylim(cores - 0.5, -0.5)
    ax.set_xlim(0, max(end, 1))
    ax.set_xlabel("cycles")
    split = {}
    for l in mc.get("layers", []):
        split[l.get("split", "?")] = split.get(l.get("split", "?"), 0) + 1
    ax.set_title(title + "\nlayers split: " + ", ".join("%s %d" % kv for kv in sorted(split.items())), fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, fontsize=7, loc="upper right")


def draw_pools(ax, rep, tl):
    """Disaggregated serving: each device's busy share over time, prefill pool above the decode
    pool, and the KV cache bytes moving between them."""
    dis = rep["disaggregated"]
    devs = dis["devices_over_time"]
    t = [x["t_ms"] / 1000 for x in tl]
    half = (t[1] - t[0]) / 2 if len(t) > 1 else 0.5
    grid = [d["busy"] for d in devs]
    im = ax.imshow(grid, aspect="auto", interpolation="nearest", cmap="Blues", vmin=0, vmax=1,
                   extent=(t[0] - half, t[-1] + half, len(devs) - 0.5, -0.5))
    ax.set_yticks(range(len(devs)))
    ax.set_yticklabels(["%s dev%d" % (d["pool"], d["device"]) for d in devs], fontsize=8)
    ax.set_title("devices busy (share of each bin) and KV cache moved from the prefill to the decode pool")
    fig = ax.figure
    fig.colorbar(im, ax=ax, fraction=0.03, pad=0.08, label="busy")
    rate = dis["kv_transfer"].get("gb_per_s_over_time") or []
    if rate:
        tw = ax.twinx()
        tw.plot(t[:len(rate)], rate, color="#c44e52", linewidth=1.2, label="KV transfer")
        tw.set_ylabel("KV moved, GB/s", color="#c44e52")
        tw.set_ylim(bottom=0)
        tw.legend(loc="upper right", fontsize=8)


def draw_serving(fig, rep, title):
    """sim llm: tokens/s and latency over time (continuous batching), the KV cache in use; for
    disaggregated serving each device of both pools and the KV transfers between them."""
    tl = rep.get("timeline") or []
    kv = rep.get("kv_cache_over_time") or []
    pools = tl and "devices_over_time" in rep.get("disaggregated", {})
    panels = (2 if tl else 0) + (1 if kv or not tl else 0) + (1 if pools else 0)
    gs = fig.add_gridspec(panels, 1, hspace=0.45)
    i = 0
    if tl:
        t = [x["t_ms"] / 1000 for x in tl]
        ax = fig.add_subplot(gs[i])
        ax.plot(t, [x["output_tokens_per_s"] for x in tl], color="#4c72b0")
        ax.set_ylabel("output tokens/s")
        ax.set_title(title + ": throughput over time")
        i += 1
        ax = fig.add_subplot(gs[i])
        for key, color, label in (("ttft_ms", "#dd8452", "TTFT"), ("e2e_ms", "#55a868", "end-to-end")):
            pts = [(x["t_ms"] / 1000, x[key]) for x in tl if x[key] > 0]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color, label=label, marker=".", linestyle="-")
        ax.set_ylabel("latency, ms (mean per bin)")
        ax.legend(loc="upper left", fontsize=8)
        i += 1
    if pools:
        draw_pools(fig.add_subplot(gs[i]), rep, tl)
        i += 1
        if not kv:
            fig.axes[-1].set_xlabel("time, s")
            return
    ax = fig.add_subplot(gs[i])
    ax.plot([x["t_ms"] / 1000 for x in kv], [x["gib"] for x in kv], color="#c44e52", drawstyle="steps-post")
    cap = rep.get("memory", {}).get("kv_cache_capacity_gib")
    if cap:
        ax.axhline(cap, color="#8c8c8c", linestyle="--", linewidth=1, label="KV capacity")
        ax.legend(loc="upper left", fontsize=8)
    ax.set_ylabel("KV cache, GiB")
    ax.set_xlabel("time, s")
    if not tl:
        ax.set_title(title + ": KV cache of one wave")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="Writes OUT.png (default: REPORT with .png). Needs python3-matplotlib.")
    ap.add_argument("report", help="JSON report of one run (sim --report)")
    ap.add_argument("-o", "--out", help="PNG to write (default: the report's name with .png)")
    ap.add_argument("--only", choices=["bars", "roofline", "timeline"], help="draw one picture only")
    ap.add_argument("--title", help="title (default: workload on hardware)")
    ap.add_argument("--dpi", type=int, default=110)
    a = ap.parse_args(argv)
    try:
        with open(a.report) as f:
            rep = json.load(f)
    except OSError as e:
        fail("%s: cannot read: %s" % (a.report, e.strerror))
    except ValueError as e:
        fail("%s: not JSON: %s" % (a.report, e))
    if not isinstance(rep, dict):
        fail("%s: not an npusim report (expected a JSON object)" % a.report)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.gridspec as gridspec
    except ImportError:
        fail("needs matplotlib (Debian: apt-get install python3-matplotlib)")
    out = a.out or os.path.splitext(a.report)[0] + ".png"

    # The report says its device kind (totals.device: npu, gpu or system); a serving report
    # (sim llm) is told by its workload's batching.
    device = rep.get("totals", {}).get("device") if isinstance(rep.get("totals"), dict) else None
    if isinstance(rep.get("workload"), dict) and "batching" in rep["workload"]:
        kind = "serving"
        hw_name = rep.get("hardware", {}).get("name", "")
    elif device == "system" or (device is None and "supertasks" in rep):
        kind = "system"
        hw_name = rep.get("system", {}).get("name", "")
    elif device == "npu" or (device is None and "layers" in rep and "hardware" in rep):
        kind = "npu"
        hw_name = rep.get("hardware", {}).get("name", "")
    elif device == "gpu" or (device is None and "ranks" in rep):
        kind = "gpu"  # an ARK plan's ranks, or the library plan's kernels (layers)
        hw_name = rep.get("hw", {}).get("name", "")
    else:
        fail("%s: not an npusim run report (no totals.device, layers, ranks or supertasks)" % a.report)
    workload = rep.get("workload", "?")
    title = a.title or "%s on %s" % (workload.get("model", "?") if isinstance(workload, dict) else workload, hw_name)

    if kind == "serving":
        if a.only:
            fail("%s: a serving report has one picture (no --only)" % a.report)
        fig = plt.figure(figsize=(10, (10.5 if "disaggregated" in rep else 8) if rep.get("timeline") else 3.5))
        draw_serving(fig, rep, title)
    elif kind == "system":
        if a.only in ("bars", "roofline"):
            fail("%s: a multi-device report has no per-layer rows: only --only timeline" % a.report)
        n = len({t.get("device") for t in rep.get("supertasks", []) if t.get("device")})
        fig = plt.figure(figsize=(11, 1.6 + 0.45 * max(n, 2)))
        draw_timeline(fig, gridspec.GridSpec(1, 1)[0], rep, title)
    elif kind == "npu" and a.only == "timeline" and rep.get("multicore"):
        fig = plt.figure(figsize=(11, 1.6 + 0.45 * max(int(rep["multicore"].get("cores", 2)), 2)))
        draw_core_timeline(fig, gridspec.GridSpec(1, 1)[0], rep, title + ": layers on each core")
    else:
        if a.only == "timeline":
            fail("%s: a single-device report has no timeline of devices (give a multi-device report or a multi-core chip's)" % a.report)
        rows, roofs = npu_rows(rep) if kind == "npu" else gpu_rows(rep)
        if not rows:
            fail("%s: the report has no layers" % a.report)
        if a.only == "bars":
            fig = plt.figure(figsize=(10, 4.8))
            draw_bars(fig, gridspec.GridSpec(1, 1)[0], rows, roofs["time_unit"], title + ": %s per %s by bound" % (roofs["time_unit"], roofs["row"]), roofs["row"])
        elif a.only == "roofline":
            fig = plt.figure(figsize=(6.5, 5))
            draw_roofline(fig, gridspec.GridSpec(1, 1)[0], rows, roofs, "roofline: " + title)
        elif kind == "npu" and rep.get("multicore"):  # a multi-core chip: its cores' timeline below
            cores = int(rep["multicore"].get("cores", 2))
            fig = plt.figure(figsize=(15, 5.2 + 1.2 + 0.35 * cores))
            gs = gridspec.GridSpec(2, 2, width_ratios=[1.6, 1], height_ratios=[5.2, 1.2 + 0.35 * cores], wspace=0.22, hspace=0.45)
            draw_bars(fig, gs[0, 0], rows, roofs["time_unit"], title + ": %s per %s by bound" % (roofs["time_unit"], roofs["row"]),
                      roofs["row"])
            draw_roofline(fig, gs[0, 1], rows, roofs, "roofline")
            draw_core_timeline(fig, gs[1, :], rep, "layers on each core")
        else:
            fig = plt.figure(figsize=(15, 5.2))
            gs = gridspec.GridSpec(1, 2, width_ratios=[1.6, 1], wspace=0.22)
            draw_bars(fig, gs[0], rows, roofs["time_unit"], title + ": %s per %s by bound" % (roofs["time_unit"], roofs["row"]),
                      roofs["row"])
            draw_roofline(fig, gs[1], rows, roofs, "roofline")
    try:
        fig.savefig(out, dpi=a.dpi, bbox_inches="tight")
    except OSError as e:
        fail("%s: cannot write: %s" % (out, e.strerror or e))
    plt.close(fig)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
