#!/usr/bin/env python3
"""same_plan.py - a fleet job is planned with strata plan's options.

A job of JOBS.json with "seq": 32768 and "precision": "fp8" (and the
fleet's own max_nodes) gets the cluster's two nodes; its plan file must
be the one `strata plan --seq 32768 --precision fp8` writes on the same
two nodes: `strata show --json --cluster` of both equal but for the
cluster's name, in the plan and its device map (the fleet names it "NAME
on SPEC"), and the plan holds
the sequence and the precision asked.  Then a job's option refused as
plan refuses it (same message), a key that is no option of plan named
with the job's JSON path, and a deadline that no node count meets.

Usage: same_plan.py STRATA_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def shown(binary, plan):
    rc, out, err = run(binary, "show", plan, "--json", "--cluster",
                       "dgx-h100:2")
    if rc:
        sys.exit("show %s: exit %d: %s" % (plan, rc, err))
    d = json.loads(out)
    del d["cluster"]
    del d["device_map"]["cluster"]
    return d


def main():
    binary = os.path.abspath(sys.argv[1])
    failed = []
    with tempfile.TemporaryDirectory(prefix="strata-same-") as tmp:
        jobs = os.path.join(tmp, "jobs.json")
        with open(jobs, "w") as f:
            json.dump({"jobs": [{"name": "long", "model": "llama3-8b",
                                 "seq": 32768, "precision": "fp8",
                                 "max_nodes": 2}]}, f)
        rc, out, err = run(binary, "fleet", jobs, "--cluster", "dgx-h100:2",
                           "-o", tmp, "--quiet")
        if rc:
            sys.exit("fleet: exit %d: %s" % (rc, err))
        mine = os.path.join(tmp, "plan.splan")
        rc, out, err = run(binary, "plan", "--model", "llama3-8b", "--seq",
                           "32768", "--precision", "fp8", "--cluster",
                           "dgx-h100:2", "-o", mine, "--quiet")
        if rc:
            sys.exit("plan: exit %d: %s" % (rc, err))
        a, b = shown(binary, os.path.join(tmp, "long.splan")), shown(binary,
                                                                    mine)
        if a != b:
            keys = [k for k in a if a.get(k) != b.get(k)]
            failed.append("fleet's plan differs from plan's in %s" % keys)
        if a["architecture"]["seq_len"] != 32768 or \
                a["options"]["precision"] != "fp8":
            failed.append("the job's plan is not seq 32768 in fp8")
        # a value plan refuses: plan's message, and the job's key named
        with open(jobs, "w") as f:
            json.dump({"jobs": [{"name": "x", "model": "gpt",
                                 "precision": "fp9"}]}, f)
        rc, _, err = run(binary, "fleet", jobs, "--cluster", "dgx-h100:2")
        _, _, plan_err = run(binary, "plan", "--model", "gpt", "--cluster",
                             "dgx-h100:2", "--precision", "fp9")
        first = plan_err.splitlines()[0]
        if rc != 2 or first not in err or "jobs[0].precision" not in err:
            failed.append("fp9: exit %d, %r (plan says %r)" % (rc, err, first))
        with open(jobs, "w") as f:
            json.dump({"jobs": [{"name": "x", "model": "gpt",
                                 "sequence": 8192}]}, f)
        rc, _, err = run(binary, "fleet", jobs, "--cluster", "dgx-h100:2")
        if rc != 2 or "jobs[0]: unknown key 'sequence'" not in err:
            failed.append("sequence: exit %d, %r" % (rc, err))
        # a deadline no node count meets: exit 3, the rate it needs said
        with open(jobs, "w") as f:
            json.dump({"jobs": [{"name": "x", "model": "gpt",
                                 "tokens": 1e15, "deadline": "1h"}]}, f)
        rc, _, err = run(binary, "fleet", jobs, "--cluster", "dgx-h100:2")
        if rc != 3 or "job 'x' cannot meet its deadline: it needs " \
                "277777777778 tokens/s" not in err:
            failed.append("deadline: exit %d, %r" % (rc, err))
    for f in failed:
        print("FAIL " + f)
    print("%s" % ("ok" if not failed else "%d failed" % len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
