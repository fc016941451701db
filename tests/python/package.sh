#!/usr/bin/env bash
# The Python package as a user installs it: a virtual environment of
# Debian's python3 (with its site packages, for torch), then
#   python3 -m pip install --no-build-isolation --no-deps ./python
# (offline: the library is built from this tree, here the build folder the
# suite runs from, STRATA_BUILD_DIR), then the package's tests
# (test_package.py) and docs/python.md's walk-through, run as written.
# Then docs/python.md's two commands with other Pythons: Debian's in a
# venv of its own (pip and setuptools, no wheel: setuptools' backend could
# not build a wheel there), and the python3 first on PATH where that is
# another one (pyenv's, with no wheel package either); each must install
# the package and run `python3 -m strata --version` and a plan.
# Exit 77 (skipped) with a message where Debian's python3 has no venv.
# Usage: package.sh STRATA_BINARY
set -u
bin=$(readlink -f "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=/usr/bin/python3
if ! [ -x "$py" ] || ! "$py" -c "import venv, ensurepip" 2>/dev/null; then
  echo "skipped: Debian's python3 with venv is needed (apt-get install python3-venv)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-py.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$py" -m venv --system-site-packages "$work/venv" || exit 1
vpy="$work/venv/bin/python3"
STRATA_BUILD_DIR=$(dirname "$bin") "$vpy" -m pip install -q --no-build-isolation \
  --no-deps --no-cache-dir "$root/python" >"$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; echo "FAIL: pip install ./python"; exit 1; }
# from elsewhere than the tree: the installed package, not python/strata
cd "$work" || exit 1
"$vpy" "$here/test_package.py" "$bin" || exit 1
# the walk-through: every ```python block of docs/python.md, in order, as
# one script in a fresh folder
mkdir "$work/walk" && cd "$work/walk" || exit 1
awk '/^```python$/{on=1; next} /^```$/{on=0} on' "$root/docs/python.md" >walk.py
[ -s walk.py ] || { echo "FAIL: no python block in docs/python.md"; exit 1; }
STRATA_DOCS_DATA="$root/tests/data" "$vpy" walk.py ||
  { echo "FAIL: docs/python.md's walk-through"; exit 1; }
# docs/python.md's commands with other Pythons (see the head)
others=("$py")
path_py=$(cd / && command -v python3 || true)
if [ -n "$path_py" ] && [ "$(cd / && "$path_py" -c 'import sys; print(sys.executable)')" != "$(readlink -f "$py")" ] &&
  "$path_py" -c "import venv, ensurepip" 2>/dev/null; then
  others+=("$path_py")
fi
n=0
for other in "${others[@]}"; do
  n=$((n + 1))
  venv="$work/other$n"
  if [ "$other" = "$py" ]; then
    "$py" -m venv "$venv" >"$work/venv$n.log" 2>&1   # no system site packages
  else
    "$other" -m venv --system-site-packages "$venv" >"$work/venv$n.log" 2>&1
  fi || { cat "$work/venv$n.log"; echo "FAIL: $other -m venv"; exit 1; }
  (cd "$root" && STRATA_BUILD_DIR=$(dirname "$bin") "$venv/bin/python3" -m pip install -q \
    --no-build-isolation --no-deps --no-cache-dir ./python) >"$work/pip$n.log" 2>&1 ||
    { cat "$work/pip$n.log"; echo "FAIL: pip install ./python with $other ($("$other" --version 2>&1))"; exit 1; }
  out=$(cd "$work" && "$venv/bin/python3" -m strata --version &&
    "$venv/bin/python3" -c 'import strata; print(strata.plan("gpt-1.7b", "dgx-h100:1")["tp"] >= 1)') ||
    { echo "$out"; echo "FAIL: the package installed with $other does not run"; exit 1; }
  [ "$out" = "$("$bin" --version)"$'\n'"True" ] ||
    { echo "$out"; echo "FAIL: the package installed with $other: not the program's version and a plan"; exit 1; }
  echo "ok: docs/python.md's commands with $other ($("$other" --version 2>&1))"
done
echo "ok: the package installs, its tests pass, docs/python.md runs"
