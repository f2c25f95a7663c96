#!/usr/bin/python3
"""configs/calibration/hopper_ratio.py: its pairing on rows made by hand, and that every Triton
row the committed H200 files hold has its H100 twin (the two files were measured by one program).
Usage: test_hopper_ratio.py SOURCE_DIR."""
import json
import os
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(src, "configs", "calibration"))
import hopper_ratio as hr  # noqa: E402

failures = []


def row(tile, ms, group_m=1, kind="gemm_triton"):
    return {"kind": kind, "M": 4096, "N": 4096, "K": 4096, "tile": tile, "group_m": group_m, "ms": ms}


# H100: two orders of one tile, and a cuBLAS row (no tile: never paired). H200: the grouped one
# 0.9x, the row-major one missing on the H100 side for another group, and one more shape.
h100 = [row("128x64x64:4:4", 1.0, 8), row("128x64x64:4:4", 2.0), {"kind": "gemm_cublas", "M": 1, "N": 1, "K": 1, "ms": 1}]
h200 = [row("128x64x64:4:4", 0.9, 8), row("128x64x64:4:4", 1.0, 4), row("64x64x64:4:4", 1.0)]
pairs, alone = hr.paired(h100, h200)
if pairs != [(0, 0.9, "128x64")] or alone != 2:
    failures.append(f"hand case: got {pairs}, {alone} alone; expected [(0, 0.9, '128x64')], 2 alone")
for s in hr.SETS:
    rows = {g: json.load(open(os.path.join(src, "configs", "calibration", f"{g}_{s}.json")))["rows"] for g in ("h100", "h200")}
    pairs, alone = hr.paired(rows["h100"], rows["h200"])
    triton = sum(1 for r in rows["h200"] if r.get("kind") == "gemm_triton")
    if alone or len(pairs) != triton or triton < 80:
        failures.append(f"{s}: {len(pairs)} of {triton} Triton rows paired, {alone} alone")
for f in failures:
    print("FAIL:", f)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
