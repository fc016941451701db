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
# the standard modules under private names, so that dir(strata) is the
# package's own names (its __all__)
import html as _html
import json as _json
import os as _os
import tempfile as _tempfile
import warnings as _warnings
from typing import Any as _Any, Dict as _Dict, Iterable as _Iterable, \
    Mapping as _Mapping, Optional as _Optional, Sequence as _Sequence, \
    Union as _Union

from strata._lib import library_path, version
from strata._lib import run_command as _run_command

_PathLike = _Union[str, "_os.PathLike[str]"]
# a model: a preset or family name, a path, a Hugging Face config or trace
# dict, or a torch.nn.Module (with example_inputs)
_Model = _Union[str, "_os.PathLike[str]", _Mapping[str, _Any], _Any]
# a cluster: a preset ("dgx-h100:64"), a spec file or its dict
_Cluster = _Union[str, "_os.PathLike[str]", _Mapping[str, _Any]]

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

    def __init__(self, message: str, exit_code: _Optional[int], command: str,
                 stderr: str = "", result: _Optional[_Dict[str, _Any]] = None
                 ) -> None:
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

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr

    def __repr__(self) -> str:
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
            _warnings.warn(ln.split(": warning: ", 1)[1], StrataWarning,
                          stacklevel=3)


def command(*args: _PathLike, check: bool = True,
            names: _Optional[_Mapping[str, str]] = None,
            ok: _Iterable[int] = (0,)) -> Result:
    """Run `strata ARGS...` in this process and return its Result.  With
    check (the default), an exit code not in ok raises the StrataError of
    its class; an interrupted command (exit 130) raises KeyboardInterrupt.
    names maps the package's temporary paths to what its messages call
    them."""
    args = [_os.fspath(a) if isinstance(a, _os.PathLike) else str(a)
            for a in args]
    rc, out, err = _run_command(args)
    # the longest first: a folder inside another is replaced before it
    for tmp, name in sorted((names or {}).items(), key=lambda t: -len(t[0])):
        err = err.replace(tmp, name)
    if rc == 130:
        raise KeyboardInterrupt(_message(err))
    if check and rc not in ok:
        doc = None
        if out.lstrip().startswith("{"):
            try:
                doc = _json.loads(out)
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
        elif isinstance(value, _os.PathLike):
            argv += [flag, _path(value)]
        else:
            argv += [flag, str(value)]
    return argv


def _path(path):
    """A path as the command takes it: one beginning with '-' would be
    read as an option, so it is given as ./-NAME (no preset name begins
    with '-', so a model or cluster string is never mistaken)."""
    path = _os.fspath(path)
    return _os.path.join(".", path) if path.startswith("-") else path


def _write_json(tmp, role, name, doc):
    """doc as TMP/ROLE/NAME.json: each argument of a command (model,
    cluster, jobs) in a folder of its own, so that a model and a cluster
    of one name, or a cluster named "jobs", are two files.  name becomes a
    file name (letters, digits, '-', '_', '.'; at most 64)."""
    safe = "".join(c if c.isalnum() and c.isascii() or c in "-_." else "_"
                   for c in str(name).split("/")[-1])[:64].lstrip(".")
    folder = _os.path.join(tmp, role)
    _os.makedirs(folder, exist_ok=True)
    path = _os.path.join(folder, (safe or role) + ".json")
    with open(path, "w") as f:
        _json.dump(doc, f)
    return path


def _names(tmp):
    """What messages call the files of tmp: their file names alone."""
    names = {_os.path.join(tmp, r) + _os.sep: ""
             for r in ("model", "cluster", "jobs")}
    names[tmp + _os.sep] = ""
    return names


def _model_arg(tmp, model, example_inputs, trace_options):
    """The --model argument for any form of model."""
    if isinstance(model, (str, _os.PathLike)):
        return _path(model)
    if isinstance(model, dict):
        name = str(model.get("name") or model.get("_name_or_path") or
                   model.get("model_type") or "model")
        return _write_json(tmp, "model", name, model)
    if hasattr(model, "named_parameters") and hasattr(model, "forward"):
        import strata_trace
        if example_inputs is None:
            raise TypeError("strata: a torch module needs example_inputs="
                            "(the inputs of one micro-batch)")
        trace = strata_trace.export(model, example_inputs, **trace_options)
        return _write_json(tmp, "model", trace["name"], trace)
    raise TypeError("strata: a model is a name, a path, a dict or a torch "
                    "module, not %s" % type(model).__name__)


def _cluster_arg(tmp, cluster):
    if isinstance(cluster, dict):
        return _write_json(tmp, "cluster", cluster.get("name", "cluster"),
                           cluster)
    if isinstance(cluster, (str, _os.PathLike)):
        return _path(cluster)
    raise TypeError("strata: a cluster is a preset name, a spec file or a "
                    "dict, not %s" % type(cluster).__name__)


def _is_preset(cluster):
    return isinstance(cluster, str) and not _os.path.exists(cluster) and \
        not cluster.endswith(".json")


# ---- models ---------------------------------------------------------------

def trace_info(model: _Model, example_inputs: _Optional[_Sequence[_Any]] = None,
               trace_options: _Optional[_Mapping[str, _Any]] = None,
               **options: _Any) -> _Dict[str, _Any]:
    """A model's sizes and totals (parameters, FLOPs a micro-batch, ...):
    `strata trace info --json MODEL [options]`."""
    with _tempfile.TemporaryDirectory(prefix="strata-") as tmp:
        m = _model_arg(tmp, model, example_inputs, trace_options or {})
        out = command("trace", "info", m, "--json", *_options(options),
                      names=_names(tmp)).stdout
    return _json.loads(out)


def _import(kind, path, output, options):
    with _tempfile.TemporaryDirectory(prefix="strata-") as tmp:
        dest = _os.path.join(tmp, "trace.json")
        command("trace", "import", kind, _path(path), *_options(options),
                "-o", dest)
        with open(dest) as f:
            text = f.read()
    if output is not None:
        _write_atomic(_os.fspath(output), text.encode())
    return _json.loads(text)


def import_onnx(path: _PathLike, output: _Optional[_PathLike] = None,
                **options: _Any) -> _Dict[str, _Any]:
    """An ONNX file (torch.onnx.export's, Hugging Face's) as a trace dict:
    `strata trace import onnx PATH [options]` (seq=, micro_batch=, dtype=
    where the file leaves them open); written to output too if given."""
    return _import("onnx", path, output, options)


def import_hf(path: _PathLike, output: _Optional[_PathLike] = None,
              **options: _Any) -> _Dict[str, _Any]:
    """A Hugging Face config.json as a trace dict: `strata trace import hf
    PATH [options]`; written to output too if given."""
    return _import("hf", path, output, options)


def _write_atomic(path, data):
    folder = _os.path.dirname(_os.path.abspath(path))
    fd, tmp = _tempfile.mkstemp(prefix=".strata-", dir=folder)
    try:
        with _os.fdopen(fd, "wb") as f:
            f.write(data)
        _os.replace(tmp, path)
    except BaseException:
        if _os.path.exists(tmp):
            _os.unlink(tmp)
        raise


# ---- plans ----------------------------------------------------------------

class Plan:
    """A plan: the bytes of its plan file (.splan, docs/plan-format.md)
    and the cluster it was made on (passed to show and export when it is a
    spec rather than a preset the plan names)."""

    def __init__(self, data: bytes, cluster: _Optional[_Cluster] = None,
                 name: str = "plan") -> None:
        self.data = bytes(data)
        self.name = name  # what messages call it: its file, once saved
        self._cluster = None if _is_preset(cluster) else cluster
        self._dict = None
        self._summary = None

    def _file(self, tmp, base="plan.splan"):
        """A path to the plan: its own file while that still holds these
        bytes (so that exports that name their plan name it), else a
        temporary copy."""
        if self.name != "plan" and _os.path.isfile(self.name):
            with open(self.name, "rb") as f:
                if f.read() == self.data:
                    return _path(self.name)
        path = _os.path.join(tmp, base)
        with open(path, "wb") as f:
            f.write(self.data)
        return path

    def _run(self, *args, cluster=True, extra=()):
        with _tempfile.TemporaryDirectory(prefix="strata-") as tmp:
            path = self._file(tmp)
            argv = [args[0]] + [path if a is Plan else a for a in args[1:]]
            argv += list(extra)
            if cluster and self._cluster is not None and \
                    "--cluster" not in argv:
                argv += ["--cluster", _cluster_arg(tmp, self._cluster)]
            names = _names(tmp)
            names[path] = self.name
            return command(*argv, names=names).stdout

    def to_dict(self) -> _Dict[str, _Any]:
        """The plan as `strata show --json` prints it."""
        if self._dict is None:
            self._dict = _json.loads(self._run("show", Plan, "--json"))
        return _json.loads(_json.dumps(self._dict))  # the caller's own copy

    @property
    def summary(self) -> str:
        """The summary, as `strata show` prints it."""
        if self._summary is None:
            self._summary = self._run("show", Plan)
        return self._summary

    def __getitem__(self, key: str) -> _Any:
        """A field of to_dict(): p["tp"], p["step_seconds"], ..."""
        return self.to_dict()[key]

    @property
    def step_seconds(self) -> float:
        return self.to_dict()["step_seconds"]

    @property
    def tokens_per_second(self) -> float:
        return self.to_dict()["tokens_per_second"]

    @property
    def mfu(self) -> float:
        """Against the peak of the precision used (the dict's mfu_peak)."""
        return self.to_dict()["mfu"]

    @property
    def peak_memory_bytes(self) -> float:
        return self.to_dict()["peak_memory_bytes"]

    def __str__(self) -> str:
        return self.summary

    def __repr__(self) -> str:
        d = self.to_dict()
        return "<strata.Plan %s on %s, %s GPUs, %d bytes>" % (
            d.get("model"), d.get("cluster"), d.get("devices"),
            len(self.data))

    def _repr_html_(self) -> str:
        return ('<pre style="font-size: 90%%">%s</pre>'
                % _html.escape(self.summary))

    def save(self, path: _PathLike) -> None:
        """Write the plan file (a temporary file, then renamed)."""
        path = _os.fspath(path)
        _write_atomic(path, self.data)
        self.name = path

    def export(self, target: str, **options: _Any) -> str:
        """The text of `strata export TARGET PLAN [options]`: "megatron",
        "deepspeed", "torch", "torchtitan", "timeline", "html",
        "hostfile" (docs/exports.md)."""
        cluster = options.pop("cluster", None)
        extra = _options(options)
        with _tempfile.TemporaryDirectory(prefix="strata-") as tmp:
            if cluster is not None:
                extra += ["--cluster", _cluster_arg(tmp, cluster)]
            return self._run("export", str(target), Plan, extra=extra)

    def diff(self, other: "Plan", text: bool = False,
             **options: _Any) -> _Union[str, _Dict[str, _Any]]:
        """What changed from this plan to other: `strata diff --json`'s
        document, or its text with text=True."""
        if not isinstance(other, Plan):
            raise TypeError("strata: diff takes another Plan")
        with _tempfile.TemporaryDirectory(prefix="strata-") as tmp:
            a, b = self._file(tmp, "old.splan"), other._file(tmp, "new.splan")
            argv = ["diff", a, b] + _options(options)
            if not text:
                argv.append("--json")
            # diff's exit codes are diff(1)'s: 1 they differ, 3 only the
            # hosts changed; 2 is its trouble (usage, bad input)
            r = command(*argv, names={a: self.name, b: other.name},
                        ok=(0, 1, 3))
        return r.stdout if text else _json.loads(r.stdout)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Plan) and self.data == other.data

    def __hash__(self) -> int:
        return hash(self.data)


def load_plan(path: _PathLike, cluster: _Optional[_Cluster] = None) -> Plan:
    """A plan file read back (checked: a corrupt, truncated or newer file
    is a BadInputError).  cluster: the spec it was made on, when not a
    preset."""
    with open(_os.fspath(path), "rb") as f:
        p = Plan(f.read(), cluster, _os.fspath(path))
    p.to_dict()
    return p


def plan(model: _Model, cluster: _Cluster,
         example_inputs: _Optional[_Sequence[_Any]] = None,
         trace_options: _Optional[_Mapping[str, _Any]] = None,
         **options: _Any) -> Plan:
    """Plan model on cluster: the Plan with the least step time that fits.
    Options are `strata plan`'s (global_batch=, zero=, framework=,
    time_limit=, threads=, ...; progress is quiet unless quiet=False).
    Nothing fits: InfeasibleError, its result the command's JSON answer."""
    options.setdefault("quiet", True)
    if options["quiet"] is False:
        options.pop("quiet")
    with _tempfile.TemporaryDirectory(prefix="strata-") as tmp:
        out = _os.path.join(tmp, "plan.splan")
        argv = ["plan", "--model",
                _model_arg(tmp, model, example_inputs, trace_options or {}),
                "--cluster", _cluster_arg(tmp, cluster)]
        # --json: where nothing fits, the error carries the command's
        # answer (the reason) as its result
        argv += _options(options) + ["--json", "-o", out]
        # a dict or module model is a file of the temporary folder: messages
        # name it by its file name alone
        command(*argv, names=_names(tmp))
        with open(out, "rb") as f:
            data = f.read()
    return Plan(data, cluster)


def fleet(jobs: _Union[_PathLike, _Mapping[str, _Any],
                      _Sequence[_Mapping[str, _Any]]],
          cluster: _Cluster, output: _Optional[_PathLike] = None,
          **options: _Any) -> _Dict[str, _Any]:
    """Split cluster among training jobs (`strata fleet`, docs/cli.md):
    jobs is a JOBS.json path, its document ({"objective", "jobs": [...]})
    or the list of jobs ({"name", "model", "weight", "min_nodes",
    "max_nodes", "tokens", "deadline" and any option of strata plan:
    "seq", "precision", "global_batch", ...}); output a folder for each
    job's NAME.splan and its Slurm batch script NAME.slurm; options as
    the command's (objective="throughput", time_limit=10).  Returns the
    `--json` summary; the jobs with min_nodes or a deadline cannot all
    run: InfeasibleError."""
    options.setdefault("quiet", True)
    if options["quiet"] is False:
        options.pop("quiet")
    with _tempfile.TemporaryDirectory(prefix="strata-") as tmp:
        if isinstance(jobs, (str, _os.PathLike)):
            path = _path(jobs)
        elif isinstance(jobs, dict):
            path = _write_json(tmp, "jobs", "jobs", jobs)
        elif isinstance(jobs, (list, tuple)):
            path = _write_json(tmp, "jobs", "jobs", {"jobs": list(jobs)})
        else:
            raise TypeError("strata: jobs are a JOBS.json path, its dict or "
                            "a list of jobs, not %s" % type(jobs).__name__)
        argv = ["fleet", path, "--cluster", _cluster_arg(tmp, cluster)]
        argv += _options(options) + ["--json"]
        if output is not None:
            argv += ["-o", _path(output)]
        r = command(*argv, names=_names(tmp))
    return _json.loads(r.stdout)


def estimate(model: _Model, cluster: _Cluster,
             example_inputs: _Optional[_Sequence[_Any]] = None,
             trace_options: _Optional[_Mapping[str, _Any]] = None,
             **options: _Any) -> _Dict[str, _Any]:
    """Memory and time of one configuration (tp=, pp=, dp=, micro_batch=,
    ... as `strata estimate` takes them): its `--json` document.  A
    configuration that does not fit is an answer, not an error: the
    document says so (exit 3 of the command is returned, not raised)."""
    with _tempfile.TemporaryDirectory(prefix="strata-") as tmp:
        argv = ["estimate", "--model",
                _model_arg(tmp, model, example_inputs, trace_options or {}),
                "--cluster", _cluster_arg(tmp, cluster)]
        argv += _options(options) + ["--json"]
        r = command(*argv, ok=(0, 3), names=_names(tmp))
    if not r.stdout.lstrip().startswith("{"):
        raise InternalError("strata estimate printed no JSON", 4,
                            "estimate", r.stderr)
    return _json.loads(r.stdout)
