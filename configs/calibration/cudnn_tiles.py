#!/usr/bin/env python3
"""The implicit-GEMM tile of a cuDNN convolution, read off the names of the kernels it ran
(written into conv rows by measure_hopper.py; `sim gpu-calibrate --conv` simulates that tile).

Usage: configs/calibration/cudnn_tiles.py [--check] CONV_FILE...   adds (or refreshes) each row's tile
mma (warp-level mma.sync or warpgroup wgmma) and cluster from its "kernels", in place; needs no GPU.
--check changes nothing: it lists the rows that are not current and exits 1 if there are any.
"""
import json
import re
import sys

SMEM_PER_BLOCK = 227 * 1024  # Hopper's opt-in shared memory per block


def tile_from_kernels(kernels):
    """The tile "TMxTNxTK:WARPS:STAGES" of the implicit GEMM that cuDNN ran, read off the kernel's
    name, with TM along the output pixels and TN along the filters; None when no name says it.
    What the names give: sm80_xmma ...tilesize{M}x{N}x{K}_stage{S}_warpsize{a}x{b}x{c} (a*b*c
    warps; stage1, the loads-to-registers kernels, counts as 2); sm90_xmma ...tilesize{M}x{N}x{K}
    _warpgroupsize{a}x{b}x{c} (4*a*b warps; stages not named: as many as the shared memory holds,
    as CUTLASS 3's automatic stage count does); cutlass ..._{M}x{N}_{K}x{S}_nhwc (CUTLASS 2's
    64x64-per-warp default: M*N/4096 warps, 4 to 8); nvjet_sm90_hsh_{N}x{M}_{K}x{S}_... (cuBLAS's
    column-major orientation: the first size runs along the filters; two consumer warpgroups, 8
    warps, as its cooperative and ping-pong kernels have)."""
    for name in kernels:
        m = re.search(r"sm80_xmma_fprop_implicit_gemm.*_tilesize(\d+)x(\d+)x(\d+)_stage(\d+)_warpsize(\d+)x(\d+)x(\d+)", name)
        if m:
            tm, tn, tk, st, a, b, c = map(int, m.groups())
            return f"{tm}x{tn}x{tk}:{a * b * c}:{max(2, st)}"
        m = re.search(r"sm90_xmma_fprop_implicit_gemm.*_tilesize(\d+)x(\d+)x(\d+)_warpgroupsize(\d+)x(\d+)x(\d+)", name)
        if m:
            tm, tn, tk, a, b, _ = map(int, m.groups())
            return f"{tm}x{tn}x{tk}:{4 * a * b}:{max(2, min(64, SMEM_PER_BLOCK // ((tm + tn) * tk * 2)))}"
        m = re.search(r"cutlass_tensorop_f16_s16816fprop_\w+?_(\d+)x(\d+)_(\d+)x(\d+)_nhwc", name)
        if m:
            tm, tn, tk, st = map(int, m.groups())
            return f"{tm}x{tn}x{tk}:{min(8, max(4, tm * tn // 4096))}:{max(2, st)}"
        m = re.search(r"nvjet_sm90_hsh_(\d+)x(\d+)_(\d+)x(\d+)_", name)
        if m:
            tn, tm, tk, st = map(int, m.groups())
            return f"{tm}x{tn}x{tk}:8:{max(2, st)}"
    return None


def mma_from_kernels(kernels):
    """"mma.sync" when cuDNN ran a kernel built on warp-level MMA (its Ampere kernels: sm80_xmma,
    CUTLASS 2's s16816, the first-layer kernels' HMMA 1688), "wgmma" for its Hopper warpgroup
    kernels (sm90_xmma implicit GEMM, cuBLAS's nvjet_sm90), None when no name says."""
    for name in kernels:
        if re.search(r"sm80_xmma|_s16816|tensor1688|tensor16x8x", name):
            return "mma.sync"
        if re.search(r"sm90_xmma_fprop_implicit_gemm|nvjet_sm90", name):
            return "wgmma"
    return None


def cluster_from_kernels(kernels):
    """The thread-block cluster "CMxCN" (tiles along the output pixels x along the filters) of a
    Hopper kernel that multicasts its operands: cuBLAS's nvjet names give it after the tile and
    stages, in the tile's orientation (nvjet_sm90_hsh_256x128_64x4_1x2_...: 1 along the filters,
    2 along M, "2x1"); cuDNN's sm90_xmma names do not: "2x1" stands for them, the cluster Nsight
    Compute saw most (1 to 8 on the H100, configs/calibration/h100_kernel_probe_conv.json) and
    CUTLASS 3's usual one along M. None for kernels without clusters (sm80, CUTLASS 2)."""
    for name in kernels:
        m = re.search(r"nvjet_sm90_hsh_\d+x\d+_\d+x\d+_(\d+)x(\d+)_", name)
        if m:
            along_n, along_m = map(int, m.groups())
            return f"{along_m}x{along_n}"
        if re.search(r"sm90_xmma_fprop_implicit_gemm", name):
            return "2x1"
    return None


def retile(paths):
    """Adds (or refreshes) each conv row's tile from its kernels, in place."""
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for row in doc["rows"]:
            annotate(row)
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"{path}: {sum('tile' in r for r in doc['rows'])} of {len(doc['rows'])} rows have a tile")



def derived(row):
    """What tile_from_kernels, mma_from_kernels and cluster_from_kernels give for a row."""
    ks = row.get("kernels", [])
    return {"tile": tile_from_kernels(ks), "mma": mma_from_kernels(ks), "cluster": cluster_from_kernels(ks)}


def annotate(row):
    """Sets (or removes) the row's tile, mma and cluster to what its kernels give."""
    for key, value in derived(row).items():
        row.pop(key, None)
        if value:
            row[key] = value


def check(paths):
    """Rows whose tile, mma or cluster is not what their kernels give (the files are current)."""
    stale = []
    for path in paths:
        with open(path) as f:
            for i, row in enumerate(json.load(f)["rows"]):
                for key, want in derived(row).items():
                    if row.get(key) != want:
                        stale.append(f"{path}: /rows/{i}/{key} is {row.get(key)!r}, its kernels give {want!r}")
    return stale


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        problems = check(sys.argv[2:])
        print("\n".join(problems) or f"{len(sys.argv) - 2} files current")
        sys.exit(1 if problems else 0)
    retile(sys.argv[1:])
