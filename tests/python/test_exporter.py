"""The PyTorch exporter (python/strata_trace.py) on small GPT, LLaMA-like,
BERT and ViT modules (models.py): the exported trace loads, has the
module's parameter count to the parameter and its forward FLOPs within 3 %
of what PyTorch's profiler counts (the rest is the per-element work of
norms, activations and softmax that the profiler does not count), its
layers fold into one repeated block, and it plans.

Usage: test_exporter.py STRATA_BINARY   (run by ctest; needs torch)
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import torch  # noqa: E402

import models  # noqa: E402
import strata_trace  # noqa: E402

STRATA = None


def strata(*args):
    r = subprocess.run([STRATA] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def torch_forward_flops(module, inputs):
    with torch.autograd.profiler.profile(with_flops=True) as prof:
        with torch.no_grad():
            module(*inputs)
    return sum(e.flops for e in prof.key_averages())


class Exporter(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="strata-export-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def export(self, name, module, inputs, **kw):
        path = os.path.join(self.dir, name + ".json")
        strata_trace.write(strata_trace.export(module, inputs, name=name, **kw),
                           path)
        return path

    def check_model(self, name, module, inputs):
        path = self.export(name, module, inputs)
        rc, out, err = strata("trace", "info", "--json", path)
        self.assertEqual(rc, 0, err)
        info = json.loads(out)
        want = sum(p.numel() for p in module.parameters())
        self.assertEqual(info["parameters"], want)
        fwd = info["flops_per_microbatch"] / 3
        ref = torch_forward_flops(module, inputs)
        print("  %-6s params %d (module %d)  fwd FLOPs %.4g (torch %.4g, "
              "%+.2f %%)" % (name, info["parameters"], want, fwd, ref,
                             100 * (fwd - ref) / ref))
        self.assertLess(abs(fwd - ref) / ref, 0.03)
        self.assertEqual(info["layers"], 4)
        # the four layers were exported separately and fold into one
        with open(path) as f:
            self.assertEqual(len(json.load(f)["blocks"]), 4)
        rc, out, err = strata("trace", "gen", path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(json.loads(out)["blocks"]), 1)
        rc, out, err = strata("stage", "--model", path, "--devices", "8")
        self.assertEqual(rc, 0, err)
        self.assertIn("optimal", out)
        rc, out, err = strata("plan", "--model", path, "--cluster",
                              "dgx-h100:1", "--global-batch", "64", "--quiet")
        self.assertEqual(rc, 0, err)
        self.assertIn("step time", out)
        return path

    def test_models(self):
        for name, module, inputs in models.examples():
            with self.subTest(model=name):
                self.check_model(name, module, inputs)

    def test_kinds(self):
        """Attention, MLP and norm patterns land on Strata's kinds."""
        name, module, inputs = models.examples()[1]  # the LLaMA-like
        trace = strata_trace.export(module, inputs)
        kinds = [op["kind"] for op in trace["ops"]]
        for k in ("embedding", "rmsnorm", "linear", "matmul", "softmax",
                  "silu", "mul", "add", "permute", "reshape", "scale",
                  "cross_entropy"):
            self.assertIn(k, kinds)
        vit = strata_trace.export(models.examples()[3][1],
                                  models.examples()[3][2])
        vk = [op["kind"] for op in vit["ops"]]
        for k in ("patch_embed", "concat", "slice", "layernorm", "gelu"):
            self.assertIn(k, vk)

    def test_unknown_op_is_generic(self):
        """An op with no kind of its own is kept, with FLOPs and bytes."""
        class Odd(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(16, 16)

            def forward(self, x):
                return self.fc(torch.cumsum(x, dim=1))

        x = torch.randn(2, 8, 16)
        trace = strata_trace.export(Odd(), (x,), loss=None)
        gen = [op for op in trace["ops"] if op["kind"] == "generic"]
        self.assertEqual(len(gen), 1)
        self.assertEqual(gen[0]["flops"], 2 * 8 * 16)
        path = os.path.join(self.dir, "odd.json")
        strata_trace.write(trace, path)
        rc, out, err = strata("trace", "info", "--json", path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["parameters"], 16 * 16 + 16)

    def test_command_line(self):
        """python3 strata_trace.py FILE.py:FUNCTION -o OUT"""
        builder = os.path.join(self.dir, "build.py")
        with open(builder, "w") as f:
            f.write("import sys\nsys.path.insert(0, %r)\nimport models\n"
                    "def build():\n    n, m, x = models.examples()[0]\n"
                    "    return m, x\n" % HERE)
        out = os.path.join(self.dir, "cli.json")
        script = os.path.join(HERE, "..", "..", "python", "strata_trace.py")
        r = subprocess.run([sys.executable, script, builder + ":build", "-o",
                            out, "--name", "cli-gpt"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        rc, info, err = strata("trace", "info", out)
        self.assertEqual(rc, 0, err)
        self.assertIn("cli-gpt", info)


if __name__ == "__main__":
    STRATA = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
