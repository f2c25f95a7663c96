#!/usr/bin/env python3
"""FlashAttention-2's kernels on an A30 (NVBench, published by JakeFlasher/benchmark_flash_attention,
../shared/calibration_data/fa2_nvbench_a30) against the library plan's attention kernel on
configs/gpu_a30.yaml: causal prefill (`run_mha_fwd`) and paged decode (`run_mha_kvcache`, one query
token a sequence) by sequences, length, heads, KV heads and head size (docs/gpu_library.md#attention-on-an-a30).
Nothing is fitted on them.

  --write CALIBRATION_DATA_DIR   parse the NVBench logs into configs/calibration/a30_fa2_nvbench_heldout.json:
                                 the causal prefill rows without a window and the decode rows with
                                 256-token pages (FA2 ignores window_right under causal masking and
                                 for one query token, so each such row is one of four repeats: the
                                 first is kept)
  (default)                      run every row: a one-layer Llama-layout workload of the row's shape
                                 (`sim zoo hf` of a generated config.json; decode: --seq 1 --kv-len
                                 L - 1), its `attention` kernel's time against the measured one

Measured time: NVBench's cold GPU time (the L2 flushed before each sample, as the model's caches
start empty); the hot back-to-back time is kept beside it. Prints each row, then the median and
worst |error| per kind and per file. Needs no GPU.
Usage: configs/calibration/fa2_nvbench_a30.py [--sim build/sim] [-j N] [--kind prefill|decode] [--file NAME ...]
"""
import argparse
import concurrent.futures
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "a30_fa2_nvbench_heldout.json")
SOURCE = "JakeFlasher/benchmark_flash_attention@1a61222a"
# Files whose rows vary one thing each (sequences, length, heads, KV heads, head size).
PREFILL_FILES = ["llama2-7b", "gqa-ratio-1", "gqa-ratio-4", "gqa-ratio-8", "gqa-ratio-32", "headdim-56", "headdim-80",
                 "headdim-128", "headdim-160", "batch-scaling-1", "batch-scaling-8", "batch-scaling-32", "batch-scaling-64",
                 "llama2-70b-gqa8", "mixtral-7b", "phi4", "qwen2.5-32b", "gpt2"]
DECODE_FILES = ["llama2-7b", "gqa-1", "gqa-4", "gqa-8", "gqa-32", "batch-scaling-1", "batch-scaling-8", "batch-scaling-32",
                "batch-scaling-64", "mixtral-7b", "phi4", "qwen2.5-32b"]
RUN = re.compile(r"Run:\s+\[\d+/\d+\] (\w+) \[Device=0 ([^\]]*)\]\n"
                 r"Pass: Cold: ([\d.]+)ms GPU[^\n]*\nPass: Batch: ([\d.]+)ms GPU")


def write(data_dir):
    rows = []
    for kind, folder, files in (("prefill", "results_standard", PREFILL_FILES), ("decode", "results_kvcache", DECODE_FILES)):
        for name in files:
            path = os.path.join(data_dir, folder, name + ".md")
            with open(path, encoding="latin-1") as f:
                text = f.read()
            seen = set()
            for fn, params, cold, hot in RUN.findall(text):
                p = dict(kv.split("=") for kv in params.split())
                if p["window_left"] != "-1":
                    continue
                if kind == "prefill" and p["causal"] != "1":
                    continue
                if kind == "decode" and p.get("page_size") != "256":
                    continue
                key = (p["num_seqs"], p["seq_len"], p["num_heads"], p["num_kv_heads"], p["head_size"])
                if key in seen:
                    continue
                seen.add(key)
                rows.append({"kind": kind, "file": name, "seqs": int(p["num_seqs"]), "seq_len": int(p["seq_len"]),
                             "heads": int(p["num_heads"]), "kv_heads": int(p["num_kv_heads"]), "head_dim": int(p["head_size"]),
                             "page_size": int(p.get("page_size", 0)), "cold_ms": float(cold), "hot_ms": float(hot),
                             "source": "%s %s/%s.md (%s)" % (SOURCE, folder, name, fn)})
    doc = {"meta": {"device": "NVIDIA A30 (56 SMs, 1440 MHz, 933 GB/s, 24 MiB L2)", "dtype": "fp16",
                    "timing": "NVBench: cold_ms with the L2 flushed before each sample, hot_ms back to back",
                    "written_by": "configs/calibration/fa2_nvbench_a30.py"},
           "note": "FlashAttention-2 forward kernels (flash-attn's C++ entry points as vendored in March 2025): causal "
                   "prefill over seqs sequences of seq_len tokens, and decode of one token a sequence over a paged KV cache "
                   "of seq_len tokens. Held out: nothing is fitted on them.",
           "rows": rows}
    with open(DATA, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote %d rows to %s" % (len(rows), os.path.relpath(DATA, ROOT)))


def config(r):
    """A Llama-layout config.json of the row's attention shape (a tiny MLP and vocabulary)."""
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": r["heads"] * r["head_dim"],
            "num_attention_heads": r["heads"], "num_key_value_heads": r["kv_heads"], "head_dim": r["head_dim"],
            "intermediate_size": 256, "num_hidden_layers": 1, "vocab_size": 256, "rms_norm_eps": 1e-5,
            "max_position_embeddings": 65536, "rope_theta": 10000.0, "torch_dtype": "float16", "hidden_act": "silu"}


def attention_us(sim, work, r):
    tag = "%s_%d_%d_%d_%d_%d" % (r["kind"], r["seqs"], r["seq_len"], r["heads"], r["kv_heads"], r["head_dim"])
    cfg, ir, rep = (os.path.join(work, tag + x) for x in (".config.json", ".ir.json", ".report.json"))
    with open(cfg, "w") as f:
        json.dump(config(r), f)
    shape = ["--batch", str(r["seqs"])] + (["--seq", str(r["seq_len"])] if r["kind"] == "prefill"
                                           else ["--seq", "1", "--kv-len", str(r["seq_len"] - 1)])
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    subprocess.run([sim, "zoo", "hf", cfg, *shape, "--layers", "1", "--dtype", "fp16", "-o", ir], check=True,
                   capture_output=True, env=env)
    subprocess.run([sim, "--ir", ir, "--hw", os.path.join(ROOT, "configs", "gpu_a30.yaml"), "--launch", "graph", "-q",
                    "--report", rep], check=True, capture_output=True, env=env)
    with open(rep) as f:
        kernels = [k for k in json.load(f)["layers"] if k["class"] == "attention"]
    if len(kernels) != 1:
        raise RuntimeError("%s: %d attention kernels" % (tag, len(kernels)))
    return kernels[0]["time_us"]


def summary(errors):
    a = sorted(abs(e) for e in errors)
    return statistics.median(a), a[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "sim"))
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--kind", choices=["prefill", "decode"])
    ap.add_argument("--file", action="append", help="only the rows of this NVBench file (repeatable), e.g. llama2-7b")
    ap.add_argument("--write", metavar="CALIBRATION_DATA_DIR")
    a = ap.parse_args()
    if a.write:
        return write(a.write)
    with open(DATA) as f:
        rows = [r for r in json.load(f)["rows"] if (not a.kind or r["kind"] == a.kind) and (not a.file or r["file"] in a.file)]
    with tempfile.TemporaryDirectory(prefix="fa2_a30_") as work, concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        model = list(ex.map(lambda r: attention_us(a.sim, work, r), rows))
    print("%-8s %-16s %5s %6s %5s %4s %4s %10s %10s %10s %8s" % ("kind", "file", "seqs", "len", "heads", "kv", "dim",
                                                             "cold_us", "hot_us", "model_us", "error"))
    groups = {}
    for r, us in zip(rows, model):
        err = 100.0 * (us - r["cold_ms"] * 1000) / (r["cold_ms"] * 1000)
        print("%-8s %-16s %5d %6d %5d %4d %4d %10.1f %10.1f %10.1f %+7.1f%%" % (
            r["kind"], r["file"], r["seqs"], r["seq_len"], r["heads"], r["kv_heads"], r["head_dim"], r["cold_ms"] * 1000,
            r["hot_ms"] * 1000, us, err))
        groups.setdefault(r["kind"], []).append(err)
        groups.setdefault("%s %s" % (r["kind"], r["file"]), []).append(err)
    print()
    for g in sorted(groups):
        med, worst = summary(groups[g])
        print("%s: median |error| over %d rows: %.1f%%, worst %.1f%%" % (g, len(groups[g]), med, worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
