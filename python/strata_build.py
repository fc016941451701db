"""The build backend of the strata package (PEP 517), with nothing to install.

pip builds a wheel through a backend.  setuptools' needs the `wheel`
package for bdist_wheel before setuptools 70.1, which a Python from
elsewhere than Debian (pyenv's, a plain venv's) does not have, and a
Python of 3.12 or later has no setuptools in a venv at all; an offline
machine cannot fetch either.  This backend uses the standard library
only: a wheel is a zip of the files and three small texts (PEP 427,
https://packaging.python.org/en/latest/specifications/binary-distribution-format/),
so `pip install ./python` works with any python3 >= 3.9 that has pip.

The wheel holds a libstrata_cli.so (the library with the commands that
strata_command_run runs; CMake's strata_cli_shared) beside the code, from,
in this order:
  1. STRATA_LIBRARY, the path of a built libstrata_cli.so (copied);
  2. the Strata source tree this folder belongs to (../CMakeLists.txt),
     built with CMake into STRATA_BUILD_DIR (default: build/libstrata
     under this folder; an existing build folder of the tree is reused as
     it is, so that installing after `scripts/setup.sh build` builds
     nothing twice);
  3. an installed Strata this folder belongs to (PREFIX/share/strata/
     python, as `cmake --install` puts it): PREFIX's lib folder;
  4. none: nothing is bundled (a wheel for any platform), and the package
     looks for an installed libstrata_cli.so when it is imported (strata/_lib.py
     says where).
The version is strata/__init__.py's __version__.
"""
import base64
import glob
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(HERE)
NAME = "strata"
# what the wheel and the sdist hold, relative to this folder
FILES = ["strata/__init__.py", "strata/__main__.py", "strata/_lib.py",
         "strata/py.typed", "strata_trace.py"]
SDIST_FILES = FILES + ["pyproject.toml", "strata_build.py", "README.md"]


def _version():
    with open(os.path.join(HERE, "strata", "__init__.py")) as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError("strata/__init__.py has no __version__")
    return m.group(1)


def _metadata(version):
    with open(os.path.join(HERE, "README.md")) as f:
        readme = f.read()
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: Plan how to train a large model on a GPU cluster: "
            "Strata's planner from Python\n"
            "License: see the Strata source tree\n"
            "Requires-Python: >=3.9\n"
            "Description-Content-Type: text/markdown\n\n%s"
            % (NAME, version, readme))


def _from_tree():
    if not os.path.isfile(os.path.join(TREE, "CMakeLists.txt")) or \
            not os.path.isdir(os.path.join(TREE, "cli")):
        return None
    build = os.environ.get("STRATA_BUILD_DIR") or \
        os.path.join(HERE, "build", "libstrata")
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        subprocess.check_call(
            ["cmake", "-S", TREE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
             "-DSTRATA_TESTS=OFF", "-DSTRATA_BENCH=OFF"],
            stdout=sys.stderr)
    subprocess.check_call(
        ["cmake", "--build", build, "--target", "strata_cli_shared", "-j",
         str(os.cpu_count() or 1)], stdout=sys.stderr)
    found = sorted(glob.glob(os.path.join(build, "libstrata_cli.so.*.*.*")))
    if not found:
        raise RuntimeError("no libstrata_cli.so.X.Y.Z in %s after the build"
                           % build)
    return found[-1]


def _from_prefix():
    prefix = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
    if not os.path.isfile(os.path.join(prefix, "include", "strata",
                                       "strata.h")):
        return None
    for pattern in ("lib/libstrata_cli.so.*.*.*", "lib64/libstrata_cli.so.*.*.*",
                    "lib/*/libstrata_cli.so.*.*.*"):
        found = sorted(glob.glob(os.path.join(prefix, pattern)))
        if found:
            return found[-1]
    return None


def _library():
    lib = os.environ.get("STRATA_LIBRARY")
    if lib and not os.path.isfile(lib):
        raise RuntimeError("STRATA_LIBRARY=%s is not a file" % lib)
    lib = lib or _from_tree() or _from_prefix()
    if not lib:
        print("strata: no source tree, prefix or STRATA_LIBRARY: the "
              "package will look for an installed libstrata_cli.so",
              file=sys.stderr)
    return lib


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "%s,sha256=%s,%d" % (arcname, digest.rstrip(b"=").decode(),
                                len(data))


def _zip_add(z, arcname, data, mode=0o644):
    info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, data)


# ---- PEP 517 hooks --------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    version = _version()
    lib = _library()
    # the library is loaded with ctypes, not imported: any Python 3, but
    # this platform's wheel when it holds one
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform()) if lib else "any"
    tag = "py3-none-" + plat
    info = "%s-%s.dist-info" % (NAME, version)
    files = []
    for rel in FILES:
        with open(os.path.join(HERE, rel), "rb") as f:
            files.append((rel, f.read(), 0o644))
    if lib:
        with open(lib, "rb") as f:
            files.append(("strata/libstrata_cli.so", f.read(), 0o755))
    files.append((info + "/METADATA", _metadata(version).encode(), 0o644))
    files.append((info + "/WHEEL", (
        "Wheel-Version: 1.0\nGenerator: strata_build\n"
        "Root-Is-Purelib: %s\nTag: %s\n"
        % ("false" if lib else "true", tag)).encode(), 0o644))
    files.append((info + "/top_level.txt", b"strata\nstrata_trace\n", 0o644))
    name = "%s-%s-%s.whl" % (NAME, version, tag)
    record = [_record_line(a, d) for a, d, _ in files]
    record.append(info + "/RECORD,,")
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for arcname, data, mode in files:
            _zip_add(z, arcname, data, mode)
        _zip_add(z, info + "/RECORD", ("\n".join(record) + "\n").encode())
    return name


def build_sdist(sdist_directory, config_settings=None):
    version = _version()
    base = "%s-%s" % (NAME, version)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz",
                      format=tarfile.PAX_FORMAT) as t:
        for rel in SDIST_FILES:
            t.add(os.path.join(HERE, rel), base + "/" + rel)
        data = _metadata(version).encode()
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size, ti.mode = len(data), 0o644
        t.addfile(ti, io.BytesIO(data))
    return name
