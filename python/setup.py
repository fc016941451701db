"""Build step of the strata package: put a libstrata.so beside the code.

The library comes from, in this order:
  1. STRATA_LIBRARY, the path of a built libstrata.so (copied);
  2. the Strata source tree this folder belongs to (../CMakeLists.txt),
     built with CMake into STRATA_BUILD_DIR (default: build/libstrata
     under this folder; an existing build folder of the tree is reused as
     it is, so that installing after `scripts/setup.sh build` builds
     nothing twice);
  3. an installed Strata this folder belongs to (PREFIX/share/strata/
     python, as `cmake --install` puts it): PREFIX's lib folder;
  4. none: nothing is bundled, and the package looks for an installed
     library when it is imported (strata/_lib.py says where).
The metadata is in pyproject.toml.
"""
import glob
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(HERE)


def _from_tree():
    if not os.path.isfile(os.path.join(TREE, "CMakeLists.txt")) or \
            not os.path.isdir(os.path.join(TREE, "cli")):
        return None
    build = os.environ.get("STRATA_BUILD_DIR") or \
        os.path.join(HERE, "build", "libstrata")
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        subprocess.check_call(
            ["cmake", "-S", TREE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
             "-DSTRATA_TESTS=OFF", "-DSTRATA_BENCH=OFF"])
    subprocess.check_call(
        ["cmake", "--build", build, "--target", "strata_shared", "-j",
         str(os.cpu_count() or 1)])
    found = sorted(glob.glob(os.path.join(build, "libstrata.so.*.*.*")))
    if not found:
        raise RuntimeError("no libstrata.so.X.Y.Z in %s after the build"
                           % build)
    return found[-1]


def _from_prefix():
    prefix = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
    if not os.path.isfile(os.path.join(prefix, "include", "strata",
                                       "strata.h")):
        return None
    for pattern in ("lib/libstrata.so.*.*.*", "lib64/libstrata.so.*.*.*",
                    "lib/*/libstrata.so.*.*.*"):
        found = sorted(glob.glob(os.path.join(prefix, pattern)))
        if found:
            return found[-1]
    return None


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = os.environ.get("STRATA_LIBRARY") or _from_tree() or \
            _from_prefix()
        if not lib:
            print("strata: no source tree, prefix or STRATA_LIBRARY: the "
                  "package will look for an installed libstrata.so")
            return
        if not os.path.isfile(lib):
            raise RuntimeError("STRATA_LIBRARY=%s is not a file" % lib)
        dest = os.path.join(self.build_lib, "strata", "libstrata.so")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(lib, dest)
        os.chmod(dest, 0o755)


class WithLibrary(Distribution):
    """The wheel holds a shared library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=WithLibrary)
