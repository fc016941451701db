"""strata: plan how to train a large model on a GPU cluster, from Python.

    import strata
    p = strata.plan(model="llama3-70b", cluster="dgx-h100:64",
                    global_batch=1024)
    print(p)                          # the summary, as `strata show` prints it
    p.to_dict()                       # `strata show --json`
    p.save("llama3-70b.splan")
    args = p.export("megatron")       # Megatron-LM's arguments
    e = strata.estimate(model="llama3-70b", cluster="dgx-h100:64",
                        tp=8, pp=4, global_batch=1024)

Options are the `strata` command's (docs/cli.md), named with underscores
for dashes: global_batch=1024 is --global-batch 1024, flash_attention=False
is --no-flash-attention, recompute_modules=["core_attn", "mlp"] is
--recompute-modules core_attn,mlp; a flag given True is the bare flag.
The command checks them: an unknown or meaningless option is a UsageError
with its message.  Errors are StrataError's subclasses, one per exit class
of the command; warnings are Python warnings (StrataWarning).

A model is a preset or family name, a trace file, a Hugging Face
config.json or an ONNX file (a path), a Hugging Face config or a trace as
a dict, or a torch.nn.Module with example_inputs=(...) (strata_trace).  A
cluster is a preset ("dgx-h100:64"), a cluster spec file, or its dict.
trace_info() gives a model's sizes; import_onnx() and import_hf() its
trace.  docs/python.md walks through it all.
"""
import html
import json
import os
import tempfile
import warnings

from strata._lib import library_path, run_command, version

__all__ = [
    "plan", "estimate", "fleet", "load_plan", "Plan", "command", "Result",
    "trace_info", "import_onnx", "import_hf",
    "StrataError", "UsageError", "BadInputError", "InfeasibleError",
    "InternalError", "StrataWarning", "version", "library_path",
]
__version__ = "0.1.0"


class StrataWarning(UserWarning):
    """A warning the command printed (`strata: warning: ...`)."""


class StrataError(Exception):
    """A command that failed: message (Strata's own), exit_code (the
    command's: docs/cli.md), command (e.g. "plan"), stderr (all of it),
    and result (the JSON document the command printed, if any)."""
    exit_code = None

    def __init__(self, message, exit_code, command, stderr="", result=None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.command = command
        self.stderr = stderr
        self.result = result


class UsageError(StrataError, ValueError):
    """Exit 1: an option unknown, malformed or meaningless here."""


class BadInputError(StrataError, ValueError):
    """Exit 2: a model, cluster, plan or other input is wrong."""


class InfeasibleError(StrataError):
    """Exit 3: nothing fits (result: the command's JSON answer)."""


class InternalError(StrataError, RuntimeError):
    """Exit 4: a fault in Strata itself."""


_CLASSES = {1: UsageError, 2: BadInputError, 3: InfeasibleError,
            4: InternalError}


class Result:
    """What a command returned: returncode, stdout, stderr."""

    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr

    def __repr__(self):
        return "Result(returncode=%d, stdout=%d chars, stderr=%r)" % (
            self.returncode, len(self.stdout), self.stderr[:200])


def _message(stderr):
    """The command's error message: its `strata CMD: ...` lines."""
    lines = [ln for ln in stderr.splitlines()
             if ln.startswith("strata") and ": warning: " not in ln]
    return "\n".join(lines) if lines else stderr.strip()


def _warn(stderr):
    for ln in stderr.splitlines():
        if ": warning: " in ln:
            warnings.warn(ln.split(": warning: ", 1)[1], StrataWarning,
                          stacklevel=3)


def command(*args, check=True, names=None, ok=(0,)):
    """Run `strata ARGS...` in this process and return its Result.  With
    check (the default), an exit code not in ok raises the StrataError of
    its class; an interrupted command (exit 130) raises KeyboardInterrupt.
    names maps the package's temporary paths to what its messages call
    them."""
    args = [os.fspath(a) if isinstance(a, os.PathLike) else str(a)
            for a in args]
    rc, out, err = run_command(args)
    for tmp, name in (names or {}).items():
        err = err.replace(tmp, name)
    if rc == 130:
        raise KeyboardInterrupt(_message(err))
    if check and rc not in ok:
        doc = None
        if out.lstrip().startswith("{"):
            try:
                doc = json.loads(out)
            except ValueError:
                doc = None
        cls = _CLASSES.get(rc, StrataError)
        raise cls(_message(err), rc, args[0] if args else "", err, doc)
    _warn(err)
    return Result(rc, out, err)


# ---- options --------------------------------------------------------------

_RESERVED = {"json", "output", "o", "timings"}


def _options(options):
    """CLI arguments from keyword options (see the module's help)."""
    argv = []
    for key, value in options.items():
        if key in _RESERVED:
            raise TypeError("strata: %s= is the package's to set (the "
                            "result is always returned in full)" % key)
        flag = "--" + key.replace("_", "-")
        if value is None:
            continue
        if value is True:
            argv.append(flag)
        elif value is False:
            argv.append("--no-" + key.replace("_", "-"))
        elif isinstance(value, (list, tuple)):
            argv += [flag, ",".join(str(v) for v in value)]
        elif isinstance(value, os.PathLike):
            argv += [flag, os.fspath(value)]
        else:
            argv += [flag, str(value)]
    return argv


def _write_json(tmp, name, doc):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def _model_arg(tmp, model, example_inputs, trace_options):
    """The --model argument for any form of model."""
    if isinstance(model, os.PathLike):
        return os.fspath(model)
    if isinstance(model, str):
        return model
    if isinstance(model, dict):
        name = str(model.get("name") or model.get("_name_or_path") or
                   model.get("model_type") or "model")
        safe = "".join(c if c.isalnum() or c in "-_." else "_"
                       for c in name.split("/")[-1])[:64] or "model"
        return _write_json(tmp, safe + ".json", model)
    if hasattr(model, "named_parameters") and hasattr(model, "forward"):
        import strata_trace
        if example_inputs is None:
            raise TypeError("strata: a torch module needs example_inputs="
                            "(the inputs of one micro-batch)")
        trace = strata_trace.export(model, example_inputs, **trace_options)
        return _write_json(tmp, "%s.json" % trace["name"], trace)
    raise TypeError("strata: a model is a name, a path, a dict or a torch "
                    "module, not %s" % type(model).__name__)


def _cluster_arg(tmp, cluster):
    if isinstance(cluster, dict):
        return _write_json(tmp, str(cluster.get("name", "cluster")).replace(
            "/", "_")[:64] + ".json", cluster)
    if isinstance(cluster, (str, os.PathLike)):
        return os.fspath(cluster)
    raise TypeError("strata: a cluster is a preset name, a spec file or a "
                    "dict, not %s" % type(cluster).__name__)


def _is_preset(cluster):
    return isinstance(cluster, str) and not os.path.exists(cluster) and \
        not cluster.endswith(".json")


# ---- models ---------------------------------------------------------------

def trace_info(model, example_inputs=None, trace_options=None, **options):
    """A model's sizes and totals (parameters, FLOPs a micro-batch, ...):
    `strata trace info --json MODEL [options]`."""
    with tempfile.TemporaryDirectory(prefix="strata-") as tmp:
        m = _model_arg(tmp, model, example_inputs, trace_options or {})
        out = command("trace", "info", m, "--json", *_options(options),
                      names={tmp + os.sep: ""}).stdout
    return json.loads(out)


def _import(kind, path, output, options):
    with tempfile.TemporaryDirectory(prefix="strata-") as tmp:
        dest = os.path.join(tmp, "trace.json")
        command("trace", "import", kind, os.fspath(path), *_options(options),
                "-o", dest)
        with open(dest) as f:
            text = f.read()
    if output is not None:
        _write_atomic(os.fspath(output), text.encode())
    return json.loads(text)


def import_onnx(path, output=None, **options):
    """An ONNX file (torch.onnx.export's, Hugging Face's) as a trace dict:
    `strata trace import onnx PATH [options]` (seq=, micro_batch=, dtype=
    where the file leaves them open); written to output too if given."""
    return _import("onnx", path, output, options)


def import_hf(path, output=None, **options):
    """A Hugging Face config.json as a trace dict: `strata trace import hf
    PATH [options]`; written to output too if given."""
    return _import("hf", path, output, options)


def _write_atomic(path, data):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".strata-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---- plans ----------------------------------------------------------------

class Plan:
    """A plan: the bytes of its plan file (.splan, docs/plan-format.md)
    and the cluster it was made on (passed to show and export when it is a
    spec rather than a preset the plan names)."""

    def __init__(self, data, cluster=None, name="plan"):
        self.data = bytes(data)
        self.name = name  # what messages call it: its file, once saved
        self._cluster = None if _is_preset(cluster) else cluster
        self._dict = None
        self._summary = None

    def _file(self, tmp, base="plan.splan"):
        """A path to the plan: its own file while that still holds these
        bytes (so that exports that name their plan name it), else a
        temporary copy."""
        if self.name != "plan" and os.path.isfile(self.name):
            with open(self.name, "rb") as f:
                if f.read() == self.data:
                    return self.name
        path = os.path.join(tmp, base)
        with open(path, "wb") as f:
            f.write(self.data)
        return path

    def _run(self, *args, cluster=True, extra=()):
        with tempfile.TemporaryDirectory(prefix="strata-") as tmp:
            path = self._file(tmp)
            argv = [args[0]] + [path if a is Plan else a for a in args[1:]]
            argv += list(extra)
            if cluster and self._cluster is not None and \
                    "--cluster" not in argv:
                argv += ["--cluster", _cluster_arg(tmp, self._cluster)]
            return command(*argv, names={path: self.name}).stdout

    def to_dict(self):
        """The plan as `strata show --json` prints it."""
        if self._dict is None:
            self._dict = json.loads(self._run("show", Plan, "--json"))
        return json.loads(json.dumps(self._dict))  # the caller's own copy

    @property
    def summary(self):
        """The summary, as `strata show` prints it."""
        if self._summary is None:
            self._summary = self._run("show", Plan)
        return self._summary

    def __getitem__(self, key):
        """A field of to_dict(): p["tp"], p["step_seconds"], ..."""
        return self.to_dict()[key]

    @property
    def step_seconds(self):
        return self.to_dict()["step_seconds"]

    @property
    def tokens_per_second(self):
        return self.to_dict()["tokens_per_second"]

    @property
    def mfu(self):
        """Against the peak of the precision used (the dict's mfu_peak)."""
        return self.to_dict()["mfu"]

    @property
    def peak_memory_bytes(self):
        return self.to_dict()["peak_memory_bytes"]

    def __str__(self):
        return self.summary

    def __repr__(self):
        d = self.to_dict()
        return "<strata.Plan %s on %s, %s GPUs, %d bytes>" % (
            d.get("model"), d.get("cluster"), d.get("devices"),
            len(self.data))

    def _repr_html_(self):
        return ('<pre style="font-size: 90%%">%s</pre>'
                % html.escape(self.summary))

    def save(self, path):
        """Write the plan file (a temporary file, then renamed)."""
        path = os.fspath(path)
        _write_atomic(path, self.data)
        self.name = path

    def export(self, target, **options):
        """The text of `strata export TARGET PLAN [options]`: "megatron",
        "deepspeed", "torch", "torchtitan", "timeline", "html",
        "hostfile" (docs/exports.md)."""
        cluster = options.pop("cluster", None)
        extra = _options(options)
        with tempfile.TemporaryDirectory(prefix="strata-") as tmp:
            if cluster is not None:
                extra += ["--cluster", _cluster_arg(tmp, cluster)]
            return self._run("export", str(target), Plan, extra=extra)

    def diff(self, other, text=False, **options):
        """What changed from this plan to other: `strata diff --json`'s
        document, or its text with text=True."""
        if not isinstance(other, Plan):
            raise TypeError("strata: diff takes another Plan")
        with tempfile.TemporaryDirectory(prefix="strata-") as tmp:
            a, b = self._file(tmp, "old.splan"), other._file(tmp, "new.splan")
            argv = ["diff", a, b] + _options(options)
            if not text:
                argv.append("--json")
            # diff's exit codes are diff(1)'s: 1 they differ, 3 only the
            # hosts changed; 2 is its trouble (usage, bad input)
            r = command(*argv, names={a: self.name, b: other.name},
                        ok=(0, 1, 3))
        return r.stdout if text else json.loads(r.stdout)

    def __eq__(self, other):
        return isinstance(other, Plan) and self.data == other.data

    def __hash__(self):
        return hash(self.data)


def load_plan(path, cluster=None):
    """A plan file read back (checked: a corrupt, truncated or newer file
    is a BadInputError).  cluster: the spec it was made on, when not a
    preset."""
    with open(os.fspath(path), "rb") as f:
        p = Plan(f.read(), cluster, os.fspath(path))
    p.to_dict()
    return p


def plan(model, cluster, example_inputs=None, trace_options=None,
         **options):
    """Plan model on cluster: the Plan with the least step time that fits.
    Options are `strata plan`'s (global_batch=, zero=, framework=,
    time_limit=, threads=, ...; progress is quiet unless quiet=False).
    Nothing fits: InfeasibleError, its result the command's JSON answer."""
    options.setdefault("quiet", True)
    if options["quiet"] is False:
        options.pop("quiet")
    with tempfile.TemporaryDirectory(prefix="strata-") as tmp:
        out = os.path.join(tmp, "plan.splan")
        argv = ["plan", "--model",
                _model_arg(tmp, model, example_inputs, trace_options or {}),
                "--cluster", _cluster_arg(tmp, cluster)]
        # --json: where nothing fits, the error carries the command's
        # answer (the reason) as its result
        argv += _options(options) + ["--json", "-o", out]
        # a dict or module model is a file of the temporary folder: messages
        # name it by its file name alone
        command(*argv, names={tmp + os.sep: ""})
        with open(out, "rb") as f:
            data = f.read()
    return Plan(data, cluster)


def fleet(jobs, cluster, output=None, **options):
    """Split cluster among training jobs (`strata fleet`, docs/cli.md):
    jobs is a JOBS.json path, its document ({"jobs": [...]}) or the list
    of jobs ({"name", "model", "global_batch", "weight", "min_nodes",
    "max_nodes"}); output a folder for each job's NAME.splan.  Returns the
    `--json` summary; the jobs with min_nodes cannot all run:
    InfeasibleError."""
    options.setdefault("quiet", True)
    if options["quiet"] is False:
        options.pop("quiet")
    with tempfile.TemporaryDirectory(prefix="strata-") as tmp:
        if isinstance(jobs, (str, os.PathLike)):
            path = os.fspath(jobs)
        elif isinstance(jobs, dict):
            path = _write_json(tmp, "jobs.json", jobs)
        elif isinstance(jobs, (list, tuple)):
            path = _write_json(tmp, "jobs.json", {"jobs": list(jobs)})
        else:
            raise TypeError("strata: jobs are a JOBS.json path, its dict or "
                            "a list of jobs, not %s" % type(jobs).__name__)
        argv = ["fleet", path, "--cluster", _cluster_arg(tmp, cluster)]
        argv += _options(options) + ["--json"]
        if output is not None:
            argv += ["-o", os.fspath(output)]
        r = command(*argv, names={tmp + os.sep: ""})
    return json.loads(r.stdout)


def estimate(model, cluster, example_inputs=None, trace_options=None,
             **options):
    """Memory and time of one configuration (tp=, pp=, dp=, micro_batch=,
    ... as `strata estimate` takes them): its `--json` document.  A
    configuration that does not fit is an answer, not an error: the
    document says so (exit 3 of the command is returned, not raised)."""
    with tempfile.TemporaryDirectory(prefix="strata-") as tmp:
        argv = ["estimate", "--model",
                _model_arg(tmp, model, example_inputs, trace_options or {}),
                "--cluster", _cluster_arg(tmp, cluster)]
        argv += _options(options) + ["--json"]
        r = command(*argv, ok=(0, 3), names={tmp + os.sep: ""})
    if not r.stdout.lstrip().startswith("{"):
        raise InternalError("strata estimate printed no JSON", 4,
                            "estimate", r.stderr)
    return json.loads(r.stdout)
