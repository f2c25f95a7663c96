#!/usr/bin/env python3
"""Measures, on the GPU it runs on, the kernel-level figures the library plan needs
(docs/gpu_library.md), and writes them to OUTDIR/<gpu>_library_probe.json:

  launch      per-kernel time of tiny kernels launched eagerly from PyTorch (the host's
              dispatch rate) and replayed from a CUDA graph (kernels back to back), and
              the duration of one such kernel (profiler), so that the gap between kernels
              of a graph is graph time - kernel time
  eltwise     element-wise kernels (add, relu, gelu, a fused add+gelu chain from
              torch.compile) over 2^16 .. 2^28 elements in fp16 and fp32
  attention   FlashAttention (scaled_dot_product_attention, flash backend), fp16, BERT,
              Llama prefill (causal) and decode (one query over a KV cache) shapes
  precision   8192^3 and 4096^3 GEMMs in fp32 (no TF32), TF32, fp16, bf16, int8
              (torch._int_mm) and fp8 e4m3 (torch._scaled_mm)
  pool        max_pool2d 3x3/2 and depthwise 3x3 convolutions (channels_last, fp16)
  int8        torch._int_mm with B column-major (cuBLASLt's IMMA layout) beside fp16, 4096^3 and 8192^3
  small_gemm  fp16 cuBLAS GEMMs of BERT-base's and Llama-2-7B's projection shapes, M = 1 .. 16384
  graph_kernels  single PyTorch ops of BERT / Llama sizes, 50 launches captured in one CUDA graph:
              the period of one kernel in a graph, and its profiled duration
  bert        a BERT-base encoder written with torch.nn.functional (fp16, seq 128, batch 1 / 8 / 32),
              eager and replayed as a CUDA graph: whole-network times to judge the library plan
              (never fitted)

Times: median of triton.testing.do_bench (L2 flushed before every run) unless a row says
otherwise. These are kernel-level calibration data: no whole network is measured here.

Usage: measure_library.py OUTDIR [PART,PART...]   (on the GPU machine; default: the first five;
the file is named after the parts when they are given: <gpu>_library_probe_<parts>.json)
"""
import json
import os
import sys
import time

import torch
from triton.testing import do_bench


def bench_ms(fn):
    return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))


def device_meta():
    p = torch.cuda.get_device_properties(0)
    return {"device": p.name, "sms": p.multi_processor_count, "torch": torch.__version__,
            "cuda": torch.version.cuda, "written_by": "configs/calibration/measure_library.py",
            "timing": "median of triton.testing.do_bench(warmup=25, rep=100): L2 flushed before each run",
            "date": time.strftime("%Y-%m-%d")}


def kernel_us_by_profiler(fn, reps=50):
    """Mean CUDA kernel duration of fn's kernels (us per call), from the profiler."""
    from torch.profiler import profile, ProfilerActivity
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    total = 0.0
    for e in prof.key_averages():
        if e.device_type.name == "CUDA" if hasattr(e, "device_type") else False:
            total += e.self_device_time_total if hasattr(e, "self_device_time_total") else e.self_cuda_time_total
    if total == 0.0:
        for e in prof.key_averages():
            t = getattr(e, "self_device_time_total", 0) or getattr(e, "self_cuda_time_total", 0)
            total += t
    return total / reps


def graph_period_us(fn, reps):
    """Per-kernel time of `reps` calls of fn captured in one CUDA graph and replayed (best of 5)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    g.replay()
    torch.cuda.synchronize()
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        g.replay()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / reps * 1e6)
    return best


def measure_launch(rows):
    x = torch.zeros(1, device="cuda")
    n = 1000

    def eager():
        for _ in range(n):
            x.add_(1)
    eager()
    torch.cuda.synchronize()
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        eager()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    rows.append({"kind": "launch_eager", "us_per_kernel": best, "kernels": n,
                 "note": "x.add_(1) on one element, n in a row from Python, best of 5"})
    # The same kernels in a CUDA graph.
    best = graph_period_us(lambda: x.add_(1), n)
    rows.append({"kind": "launch_graph", "us_per_kernel": best, "kernels": n,
                 "note": "the same 1000 kernels captured in one CUDA graph, replayed, best of 5"})
    try:
        rows.append({"kind": "tiny_kernel_duration", "us_per_kernel": kernel_us_by_profiler(lambda: x.add_(1), 200),
                     "note": "profiler (CUPTI) duration of one x.add_(1) kernel"})
    except Exception as e:  # the profiler is optional
        rows.append({"kind": "tiny_kernel_duration", "error": str(e)})
    # Graph of larger kernels: does the gap depend on the kernel?
    for numel in (1 << 16, 1 << 20, 1 << 24):
        y = torch.zeros(numel, device="cuda", dtype=torch.float16)
        best = graph_period_us(lambda: y.add_(1), 100)
        try:
            dur = kernel_us_by_profiler(lambda: y.add_(1), 50)
        except Exception:
            dur = None
        rows.append({"kind": "graph_add_inplace", "numel": numel, "dtype": "fp16", "us_per_kernel": best,
                     "kernel_us": dur, "note": "100 in-place adds in one graph (L2 warm: the tensor stays)"})


def measure_eltwise(rows):
    import torch.nn.functional as F
    gelu_add = None
    try:
        gelu_add = torch.compile(lambda a, b: F.gelu(a + b, approximate="tanh"))
    except Exception:
        gelu_add = None
    for dt, name in ((torch.float16, "fp16"), (torch.float32, "fp32")):
        for lg in (16, 18, 20, 22, 24, 26, 28):
            n = 1 << lg
            if n * 2 * 3 > 6e9:
                continue
            a = torch.randn(n, device="cuda", dtype=dt)
            b = torch.randn(n, device="cuda", dtype=dt)
            for kind, fn, ins in (("add", lambda: a + b, 2), ("relu", lambda: torch.relu(a), 1),
                                  ("gelu", lambda: F.gelu(a), 1)):
                rows.append({"kind": kind, "numel": n, "dtype": name, "inputs": ins, "outputs": 1, "ms": bench_ms(fn)})
            if gelu_add is not None:
                try:
                    rows.append({"kind": "compiled_add_gelu", "numel": n, "dtype": name, "inputs": 2, "outputs": 1,
                                 "ms": bench_ms(lambda: gelu_add(a, b))})
                except Exception as e:
                    rows.append({"kind": "compiled_add_gelu", "numel": n, "error": str(e)[:200]})
            del a, b
            torch.cuda.empty_cache()


def measure_attention(rows):
    import torch.nn.functional as F
    try:
        from torch.nn.attention import sdpa_kernel, SDPBackend
        ctx = lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION)
    except Exception:
        ctx = lambda: torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)
    shapes = []
    for b in (1, 8, 32, 128):
        for s in (128, 384):
            shapes.append((b, 12, s, s, 64, False, "bert-base"))
    for b in (1, 8, 32):
        shapes.append((b, 16, 384, 384, 64, False, "bert-large"))
    for s in (512, 1024, 2048, 4096):
        shapes.append((1, 32, s, s, 128, True, "llama2-7b prefill"))
    shapes.append((4, 32, 2048, 2048, 128, True, "llama2-7b prefill"))
    for b in (1, 16, 64):
        for kv in (512, 2048, 4096):
            shapes.append((b, 32, 1, kv, 128, False, "llama2-7b decode"))
    for (b, h, sq, skv, d, causal, what) in shapes:
        q = torch.randn(b, h, sq, d, device="cuda", dtype=torch.float16)
        k = torch.randn(b, h, skv, d, device="cuda", dtype=torch.float16)
        v = torch.randn(b, h, skv, d, device="cuda", dtype=torch.float16)
        row = {"kind": "flash_attention", "what": what, "batch": b, "heads": h, "seq_q": sq, "seq_kv": skv,
               "head_dim": d, "causal": causal, "dtype": "fp16"}
        try:
            with ctx():
                row["ms"] = bench_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
        except Exception as e:
            row["error"] = str(e)[:200]
            try:
                row["ms_default_backend"] = bench_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            except Exception:
                pass
        rows.append(row)
        del q, k, v


def measure_precision(rows):
    for n in (4096, 8192):
        flops = 2.0 * n * n * n
        def add(kind, fn):
            try:
                ms = bench_ms(fn)
                rows.append({"kind": "gemm_" + kind, "M": n, "N": n, "K": n, "ms": ms, "tflops": flops / ms / 1e9})
            except Exception as e:
                rows.append({"kind": "gemm_" + kind, "M": n, "N": n, "K": n, "error": str(e)[:200]})
        a = torch.randn(n, n, device="cuda")
        b = torch.randn(n, n, device="cuda")
        torch.backends.cuda.matmul.allow_tf32 = False
        add("fp32", lambda: a @ b)
        torch.backends.cuda.matmul.allow_tf32 = True
        add("tf32", lambda: a @ b)
        torch.backends.cuda.matmul.allow_tf32 = False
        ah, bh = a.half(), b.half()
        add("fp16", lambda: ah @ bh)
        ab, bb = a.bfloat16(), b.bfloat16()
        add("bf16", lambda: ab @ bb)
        ai = torch.randint(-64, 64, (n, n), device="cuda", dtype=torch.int8)
        bi = torch.randint(-64, 64, (n, n), device="cuda", dtype=torch.int8)
        add("int8", lambda: torch._int_mm(ai, bi))
        try:
            a8 = a.to(torch.float8_e4m3fn)
            b8 = b.to(torch.float8_e4m3fn).t().contiguous().t()
            one = torch.tensor(1.0, device="cuda")
            add("fp8_e4m3", lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.float16))
        except Exception as e:
            rows.append({"kind": "gemm_fp8_e4m3", "M": n, "error": str(e)[:200]})
        del a, b, ah, bh, ab, bb, ai, bi
        torch.cuda.empty_cache()


def measure_pool(rows):
    import torch.nn.functional as F
    for b in (1, 32, 128):
        x = torch.randn(b, 64, 112, 112, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
        rows.append({"kind": "max_pool_3x3_s2", "N": b, "C": 64, "H": 112, "W": 112, "dtype": "fp16",
                     "ms": bench_ms(lambda: F.max_pool2d(x, 3, 2, 1))})
        del x
    torch.backends.cudnn.benchmark = True
    for (b, c, h) in ((1, 32, 112), (32, 32, 112), (32, 144, 56), (32, 192, 28), (32, 576, 14), (128, 96, 112)):
        x = torch.randn(b, c, h, h, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
        w = torch.randn(c, 1, 3, 3, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
        rows.append({"kind": "depthwise_3x3", "N": b, "C": c, "H": h, "W": h, "stride": 1, "dtype": "fp16",
                     "ms": bench_ms(lambda: F.conv2d(x, w, None, 1, 1, 1, c))})
        del x, w


def measure_int8(rows):
    for n in (4096, 8192):
        flops = 2.0 * n * n * n
        a = torch.randint(-64, 64, (n, n), device="cuda", dtype=torch.int8)
        b = torch.randint(-64, 64, (n, n), device="cuda", dtype=torch.int8).t().contiguous().t()
        for kind, fn in (("gemm_int8_colmajor_b", lambda: torch._int_mm(a, b)),):
            try:
                ms = bench_ms(fn)
                rows.append({"kind": kind, "M": n, "N": n, "K": n, "ms": ms, "tflops": flops / ms / 1e9})
            except Exception as e:
                rows.append({"kind": kind, "M": n, "error": str(e)[:200]})
        h = torch.randn(n, n, device="cuda", dtype=torch.float16)
        ms = bench_ms(lambda: h @ h)
        rows.append({"kind": "gemm_fp16", "M": n, "N": n, "K": n, "ms": ms, "tflops": flops / ms / 1e9})
        del a, b, h


def measure_small_gemm(rows):
    shapes = [(n, k) for (n, k) in ((2304, 768), (768, 768), (3072, 768), (768, 3072))]
    cases = [(m, n, k, "bert-base") for m in (128, 512, 2048, 16384) for (n, k) in shapes]
    cases += [(m, n, k, "llama2-7b") for m in (1, 16, 256) for (n, k) in ((12288, 4096), (4096, 11008))]
    for (m, n, k, what) in cases:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        w = torch.randn(n, k, device="cuda", dtype=torch.float16)
        ms = bench_ms(lambda: torch.nn.functional.linear(a, w))
        rows.append({"kind": "gemm_cublas", "what": what, "M": m, "N": n, "K": k, "dtype": "fp16", "ms": ms})


def measure_bert(rows):
    import torch.nn.functional as F
    torch.manual_seed(0)
    L, D, H, FF = 12, 768, 12, 3072
    dt = torch.float16
    W = [dict(qkv=torch.randn(3 * D, D, device="cuda", dtype=dt) * 0.02, bqkv=torch.zeros(3 * D, device="cuda", dtype=dt),
              o=torch.randn(D, D, device="cuda", dtype=dt) * 0.02, bo=torch.zeros(D, device="cuda", dtype=dt),
              f1=torch.randn(FF, D, device="cuda", dtype=dt) * 0.02, b1=torch.zeros(FF, device="cuda", dtype=dt),
              f2=torch.randn(D, FF, device="cuda", dtype=dt) * 0.02, b2=torch.zeros(D, device="cuda", dtype=dt),
              g1=torch.ones(D, device="cuda", dtype=dt), be1=torch.zeros(D, device="cuda", dtype=dt),
              g2=torch.ones(D, device="cuda", dtype=dt), be2=torch.zeros(D, device="cuda", dtype=dt)) for _ in range(L)]

    def encoder(x):
        B, S, _ = x.shape
        for w in W:
            qkv = F.linear(x, w["qkv"], w["bqkv"]).view(B, S, 3, H, D // H).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
            a = a.transpose(1, 2).reshape(B, S, D)
            x = F.layer_norm(x + F.linear(a, w["o"], w["bo"]), (D,), w["g1"], w["be1"])
            h = F.gelu(F.linear(x, w["f1"], w["b1"]))
            x = F.layer_norm(x + F.linear(h, w["f2"], w["b2"]), (D,), w["g2"], w["be2"])
        return x

    with torch.no_grad():
        for b in (1, 8, 32):
            x = torch.randn(b, 128, D, device="cuda", dtype=dt)
            for _ in range(3):
                encoder(x)
            torch.cuda.synchronize()
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
            times = []
            for _ in range(20):
                ev[0].record()
                encoder(x)
                ev[1].record()
                torch.cuda.synchronize()
                times.append(ev[0].elapsed_time(ev[1]))
            rows.append({"kind": "bert_base_encoder", "mode": "eager", "batch": b, "seq": 128, "dtype": "fp16",
                         "ms": sorted(times)[len(times) // 2], "note": "12 layers, no embeddings; median of 20, CUDA events"})
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                encoder(x)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                y = encoder(x)
            g.replay()
            torch.cuda.synchronize()
            times = []
            for _ in range(20):
                ev[0].record()
                g.replay()
                ev[1].record()
                torch.cuda.synchronize()
                times.append(ev[0].elapsed_time(ev[1]))
            rows.append({"kind": "bert_base_encoder", "mode": "graph", "batch": b, "seq": 128, "dtype": "fp16",
                         "ms": sorted(times)[len(times) // 2], "note": "the same, captured in one CUDA graph"})


def measure_graph_kernels(rows):
    import torch.nn.functional as F
    dt = torch.float16
    cases = []
    for (m, n, k) in ((128, 768, 768), (128, 3072, 768), (128, 768, 3072), (2048, 768, 768), (2048, 3072, 768),
                      (16384, 768, 768)):
        a = torch.randn(m, k, device="cuda", dtype=dt)
        w = torch.randn(n, k, device="cuda", dtype=dt)
        cases.append(({"kind": "linear", "M": m, "N": n, "K": k}, lambda a=a, w=w: F.linear(a, w)))
    for (r, c) in ((1, 4096), (128, 768), (2048, 768), (16384, 768), (4096, 4096)):
        x = torch.randn(r, c, device="cuda", dtype=dt)
        g = torch.ones(c, device="cuda", dtype=dt)
        cases.append(({"kind": "layer_norm", "rows": r, "cols": c}, lambda x=x, g=g: F.layer_norm(x, (x.shape[1],), g, g)))
        cases.append(({"kind": "softmax", "rows": r, "cols": c}, lambda x=x: torch.softmax(x, -1)))
    for n in (98304, 1572864, 25165824):
        x = torch.randn(n, device="cuda", dtype=dt)
        y = torch.randn(n, device="cuda", dtype=dt)
        cases.append(({"kind": "add", "numel": n}, lambda x=x, y=y: x + y))
        cases.append(({"kind": "gelu", "numel": n}, lambda x=x: F.gelu(x)))
    reps = 50
    for meta, fn in cases:
        best = graph_period_us(fn, reps)
        row = dict(meta)
        row.update({"dtype": "fp16", "graph_us_per_kernel": best})
        try:
            row["kernel_us"] = kernel_us_by_profiler(fn, 20)
        except Exception as e:
            row["kernel_us_error"] = str(e)[:100]
        rows.append(row)


PARTS = {"launch": measure_launch, "precision": measure_precision, "eltwise": measure_eltwise,
         "attention": measure_attention, "pool": measure_pool, "int8": measure_int8, "small_gemm": measure_small_gemm,
         "bert": measure_bert, "graph_kernels": measure_graph_kernels}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    chosen = sys.argv[2].split(",") if len(sys.argv) > 2 else ["launch", "precision", "eltwise", "attention", "pool"]
    os.makedirs(out, exist_ok=True)
    meta = device_meta()
    rows = []
    suffix = "" if len(sys.argv) <= 2 else "_" + "_".join(chosen)
    for part in (PARTS[c] for c in chosen):
        t0 = time.time()
        try:
            part(rows)
        except Exception as e:
            rows.append({"kind": part.__name__, "error": str(e)[:300]})
        print(part.__name__, "%.1f s" % (time.time() - t0), flush=True)
        name = "".join(ch for ch in meta["device"].lower() if ch.isalnum())
        for short in ("h100", "h200", "a100"):
            if short in name:
                name = short
        with open(os.path.join(out, name + "_library_probe" + suffix + ".json"), "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
