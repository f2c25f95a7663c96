#!/usr/bin/env python3
"""ResNet-50 or a Llama layer side by side with ONNXim (docs/validation_crosscheck.md).

Reads ONNXim's simulator log of ResNet-50 (the `Layer <name> finish at <cycle>` lines that
../shared/tools/peers/onnxim_resnet50.sh leaves in ${TMPDIR:-/tmp}/onnxim/run_*.log) and npusim's
JSON report of the same network (`sim zoo resnet50 --dtype fp16`, run on
configs/onnxim_ws_128x128_c4.yaml), and prints the cycles of each part of the network in both:
the stem (conv1 + max pool), the four stages and the head (pool + fc), as a Markdown table.

ONNXim runs one layer at a time, so a layer's time is its finish cycle minus the previous one's.
npusim's layers are charged as docs/timing.md#per-layer-cycles-and-bound says (they add up to the total). Stages are
assigned by counting convolutions in execution order (ResNet-50: 1 in the stem, then 10, 13, 19
and 10), so a residual add or a pool belongs to the stage it runs in.

Language mode (a log with `layer0.attn...` layers: ONNXim's llama3-8b.json, one layer): the
attention block (QKV, attention, projection, its norm) and the FFN block, against npusim's
`model.layers.0.*` layers of `sim zoo llama3-8b --layers 1` (the FFN: `model.layers.0.mlp.*`;
the embedding, final norm and LM head are left out, as ONNXim's single layer has none).

Usage: onnxim_crosscheck.py ONNXIM_LOG NPUSIM_REPORT.json [--label TEXT]
"""
import argparse
import json
import re
import sys

STAGE_CONVS = [1, 10, 13, 19, 10]  # stem, layer1 .. layer4
GROUPS = ["stem (conv1, max pool)", "layer1 (56x56)", "layer2 (28x28)", "layer3 (14x14)", "layer4 (7x7)",
          "head (avg pool, fc)"]


def onnxim_finish(path):
    finish = []
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(r"Layer (\S+) finish at (\d+)", line)
            if m:
                finish.append((m.group(1), int(m.group(2))))
    if not finish:
        sys.exit(f"onnxim_crosscheck: {path}: no 'Layer ... finish at' lines (not an ONNXim log?)")
    return finish


def onnxim_groups(finish):
    sums = [0] * len(GROUPS)
    prev = 0
    for name, t in finish:
        if name.startswith(("/conv1", "/maxpool")):
            g = 0
        elif name.startswith("/layer"):
            g = int(name[6])
        else:
            g = 5
        sums[g] += t - prev
        prev = t
    return sums, finish[-1][1]


def onnxim_language(finish):
    sums = [0, 0]
    prev = 0
    for name, t in finish:
        sums[1 if ".ffn." in name else 0] += t - prev
        prev = t
    return sums, finish[-1][1]


def npusim_language(rep):
    sums = [0, 0]
    for l in rep.get("layers", []):
        if l.get("name", "").startswith("model.layers.0."):
            sums[1 if l["name"].startswith("model.layers.0.mlp") else 0] += l["cycles"]
    return sums, sum(sums)


def npusim_groups(path):
    with open(path) as f:
        rep = json.load(f)
    layers = [l for l in rep.get("layers", []) if l.get("device") == "npu"]
    if not layers:
        sys.exit(f"onnxim_crosscheck: {path}: no NPU layers (not an npusim NPU report?)")
    sums = [0] * len(GROUPS)
    convs, stage = 0, 0
    bounds = [sum(STAGE_CONVS[: i + 1]) for i in range(len(STAGE_CONVS))]
    for l in layers:
        if l["op"] == "conv2d":
            convs += 1
            while stage < len(bounds) and convs > bounds[stage]:
                stage += 1
        g = stage
        if l["op"] in ("dense", "matmul") or (l["op"].startswith("avg_pool") and convs >= bounds[-1]):
            g = 5
        sums[min(g, 5)] += l["cycles"]
    return sums, rep["totals"]["npu_cycles"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("onnxim_log")
    ap.add_argument("npusim_report")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    finish = onnxim_finish(a.onnxim_log)
    if any(name.startswith("layer0.") for name, _ in finish):
        groups = ["attention (QKV, attention, projection, norm)", "FFN (gate/up, activation, down, norm)"]
        o, o_total = onnxim_language(finish)
        with open(a.npusim_report) as f:
            n, n_total = npusim_language(json.load(f))
    else:
        groups = GROUPS
        o, o_total = onnxim_groups(finish)
        n, n_total = npusim_groups(a.npusim_report)
    print(f"| {a.label or 'part'} | ONNXim cycles | npusim cycles | npusim / ONNXim |")
    print("|---|---|---|---|")
    for g, ov, nv in zip(groups, o, n):
        print(f"| {g} | {ov:,} | {nv:,} | {nv / ov:.2f} |" if ov else f"| {g} | {ov:,} | {nv:,} | - |")
    print(f"| **total** | **{o_total:,}** | **{n_total:,}** | **{n_total / o_total:.3f}** |")


if __name__ == "__main__":
    main()
