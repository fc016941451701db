"""The Strata library through ctypes: finding it, and running a command.

Every call of the package is one `strata` command run inside this process
by strata_command_run() (include/strata/command.h): the command's options,
checks, messages and exit codes are the program's, and what it prints
comes back as text.  The C side serialises the calls; ctypes releases the
GIL while one runs, so other Python threads go on.

The library is libstrata_cli.so, the Strata library with the commands
(the core libstrata.so does not carry them), looked for in this order:
STRATA_LIBRARY (a path), the copy installed with the package
(strata_build.py), the libdir that pkg-config names for strata
(`pkg-config --variable=libdir strata`), then the dynamic loader's search
path (ctypes.util.find_library).
"""
import ctypes
import ctypes.util
import os
import subprocess
import threading

_lock = threading.Lock()
_lib = None
_where = None


def _candidates():
    env = os.environ.get("STRATA_LIBRARY")
    if env:
        yield env
        return
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "libstrata_cli.so")
    if os.path.isfile(here):
        yield here
    try:
        libdir = subprocess.run(
            ["pkg-config", "--variable=libdir", "strata"],
            capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        libdir = ""
    if libdir and os.path.isfile(os.path.join(libdir, "libstrata_cli.so")):
        yield os.path.join(libdir, "libstrata_cli.so")
    name = ctypes.util.find_library("strata_cli")
    if name:
        yield name


def _load():
    global _lib, _where
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            if not hasattr(lib, "strata_command_run"):
                tried.append("%s (no strata_command_run: an older Strata)"
                             % path)
                continue
            lib.strata_command_run.argtypes = [
                ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.POINTER(ctypes.c_size_t),
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.POINTER(ctypes.c_size_t)]
            lib.strata_command_run.restype = ctypes.c_int
            lib.strata_free.argtypes = [ctypes.c_void_p]
            lib.strata_free.restype = None
            lib.strata_version.argtypes = []
            lib.strata_version.restype = ctypes.c_char_p
            _lib, _where = lib, path
            return lib
        raise ImportError(
            "strata: cannot find the Strata library (libstrata_cli.so); "
            "install the package from a Strata source tree "
            "(python3 -m pip install --no-build-isolation --no-deps "
            "./python), install Strata (cmake --install) or set "
            "STRATA_LIBRARY to its path" +
            ("; tried: " + "; ".join(tried) if tried else ""))


def library_path():
    """The path of the libstrata_cli.so in use."""
    _load()
    return _where


def version():
    """The library's version, "X.Y.Z"."""
    return _load().strata_version().decode()


def _take(lib, ptr, n):
    if not ptr.value:
        return ""
    try:
        return ctypes.string_at(ptr.value, n.value).decode("utf-8",
                                                           "replace")
    finally:
        lib.strata_free(ptr.value)


def run_command(args):
    """Run `strata ARGS...` in this process: (exit code, stdout, stderr)."""
    lib = _load()
    argv = [b"strata"] + [os.fsencode(a) for a in args]
    vec = (ctypes.c_char_p * (len(argv) + 1))(*argv, None)
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    out_n, err_n = ctypes.c_size_t(), ctypes.c_size_t()
    rc = lib.strata_command_run(len(argv), vec, ctypes.byref(out),
                                ctypes.byref(out_n), ctypes.byref(err),
                                ctypes.byref(err_n))
    if rc < 0:
        raise MemoryError("strata: no memory for a command's output")
    return rc, _take(lib, out, out_n), _take(lib, err, err_n)
