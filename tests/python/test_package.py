"""The Python package (python/strata) against the `strata` program: each
call gives what the program prints for the same command (to_dict() is
`strata show --json`, estimate() is `estimate --json`, export() is
`strata export`), errors are the exceptions of their exit classes with
Strata's message, plans round-trip through files, and models come as
names, HF config dicts, trace dicts and torch modules.

Usage: test_package.py STRATA_BINARY   (run by tests/python/package.sh in
a virtual environment where the package is installed)
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest
import warnings

import strata

STRATA = None
HERE = os.path.dirname(os.path.abspath(__file__))
HF = os.path.join(HERE, "..", "data", "hf")


def cli(*args):
    r = subprocess.run([STRATA] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.plan = strata.plan(model="llama3-8b", cluster="dgx-h100:2",
                               global_batch=256)
        cls.path = os.path.join(cls.tmp.name, "p.splan")
        cls.plan.save(cls.path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_library_is_installed_copy(self):
        # the package runs the library installed beside it, not the tree's
        self.assertTrue(strata.library_path().startswith(
            os.path.dirname(strata.__file__)), strata.library_path())
        rc, out, _ = cli("--version")
        self.assertEqual(out.strip(), "strata " + strata.version())

    def test_to_dict_is_show_json(self):
        rc, out, err = cli("show", "--json", self.path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.plan.to_dict(), json.loads(out))
        self.assertEqual(self.plan["global_batch"], 256)
        self.assertGreater(self.plan.tokens_per_second, 0)
        # every degree at the top level; biases and RoPE scaling stated
        for k in ("tp", "cp", "ep", "etp", "pp", "dp", "vpp"):
            self.assertGreaterEqual(self.plan[k], 1, k)
        arch = self.plan["architecture"]
        self.assertIs(arch["qkv_bias"], False)
        self.assertIn("rope_scaling", arch)

    def test_plan_is_the_programs(self):
        # the same command through the program saves the same bytes
        other = os.path.join(self.tmp.name, "cli.splan")
        rc, _, err = cli("plan", "--model", "llama3-8b", "--cluster",
                         "dgx-h100:2", "--global-batch", "256", "--quiet",
                         "-o", other)
        self.assertEqual(rc, 0, err)
        with open(other, "rb") as f:
            self.assertEqual(f.read(), self.plan.data)

    def test_summary_is_show(self):
        rc, out, _ = cli("show", self.path)
        self.assertEqual(self.plan.summary, out)
        self.assertEqual(str(self.plan), out)
        page = self.plan._repr_html_()
        self.assertTrue(page.startswith("<pre"), page[:40])
        self.assertIn("llama3-8b on dgx-h100:2", page)

    def test_save_load_round_trip(self):
        q = strata.load_plan(self.path)
        self.assertEqual(q, self.plan)
        self.assertEqual(q.to_dict(), self.plan.to_dict())

    def test_load_corrupt_plan_is_bad_input(self):
        bad = os.path.join(self.tmp.name, "bad.splan")
        with open(bad, "wb") as f:
            f.write(self.plan.data[: len(self.plan.data) // 2])
        with self.assertRaises(strata.BadInputError) as cm:
            strata.load_plan(bad)
        self.assertEqual(cm.exception.exit_code, 2)
        self.assertIn("strata show:", str(cm.exception))

    def test_exports_are_the_programs(self):
        q = strata.load_plan(self.path)
        ok = 0
        for target in ("megatron", "deepspeed", "torch", "torchtitan",
                       "timeline", "html", "hostfile"):
            rc, out, err = cli("export", target, self.path)
            if rc == 0:
                self.assertEqual(q.export(target), out, target)
                ok += 1
                continue
            # refused: the same exit class and message, the plan named by
            # its file rather than the package's temporary copy
            with self.assertRaises(strata.StrataError) as cm:
                q.export(target)
            self.assertEqual(cm.exception.exit_code, rc, target)
            self.assertEqual(cm.exception.stderr, err, target)
        self.assertGreaterEqual(ok, 4)
        rc, out, _ = cli("export", "megatron", self.path, "--launch")
        self.assertEqual(self.plan.export("megatron", launch=True), out)

    def test_estimate_is_estimate_json(self):
        args = dict(tp=8, pp=1, global_batch=256)
        rc, out, err = cli("estimate", "--model", "llama3-8b", "--cluster",
                           "dgx-h100:2", "--tp", "8", "--pp", "1",
                           "--global-batch", "256", "--json")
        self.assertIn(rc, (0, 3), err)
        e = strata.estimate(model="llama3-8b", cluster="dgx-h100:2", **args)
        self.assertEqual(e, json.loads(out))

    def test_estimate_that_does_not_fit_is_an_answer(self):
        e = strata.estimate(model="llama3-70b", cluster="dgx-h100:1", tp=1,
                            pp=1)
        self.assertFalse(e["fits"])

    def test_fleet_is_the_programs(self):
        # a list of jobs gives what strata fleet --json prints for the file
        jobs = [{"name": "a", "model": "gpt-1.7b"},
                {"name": "b", "model": "llama3-8b", "min_nodes": 1}]
        path = os.path.join(self.tmp.name, "jobs.json")
        with open(path, "w") as f:
            json.dump({"jobs": jobs}, f)
        out_dir = os.path.join(self.tmp.name, "fleet")
        os.mkdir(out_dir)
        got = strata.fleet(jobs, "dgx-h100:3", output=out_dir)
        rc, out, err = cli("fleet", path, "--cluster", "dgx-h100:3",
                           "--json", "--quiet")
        self.assertEqual(rc, 0, err)
        want = json.loads(out)
        self.assertEqual(got["weighted_tokens_per_second"],
                         want["weighted_tokens_per_second"])
        self.assertEqual([j["nodes"] for j in got["jobs"]],
                         [j["nodes"] for j in want["jobs"]])
        self.assertGreater(got["jobs"][1]["nodes"], 0)
        for j in got["jobs"]:
            if j["nodes"]:
                self.assertTrue(os.path.exists(j["plan"]), j["plan"])
        with self.assertRaises(strata.InfeasibleError):
            strata.fleet([{"name": "x", "model": "gpt-1.7b",
                           "min_nodes": 4}], "dgx-h100:3")
        with self.assertRaises(strata.BadInputError):
            strata.fleet({"jobs": [{"name": "../x", "model": "gpt"}]},
                         "dgx-h100:3")

    def test_errors_by_exit_class(self):
        with self.assertRaises(strata.BadInputError) as cm:
            strata.plan(model="no-such-model", cluster="dgx-h100:1")
        self.assertIn("unknown model 'no-such-model'", cm.exception.message)
        with self.assertRaises(strata.UsageError) as cm:
            strata.plan(model="llama3-8b", cluster="dgx-h100:1",
                        no_such_option=3)
        self.assertIn("--no-such-option", str(cm.exception))
        self.assertEqual(cm.exception.exit_code, 1)
        with self.assertRaises(strata.InfeasibleError) as cm:
            strata.plan(model="llama3-405b", cluster="dgx-h100:1")
        self.assertEqual(cm.exception.exit_code, 3)
        self.assertFalse(cm.exception.result["feasible"])
        self.assertIn("does not fit", cm.exception.result["reason"])
        with self.assertRaises(TypeError):
            strata.plan(model="llama3-8b", cluster="dgx-h100:1", json=True)

    def test_options_as_the_cli_names_them(self):
        p = strata.plan(model="llama3-8b", cluster="dgx-h100:2",
                        global_batch=128, zero=3, framework="megatron",
                        flash_attention=True)
        self.assertEqual(p["global_batch"], 128)
        self.assertEqual(p["options"]["zero_stage"], 3)

    def test_diff(self):
        other = strata.plan(model="llama3-8b", cluster="dgx-h100:2",
                            global_batch=512)
        d = self.plan.diff(other)
        self.assertFalse(d["identical"])
        self.assertTrue(self.plan.diff(self.plan)["identical"])
        a = os.path.join(self.tmp.name, "a.splan")
        other.save(a)
        rc, out, _ = cli("diff", self.path, a)
        self.assertEqual(rc, 1)
        self.assertEqual(self.plan.diff(other, text=True), out)

    def test_models_as_dicts(self):
        with open(os.path.join(HF, "bloom-560m.json")) as f:
            cfg = json.load(f)
        p = strata.plan(model=cfg, cluster="dgx-h100:1")
        rc, out, err = cli("plan", "--model", os.path.join(HF,
                           "bloom-560m.json"), "--cluster", "dgx-h100:1",
                           "--json")
        self.assertEqual(rc, 0, err)
        want = json.loads(out)
        self.assertEqual(p["step_seconds"], want["step_seconds"])
        self.assertEqual(p["architecture"], want["architecture"])

    def test_cluster_as_dict(self):
        spec = {"name": "two-h100", "node_groups": [
            {"names": "node[1-2]", "template": {
                "gpus": 8, "gpu_model": "H100-SXM",
                "nvlink_gbytes_per_s": 450, "pcie_gbytes_per_s": 64,
                "nics": 8, "nic_gbits_per_s": 400}}],
            "gpu": {"model": "H100-SXM"},
            "network": {"nic_gbits_per_s": 400}}
        path = os.path.join(self.tmp.name, "two.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        rc, out, err = cli("plan", "--model", "llama3-8b", "--cluster", path,
                           "--json")
        self.assertEqual(rc, 0, err)
        p = strata.plan(model="llama3-8b", cluster=spec)
        self.assertEqual(p["step_seconds"], json.loads(out)["step_seconds"])
        # the spec travels with the plan for show and the exports
        self.assertIn("device_map", p.to_dict())

    def test_warnings_are_python_warnings(self):
        with open(os.path.join(HF, "llama-3.1-8b.json")) as f:
            cfg = json.load(f)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            strata.estimate(model=cfg, cluster="dgx-h100:1", tp=8, pp=1,
                            seq=262144, micro_batch=1, global_batch=8,
                            recompute="full")
        mine = [str(x.message) for x in w
                if issubclass(x.category, strata.StrataWarning)]
        self.assertEqual(len([m for m in mine if "exceeds" in m]), 1, mine)
        # the model, given as a dict, is named by its file, not a temp path
        self.assertTrue(mine[0].startswith("llama.json: "), mine)

    def test_threads_are_serialised(self):
        out, errs = [], []

        def one():
            try:
                out.append(strata.plan(model="llama3-8b",
                                       cluster="dgx-h100:2",
                                       global_batch=256).data)
            except Exception as e:  # reported below
                errs.append(e)
        ts = [threading.Thread(target=one) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(errs, [])
        self.assertEqual(out, [self.plan.data] * 3)

    def test_ctrl_c_stops_a_plan(self):
        # a long plan in a child Python (DeepSeek-V3 in free mode, over 10 s
        # on one thread): SIGINT stops it within seconds as
        # KeyboardInterrupt, and Python's own handler is back afterwards
        code = (
            "import signal, strata, sys, time\n"
            "print('ready', flush=True)\n"
            "t = time.time()\n"
            "try:\n"
            "    strata.plan(model='deepseek-v3', cluster='dgx-h100:64',\n"
            "                free=True, threads=1)\n"
            "    print('finished')\n"
            "except KeyboardInterrupt as e:\n"
            "    print('interrupted after %.1f s: %s' % (time.time() - t, e))\n"
            "print(signal.getsignal(signal.SIGINT) is "
            "signal.default_int_handler)\n")
        child = subprocess.Popen([sys.executable, "-c", code],
                                 stdout=subprocess.PIPE, text=True)
        self.assertEqual(child.stdout.readline().strip(), "ready")
        import time
        time.sleep(1.5)
        child.send_signal(2)
        out, _ = child.communicate(timeout=120)
        self.assertIn("interrupted after", out)
        self.assertIn("nothing was written", out)
        self.assertTrue(out.strip().endswith("True"), out)

    def test_onnx(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        sys.path.insert(0, os.path.join(HERE, "..", "onnx"))
        import gpt
        m = gpt.GPT(gpt.VOCAB, gpt.SEQ, gpt.HIDDEN, gpt.HEADS, 2, True).eval()
        path = os.path.join(self.tmp.name, "g.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(m, (torch.zeros(gpt.BATCH, gpt.SEQ,
                                              dtype=torch.long),), path,
                              opset_version=17)
        want = sum(q.numel() for q in m.parameters())
        self.assertEqual(strata.trace_info(path)["parameters"], want)
        out = os.path.join(self.tmp.name, "g.json")
        trace = strata.import_onnx(path, output=out)
        with open(out) as f:
            self.assertEqual(json.load(f), trace)
        rc, cli_out, err = cli("trace", "import", "onnx", path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(cli_out), trace)
        p = strata.plan(model=path, cluster="dgx-h100:1")
        self.assertGreater(p.step_seconds, 0)
        bad = os.path.join(self.tmp.name, "bad.onnx")
        with open(path, "rb") as f, open(bad, "wb") as g:
            g.write(f.read()[:100])
        with self.assertRaises(strata.BadInputError) as cm:
            strata.import_onnx(bad)
        self.assertIn("bad.onnx", str(cm.exception))

    def test_torch_module(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        sys.path.insert(0, HERE)
        import models
        m = models.GPT(vocab=512, h=128, heads=4, layers=2, max_seq=64)
        inputs = (torch.zeros(2, 64, dtype=torch.long),)
        p = strata.plan(model=m, example_inputs=inputs,
                        trace_options={"name": "tiny-gpt"},
                        cluster="dgx-h100:1")
        self.assertEqual(p["model"], "tiny-gpt")
        with self.assertRaises(TypeError):
            strata.plan(model=m, cluster="dgx-h100:1")

    def test_dicts_of_one_name_are_two_files(self):
        # a model dict and a cluster dict named alike, and a cluster dict
        # named "jobs", were written to one file: the last one won
        cluster = {"name": "c", "node_groups": [
            {"names": "n[0-1]", "template": {"gpus": 8,
                                             "gpu_model": "H100-SXM"}}],
            "network": {"nic_gbits_per_s": 400}}
        model = {"_name_or_path": "c", "model_type": "llama",
                 "hidden_size": 512, "num_hidden_layers": 2,
                 "num_attention_heads": 8, "intermediate_size": 1024,
                 "vocab_size": 1000}
        p = strata.plan(model, cluster)
        self.assertEqual((p["model"], p["cluster"]), ("c", "c"))
        e = strata.estimate(model, cluster, tp=1, pp=1)
        self.assertEqual(e["cluster"], "c")
        jobs = strata.fleet([{"name": "a", "model": "gpt-1.7b"}],
                            dict(cluster, name="jobs"))
        self.assertEqual([j["name"] for j in jobs["jobs"]], ["a"])
        # the plan's exports are given its own cluster dict back
        hosts = [ln.split()[0] for ln in p.export("hostfile").splitlines()
                 if ln and not ln.startswith("#")]
        self.assertEqual(hosts, ["n0", "n1"])

    def test_paths_beginning_with_a_dash(self):
        # a path that begins with '-' is a path, not an option
        here = os.getcwd()
        folder = tempfile.mkdtemp(dir=self.tmp.name)
        os.chdir(folder)
        try:
            rc, _, err = cli("trace", "gen", "gpt", "--layers", "2", "-o",
                             "./-m.json")
            self.assertEqual(rc, 0, err)
            with open("-c.json", "w") as f:
                json.dump({"name": "two", "node_groups": [
                    {"names": "n[1-2]", "template": {
                        "gpus": 8, "gpu_model": "H100-SXM"}}],
                    "network": {"nic_gbits_per_s": 400}}, f)
            self.assertGreater(strata.trace_info("-m.json")["parameters"], 0)
            p = strata.plan("-m.json", "-c.json")
            self.assertEqual(p["cluster"], "two")
            p.save("-p.splan")
            q = strata.load_plan("-p.splan", cluster="-c.json")
            self.assertEqual(q, p)
            self.assertIn("n1", q.export("hostfile"))
            self.assertTrue(q.diff(p)["identical"])
            os.mkdir("-out")
            r = strata.fleet([{"name": "a", "model": "gpt-1.7b"}],
                             "-c.json", output="-out")
            self.assertEqual(r["jobs"][0]["name"], "a")
            self.assertEqual(sorted(os.listdir("-out")), ["a.slurm", "a.splan"])
            with self.assertRaises(strata.BadInputError) as cm:
                strata.load_plan("-m.json")
            self.assertIn("-m.json", str(cm.exception))
        finally:
            os.chdir(here)

    def test_namespace_and_hints(self):
        # dir(strata) is the package's names, not the modules it uses
        public = {n for n in dir(strata) if not n.startswith("_")}
        self.assertEqual(public, set(strata.__all__))
        # typed (PEP 561): py.typed installed, hints that resolve
        import typing
        pkg = os.path.dirname(strata.__file__)
        self.assertTrue(os.path.isfile(os.path.join(pkg, "py.typed")))
        hints = typing.get_type_hints(strata.plan)
        self.assertIs(hints["return"], strata.Plan)
        for name in ("estimate", "fleet", "trace_info", "load_plan",
                     "command", "import_onnx", "import_hf"):
            self.assertIn("return", typing.get_type_hints(
                getattr(strata, name)), name)

    def test_python_m_strata_is_the_program(self):
        for args in (["--version"], ["topo", "show", "--cluster",
                                     "dgx-h100:2"],
                     ["plan", "--model", "nosuch", "--cluster",
                      "dgx-h100:1"]):
            r = subprocess.run([sys.executable, "-m", "strata"] + args,
                               capture_output=True, text=True)
            rc, out, err = cli(*args)
            self.assertEqual((r.returncode, r.stdout, r.stderr),
                             (rc, out, err), args)


if __name__ == "__main__":
    STRATA = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
