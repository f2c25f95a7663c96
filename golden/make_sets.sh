#!/usr/bin/env bash
# Regenerates the committed golden sets from scratch (docs/golden.md): the IRs from `sim zoo`,
# the activations from scripts/make_golden.py (PyTorch), the timing baselines from
# `sim regress --update`. Needs a built sim (SIM=..., default build/sim) and
# `scripts/setup --golden`. Deterministic: same torch version, same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
sim=${SIM:-build/sim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf golden/resnet18_weights golden/resnet18_int8_b2_64 golden/resnet18_fp16_b2_64
for dt in int8 fp16; do
  zoo="zoo resnet18 --batch 2 --input 64x64 --dtype $dt"
  "$sim" $zoo -o "$tmp/resnet18_${dt}_b2_64.json"
  # Both networks share one set of weights (int8 + per-channel power-of-two scale), made by
  # the first run and reused by the second: it keeps golden/ small.
  /usr/bin/python3 scripts/make_golden.py "$tmp/resnet18_${dt}_b2_64.json" -o "golden/resnet18_${dt}_b2_64" \
    --weights-dir golden/resnet18_weights --source "sim $zoo" -q
done
"$sim" regress --update golden
du -sh --apparent-size golden
