"""npusim from Python (docs/python.md).

    import npusim
    net = npusim.zoo("resnet50", batch=1)                  # the Frontend IR, as a dict
    rep = npusim.simulate(net, "npu", overrides={"npu.pe_array.rows": 32})
    rep["totals"]["npu_cycles"], rep.layers[0]["bound"]   # the JSON report, as Python objects
    res = npusim.sweep("sweeps/resnet50_b1.yaml", "out/r50")
    res.rows                                               # results.jsonl, one dict per point

Hardware descriptions are resolved in this process (npusim._core, pybind11, the same code as
the CLI). Everything that simulates runs the `sim` binary in a child process, because SystemC
elaborates once per process: a notebook can simulate as often as it likes. Bad input raises
npusim.InputError (a ValueError) with the message `sim` prints after "sim: error: ".
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

from . import _core
from ._core import InputError

__all__ = ["InputError", "SimError", "Workload", "Report", "ServingReport", "CollectiveResult", "SweepResult", "Config",
           "simulate", "system", "llm", "serving_options", "collective", "program", "zoo", "zoo_op", "sweep", "submit", "config",
           "configs", "plot", "sim_binary"]


class SimError(RuntimeError):
    """`sim` failed for a reason other than bad input (exit code 3, a crash, a timeout)."""


# ---- locating the sim binary and the plot script ------------------------------------------

def _locations():
    try:
        from . import _paths as p  # written by CMake: the build tree's or the install's paths
        return p
    except ImportError:  # pragma: no cover
        return None


def _here(rel):
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), rel))


def sim_binary():
    """The `sim` this module runs: $NPUSIM_SIM, the one it was built or installed with, or `sim` on PATH."""
    env = os.environ.get("NPUSIM_SIM")
    if env:
        return env
    p = _locations()
    if p is not None:
        cand = p.SIM if os.path.isabs(p.SIM) else _here(p.SIM)
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    found = shutil.which("sim")
    if found:
        return found
    raise SimError("cannot find the sim binary: set NPUSIM_SIM, or build npusim (cmake --build build --target sim)")


def _plot_script():
    p = _locations()
    if p is not None:
        cand = p.PLOT_RUN if os.path.isabs(p.PLOT_RUN) else _here(p.PLOT_RUN)
        if os.path.isfile(cand):
            return cand
    cand = os.path.normpath(os.path.join(os.path.dirname(sim_binary()), "..", "share", "npusim", "scripts",
                                         "plot_run.py"))
    if os.path.isfile(cand):
        return cand
    raise SimError("cannot find scripts/plot_run.py")


def _run(args, timeout=None, what="sim"):
    """Runs sim with args; returns its stdout. Exit 2: InputError with sim's message."""
    cmd = [sim_binary()] + [str(a) for a in args]
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout,
                           universal_newlines=True)
    except subprocess.TimeoutExpired:
        raise SimError("%s: no result after %s s (timeout)" % (what, timeout)) from None
    if r.returncode == 2:
        raise InputError(_error_text(r.stderr))
    if r.returncode not in (0,):
        raise SimError("%s exited with %s: %s" % (what, r.returncode, r.stderr.strip()))
    return r.stdout, r.stderr


def _error_text(stderr):
    """The message of `sim: error: MESSAGE` (or CLI11's usage error) from sim's stderr."""
    lines = [l for l in stderr.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if l.startswith("sim: error: "):
            return "\n".join([l[len("sim: error: "):]] + lines[i + 1:])
    return "\n".join(lines)


def _set_args(overrides):
    """--set arguments from {"key": value} or ["key=value", ...]."""
    if not overrides:
        return []
    if isinstance(overrides, dict):
        items = []
        for k, v in overrides.items():
            if isinstance(v, bool):
                v = "true" if v else "false"
            items.append("%s=%s" % (k, v))
    else:
        items = [str(o) for o in overrides]
    out = []
    for i in items:
        out += ["--set", i]
    return out


def _hw_arg(hw):
    return os.fspath(hw) if hw is not None else "npu"


# ---- results as Python objects ------------------------------------------------------------

def _dataframe(rows):
    try:
        import pandas
    except ImportError:
        raise ImportError("to_pandas() needs pandas (Debian: apt-get install python3-pandas)") from None
    return pandas.DataFrame(rows)


class Workload(dict):
    """A workload's Frontend IR as a dict (layer name -> layer); .name names it in reports
    (the zoo model), .path is the file it lives in (None: only in memory)."""

    def __init__(self, doc, path=None, name=None):
        super().__init__(doc)
        self.path = path
        self.name = name or (os.path.splitext(os.path.basename(path))[0] if path else "workload")

    def save(self, path):
        """Writes the IR to path (JSON) and remembers it as .path."""
        with open(path, "w") as f:
            json.dump(self, f, indent=3)
            f.write("\n")
        self.path = os.fspath(path)
        return self.path


class Report(dict):
    """The JSON report of one run (`sim --report`), as Python objects: report["totals"], ...

    .layers is the per-layer rows, a list of dicts with the fields of the JSON report: an NPU's
    layers or a GPU's library kernels (both with name, op, time_us, macs, bytes, bound), a
    system's supertasks, or an ARK plan's processor groups; .to_pandas() makes a DataFrame of
    them (needs pandas). .path: the JSON file.
    """

    def __init__(self, doc, path=None):
        super().__init__(doc)
        self.path = path

    @property
    def layers(self):
        if "layers" in self:
            return self["layers"]
        if "supertasks" in self:  # a multi-device run
            return self["supertasks"]
        rows = []  # a GPU run: processor groups of every rank
        for rank in self.get("ranks", []):
            rows += rank.get("processor_groups", [])
        return rows

    @property
    def totals(self):
        return self.get("totals", {})

    def to_pandas(self):
        return _dataframe(self.layers)


class Config(dict):
    """A resolved hardware description: every key with its typed value; .source is the file read."""

    def __init__(self, values, source):
        super().__init__(values)
        self.source = source


class SweepResult:
    """A sweep's output directory: .rows (results.jsonl, one dict per point x workload, with
    per-layer `layers`), .ok / .failed rows, .exit_code (1: some points failed), to_pandas()."""

    def __init__(self, out, exit_code, log=""):
        self.dir = os.fspath(out)
        self.exit_code = exit_code
        self.log = log
        self.rows = []
        path = os.path.join(self.dir, "results.jsonl")
        if os.path.exists(path):
            with open(path) as f:
                self.rows = [json.loads(line) for line in f if line.strip()]

    @property
    def ok(self):
        return [r for r in self.rows if r.get("status") == "ok"]

    @property
    def failed(self):
        return [r for r in self.rows if r.get("status") != "ok"]

    def report(self, best=(), pareto=(), top=None):
        """The text of `sim sweep report DIR` (best points, Pareto front)."""
        args = ["sweep", "report", self.dir]
        for b in best:
            args += ["--best", b]
        for p in pareto:
            args += ["--pareto", p]
        if top is not None:
            args += ["--top", top]
        return _run(args, what="sim sweep report")[0]

    def to_pandas(self, layers=False):
        """One row per point x workload (without the per-layer lists unless layers=True)."""
        rows = self.rows if layers else [{k: v for k, v in r.items() if k != "layers"} for r in self.rows]
        return _dataframe(rows)

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        return "SweepResult(%r, %d rows, %d failed)" % (self.dir, len(self.rows), len(self.failed))


# ---- the API ------------------------------------------------------------------------------

def configs():
    """Short names of the shipped hardware descriptions ("npu" first)."""
    return _core.shipped_configs()


def config(hw="npu", overrides=None):
    """The resolved hardware description: {key: value} with every parameter of its device, typed
    (int, float, bool, str), after overrides ({"key": value} or ["key=value"]). hw None: the
    schema's defaults. In-process; bad keys or values raise InputError as `sim config` does."""
    sets = _set_args(overrides)[1::2]
    source, rows = _core.resolve_config("" if hw is None else os.fspath(hw), sets)
    conv = {"int": int, "float": float, "bool": lambda t: t == "true", "str": str}
    values = {}
    for key, typ, text in rows:
        try:
            values[key] = conv[typ](text)
        except ValueError:
            values[key] = text
    return Config(values, source)


def zoo(model, *args, batch=None, dtype=None, input=None, seq=None, kv_len=None, layers=None, out=None,
        **params):
    """A known network's Frontend IR (`sim zoo MODEL`), as a Workload (a dict). Options as the
    CLI's: batch, dtype, input ("HxW"), seq, kv_len, layers; out: also write it to this file.
    One operation: zoo("op", "matmul", m=512, n=4096, k=4096) (or zoo_op)."""
    argv = ["zoo", model] + [str(a) for a in args] + ["%s=%s" % (k, v) for k, v in params.items()]
    if params and model != "op":
        raise InputError("zoo: %s: key=value sizes apply to one operation: zoo('op', OP, key=value, ...)" % model)
    for flag, v in (("--batch", batch), ("--dtype", dtype), ("--input", input), ("--seq", seq),
                    ("--kv-len", kv_len), ("--layers", layers)):
        if v is not None:
            argv += [flag, v]
    text = _run(argv, what="sim zoo")[0]
    name = model if model != "op" else (str(args[0]) if args else "op")
    if batch is not None and batch != 1:
        name += "_b%s" % batch
    w = Workload(json.loads(text), name=name)
    if out is not None:
        with open(out, "w") as f:
            f.write(text)
        w.path = os.fspath(out)
    return w


def zoo_op(op, batch=None, dtype=None, out=None, **params):
    """One operation as a workload: zoo_op("matmul", m=512, n=4096, k=4096)."""
    return zoo("op", op, batch=batch, dtype=dtype, out=out, **params)


def _workload_file(workload, tmp):
    """A file holding the workload: its path, or the dict written into tmp."""
    if isinstance(workload, (str, os.PathLike)):
        return os.fspath(workload)
    if isinstance(workload, Workload) and workload.path and os.path.exists(workload.path):
        return workload.path
    if isinstance(workload, dict):
        name = getattr(workload, "name", "workload")
        path = os.path.join(tmp, "".join(c if c.isalnum() or c in "-_." else "_" for c in name) + ".json")
        with open(path, "w") as f:
            json.dump(workload, f)
        return path
    raise TypeError("workload: a file name, or a Frontend IR dict (npusim.zoo), not %s" % type(workload).__name__)


def simulate(workload, hw="npu", overrides=None, *, format=None, trace=None, csv=None, plot=None, timeout=None):
    """Simulates workload on hw and returns the Report (the JSON report as Python objects).

    workload: a file (any format `sim --ir` reads) or a Frontend IR dict (zoo()). hw: a YAML
    file or a shipped config's name. overrides: {"npu.pe_array.rows": 32} (as --set). trace,
    csv, plot: also write those files. Runs `sim` in a child process; bad input raises
    InputError with the CLI's message."""
    with tempfile.TemporaryDirectory(prefix="npusim_") as tmp:
        report_path = os.path.join(tmp, "report.json")
        args = ["--ir", _workload_file(workload, tmp), "--hw", _hw_arg(hw)] + _set_args(overrides)
        args += ["-q", "--report", report_path]
        if format:
            args += ["--format", format]
        for flag, v in (("--trace", trace), ("--csv", csv), ("--plot", plot)):
            if v is not None:
                args += [flag, os.fspath(v)]
        _run(args, timeout=timeout, what="sim --ir")
        with open(report_path) as f:
            return Report(json.load(f))


def system(pipeline, hw, overrides=None, **kwargs):
    """Simulates a multi-device pipeline (a pipeline file or dict, docs/system.md) on a system
    config: simulate() with a system hw. The Report's .layers are its supertasks."""
    return simulate(pipeline, hw, overrides, **kwargs)


class ServingReport(Report):
    """`sim llm`'s report (docs/llm.md): totals (TTFT, TPOT, tokens/s), latency_ms, memory,
    steps (each simulated pass), timeline (continuous batching). .steps / to_pandas(): the passes."""

    @property
    def steps(self):
        return self.get("steps", [])

    @property
    def layers(self):
        return self.steps

    def timeline_frame(self):
        return _dataframe(self.get("timeline", []))


def serving_options():
    """The serving options llm() takes, from sim llm's one table: {name: {type, default, lo, hi, meaning}}."""
    return {n: {"type": t, "default": d, "lo": lo, "hi": hi, "meaning": m}
            for n, t, d, lo, hi, m in _core.serving_options()}


def llm(model, hw, overrides=None, *, prefill=None, decode=None, plot=None, timeout=None, **options):
    """Serves an LLM as `sim llm` does (docs/llm.md) and returns its ServingReport.

    model: a zoo decoder LLM (gpt2, llama3-8b ...), or None with prefill= and decode= pipeline
    files. hw: a GPU/NPU config or a system file (with tp=, pp=). options: the serving options
    (serving_options(): batch, input, output, arrival_rate, requests, trace, preempt, tp, ...),
    checked here against the same table as the CLI. overrides: hardware keys (as --set)."""
    args = ["llm"] + ([model] if model else []) + ["--hw", _hw_arg(hw)] + _set_args(overrides)
    for name, value in options.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        else:
            text = str(value)
        _core.check_serving_option(name, text)
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            if value:
                args.append(flag)
        else:
            args += [flag, text]
    for flag, v in (("--prefill", prefill), ("--decode", decode), ("--plot", plot)):
        if v is not None:
            args += [flag, os.fspath(v)]
    with tempfile.TemporaryDirectory(prefix="npusim_llm_") as tmp:
        report_path = os.path.join(tmp, "serving.json")
        _run(args + ["-q", "--report", report_path], timeout=timeout, what="sim llm")
        with open(report_path) as f:
            return ServingReport(json.load(f))


def program(path, hw="gemini_zebu", overrides=None, *, ir=None, instructions=None, trace=None, timeout=None):
    """Runs a compiled Gemini program (the assembler's *_asm.txt, or a ZeBu trace's own
    instructions) instruction by instruction on an NPU core's instruction model, as `sim program`
    (docs/timing.md#compiled-programs), and returns its Report: total_cycles, queues, dram_bytes
    and .layers (per layer: cycles, pe/vp/dma busy, bound). ir: the program's Frontend IR, for
    layer names; instructions: also write every instruction's simulated start and end (CSV);
    trace: a Perfetto file (a track per queue)."""
    args = ["program", "--program", os.fspath(path), "--hw", _hw_arg(hw)] + _set_args(overrides)
    if ir is not None:
        args += ["--ir", os.fspath(ir)]
    if instructions is not None:
        args += ["--instructions", os.fspath(instructions)]
    if trace is not None:
        args += ["--trace", os.fspath(trace)]
    with tempfile.TemporaryDirectory(prefix="npusim_program_") as tmp:
        report_path = os.path.join(tmp, "program.json")
        _run(args + ["-q", "--report", report_path], timeout=timeout, what="sim program")
        with open(report_path) as f:
            return Report(json.load(f))


class CollectiveResult(list):
    """`sim collective`'s rows (one dict per size: bytes, time_us, algbw/busbw, algorithm...), to_pandas()."""

    def to_pandas(self):
        return _dataframe(list(self))


def collective(kind, hw, *, sizes=None, ranks=None, per_node=None, algo=None, protocol=None, overrides=None,
               timeout=None):
    """Times one collective over a system's network at each size in bytes, as `sim collective`
    (docs/system.md): kind all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce,
    gather or send. Returns a CollectiveResult (its rows)."""
    args = ["collective", kind, "--hw", _hw_arg(hw)] + _set_args(overrides)
    if sizes is not None:
        args += ["--sizes", ",".join(str(int(s)) for s in sizes)]
    for flag, v in (("--ranks", ranks), ("--per-node", per_node), ("--algo", algo), ("--protocol", protocol)):
        if v is not None:
            args += [flag, str(v)]
    with tempfile.TemporaryDirectory(prefix="npusim_coll_") as tmp:
        path = os.path.join(tmp, "collective.json")
        _run(args + ["--json", path], timeout=timeout, what="sim collective")
        with open(path) as f:
            doc = json.load(f)
    return CollectiveResult(doc["rows"] if isinstance(doc, dict) and "rows" in doc else doc)


def _spec_file(spec, out):
    """(sweep file, temporary file to remove or None) for spec: its path, or the dict written as
    JSON (YAML's subset) into the working folder, so its relative paths mean what they say."""
    if isinstance(spec, (str, os.PathLike)):
        return os.fspath(spec), None
    if not isinstance(spec, dict):
        raise TypeError("spec: a sweep file, or a dict with workloads, hw, axes and constraints")
    doc = dict(spec)
    ws = doc.get("workloads", [])
    if not isinstance(ws, list):
        ws = [ws]
    here = os.getcwd()
    folder = here if os.access(here, os.W_OK) else None
    fixed = []
    for i, w in enumerate(ws):
        if isinstance(w, Workload) and not (w.path and os.path.exists(w.path)):
            os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
            w.save(os.path.abspath(os.path.join(out, "inputs", "%d_%s.json" % (i, w.name))))
        if isinstance(w, Workload):
            w = {"ir": w.path}
        elif isinstance(w, os.PathLike):
            w = os.fspath(w)
        if folder is None:  # written elsewhere: relative files made absolute
            if isinstance(w, str):
                w = os.path.abspath(w)
            elif isinstance(w, dict) and "ir" in w:
                w = dict(w, ir=os.path.abspath(w["ir"]))
        fixed.append(w)
    doc["workloads"] = fixed
    if "hw" in doc:
        doc["hw"] = os.fspath(doc["hw"])
        if folder is None and os.path.exists(doc["hw"]):
            doc["hw"] = os.path.abspath(doc["hw"])
    fd, path = tempfile.mkstemp(prefix=".npusim_sweep_", suffix=".yaml", dir=folder)
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=2)  # JSON is YAML: sim reads it as a sweep file
    return path, path


def sweep(spec, out, *, jobs=None, resume=False, retry_failed=False, shard=None, timeout=None, quiet=True):
    """Runs a design-space sweep (`sim sweep`) into the directory out and returns its SweepResult.

    spec: a sweep file (docs/sweeps.md), or the same as a dict: {"workloads": [...], "hw": "npu",
    "axes": [...], "constraints": [...]}; workloads may be files (relative to the working
    folder), {"zoo": "resnet50", "batch": 1}, or zoo() results. Points run in forked workers of
    the child `sim`. Some points failing is no error (see .failed); a bad sweep raises
    InputError."""
    out = os.fspath(out)
    spec_path, temp = _spec_file(spec, out)
    try:
        args = ["sweep", spec_path, "-o", out]
        if jobs:
            args += ["-j", jobs]
        if resume:
            args += ["--resume"]
        if retry_failed:
            args += ["--retry-failed"]
        if shard:
            args += ["--shard", shard]
        if timeout:
            args += ["--timeout", timeout]
        if quiet:
            args += ["-q"]
        cmd = [sim_binary()] + [str(a) for a in args]
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, universal_newlines=True)
    finally:
        if temp:
            os.unlink(temp)
    if r.returncode == 2:
        raise InputError(_error_text(r.stderr))
    if r.returncode not in (0, 1):
        raise SimError("sim sweep exited with %s: %s" % (r.returncode, r.stderr.strip()))
    return SweepResult(out, r.returncode, r.stderr)


def submit(spec, out, *, array_size=None, partition=None, cpus_per_task=None, time=None, dry_run=False):
    """Submits a sweep file to Slurm as a job array (`sim sweep submit --slurm`); returns the job
    id (None with dry_run, which only writes the sbatch script). docs/sweeps.md."""
    args = ["sweep", "submit", os.fspath(spec), "-o", os.fspath(out), "--slurm"]
    for flag, v in (("--array-size", array_size), ("--partition", partition), ("--cpus-per-task", cpus_per_task),
                    ("--time", time)):
        if v is not None:
            args += [flag, v]
    if dry_run:
        args += ["--dry-run"]
    stdout = _run(args, what="sim sweep submit")[0].strip()
    return None if dry_run else (stdout.split()[-1] if stdout else None)


def plot(report, out, *, only=None, timeout=120):
    """Draws a run's pictures into the PNG out (scripts/plot_run.py): per-layer cycles by bound,
    the roofline, and the per-device timeline of multi-device runs. report: a Report or its
    JSON file. only: "bars", "roofline" or "timeline" for one picture. Needs matplotlib."""
    with tempfile.TemporaryDirectory(prefix="npusim_plot_") as tmp:
        path = report
        if isinstance(report, dict):
            path = os.path.join(tmp, "report.json")
            with open(path, "w") as f:
                json.dump(report, f)
        cmd = [sys.executable, _plot_script(), os.fspath(path), "-o", os.fspath(out)]
        if only:
            cmd += ["--only", only]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=timeout)
    if r.returncode == 2:
        raise InputError(r.stderr.strip().replace("plot_run.py: error: ", ""))
    if r.returncode != 0:
        raise SimError("plot_run.py exited with %s: %s" % (r.returncode, r.stderr.strip()))
    return os.fspath(out)
