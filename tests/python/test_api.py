"""The Python API (python/npusim, docs/python.md) against the CLI it wraps.

Run by ctest (python.api) with PYTHONPATH=<build>/python and Debian's /usr/bin/python3:
    cd build && ctest -R python --output-on-failure
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import npusim


def cli(*args):
    """(exit code, stdout, stderr) of the sim binary the module runs."""
    r = subprocess.run([npusim.sim_binary()] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       env=dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1"))
    return r.returncode, r.stdout, r.stderr


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="npusim_pytest_")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def path(self, name):
        return os.path.join(self.tmp, name)


class ConfigTest(Base):
    def test_shipped_config_resolved_with_types(self):
        c = npusim.config("npu")
        self.assertTrue(c.source.endswith("npu.yaml"), c.source)
        self.assertEqual(c["npu.pe_array.rows"], 64)
        self.assertIsInstance(c["clock_mhz"], (int, float))
        self.assertEqual(c["npu.pe_array.dataflow"], "weight_stationary")
        self.assertEqual(npusim.config("npu", {"npu.pe_array.rows": 32})["npu.pe_array.rows"], 32)
        self.assertEqual(npusim.config("npu", ["npu.pe_array.rows=16"])["npu.pe_array.rows"], 16)
        self.assertIn("gemini_zebu", npusim.configs())
        self.assertEqual(npusim.configs()[0], "npu")

    def test_same_values_as_sim_config(self):
        rc, out, _ = cli("config", "--hw", "gemini_zebu", "--set", "npu.pe_array.rows=8")
        self.assertEqual(rc, 0)
        c = npusim.config("gemini_zebu", {"npu.pe_array.rows": 8})
        for line in out.splitlines():
            key, _, text = line.partition(" = ")
            v = c[key]
            shown = ("true" if v else "false") if isinstance(v, bool) else str(v)
            if isinstance(v, float):
                self.assertAlmostEqual(v, float(text), msg=key)
            else:
                self.assertEqual(shown, text, key)

    def test_errors_carry_the_cli_message(self):
        for hw, sets in (("npu9", []), ("npu", ["npu.pe_array.rowz=3"]), ("npu", ["npu.pe_array.rows=-1"])):
            args = ["config", "--hw", hw]
            for s in sets:
                args += ["--set", s]
            rc, _, err = cli(*args)
            self.assertEqual(rc, 2)
            with self.assertRaises(npusim.InputError) as e:
                npusim.config(hw, sets)
            self.assertEqual("sim: error: " + str(e.exception), err.strip())
        self.assertTrue(issubclass(npusim.InputError, ValueError))


class SimulateTest(Base):
    def test_report_is_the_json_report(self):
        net = npusim.zoo("resnet18", out=self.path("r18.json"))
        rep = npusim.simulate(net, "npu")
        rc, _, err = cli("--ir", self.path("r18.json"), "--hw", "npu", "-q", "--report", self.path("cli.json"))
        self.assertEqual(rc, 0, err)
        with open(self.path("cli.json")) as f:
            expect = json.load(f)
        self.assertEqual(dict(rep), expect)
        self.assertIsInstance(rep.layers, list)
        self.assertEqual(rep.layers, expect["layers"])
        self.assertEqual(set(rep.layers[0]), set(expect["layers"][0]))
        self.assertGreater(rep.totals["npu_cycles"], 0)
        self.assertEqual(sum(l["cycles"] for l in rep.layers), rep.totals["npu_cycles"] + rep.totals["host_cycles"])

    def test_in_memory_workload_overrides_and_many_runs(self):
        net = npusim.zoo("resnet18")
        self.assertIsNone(net.path)
        self.assertEqual(net.name, "resnet18")
        cycles = [npusim.simulate(net, "npu", overrides={"npu.pe_array.rows": r}).totals["npu_cycles"]
                  for r in (16, 32, 64, 64)]
        self.assertGreater(cycles[0], cycles[1])
        self.assertGreater(cycles[1], cycles[2])
        self.assertEqual(cycles[2], cycles[3])  # a child process per run: no state carried over
        self.assertEqual(npusim.simulate(net).get("workload"), "resnet18")

    def test_zoo_op_and_gpu(self):
        op = npusim.zoo_op("matmul", m=256, n=512, k=1024)
        self.assertEqual(npusim.simulate(op, "npu").totals["macs"], 256 * 512 * 1024)
        self.assertEqual(npusim.zoo("op", "matmul", m=256, n=512, k=1024), op)
        g = npusim.simulate(op, "gpu_h100")
        self.assertEqual(g["plan"]["kind"], "library")
        self.assertEqual(g.layers[0]["class"], "gemm")
        self.assertEqual(g.totals["macs"], 256 * 512 * 1024)

    def test_errors_carry_the_cli_message(self):
        net = npusim.zoo("resnet18", out=self.path("r18.json"))
        with self.assertRaises(npusim.InputError) as e:
            npusim.simulate(net, "npu", overrides={"npu.pe_array.rowz": 3})
        rc, _, err = cli("--ir", self.path("r18.json"), "--set", "npu.pe_array.rowz=3", "-q")
        self.assertEqual(rc, 2)
        self.assertEqual("sim: error: " + str(e.exception), err.strip())
        with self.assertRaises(npusim.InputError) as e:
            npusim.simulate(self.path("missing.json"))
        self.assertIn("missing.json", str(e.exception))
        with self.assertRaises(npusim.InputError) as e:
            npusim.zoo("resnet5")
        self.assertIn("unknown model 'resnet5'", str(e.exception))

    def test_a_system_runs_and_sweeps_its_own_keys(self):
        # issue 27: a system config through the API runs the system, with system.* overrides.
        pipe = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            "examples", "pipelines", "tp2_mlp.json")
        rep = npusim.simulate(pipe, "system_8x_h100")
        self.assertEqual(rep.totals["device"], "system")
        slow = npusim.simulate(pipe, "system_8x_h100", overrides={"system.link.bandwidth_gbps": 50})
        self.assertGreater(slow.totals["makespan_us"], rep.totals["makespan_us"])
        res = npusim.sweep({"workloads": [pipe], "hw": "system_8x_h100",
                            "axes": [{"system.link.bandwidth_gbps": [50, 450]}]}, self.path("sys"), jobs=2)
        self.assertEqual(len(res.ok), 2)
        self.assertAlmostEqual(res.rows[0]["makespan_us"], slow.totals["makespan_us"], places=5)
        self.assertAlmostEqual(res.rows[1]["makespan_us"], rep.totals["makespan_us"], places=5)

    def test_to_pandas(self):
        rep = npusim.simulate(npusim.zoo("resnet18"))
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError) as e:
                rep.to_pandas()
            self.assertIn("pandas", str(e.exception))
            self.skipTest("pandas not installed: to_pandas() raises ImportError, as checked")
        df = rep.to_pandas()
        self.assertEqual(len(df), len(rep.layers))
        self.assertEqual(int(df["cycles"].sum()), rep.totals["npu_cycles"] + rep.totals["host_cycles"])


class SweepTest(Base):
    def test_dict_spec_gives_rows_like_the_cli(self):
        net = npusim.zoo("resnet18", out=self.path("r18.json"))
        spec = {"workloads": [net.path], "hw": "npu",
                "axes": [{"npu.pe_array.rows": [16, 32]}, {"memory.dram.bandwidth_gbps": [16, 32]}]}
        res = npusim.sweep(spec, self.path("py"), jobs=2)
        self.assertEqual(res.exit_code, 0)
        self.assertEqual(len(res.rows), 4)
        self.assertEqual([r["point"] for r in res.rows], [0, 1, 2, 3])
        self.assertEqual([r["npu.pe_array.rows"] for r in res.rows], [16, 16, 32, 32])
        self.assertTrue(all(r["status"] == "ok" and r["cycles"] > 0 for r in res.rows))
        self.assertEqual(res.failed, [])
        # The same sweep through the CLI: the same results.
        with open(self.path("s.yaml"), "w") as f:
            f.write("workloads: [%s]\nhw: npu\naxes:\n  - npu.pe_array.rows: [16, 32]\n"
                    "  - memory.dram.bandwidth_gbps: [16, 32]\n" % net.path)
        rc, _, err = cli("sweep", self.path("s.yaml"), "-o", self.path("cli"), "-q")
        self.assertEqual(rc, 0, err)
        with open(self.path("cli/results.csv")) as a, open(self.path("py/results.csv")) as b:
            self.assertEqual(a.read(), b.read())
        self.assertIn("Pareto", res.report())
        # No temporary sweep file left in the working folder.
        self.assertFalse([f for f in os.listdir(".") if f.startswith(".npusim_sweep_")])

    def test_zoo_workloads_failures_and_bad_sweeps(self):
        spec = {"workloads": [npusim.zoo("resnet18"), {"zoo": "resnet18", "batch": 1}], "hw": "npu",
                "axes": [{"npu.l2.size_kib": [1, 1024]}]}
        res = npusim.sweep(spec, self.path("z"))
        self.assertEqual(len(res.rows), 4)
        self.assertEqual(res.exit_code, 1)  # 1 KiB of L2 fails, recorded
        self.assertEqual(len(res.failed), 2)
        self.assertTrue(res.failed[0]["error"])
        with self.assertRaises(npusim.InputError) as e:
            npusim.sweep({"workloads": [{"zoo": "resnet18"}], "hw": "npu", "axes": [{"npu.pe_array.rowz": [1]}]},
                         self.path("bad"))
        self.assertIn("did you mean 'npu.pe_array.rows'", str(e.exception))
        with self.assertRaises(npusim.InputError) as e:
            npusim.sweep(spec, self.path("z"))  # the directory holds a sweep already
        self.assertIn("already holds a sweep", str(e.exception))
        self.assertEqual(len(npusim.sweep(spec, self.path("z"), resume=True).rows), 4)

    def test_submit_dry_run(self):
        with open(self.path("s.yaml"), "w") as f:
            f.write("workloads:\n  - zoo: resnet18\nhw: npu\naxes:\n  - npu.pe_array.rows: [8, 16, 32]\n")
        self.assertIsNone(npusim.submit(self.path("s.yaml"), self.path("sl"), array_size=2, dry_run=True))
        with open(self.path("sl/sweep.sbatch")) as f:
            script = f.read()
        self.assertIn("#SBATCH --array=0-1", script)
        self.assertIn("--shard \"$SLURM_ARRAY_TASK_ID/2\"", script)
        self.assertTrue(os.path.exists(self.path("sl/shard_1/manifest.json")))


class ServingTest(Base):
    def test_llm_is_sim_llm_with_the_same_options(self):
        rep = npusim.llm("gpt2", "gpu_h100", batch=2, input=32, output=4, buckets=2, layers=1)
        self.assertIsInstance(rep, npusim.ServingReport)
        code, _, _ = cli("llm", "gpt2", "--hw", "gpu_h100", "--batch", 2, "--input", 32, "--output", 4, "--buckets", 2,
                         "--layers", 1, "-q", "--report", self.path("cli.json"))
        self.assertEqual(code, 0)
        with open(self.path("cli.json")) as f:
            self.assertEqual(rep, json.load(f))
        self.assertEqual([s["phase"] for s in rep.steps][:2], ["prefill", "decode"])
        self.assertGreater(rep.totals["ttft_ms"], 0)

    def test_options_come_from_the_one_table_and_are_checked_before_running(self):
        opts = npusim.serving_options()
        self.assertEqual(opts["tp"]["default"], "1")
        self.assertEqual(opts["tp"]["lo"], 1)
        self.assertIn("preempt", opts)
        with self.assertRaises(npusim.InputError) as e:
            npusim.llm("llama2-7b", "system_8x_h100", tp=0)
        self.assertIn("must be in 1..4096", str(e.exception))
        with self.assertRaises(npusim.InputError):
            npusim.llm("gpt2", "gpu_h100", tensor_parallel=2)

    def test_collective_rows_grow_with_size(self):
        rows = npusim.collective("all_reduce", "system_8x_h100", sizes=[1 << 20, 1 << 26])
        self.assertEqual(len(rows), 2)
        self.assertLess(rows[0]["time_us"], rows[1]["time_us"])
        self.assertEqual(len(rows.to_pandas() if _has_pandas() else rows), 2)


class ProgramTest(Base):
    ASM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "examples", "gemini_npu",
                       "int8_resnet50.sim_quanti_b1_c1_bw16_asm.txt")

    def test_program_is_sim_program(self):
        r = npusim.program(self.ASM, instructions=self.path("i.csv"), trace=self.path("t.json"))
        with open(self.path("t.json")) as f:
            self.assertTrue(any(e["ph"] == "X" for e in json.load(f)["traceEvents"]))
        self.assertEqual(len(r.layers), 73)
        self.assertEqual(sum(l["cycles"] for l in r.layers), r["total_cycles"])
        code, out, err = cli("program", "--program", self.ASM, "--hw", "gemini_zebu", "-q", "--report", self.path("c.json"))
        self.assertEqual(code, 0, err)
        with open(self.path("c.json")) as f:
            self.assertEqual(json.load(f)["total_cycles"], r["total_cycles"])
        with open(self.path("i.csv")) as f:
            self.assertEqual(len(f.readlines()), 1 + 742)
        slower = npusim.program(self.ASM, overrides={"npu.isa.pe_fixed_cycles": 400})
        self.assertGreater(slower["total_cycles"], r["total_cycles"])
        with self.assertRaises(npusim.InputError) as e:
            npusim.program(self.path("missing_asm.txt"))
        self.assertIn("missing_asm.txt", str(e.exception))


def _has_pandas():
    try:
        import pandas  # noqa: F401
        return True
    except ImportError:
        return False


class PlotTest(Base):
    def test_plot_writes_a_png(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib not installed (python3-matplotlib)")
        rep = npusim.simulate(npusim.zoo("resnet18"))
        out = npusim.plot(rep, self.path("r.png"))
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        npusim.plot(rep, self.path("roof.png"), only="roofline")
        self.assertTrue(os.path.getsize(self.path("roof.png")) > 1000)
        with self.assertRaises(npusim.InputError):
            npusim.plot(rep, self.path("t.png"), only="timeline")

    def test_plot_sweep_draws_npu_gpu_and_system_sweeps(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib not installed (python3-matplotlib)")
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        pipe = os.path.join(root, "examples", "pipelines", "tp2_mlp.json")
        specs = {"npu": ({"zoo": "resnet18"}, "npu", "npu.pe_array.rows", [16, 32], "cycles"),
                 "gpu": ({"zoo": "resnet18"}, "gpu_h100", "gpu.num_sms", [66, 132], "time"),
                 "system": (pipe, "system_8x_h100", "system.link.bandwidth_gbps", [50, 450], "time")}
        for device, (workload, hw, key, values, name) in specs.items():
            with self.subTest(device=device):
                out = self.path("sweep_" + device)
                res = npusim.sweep({"workloads": [workload], "hw": hw, "axes": [{key: values}]}, out, jobs=2)
                self.assertEqual(len(res.ok), 2)
                r = subprocess.run([sys.executable, os.path.join(root, "scripts", "plot_sweep.py"), out],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                for png in ("%s_vs_%s.png" % (name, key), "pareto.png", "layers.png"):
                    with open(os.path.join(out, "plots", png), "rb") as f:
                        self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", png)


if __name__ == "__main__":
    unittest.main()
