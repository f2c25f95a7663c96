#!/usr/bin/env python3
"""What library kernels do on a Hopper GPU that the tile model must know: their launch (grid,
block, cluster, registers, shared memory) and their L2 and DRAM traffic, read by Nsight Compute,
for cuDNN convolutions and cuBLAS GEMMs of shapes and batches that are in none of the held-out
files (VGG-16 and ResNet-50 strided layers at batch 8 and 32). And which Triton tiles compile to
Hopper's warpgroup MMA (wgmma) or to the warp-level mma.sync, and how fast each is on the same
tiles (DISABLE_MMA_V3=1 makes Triton emit mma.sync). Run on the GPU machine, from
configs/calibration:

  python3 kernel_probe.py time > probe_time.json          # do_bench times, kernel names, tiles
  ncu --clock-control none --profile-from-start off --section LaunchStats --section SpeedOfLight \
      --metrics dram__bytes_read.sum,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,\
gpu__time_duration.sum --csv python3 kernel_probe.py ncu > probe_ncu.csv
  python3 kernel_probe.py mma > probe_mma.json            # runs itself again with DISABLE_MMA_V3=1
  python3 kernel_probe.py --json probe_time.json probe_ncu.csv probe_mma.json . h100   # any machine
With PROBE=strided in the environment of the first two (and of --json, without the mma file:
pass - for it), the strided-convolution cases instead.
"""
import csv
import json
import os
import subprocess
import sys

# (layer, C, K, H=W, R=S, stride, pad, batch)
CONVS = [("vgg_128_112", 128, 128, 112, 3, 1, 1, 8), ("vgg_256_56", 256, 256, 56, 3, 1, 1, 8),
         ("vgg_512_28", 512, 512, 28, 3, 1, 1, 8), ("vgg_512_28", 512, 512, 28, 3, 1, 1, 32),
         ("vgg_512_14", 512, 512, 14, 3, 1, 1, 32), ("vgg_256_56", 256, 256, 56, 3, 1, 1, 32),
         ("down_256_512_s2", 256, 512, 56, 1, 2, 0, 8), ("down_256_512_s2", 256, 512, 56, 1, 2, 0, 32),
         ("down_1024_2048_s2", 1024, 2048, 14, 1, 2, 0, 8), ("down_1024_2048_s2", 1024, 2048, 14, 1, 2, 0, 32),
         ("l2_3x3", 128, 128, 28, 3, 1, 1, 32), ("l4_3x3", 512, 512, 7, 3, 1, 1, 8)]
GEMMS = [(4096, 4096, 4096), (8192, 8192, 8192), (3584, 3584, 3584), (2048, 2048, 2048), (5120, 5120, 2560)]
# Triton tiles (BM, BN, BK, warps, stages) for the mma question, timed at 8192^3 grouped (math-bound).
MMA_TILES = [(128, 256, 64, 8, 3), (128, 128, 64, 4, 4), (128, 128, 64, 8, 4), (64, 128, 64, 4, 3),
             (64, 64, 64, 4, 4), (64, 64, 32, 2, 5), (128, 64, 64, 4, 4), (128, 32, 64, 4, 4)]


def conv_fn(c, k, hw, r, stride, pad, batch):
    import torch
    x = torch.randn(batch, c, hw, hw, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
    w = torch.randn(k, c, r, r, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
    return lambda: torch.nn.functional.conv2d(x, w, None, stride, pad)


def gemm_fn(m, n, k):
    import torch
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    return lambda: torch.matmul(a, b)


# PROBE=strided: ResNet-50's strided 1x1 "downsample" layers at batch 8 and 32 beside the same
# layer at stride 1 on the input already subsampled (x[:, :, ::2, ::2], the same implicit GEMM)
# and beside that GEMM in cuBLAS: what does the strided gather cost?
STRIDED = [("down_256_512", 256, 512, 56), ("down_512_1024", 512, 1024, 28), ("down_1024_2048", 1024, 2048, 14)]
PROBE = os.environ.get("PROBE", "library")


def strided_cases():
    for n in (8, 32):
        for (name, c, k, hw) in STRIDED:
            yield ({"layer": name + "_s2", "N": n, "C": c, "H": hw, "W": hw, "K": k, "R": 1, "S": 1, "stride": 2, "pad": 0,
                    "dtype": "fp16", "layout": "NHWC"}, conv_fn(c, k, hw, 1, 2, 0, n))
            yield ({"layer": name + "_sub_s1", "N": n, "C": c, "H": hw // 2, "W": hw // 2, "K": k, "R": 1, "S": 1,
                    "stride": 1, "pad": 0, "dtype": "fp16", "layout": "NHWC"}, conv_fn(c, k, hw // 2, 1, 1, 0, n))
            yield {"M": n * (hw // 2) ** 2, "N": k, "K": c, "kind": "gemm_cublas"}, gemm_fn(n * (hw // 2) ** 2, k, c)


def cases():
    if PROBE == "strided":
        yield from strided_cases()
        return
    for (name, c, k, hw, r, s, p, n) in CONVS:
        yield {"layer": name, "N": n, "C": c, "H": hw, "W": hw, "K": k, "R": r, "S": r, "stride": s, "pad": p,
               "dtype": "fp16", "layout": "NHWC"}, conv_fn(c, k, hw, r, s, p, n)
    for (m, n, k) in GEMMS:
        yield {"M": m, "N": n, "K": k, "kind": "gemm_cublas"}, gemm_fn(m, n, k)


def time_cases():
    import torch
    from measure_hopper import bench_ms, kernel_ms
    from cudnn_tiles import annotate
    torch.backends.cudnn.benchmark = True
    rows = []
    for row, f in cases():
        f()
        torch.cuda.synchronize()
        row["ms"] = bench_ms(f)
        row["kernel_ms"], row["kernels"] = kernel_ms(f)
        annotate(row)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    json.dump(rows, sys.stdout, indent=1)


def ncu_cases():
    """One profiled call per case, after cudnn.benchmark has chosen (the choice is then cached)."""
    import torch
    torch.backends.cudnn.benchmark = True
    for _, f in cases():
        for _ in range(3):
            f()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        f()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


def mma_times():
    import torch
    import triton
    from measure_hopper import matmul_kernel, bench_ms
    M = N = K = 8192
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    out = []
    for (bm, bn, bk, w, s) in MMA_TILES:
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        kw = dict(BM=bm, BN=bn, BK=bk, GROUP_M=8, num_warps=w, num_stages=s)
        ck = matmul_kernel[grid](*args, **kw)
        ptx = ck.asm.get("ptx", "")
        out.append({"M": M, "N": N, "K": K, "tile": f"{bm}x{bn}x{bk}:{w}:{s}", "group_m": 8,
                    "mma": "wgmma" if "wgmma" in ptx else "mma.sync" if "mma.sync" in ptx else "none",
                    "disable_mma_v3": os.environ.get("DISABLE_MMA_V3", "0"),
                    "ms": bench_ms(lambda: matmul_kernel[grid](*args, **kw))})
        print(json.dumps(out[-1]), file=sys.stderr, flush=True)
    return out


def to_json(time_path, ncu_path, outdir, prefix):
    """The timed rows with the Nsight Compute metrics of the case's kernel (ncu profiles one launch
    per case; memsets are not kernels to it), written as <prefix>_kernel_probe_conv.json (readable by
    `sim gpu-calibrate --conv`) and <prefix>_kernel_probe_gemm.json (--gemm). cudnn.benchmark may
    choose another kernel in the profiled process: "ncu_kernel" names the one measured."""
    rows = json.load(open(time_path))
    with open(ncu_path) as f:
        lines = [l for l in f if l.startswith('"')]
    launches = {}
    for r in csv.DictReader(lines):
        m = launches.setdefault(int(r["ID"]), {"ncu_kernel": r["Kernel Name"][:160]})
        m[r["Metric Name"] + (" (" + r["Metric Unit"] + ")" if r["Metric Unit"] else "")] = r["Metric Value"]
    ids = sorted(launches)
    if len(ids) != len(rows):
        sys.exit(f"{ncu_path}: {len(ids)} profiled launches for {len(rows)} cases")
    for row, i in zip(rows, ids):
        row["ncu"] = launches[i]
        row["ncu"]["same_kernel_as_timed"] = any(launches[i]["ncu_kernel"][:60] in k for k in row["kernels"])
    meta = {"written_by": "configs/calibration/kernel_probe.py",
            "timing": "ms: median of triton.testing.do_bench (L2 flushed); ncu: one launch under "
                      "ncu --clock-control none --section LaunchStats --section SpeedOfLight"}
    for kind, keep in (("conv", lambda r: "layer" in r), ("gemm", lambda r: "M" in r)):
        tag = "" if PROBE == "library" else "_" + PROBE
        name = os.path.join(outdir, f"{prefix}_kernel_probe{tag}_{kind}.json")
        with open(name, "w") as f:
            json.dump({"meta": meta, "note": __doc__.split("Run on")[0].strip(), "rows": [r for r in rows if keep(r)]},
                      f, indent=1)
            f.write("\n")


def mma_json(path, outdir, prefix):
    """The Triton mma rows as a --gemm file: <prefix>_triton_mma_probe.json."""
    rows = json.load(open(path))
    meta = {"written_by": "configs/calibration/kernel_probe.py mma",
            "timing": "median of triton.testing.do_bench (L2 flushed); mma: what the kernel's PTX uses"}
    with open(os.path.join(outdir, f"{prefix}_triton_mma_probe.json"), "w") as f:
        json.dump({"meta": meta, "note": "Triton GEMM tiles at 8192^3 (grouped order) as Triton compiles them for "
                   "Hopper (wgmma for 4 and 8 warps, mma.sync for 2) and with DISABLE_MMA_V3=1 (mma.sync)",
                   "rows": rows}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "time"
    if what == "--json":  # --json TIME.json NCU.csv MMA.json OUTDIR PREFIX
        to_json(sys.argv[2], sys.argv[3], sys.argv[5], sys.argv[6])
        if sys.argv[4] != "-":
            mma_json(sys.argv[4], sys.argv[5], sys.argv[6])
    elif what == "time":
        time_cases()
    elif what == "ncu":
        ncu_cases()
    elif what == "mma":
        rows = mma_times()
        if os.environ.get("DISABLE_MMA_V3") is None:
            env = dict(os.environ, DISABLE_MMA_V3="1", TRITON_CACHE_DIR=os.environ.get("TMPDIR", "/tmp") + "/triton_v2")
            p = subprocess.run([sys.executable, __file__, "mma"], env=env, capture_output=True, text=True)
            sys.stderr.write(p.stderr)
            rows += json.loads(p.stdout)
        json.dump(rows, sys.stdout, indent=1)
