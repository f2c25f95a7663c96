"""npusim installed like a tool (docs/install.md): `cmake --install` into a temporary prefix, and
the .deb from CPack unpacked into a temporary root; `sim` runs from a folder outside the
checkout, finds its shipped configs by name next to its binary, falls back to the built-in
default NPU description when there are none, and the Python package finds its `sim`.

usage: test_install.py BUILD_DIR [--cmake CMAKE] [--cpack CPACK]   (ctest: install.prefix_and_deb)
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ARGS = None


def run(cmd, cwd=None, env=None, check=True, timeout=240):
    e = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    for k in ("NPUSIM_SIM", "NPUSIM_CONFIG_DIRS", "PYTHONPATH"):
        e.pop(k, None)
    e.update(env or {})
    r = subprocess.run(cmd, cwd=cwd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError("%s: exit %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r


def report(path):
    with open(path) as f:
        return json.load(f)


class Installed(unittest.TestCase):
    """Shared checks of an installed tree: root is the prefix (P, or the .deb's usr)."""

    def check_tree(self, prefix, work):
        sim = os.path.join(prefix, "bin", "sim")
        share = os.path.join(prefix, "share", "npusim")
        for f in ("configs/npu.yaml", "configs/gemini_zebu.yaml", "configs/gpu_h100.yaml", "scripts/plot_run.py",
                  "scripts/plot_sweep.py", "sweeps/resnet50_b1.yaml"):
            self.assertTrue(os.path.isfile(os.path.join(share, f)), f)
        for f in ("README.md", "install.md", "python.md", "sweeps.md"):
            self.assertTrue(os.path.isfile(os.path.join(prefix, "share", "doc", "npusim", f)), f)
        # From a folder that is not the checkout, configs by name: the installed ones first.
        run([sim, "zoo", "resnet18", "-o", "r18.json"], cwd=work)
        run([sim, "--ir", "r18.json", "-q", "--report", "a.json"], cwd=work)
        a = report(os.path.join(work, "a.json"))
        self.assertEqual(os.path.realpath(a["hardware"]["source"]), os.path.realpath(os.path.join(share, "configs", "npu.yaml")))
        run([sim, "--ir", "r18.json", "--hw", "gemini_zebu", "-q", "--report", "g.json"], cwd=work)
        self.assertTrue(report(os.path.join(work, "g.json"))["hardware"]["source"].startswith(os.path.join(share, "configs")))
        # No configs anywhere: the default NPU is built in, and gives the same run.
        env = {"NPUSIM_CONFIG_DIRS": os.path.join(work, "none")}
        run([sim, "--ir", "r18.json", "-q", "--report", "b.json"], cwd=work, env=env)
        b = report(os.path.join(work, "b.json"))
        self.assertEqual(b["hardware"]["source"], "built-in:configs/npu.yaml")
        self.assertEqual(b["totals"], a["totals"])
        self.assertEqual(b["layers"], a["layers"])
        r = run([sim, "--ir", "r18.json", "--hw", "gemini_zebu", "-q"], cwd=work, env=env, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("sim: error: gemini_zebu: cannot open: no such file, and not a shipped config; shipped: npu", r.stderr)
        # --plot finds the installed script (when matplotlib is there).
        try:
            import matplotlib  # noqa: F401
            run([sim, "--ir", "r18.json", "-q", "--plot", "r18.png"], cwd=work)
            self.assertTrue(os.path.getsize(os.path.join(work, "r18.png")) > 1000)
        except ImportError:
            pass
        # The Python package, when built: it runs the installed sim.
        pydir = os.path.join(prefix, "lib", "python3", "dist-packages")
        if glob.glob(os.path.join(pydir, "npusim", "_core*.so")):
            code = ("import npusim, os; print(os.path.realpath(npusim.sim_binary())); "
                    "print(npusim.simulate(npusim.zoo('resnet18'))['totals']['npu_cycles'])")
            out = run([sys.executable, "-c", code], cwd=work, env={"PYTHONPATH": pydir}).stdout.split()
            self.assertEqual(out[0], os.path.realpath(sim))
            self.assertEqual(int(out[1]), a["totals"]["npu_cycles"])
        return a

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="npusim_install_")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.work = os.path.join(self.tmp, "work")
        os.makedirs(self.work)

    def test_cmake_install_prefix(self):
        prefix = os.path.join(self.tmp, "prefix")
        run([ARGS.cmake, "--install", ARGS.build, "--prefix", prefix])
        self.check_tree(prefix, self.work)

    def test_deb(self):
        if not shutil.which("dpkg-deb"):
            self.skipTest("dpkg-deb not found: not a Debian system")
        pkg = os.path.join(self.tmp, "pkg")
        run([ARGS.cpack, "-G", "DEB", "--config", os.path.join(ARGS.build, "CPackConfig.cmake"), "-B", pkg], timeout=280)
        debs = glob.glob(os.path.join(pkg, "*.deb"))
        self.assertEqual(len(debs), 1, os.listdir(pkg))
        info = run(["dpkg-deb", "-f", debs[0], "Package", "Version", "Depends"]).stdout
        self.assertIn("Package: npusim", info)
        self.assertIn("libsystemc", info)
        contents = run(["dpkg-deb", "-c", debs[0]]).stdout
        for f in ("./usr/bin/sim", "./usr/share/npusim/configs/npu.yaml", "./usr/share/doc/npusim/install.md"):
            self.assertIn(f, contents)
        root = os.path.join(self.tmp, "root")
        run(["dpkg-deb", "-x", debs[0], root])
        self.check_tree(os.path.join(root, "usr"), self.work)
        print("\n.deb: %s, %d KiB" % (os.path.basename(debs[0]), os.path.getsize(debs[0]) // 1024), file=sys.stderr)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--cmake", default=shutil.which("cmake") or "cmake")
    ap.add_argument("--cpack", default=shutil.which("cpack") or "cpack")
    ARGS, rest = ap.parse_known_args()
    ARGS.build = os.path.abspath(ARGS.build)
    if not os.path.isfile(os.path.join(ARGS.build, "sim")):
        print("skipped: %s/sim is not built" % ARGS.build)
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v"] + rest)
