#!/usr/bin/env bash
# run.sh - install the build into a scratch prefix and use it as a user
# would: a small C program (plan_small.c) compiled and run through
# pkg-config (shared, and static with --static) and through CMake's
# find_package(Strata) (Strata::strata and Strata::strata_static); the
# documentation the help texts name in share/doc/strata, and the man page
# (read by groff and man where present, and holding every option of every
# help text); the Python package from the prefix; then the prefix is moved
# and pkg-config must still find it.
#
# Usage: run.sh BUILD_DIR SOURCE_DIR
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d "$build/install-test-XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
pass=0 fail=0
check() {
  if eval "$2"; then pass=$((pass + 1)); else
    echo "FAIL: $1"
    fail=$((fail + 1))
  fi
}
cc=${CC:-cc}
want="devices 8 tp "

cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1
check "cmake --install (see $work/install.log)" '[ $? -eq 0 ]'
libdir=$(dirname "$(find "$prefix" -name 'libstrata.a' | head -1)")
check "libstrata.a installed" '[ -f "$libdir/libstrata.a" ]'
so=$(find "$libdir" -name 'libstrata.so.*.*.*' | head -1)
check "a versioned libstrata.so installed" '[ -n "$so" ]'
soname=$(readelf -d "$so" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
check "SONAME libstrata.so.N is a link to it (got '$soname')" \
  '[ -n "$soname" ] && [ -L "$libdir/$soname" ] && [ -L "$libdir/libstrata.so" ]'
check "only strata_* exported" \
  '! nm -D --defined-only "$so" | awk "{print \$3}" | grep -v "^strata_" | grep -q .'
# the library without the CLI: the commands are libstrata_cli's
check "libstrata.so does not carry the CLI" \
  '! nm -D --defined-only "$so" | grep -q " strata_command_run$"'
check "libstrata.a does not carry the CLI" \
  '! nm "$libdir/libstrata.a" 2>/dev/null | grep -q " T strata_command_run$"'
check "strata.h is the library's only (no strata/command.h)" \
  '! grep -q "^#include.*command.h" "$prefix/include/strata/strata.h"'
check "libstrata_cli.so installed, with strata_command_run" \
  'nm -D --defined-only "$libdir/libstrata_cli.so" | grep -q " strata_command_run$"'

# ---- pkg-config
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pc_prefix=$(pkg-config --variable=prefix strata)
check "strata.pc points into the prefix (got $pc_prefix)" \
  '[ "$(cd "$pc_prefix" && pwd)" = "$(cd "$prefix" && pwd)" ]'
check "pkg-config --static pulls no private library of a dependency" \
  '! pkg-config --static --libs strata | grep -q -- -ludev'
# shellcheck disable=SC2046
$cc -o "$work/pc_shared" "$src/tests/install/plan_small.c" $(pkg-config --cflags --libs strata) \
  -Wl,-rpath,"$libdir" 2>"$work/cc1.log"
check "builds with pkg-config --libs (see $work/cc1.log)" '[ -x "$work/pc_shared" ]'
check "links libstrata.so" 'ldd "$work/pc_shared" | grep -q "libstrata.so"'
"$work/pc_shared" >"$work/out1" 2>&1
check "runs: $(head -c 200 "$work/out1")" 'grep -q "$want.*round trip ok" "$work/out1"'
# static: the archive and pkg-config's private libraries
# shellcheck disable=SC2046
$cc -o "$work/pc_static" "$src/tests/install/plan_small.c" $(pkg-config --cflags strata) \
  "$libdir/libstrata.a" $(pkg-config --static --libs-only-l strata | sed 's/-lstrata / /') \
  2>"$work/cc2.log"
check "builds static with pkg-config --static (see $work/cc2.log)" '[ -x "$work/pc_static" ]'
check "does not need libstrata.so" '! ldd "$work/pc_static" | grep -q "libstrata"'
"$work/pc_static" >"$work/out2" 2>&1
check "static runs: $(head -c 200 "$work/out2")" 'grep -q "$want.*round trip ok" "$work/out2"'

# ---- docs/api.md's example, cut out of the page, built as the page says
# (pkg-config alone: its -rpath finds libstrata.so without LD_LIBRARY_PATH)
sed -n '/<!-- api-example begin -->/,/<!-- api-example end -->/p' "$src/docs/api.md" |
  sed '1,2d;$d' | sed '$d' >"$work/plan_example.c"
check "docs/api.md holds the example" 'grep -q "int main" "$work/plan_example.c"'
# shellcheck disable=SC2046
$cc -Wall -Werror -o "$work/plan_example" "$work/plan_example.c" \
  $(pkg-config --cflags --libs strata) 2>"$work/cc3.log"
check "the example builds with -Wall -Werror (see $work/cc3.log)" '[ -x "$work/plan_example" ]'
(cd "$work" && env -u LD_LIBRARY_PATH ./plan_example >"$work/out3" 2>&1)
check "the example runs from the prefix: $(tail -c 300 "$work/out3")" \
  'grep -q "^tp [0-9]*, pp [0-9]*, dp [0-9]*: [0-9]* tokens/s, MFU [1-9]" "$work/out3" &&
   grep -q "megatron arguments: [1-9][0-9]* bytes" "$work/out3" && [ -s "$work/example.splan" ]'
"$prefix/bin/strata" show "$work/example.splan" >"$work/out4" 2>&1
check "the installed strata reads the example's plan" 'grep -q "MFU" "$work/out4"'
(cd "$work" && ./plan_example gpt3-175b dgx-h100:0 >"$work/out5" 2>&1)
rc5=$?
check "the example's error path exits 1 with the reason: $(head -c 200 "$work/out5")" \
  '[ "$rc5" -eq 1 ] && grep -q "^plan_example: .*(E[A-Z]*)$" "$work/out5"'
check "nightly-replan.sh installed, executable" '[ -x "$prefix/share/strata/nightly-replan.sh" ]'
check "strata_trace.py installed" '[ -f "$prefix/share/strata/python/strata_trace.py" ]'

# ---- the documentation the --help texts point at, and the man page
docdir="$prefix/share/doc/strata"
for f in "$src"/docs/*.md "$src/README.md"; do
  check "$(basename "$f") installed in share/doc/strata" 'cmp -s "$f" "$docdir/$(basename "$f")"'
done
# every docs/NAME.md a help text names (strata --help and every command's)
helps=$("$prefix/bin/strata" --help; for c in trace "trace gen" "trace info" "trace import hf" \
  "trace import onnx" topo "topo collect" stage compare plan fleet show diff export estimate calibrate; do
  # shellcheck disable=SC2086
  "$prefix/bin/strata" $c --help
done)
named=$(printf '%s\n' "$helps" | tr -s ' \n' ' ' | grep -o 'docs/[a-z-]*\.md' | sort -u)
check "the help texts name docs (got: $(echo $named))" '[ "$(echo "$named" | wc -l)" -ge 5 ]'
for d in $named; do
  check "$d, named by a help text, is installed" '[ -f "$docdir/${d#docs/}" ]'
done
man1="$prefix/share/man/man1/strata.1"
check "the man page is installed in share/man/man1" '[ -s "$man1" ]'
if [ -s "$man1" ]; then
  check "the man page is roff with a title, a name and every command" \
    'grep -q "^\.TH STRATA 1 " "$man1" && grep -q "^\.SH NAME" "$man1" &&
     for c in trace "trace gen" "trace import onnx" "topo collect" plan fleet export calibrate; do
       grep -q "^\.SS \"strata $c\"" "$man1" || exit 1; done'
  if command -v groff >/dev/null 2>&1; then
    groff -man -ww -z "$man1" >"$work/groff.log" 2>&1
    check "groff reads the man page without a warning: $(head -c 300 "$work/groff.log")" \
      '[ $? -eq 0 ] && ! [ -s "$work/groff.log" ]'
  fi
  if command -v man >/dev/null 2>&1; then
    MANWIDTH=200 man -l "$man1" 2>"$work/man.err" | col -b >"$work/man.txt" 2>/dev/null
    check "man -l shows the page: $(head -c 200 "$work/man.err")" \
      'grep -q "strata - plan how to train" "$work/man.txt"'
  else
    sed -e 's/\\f[BIR]//g' -e 's/\\-/-/g' -e 's/\\e/\\/g' "$man1" >"$work/man.txt"
  fi
  # every option of every help text is in the page (it is made from them)
  missing=$(printf '%s\n' "$helps" | grep -o -- '^ *--[a-z0-9[-]*[]a-z0-9-]*' | tr -d ' ' | sort -u |
    while read -r o; do grep -qF -- "$o" "$work/man.txt" || echo "$o"; done)
  check "every option of the help texts is in the man page (missing: $(echo $missing))" '[ -z "$missing" ]'
fi

# ---- CMake
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" >"$work/cmake.log" 2>&1 &&
  cmake --build "$work/consumer" >>"$work/cmake.log" 2>&1
check "find_package(Strata) project builds (see $work/cmake.log)" '[ $? -eq 0 ]'
for t in plan_shared plan_static; do
  "$work/consumer/$t" >"$work/$t.out" 2>&1
  check "CMake $t runs: $(head -c 200 "$work/$t.out")" 'grep -q "$want.*round trip ok" "$work/$t.out"'
done
check "Strata::strata is the shared library" 'ldd "$work/consumer/plan_shared" | grep -q libstrata.so'

# ---- the Python package from the prefix (share/strata/python): pip
# bundles the prefix's libstrata_cli.so; the package then runs after the
# prefix is gone (below)
py=/usr/bin/python3
if [ -x "$py" ] && "$py" -c "import venv, ensurepip" 2>/dev/null; then
  "$py" -m venv --system-site-packages "$work/venv" >"$work/venv.log" 2>&1 &&
    "$work/venv/bin/python3" -m pip install -q --no-build-isolation --no-deps \
      --no-cache-dir "$prefix/share/strata/python" >"$work/pip.log" 2>&1
  check "pip installs the package from the prefix (see $work/pip.log)" '[ $? -eq 0 ]'
  pycheck='import strata; p = strata.plan(model="gpt3-175b", cluster="dgx-h100:16"); print(strata.version(), p["tp"] * p["pp"] * p["dp"] * p["options"].get("cp", 1) > 0, strata.library_path())'
  (cd "$work" && "$work/venv/bin/python3" -c "$pycheck") >"$work/py.out" 2>&1
  check "the package plans: $(head -c 300 "$work/py.out")" 'grep -q "^[0-9.]* True .*site-packages/strata/libstrata_cli.so" "$work/py.out"'
  (cd "$work" && "$work/venv/bin/python3" -m strata --version) >"$work/pym.out" 2>&1
  check "python3 -m strata is the program: $(head -c 200 "$work/pym.out")" \
    '[ "$(cat "$work/pym.out")" = "$("$prefix/bin/strata" --version)" ]'
else
  echo "skipped the Python package: Debian's python3 with venv is needed"
fi

# ---- the prefix moved: pkg-config still right
mv "$prefix" "$work/moved"
export PKG_CONFIG_PATH="${libdir/$prefix/$work/moved}/pkgconfig"
check "after a move, pkg-config finds the headers" \
  '[ -f "$(pkg-config --variable=includedir strata)/strata/strata.h" ]'
if [ -x "$work/venv/bin/python3" ]; then
  (cd "$work" && env -u PKG_CONFIG_PATH "$work/venv/bin/python3" -c "$pycheck") >"$work/py2.out" 2>&1
  check "the package runs without the prefix: $(head -c 300 "$work/py2.out")" 'grep -q "^[0-9.]* True" "$work/py2.out"'
fi

echo "$pass passed, $fail failed"
if [ "$fail" -ne 0 ]; then trap - EXIT; echo "kept $work"; exit 1; fi
