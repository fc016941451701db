#!/usr/bin/env bash
# The Slurm batch script (`strata export slurm`), read back by what reads it.
#   standin  bash -n, then the script run under bash with a stand-in srun (a
#            task per node, SLURM_NODEID set), scontrol and torchrun that
#            record what they are given: one torchrun per node with its node
#            rank, node 0's address and the script's arguments; a plan
#            Megatron-LM cannot run starts TRAIN_SCRIPT; a plan file name
#            with quotes and $(...) runs nothing of its own.
#   sbatch   Slurm's own check: `sbatch --test-only` against a slurmctld
#            started here on a slurm.conf of four nodes of 4 GPUs
#            (auth/none, no munge, no slurmd): the script of a plan on those
#            nodes is accepted, one asking 8 GPUs per node is refused.
#            Skipped (77) without Debian's slurm-wlm (slurmctld, sbatch).
# Usage: slurm.sh path/to/strata standin|sbatch
set -u
strata="$1" check="$2"
tmp=$(mktemp -d)
ctld=
cleanup() {
    [ -n "$ctld" ] && kill "$ctld" 2>/dev/null && wait "$ctld" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$tmp/spec.json" <<'EOF'
{
  "name": "slurm-a100",
  "node_groups": [
    {"names": "node[1-4]", "template": {"gpus": 4, "gpu_model": "A100-80GB",
     "nvlink_gbytes_per_s": 300, "nics": 4, "nic_gbytes_per_s": 25}}
  ],
  "network": {"latency_us": 5}
}
EOF

standin() {
    local b="$tmp/bin" n
    mkdir -p "$b"
    # srun: each task in turn, as Slurm numbers them, after its own options
    cat >"$b/srun" <<'EOF'
#!/usr/bin/env bash
printf '%s\n' "$@" >"$OUT/srun.argv"
n=0
while [ $# -gt 0 ]; do
    case $1 in --nodes=*) n=${1#--nodes=} ;; -*) ;; *) break ;; esac
    shift
done
for ((i = 0; i < n; i++)); do
    SLURM_NODEID=$i SLURM_PROCID=$i "$@" || exit
done
EOF
    cat >"$b/scontrol" <<'EOF'
#!/usr/bin/env bash
[ "$1 $2 $3" = "show hostnames $SLURM_JOB_NODELIST" ] || exit 9
printf 'gpu-a01\ngpu-a02\n'
EOF
    cat >"$b/torchrun" <<'EOF'
#!/usr/bin/env bash
printf '%s\n' "$@" >"$OUT/torchrun.$NODE_RANK"
EOF
    chmod +x "$b"/*
    "$strata" plan --model gpt-1.7b --cluster dgx-h100:2 --quiet -o "$tmp/a.splan" >/dev/null ||
        { fail "plan"; return; }
    # a plan file name with quotes and commands: in the comments and in the
    # launch's quoted text, and none of it run (the tasks run in $tmp)
    local odd="$tmp/q'\$(touch pwned)\"\`touch pwned\`.splan"
    cp "$tmp/a.splan" "$odd"
    "$strata" export slurm "$odd" -o "$tmp/a.sh" || { fail "export slurm"; return; }
    bash -n "$tmp/a.sh" || fail "not valid bash"
    for l in '--nodes=2' '--ntasks-per-node=1' '--gpus-per-node=8'; do
        grep -qx -- "#SBATCH $l" "$tmp/a.sh" || fail "no '#SBATCH $l'"
    done
    ! grep -q -- '--nodelist' "$tmp/a.sh" || fail "a node list without hosts"
    mkdir "$tmp/run"
    (cd "$tmp" && env -i PATH="$b:/usr/bin:/bin" OUT="$tmp/run" SLURM_JOB_NODELIST='gpu-a[01-02]' \
        TRAIN_ITERS=10 CHECKPOINT_PATH=/ckpt DATA_PATH=MOCK VOCAB_FILE=MOCK \
        bash "$tmp/a.sh" --extra 'a b') >"$tmp/run.out" 2>&1 ||
        fail "the script failed: $(tail -2 "$tmp/run.out")"
    grep -qx -- '--ntasks-per-node=1' "$tmp/run/srun.argv" || fail "srun: not one task per node"
    for n in 0 1; do
        local t="$tmp/run/torchrun.$n"
        [ -s "$t" ] || { fail "node $n: no torchrun"; continue; }
        grep -A1 -x -- '--node_rank' "$t" | grep -qx "$n" || fail "node $n: node rank"
        grep -A1 -x -- '--master_addr' "$t" | grep -qx gpu-a01 || fail "node $n: master address"
        grep -A1 -x -- '--nnodes' "$t" | grep -qx 2 || fail "node $n: nnodes"
        [ "$(tail -2 "$t" | tr '\n' '|')" = "--extra|a b|" ] || fail "node $n: arguments not passed on"
    done
    [ ! -e "$tmp/run/torchrun.2" ] || fail "a third node"
    [ "$(grep -c "touch pwned" "$tmp/a.sh")" -ge 2 ] || fail "the plan file's name is not in the script"
    [ ! -e "$tmp/pwned" ] || fail "the plan file's name ran as a command"
    # a job of another size is refused before srun
    rm -f "$tmp/run/srun.argv"
    cat >"$b/scontrol" <<'EOF'
#!/usr/bin/env bash
echo gpu-a01
EOF
    env -i PATH="$b:/usr/bin:/bin" OUT="$tmp/run" SLURM_JOB_NODELIST=gpu-a01 \
        bash "$tmp/a.sh" >"$tmp/one.out" 2>&1 && fail "ran on one node"
    grep -q "the plan has 2" "$tmp/one.out" || fail "no message for the node count"
    [ ! -e "$tmp/run/srun.argv" ] || fail "srun started on the wrong job"

    # a plan Megatron-LM cannot run: torchrun of TRAIN_SCRIPT
    "$strata" plan --model gpt-1.7b --cluster dgx-h100:1 --free --quiet \
        -o "$tmp/f.splan" >/dev/null || { fail "free plan"; return; }
    odd="$tmp/q'\$(touch pwned)\"\`touch pwned\`-free.splan"
    cp "$tmp/f.splan" "$odd"
    "$strata" export slurm "$odd" -o "$tmp/f.sh" || { fail "export slurm (free)"; return; }
    bash -n "$tmp/f.sh" || fail "free: not valid bash"
    rm -rf "$tmp/run" && mkdir "$tmp/run"
    env -i PATH="$b:/usr/bin:/bin" OUT="$tmp/run" SLURM_JOB_NODELIST=gpu-a01 \
        bash "$tmp/f.sh" >"$tmp/f.out" 2>&1 && fail "free: ran without TRAIN_SCRIPT"
    grep -q "set TRAIN_SCRIPT" "$tmp/f.out" || fail "free: no message for TRAIN_SCRIPT"
    (cd "$tmp" && env -i PATH="$b:/usr/bin:/bin" OUT="$tmp/run" SLURM_JOB_NODELIST=gpu-a01 \
        TRAIN_SCRIPT=/job/train.py bash "$tmp/f.sh" x) >"$tmp/f.out" 2>&1 ||
        fail "free: the script failed: $(tail -2 "$tmp/f.out")"
    [ "$(tail -2 "$tmp/run/torchrun.0" 2>/dev/null | tr '\n' '|')" = "/job/train.py|x|" ] ||
        fail "free: torchrun not of TRAIN_SCRIPT"
    grep -q "touch pwned" "$tmp/f.sh" || fail "the plan file's name is not in the script"
    [ ! -e "$tmp/pwned" ] || fail "the plan file's name ran as a command"

    # hosts named by --cluster: the node list, in node-rank order
    "$strata" plan --model gpt-1.7b --cluster "$tmp/spec.json" --quiet \
        -o "$tmp/s.splan" >/dev/null || { fail "plan on the spec"; return; }
    "$strata" export slurm "$tmp/s.splan" --cluster "$tmp/spec.json" -o "$tmp/s.sh" ||
        fail "export slurm --cluster"
    grep -qx -- '#SBATCH --nodelist=node1,node2,node3,node4' "$tmp/s.sh" || fail "node list"
}

sbatch_check() {
    command -v slurmctld >/dev/null || [ -x /usr/sbin/slurmctld ] || {
        echo "SKIP: no slurmctld (Debian: apt-get install slurm-wlm)"
        exit 77
    }
    command -v sbatch >/dev/null || { echo "SKIP: no sbatch (slurm-wlm)"; exit 77; }
    local s="$tmp/slurm" port=$((20000 + RANDOM % 20000)) i
    mkdir -p "$s/state" "$s/spool"
    cat >"$s/slurm.conf" <<EOF
ClusterName=strata
SlurmctldHost=$(hostname -s)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
SlurmUser=$(id -un)
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmctldLogFile=$s/slurmctld.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
GresTypes=gpu
NodeName=node[1-4] NodeHostname=localhost CPUs=16 RealMemory=1000 Gres=gpu:4 State=IDLE
PartitionName=debug Nodes=node[1-4] Default=YES State=UP MaxTime=INFINITE
EOF
    export SLURM_CONF="$s/slurm.conf"
    PATH="$PATH:/usr/sbin" slurmctld -D -i >"$s/ctld.out" 2>&1 &
    ctld=$!
    for ((i = 0; i < 100; i++)); do
        sinfo -h >/dev/null 2>&1 && break
        sleep 0.2
    done
    sinfo -h >/dev/null 2>&1 || {
        fail "slurmctld did not start: $(tail -3 "$s/ctld.out" "$s/slurmctld.log" 2>&1)"
        return
    }
    "$strata" plan --model gpt-1.7b --cluster "$tmp/spec.json" --quiet \
        -o "$tmp/s.splan" >/dev/null || { fail "plan on the spec"; return; }
    "$strata" export slurm "$tmp/s.splan" --cluster "$tmp/spec.json" -o "$tmp/s.sh" ||
        { fail "export slurm"; return; }
    sbatch --test-only "$tmp/s.sh" >"$tmp/sb.out" 2>&1 ||
        fail "sbatch --test-only refused it: $(cat "$tmp/sb.out")"
    grep -q "to start at .* on nodes node\[1-4\]" "$tmp/sb.out" ||
        fail "sbatch: $(cat "$tmp/sb.out")"
    # 8 GPUs per node, on nodes of 4: Slurm refuses it
    "$strata" plan --model gpt-1.7b --cluster dgx-h100:2 --quiet -o "$tmp/a.splan" >/dev/null &&
        "$strata" export slurm "$tmp/a.splan" -o "$tmp/a.sh" || { fail "export slurm"; return; }
    if sbatch --test-only "$tmp/a.sh" >"$tmp/sb2.out" 2>&1; then
        fail "sbatch accepted 8 GPUs per node on nodes of 4: $(cat "$tmp/sb2.out")"
    fi
}

case $check in
    standin) standin ;;
    sbatch) sbatch_check ;;
    *) echo "usage: slurm.sh STRATA standin|sbatch" >&2; exit 2 ;;
esac
[ "$fails" -eq 0 ] && echo "slurm $check: ok"
[ "$fails" -eq 0 ]
