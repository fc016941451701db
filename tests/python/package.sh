#!/usr/bin/env bash
# The Python package as a user installs it: a virtual environment of
# Debian's python3 (with its site packages, for torch), then
#   python3 -m pip install --no-build-isolation --no-deps ./python
# (offline: the library is built from this tree, here the build folder the
# suite runs from, STRATA_BUILD_DIR), then the package's tests
# (test_package.py) and docs/python.md's walk-through, run as written.
# Exit 77 (skipped) with a message where Debian's python3 has no venv or
# setuptools.
# Usage: package.sh STRATA_BINARY
set -u
bin=$(readlink -f "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=/usr/bin/python3
if ! [ -x "$py" ] || ! "$py" -c "import venv, ensurepip, setuptools, wheel" 2>/dev/null; then
  echo "skipped: Debian's python3 with venv, setuptools and wheel is needed (apt-get install python3-venv python3-setuptools python3-wheel)"
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
echo "ok: the package installs, its tests pass, docs/python.md runs"
