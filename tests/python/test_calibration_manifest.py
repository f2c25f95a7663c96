"""configs/calibration/manifest.json lists every calibration data file with its chip, role and
source (docs/calibration.md#data): every data file of the folder is listed once, every listed
file and script exists, the chip is the file's prefix, and a file's own meta.written_by (when it
has one) names the same script. Standard library only; run by ctest (calibration.manifest).
"""
import json
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDER = os.path.join(ROOT, "configs", "calibration")
ROLES = {"fit", "dev", "held-out", "probe"}


class ManifestTest(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(FOLDER, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.entries = [(chip, c, e) for chip, c in self.manifest["chips"].items() for e in c["files"]]

    def test_every_data_file_is_listed_once(self):
        listed = [e["file"] for _, _, e in self.entries]
        self.assertEqual(len(listed), len(set(listed)), "a file is listed twice")
        data = sorted(f for f in os.listdir(FOLDER) if f.endswith(".json") and f != "manifest.json")
        self.assertEqual(sorted(listed), data)

    def test_entries_name_a_role_a_config_and_a_source_that_exist(self):
        for chip, c, e in self.entries:
            with self.subTest(file=e["file"]):
                self.assertIn(e["role"], ROLES)
                self.assertTrue(e["what"])
                self.assertTrue(os.path.isfile(os.path.join(ROOT, c["config"])), c["config"])
                self.assertTrue(os.path.isfile(os.path.join(ROOT, e["source"])), e["source"])
                self.assertTrue(e["file"].startswith(chip.split("_")[0]), (chip, e["file"]))

    def test_a_files_own_meta_agrees(self):
        for _, _, e in self.entries:
            with open(os.path.join(FOLDER, e["file"])) as f:
                doc = json.load(f)
            written_by = doc.get("meta", {}).get("written_by", "") if isinstance(doc, dict) else ""
            if written_by:
                with self.subTest(file=e["file"]):
                    self.assertEqual(written_by.split()[0], e["source"])

    def test_the_held_out_sets_are_not_fitted(self):
        # A file named as a held-out split is never a fit set.
        for _, _, e in self.entries:
            if "heldout" in e["file"] or "predict" in e["file"]:
                self.assertEqual(e["role"], "held-out", e["file"])


if __name__ == "__main__":
    sys.exit(unittest.main(verbosity=2))
