#!/usr/bin/env bash
# inject.sh - the hostile-input reproducers end to end: each hostile name
# (a host named after its XML file in `topo collect`'s folder, a trace's
# model name, a hand-edited plan) is either refused with exit 2 and a
# message, or its exports are run as a node runs them -- the launch script
# under bash with a stand-in torchrun, each hostfile line's command, the
# Python modules imported, the TOML parsed -- and nothing it names runs:
# no PWNED* file appears in the scratch folder.
#
# Usage: inject.sh STRATA
set -u
strata=$1
here=$(cd "$(dirname "$0")" && pwd)
in=$here/inject
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok   $*"; passes=$((passes + 1)); }
mkdir -p "$tmp/bin" "$tmp/run"
cat >"$tmp/bin/torchrun" <<'EOS'
#!/bin/sh
exit 0
EOS
chmod +x "$tmp/bin/torchrun"
# what an injected line would call: each stand-in leaves a PWNED_ file
for c in curl wget nc id; do
    printf '#!/bin/sh\ntouch "%s/PWNED_%s"\n' "$tmp" "$c" >"$tmp/bin/$c"
    chmod +x "$tmp/bin/$c"
done
have_py=0
command -v python3 >/dev/null && python3 -c 'import tomllib' 2>/dev/null && have_py=1

# nothing ran: no PWNED file anywhere under the scratch folder, and no
# output of an injected echo
clean() {
    local found
    found=$(find "$tmp" -name 'PWNED*' 2>/dev/null)
    if [ -n "$found" ]; then fail "$1: ran a command ($found)"; rm -f $found; return 1; fi
    if grep -qiE 'pwned|injected' "$tmp/run/out" 2>/dev/null; then
        fail "$1: ran a command ($(grep -iE 'pwned|injected' "$tmp/run/out" | head -1))"
        : >"$tmp/run/out"
        return 1
    fi
    return 0
}

# ---- topo collect: hosts named after their XML files
mkdir "$tmp/topo"
cp "$here/../data/topo/p100.xml" "$tmp/topo/node01.xml"
cp "$here/../data/topo/p100.xml" "$tmp/topo/\$(id>PWNED).xml"
cp "$here/../data/topo/p100.xml" "$tmp/topo/x;id>PWNED2.xml"
if "$strata" topo collect "$tmp/topo" --nic-gbits 100 -o "$tmp/c.json" 2>"$tmp/err"; then
    fail "collect: took hosts named \$(id>PWNED) and x;id>PWNED2"
elif ! grep -q "is not a host name (RFC 1123" "$tmp/err"; then
    fail "collect: no reason: $(cat "$tmp/err")"
elif [ -e "$tmp/c.json" ]; then
    fail "collect: wrote a spec though it refused"
else
    pass "collect refuses the host names: $(head -c 160 "$tmp/err")"
fi
clean collect
# the same folder without them: collect, plan, hostfile, and each line run
rm -f "$tmp/topo/"*'$'* "$tmp/topo/"*';'*
cp "$here/../data/topo/p100.xml" "$tmp/topo/node02.xml"
if "$strata" topo collect "$tmp/topo" --nic-gbits 100 -o "$tmp/c.json" 2>"$tmp/err" &&
    "$strata" plan --model gpt-1.7b --cluster "$tmp/c.json" --global-batch 64 --quiet \
        -o "$tmp/c.splan" >/dev/null 2>&1 &&
    "$strata" export hostfile "$tmp/c.splan" --cluster "$tmp/c.json" -o "$tmp/hosts"; then
    n=0
    while IFS=$'\t' read -r host cmd; do
        case $host in '#'*) continue ;; esac
        (cd "$tmp/run" && PATH="$tmp/bin:$PATH" bash -c "$cmd") || fail "hostfile line: $cmd"
        n=$((n + 1))
    done <"$tmp/hosts"
    [ "$n" = 2 ] && pass "collect, plan, hostfile: $n lines run" || fail "hostfile: $n lines, expected 2"
else
    fail "collect of good names: $(cat "$tmp/err")"
fi
clean hostfile

# ---- model names from traces: refused, or exports that run nothing
run_exports() { # plan file, label
    local p=$1 what=$2 ran=0 before=$fails
    : >"$tmp/run/out"
    if "$strata" export megatron --launch "$p" --gpus-per-node 8 -o "$tmp/l.sh" 2>/dev/null; then
        (cd "$tmp/run" && env -i PATH="$tmp/bin:/usr/bin:/bin" NODE_RANK=0 MASTER_ADDR=x \
            DATA_PATH=MOCK VOCAB_FILE=MOCK TOKENIZER_MODEL=MOCK TRAIN_ITERS=1 \
            CHECKPOINT_PATH="$tmp/ck" bash "$tmp/l.sh" >>"$tmp/run/out" 2>&1)
        ran=$((ran + 1))
    fi
    if [ $have_py = 1 ]; then
        for x in "torch" "deepspeed --topology"; do
            # shellcheck disable=SC2086
            "$strata" export $x "$p" -o "$tmp/run/m_$ran.py" 2>/dev/null || continue
            # imported as a node imports it: torch and deepspeed are
            # stand-ins (any attribute), everything else is real
            (cd "$tmp/run" && python3 - "m_$ran.py" >>"$tmp/run/out" 2>&1 <<'EOP'
import importlib.abc, importlib.machinery, sys, types
from unittest import mock
class Stub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("torch", "deepspeed"):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        m = types.ModuleType(spec.name)
        m.__path__ = []
        m.__getattr__ = lambda attr: mock.MagicMock()
        return m
    def exec_module(self, module):
        pass
sys.meta_path.insert(0, Stub())
src = open(sys.argv[1]).read()
try:
    exec(compile(src, sys.argv[1], "exec"), {"__name__": "plan"})
except Exception:
    pass
EOP
)
            ran=$((ran + 1))
        done
        if "$strata" export torchtitan "$p" -o "$tmp/t.toml" 2>/dev/null; then
            python3 -c "import tomllib,sys; t=tomllib.load(open(sys.argv[1],'rb')); sys.exit(2 * ('dump_folder' in t.get('job',{})))" "$tmp/t.toml" 2>/dev/null
            case $? in
                0) ;; 2) fail "$what: the torchtitan TOML gained job.dump_folder" ;;
                *) fail "$what: the torchtitan TOML does not parse" ;;
            esac
            ran=$((ran + 1))
        fi
    fi
    clean "$what" && [ $fails = "$before" ] && pass "$what: $ran exports run, nothing ran from the name"
}

for t in launch-inject-model-trace torch-export-inject-trace deepspeed-topology-inject-trace \
    torchtitan-toml-inject-trace; do
    extra=""
    case $t in deepspeed-*) extra="--framework deepspeed --cluster dgx-h100:2" ;;
        torchtitan-*) extra="--cluster dgx-h100:2" ;; *) extra="--cluster dgx-h100:1" ;; esac
    # shellcheck disable=SC2086
    if "$strata" plan --model "$in/$t.json" $extra --quiet -o "$tmp/$t.splan" >/dev/null 2>"$tmp/err"; then
        run_exports "$tmp/$t.splan" "$t"
    else
        code=$?
        [ $code = 2 ] && grep -q "control character" "$tmp/err" &&
            pass "$t refused: $(head -c 160 "$tmp/err")" ||
            fail "$t: exit $code: $(cat "$tmp/err")"
    fi
done

# ---- a hand-edited plan file naming a command
if "$strata" show "$in/plan-file-inject.splan" >/dev/null 2>"$tmp/err"; then
    run_exports "$in/plan-file-inject.splan" plan-file-inject
else
    code=$?
    [ $code = 2 ] && pass "plan-file-inject refused: $(head -c 160 "$tmp/err")" ||
        fail "plan-file-inject: exit $code: $(cat "$tmp/err")"
fi
clean all
echo "$passes passed, $fails failed"
[ $fails = 0 ]
