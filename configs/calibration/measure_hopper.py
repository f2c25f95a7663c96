#!/usr/bin/env python3
"""Measures, on the GPU it runs on, the kernels that `sim gpu-calibrate` predicts, and writes them
in its input formats (docs/gpu.md#calibration):

  <gpu>_triton_gemm.json   fp16 Triton GEMMs with a fixed tile BMxBNxBK:warps:stages and tile
                           order (group_m 1 = row-major, as ARK and the model; 8 = Triton's
                           grouped order), on square and LLM shapes; also cuBLAS on the same
                           shapes (kind gemm_cublas)
  <gpu>_cudnn_conv.json    fp16 cuDNN convolutions (NHWC, cudnn.benchmark) of ResNet-50's layer
                           shapes at batch 1, 8 and 32, with the kernels cuDNN ran
  <gpu>_triton_rowwise.json  one-program-per-row Triton kernels (softmax, layer_norm, rms_norm,
                           add) in fp32 and bf16, launched as Liger-Kernel launches them

Times: median of triton.testing.do_bench (the L2 is flushed before every run). The device's
name, SMs, L2, clocks and a device-to-device copy bandwidth go into each file's meta.

Usage: measure_hopper.py OUTDIR [gemm,conv,rowwise] [dev|heldout]
(configs/calibration/cudnn_tiles.py adds the tiles to conv files measured before it existed)
(run on the GPU machine; `PYTHONUNBUFFERED=1` shows progress). conv rows also carry kernel_ms:
the summed duration of cuDNN's kernels in one call, read by the profiler.
"""
import json
import os
import subprocess
import sys
import time

import torch
import triton
from cudnn_tiles import annotate
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BM + tl.arange(0, BM)) % M
    offs_bn = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_am[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_bn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BM + tl.arange(0, BM)
    offs_cn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + scm * offs_cm[:, None] + scn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * N + offs, (e / tl.sum(e, 0)).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, 0) / N
    xc = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, 0) / N + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * N + offs, (xc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, 0) / N + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * N + offs, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(rstd_ptr + row, rstd)


@triton.jit
def add_kernel(x_ptr, r_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=0.0)
    r = tl.load(r_ptr + row * N + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * N + offs, x + r, mask=mask)


def bench_ms(fn):
    return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))


def device_meta():
    p = torch.cuda.get_device_properties(0)
    meta = {"device": p.name, "sms": p.multi_processor_count,
            "l2_bytes": getattr(p, "L2_cache_size", None),
            "memory_bytes": p.total_memory, "torch": torch.__version__, "triton": triton.__version__,
            "timing": "median of triton.testing.do_bench(warmup=25, rep=100): L2 flushed before each run",
            "written_by": "configs/calibration/measure_hopper.py"}
    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    ms = bench_ms(lambda: y.copy_(x))
    meta["d2d_copy_GBps_rw"] = 2 * x.numel() / ms / 1e6
    del x, y
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.limit,driver_version",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
        meta["nvidia_smi_sm_max_mem_powerlimit_driver"] = q
    except Exception as e:  # the clocks are context, not a measurement
        meta["nvidia_smi_error"] = str(e)
    return meta


def gpu_prefix(meta):
    for short in ("H200", "H100", "A100", "L40S", "B200"):
        if short in meta["device"]:
            return short.lower()
    return "".join(ch for ch in meta["device"].lower() if ch.isalnum())


def write(outdir, name, meta, note, rows):
    name = gpu_prefix(meta) + "_" + name
    if SET != "dev":
        name = name.replace(".json", "_" + SET + ".json")
    with open(os.path.join(outdir, name), "w") as f:
        json.dump({"meta": meta, "note": note, "rows": rows}, f, indent=1)
        f.write("\n")
    print(f"wrote {name}: {len(rows)} rows", flush=True)


# Two sets of shapes and tiles: "dev" (the files without a suffix), on which the model's changes
# were developed, and "heldout" (files *_heldout.json), measured for judging them: other shapes,
# tiles, layers, batches and row sizes.
SET = "dev"

GEMM_SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
               (512, 11008, 4096), (4096, 4096, 512), (16384, 1024, 4096), (128, 8192, 8192)]
# BM, BN, BK, warps, stages
TILES = [(128, 256, 64, 8, 3), (128, 256, 32, 8, 4), (128, 128, 64, 8, 4), (128, 128, 64, 4, 4),
         (128, 128, 32, 4, 4), (64, 128, 64, 4, 3), (64, 128, 32, 4, 4), (128, 64, 64, 4, 4),
         (64, 64, 64, 4, 4), (64, 64, 32, 2, 5)]


HELDOUT_GEMM_SHAPES = [(3072, 3072, 3072), (6144, 6144, 6144), (2048, 8192, 1024), (8192, 1024, 8192),
                       (256, 4096, 4096), (4096, 14336, 4096), (1536, 1536, 12288)]
HELDOUT_TILES = [(128, 256, 64, 8, 4), (256, 128, 64, 8, 3), (128, 128, 64, 4, 3), (128, 128, 128, 8, 3),
                 (64, 256, 64, 4, 4), (128, 64, 32, 4, 4), (64, 64, 128, 4, 3), (128, 32, 64, 4, 4)]


def measure_gemms(outdir, meta):
    rows = []
    shapes, tiles = (GEMM_SHAPES, TILES) if SET == "dev" else (HELDOUT_GEMM_SHAPES, HELDOUT_TILES)
    for si, (m, n, k) in enumerate(shapes):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)
        ref = a @ b
        rows.append({"kind": "gemm_cublas", "dtype": "fp16", "M": m, "N": n, "K": k,
                     "ms": bench_ms(lambda: torch.matmul(a, b, out=c))})
        if SET == "dev":
            groups = (1, 8) if (m, n, k) in ((4096, 4096, 4096), (8192, 8192, 8192), (512, 11008, 4096)) else (8,)
        else:
            groups = (1, 8) if si % 2 == 0 else (4,)
        for (bm, bn, bk, w, s) in tiles:
            for g in groups:
                grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
                tile = f"{bm}x{bn}x{bk}:{w}:{s}"

                def run():
                    return matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                               c.stride(0), c.stride(1), BM=bm, BN=bn, BK=bk, GROUP_M=g,
                                               num_warps=w, num_stages=s)
                row = {"kind": "gemm_triton", "dtype": "fp16", "M": m, "N": n, "K": k, "tile": tile, "group_m": g}
                try:
                    kern = run()
                    torch.cuda.synchronize()
                    err = (c.float() - ref.float()).abs().max().item()
                    row["max_abs_error_vs_cublas"] = err
                    for attr in ("n_regs", "n_spills"):
                        if hasattr(kern, attr):
                            row[attr] = int(getattr(kern, attr))
                    if hasattr(kern, "metadata") and hasattr(kern.metadata, "shared"):
                        row["shared_bytes"] = int(kern.metadata.shared)
                    row["ms"] = bench_ms(run)
                except Exception as e:  # a tile that does not fit is a fact, not a failure
                    row["error"] = str(e).splitlines()[0][:200]
                rows.append(row)
                print(m, n, k, tile, g, row.get("ms"), row.get("error", ""), flush=True)
        del a, b, c, ref
        write(outdir, "triton_gemm.json", meta,
              "fp16 GEMMs C[M,N] = A[M,K] B[K,N] (row-major), fp32 accumulation. gemm_triton: the "
              "Triton tutorial kernel with a fixed tile BMxBNxBK:warps:stages; group_m 1 = row-major "
              "tile order, 8 = grouped. gemm_cublas: torch.matmul.", rows)


# name, C, K, H(=W), R(=S), stride, pad: the distinct convolutions of ResNet-50 (torchvision).
CONVS = [("conv1", 3, 64, 224, 7, 2, 3), ("l1_1x1_in", 64, 64, 56, 1, 1, 0), ("l1_3x3", 64, 64, 56, 3, 1, 1),
         ("l1_1x1_out", 64, 256, 56, 1, 1, 0), ("l1_1x1_red", 256, 64, 56, 1, 1, 0),
         ("l2_3x3_s2", 128, 128, 56, 3, 2, 1), ("l2_3x3", 128, 128, 28, 3, 1, 1),
         ("l2_1x1_out", 128, 512, 28, 1, 1, 0), ("l3_3x3", 256, 256, 14, 3, 1, 1),
         ("l3_1x1_red", 1024, 256, 14, 1, 1, 0), ("l4_3x3", 512, 512, 7, 3, 1, 1),
         ("l4_1x1_out", 512, 2048, 7, 1, 1, 0)]


# VGG-16's convolutions and ResNet-50's strided and late ones.
HELDOUT_CONVS = [("vgg_64_224", 64, 64, 224, 3, 1, 1), ("vgg_128_112", 128, 128, 112, 3, 1, 1),
                 ("vgg_256_56", 256, 256, 56, 3, 1, 1), ("vgg_512_28", 512, 512, 28, 3, 1, 1),
                 ("vgg_512_14", 512, 512, 14, 3, 1, 1), ("down_256_512_s2", 256, 512, 56, 1, 2, 0),
                 ("down_512_1024_s2", 512, 1024, 28, 1, 2, 0), ("l3_3x3_s2", 256, 256, 28, 3, 2, 1),
                 ("l4_1x1_red", 2048, 512, 7, 1, 1, 0), ("down_1024_2048_s2", 1024, 2048, 14, 1, 2, 0)]


def kernel_ms(f, reps=5):
    """Mean summed duration of the CUDA kernels of one call of f, the L2 flushed before each."""
    cache = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA], acc_events=True) as prof:
        for _ in range(reps):
            cache.zero_()
            f()
        torch.cuda.synchronize()
    names, total = [], 0.0
    for e in prof.events():
        if not str(e.device_type).endswith("CUDA") or "Fill" in e.name:
            continue
        total += e.time_range.elapsed_us()
        if e.name[:160] not in names:
            names.append(e.name[:160])
    return total / reps / 1000.0, names


def measure_convs(outdir, meta):
    torch.backends.cudnn.benchmark = True
    rows = []
    batches, convs = ((1, 8, 32), CONVS) if SET == "dev" else ((4, 16, 64), HELDOUT_CONVS)
    for batch in batches:
        for (name, c, k, hw, r, stride, pad) in convs:
            x = torch.randn(batch, c, hw, hw, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
            w = torch.randn(k, c, r, r, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
            f = lambda: torch.nn.functional.conv2d(x, w, None, stride, pad)
            f()
            torch.cuda.synchronize()
            row = {"layer": name, "N": batch, "C": c, "H": hw, "W": hw, "K": k, "R": r, "S": r,
                   "stride": stride, "pad": pad, "dtype": "fp16", "layout": "NHWC", "ms": bench_ms(f)}
            try:
                row["kernel_ms"], row["kernels"] = kernel_ms(f)
                annotate(row)
            except Exception as e:
                row["kernels_error"] = str(e)[:200]
            rows.append(row)
            print(name, batch, row["ms"], row.get("kernel_ms"), row.get("kernels"), flush=True)
    write(outdir, "cudnn_conv.json", meta,
          "fp16 convolutions y = conv2d(x, w), no bias, NHWC (channels_last), cuDNN chosen by "
          "cudnn.benchmark; kernels: what the profiler saw for one call; kernel_ms: their summed "
          "duration; tile: the implicit GEMM tile its name gives (tile_from_kernels).", rows)


# kind -> what the kernel reads and writes (the --ops row format).
ROWWISE = {
    "softmax": dict(row_inputs=1, col_vectors=0, row_outputs=1, row_stats=0, flops_per_element=4,
                    transcendentals_per_element=1),
    "layer_norm": dict(row_inputs=1, col_vectors=2, row_outputs=1, row_stats=2, flops_per_element=7,
                       transcendentals_per_element=0),
    "rms_norm": dict(row_inputs=1, col_vectors=1, row_outputs=1, row_stats=1, flops_per_element=4,
                     transcendentals_per_element=0),
    "add": dict(row_inputs=2, col_vectors=0, row_outputs=1, row_stats=0, flops_per_element=1,
                transcendentals_per_element=0),
}


def warps_for(block):  # liger_kernel.ops.utils.calculate_settings
    return 32 if block >= 32768 else 16 if block >= 8192 else 8 if block >= 2048 else 4


def measure_rowwise(outdir, meta):
    rows = []
    dtypes = (("bf16", torch.bfloat16), ("fp32", torch.float32)) if SET == "dev" else \
        (("fp16", torch.float16), ("fp32", torch.float32))
    ms_, ns_ = ((4096, 16384), (1024, 4096, 16384)) if SET == "dev" else ((8192, 32768), (768, 2048, 5120, 8192))
    for dtype_name, dtype in dtypes:
        for m in ms_:
            for n in ns_:
                block = triton.next_power_of_2(n)
                warps = warps_for(block)
                x = torch.randn(m, n, device="cuda", dtype=dtype)
                r = torch.randn(m, n, device="cuda", dtype=dtype)
                y = torch.empty_like(x)
                wv = torch.randn(n, device="cuda", dtype=dtype)
                bv = torch.randn(n, device="cuda", dtype=dtype)
                mean = torch.empty(m, device="cuda", dtype=torch.float32)
                rstd = torch.empty(m, device="cuda", dtype=torch.float32)
                launches = {
                    "softmax": lambda: softmax_kernel[(m,)](x, y, n, BLOCK=block, num_warps=warps),
                    "layer_norm": lambda: layer_norm_kernel[(m,)](x, wv, bv, y, mean, rstd, n, 1e-5, BLOCK=block,
                                                                  num_warps=warps),
                    "rms_norm": lambda: rms_norm_kernel[(m,)](x, wv, y, rstd, n, 1e-6, BLOCK=block, num_warps=warps),
                    "add": lambda: add_kernel[(m,)](x, r, y, n, BLOCK=block, num_warps=warps),
                }
                checks = {"softmax": lambda: torch.softmax(x.float(), -1),
                          "layer_norm": lambda: torch.nn.functional.layer_norm(x.float(), (n,), wv.float(), bv.float()),
                          "rms_norm": lambda: x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6) * wv.float(),
                          "add": lambda: x.float() + r.float()}
                for kind, launch in launches.items():
                    row = {"kind": kind, "M": m, "N": n, "dtype": dtype_name, **ROWWISE[kind], "warps": warps}
                    try:
                        launch()
                        torch.cuda.synchronize()
                        row["max_abs_error_vs_torch"] = (y.float() - checks[kind]()).abs().max().item()
                        row["ms"] = bench_ms(launch)
                    except Exception as e:
                        row["error"] = str(e).splitlines()[0][:200]
                    rows.append(row)
                    print(kind, m, n, dtype_name, row.get("ms"), row.get("error", ""), flush=True)
                del x, r, y, wv, bv, mean, rstd
        write(outdir, "triton_rowwise.json", meta,
              "One Triton program of `warps` warps per row of M x N (BLOCK = next power of two of N, "
              "warps as Liger-Kernel's calculate_settings); row_inputs / row_outputs: M x N tensors "
              "read / written; col_vectors: N-long weights; row_stats: M-long fp32 statistics.", rows)


def main():
    global SET
    outdir = sys.argv[1] if len(sys.argv) > 1 else "."
    parts = sys.argv[2].split(",") if len(sys.argv) > 2 else ["rowwise", "conv", "gemm"]
    SET = sys.argv[3] if len(sys.argv) > 3 else "dev"
    meta_set = {"dev": "dev: the model's changes were developed on these rows",
                "heldout": "heldout: measured to judge the model; nothing was fitted or developed on these rows"}[SET]
    t0 = time.time()
    meta = device_meta()
    meta["set"] = meta_set
    print(json.dumps(meta), flush=True)
    for part in parts:
        {"gemm": measure_gemms, "conv": measure_convs, "rowwise": measure_rowwise}[part](outdir, meta)
        print(f"{part} done at {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
