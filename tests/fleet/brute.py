#!/usr/bin/env python3
"""brute.py - strata fleet against brute force on small clusters.

For each case: every job's tokens/s on n nodes of each node group comes
from `strata plan` on a cluster of just those n nodes (the preset with n
nodes, or a spec of one group of n nodes); every split of the nodes is
enumerated (each job none, if it has no min_nodes, or n nodes of one
group, within its min and max); the best weighted sum must be what
`strata fleet --json` reports, its jobs' figures must add up to it, and
-o DIR must hold exactly the plans of the jobs that run.

Usage: brute.py STRATA_BINARY
"""
import itertools
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def plan_tps(binary, model, cluster, batch):
    args = ["plan", "--model", model, "--cluster", cluster, "--quiet",
            "--json"]
    if batch:
        args += ["--global-batch", str(batch)]
    rc, out, err = run(binary, *args)
    if rc == 3:
        return None
    if rc != 0:
        sys.exit("plan %s on %s: exit %d: %s" % (model, cluster, rc, err))
    return json.loads(out)["tokens_per_second"]


def group_spec(tmp, spec, g, n):
    """A spec of group g's first n usable nodes alone."""
    grp = dict(spec["node_groups"][g])
    prefix = grp["names"].split("[")[0]
    bad = set(spec.get("unhealthy", {}).get("nodes", []))
    lo, hi = grp["names"].split("[")[1].rstrip("]").split("-")
    usable = [prefix + str(i) for i in range(int(lo), int(hi) + 1)
              if prefix + str(i) not in bad]
    grp["names"] = "%s[%s]" % (prefix, ",".join(u[len(prefix):]
                                                for u in usable[:n]))
    one = {"name": "g%d-%d" % (g, n), "node_groups": [grp],
           "network": spec["network"]}
    path = os.path.join(tmp, "g%d-%d.json" % (g, n))
    with open(path, "w") as f:
        json.dump(one, f)
    return path, len(usable)


def curves(binary, tmp, jobs, cluster):
    """value[j][(g, n)] = weight x tokens/s, and each group's capacity."""
    if cluster.endswith(".json"):
        with open(cluster) as f:
            spec = json.load(f)
        groups = len(spec["node_groups"])
        caps = [group_spec(tmp, spec, g, 1)[1] for g in range(groups)]
        name = lambda g, n: group_spec(tmp, spec, g, n)[0]
    else:
        preset, total = cluster.rsplit(":", 1)
        caps = [int(total)]
        name = lambda g, n: "%s:%d" % (preset, n)
    value = []
    for job in jobs:
        pts = {}
        for g, cap in enumerate(caps):
            lo = job.get("min_nodes", 1)
            hi = min(job.get("max_nodes", cap), cap)
            for n in range(lo, hi + 1):
                t = plan_tps(binary, job["model"], name(g, n),
                             job.get("global_batch"))
                if t is not None:
                    pts[(g, n)] = job.get("weight", 1) * t
        value.append(pts)
    return value, caps


def brute(jobs, value, caps):
    best, count = None, 0
    options = []
    for j, job in enumerate(jobs):
        opts = [] if "min_nodes" in job else [None]
        options.append(opts + sorted(value[j]))
    for split in itertools.product(*options):
        used = [0] * len(caps)
        for pick in split:
            if pick:
                used[pick[0]] += pick[1]
        if any(u > c for u, c in zip(used, caps)):
            continue
        count += 1
        total = sum(value[j][p] for j, p in enumerate(split) if p)
        if best is None or total > best:
            best = total
    return best, count


def check(binary, tmp, name, jobs, cluster):
    path = os.path.join(tmp, name + ".jobs.json")
    with open(path, "w") as f:
        json.dump({"jobs": jobs}, f)
    out_dir = os.path.join(tmp, name)
    os.mkdir(out_dir)
    rc, out, err = run(binary, "fleet", path, "--cluster", cluster, "--json",
                       "-o", out_dir, "--quiet")
    if rc != 0:
        return "fleet exited %d: %s" % (rc, err)
    got = json.loads(out)
    value, caps = curves(binary, tmp, jobs, cluster)
    best, count = brute(jobs, value, caps)
    want = got["weighted_tokens_per_second"]
    if abs(want - best) > 1e-9 * best:
        return "fleet's %.9g, brute force's best %.9g" % (want, best)
    total, used = 0.0, [0] * len(caps)
    for job, res in zip(jobs, got["jobs"]):
        if res["nodes"]:
            total += job.get("weight", 1) * res["tokens_per_second"]
            used[res["group"]] += res["nodes"]
            if not os.path.exists(res["plan"]):
                return "no plan file %s" % res["plan"]
    if abs(total - want) > 1e-9 * want:
        return "jobs add up to %.9g, the summary says %.9g" % (total, want)
    if any(u > c for u, c in zip(used, caps)):
        return "nodes used %s beyond the groups' %s" % (used, caps)
    plans = sorted(os.listdir(out_dir))
    ran = sorted(r["name"] + ext for r in got["jobs"] if r["nodes"]
                 for ext in (".slurm", ".splan"))
    if plans != ran:
        return "-o holds %s, the jobs that run are %s" % (plans, ran)
    print("ok   %s: %.6g weighted tokens/s, the best of %d splits" %
          (name, best, count))
    return None


CASES = [
    ("three-jobs-preset", "dgx-h100:5", [
        {"name": "a", "model": "gpt-1.7b"},
        {"name": "b", "model": "llama3-8b", "weight": 2, "max_nodes": 3},
        {"name": "c", "model": "gpt-7.5b", "min_nodes": 1,
         "global_batch": 256},
    ]),
    ("two-jobs-preset", "dgx-a100:4", [
        {"name": "x", "model": "gpt-3.6b", "weight": 0.5},
        {"name": "y", "model": "gpt-1.7b", "min_nodes": 2},
    ]),
    ("gpus-and-npus", os.path.join(HERE, "..", "data", "topo",
                                   "h100-ascend.json"), [
        {"name": "llama", "model": "llama3-8b", "weight": 1},
        {"name": "gpt", "model": "gpt-7.5b", "min_nodes": 2},
    ]),
    ("mixed-groups-drained", os.path.join(HERE, "mixed.json"), [
        {"name": "p", "model": "gpt-1.7b"},
        {"name": "q", "model": "llama3-8b", "min_nodes": 1},
        {"name": "r", "model": "gpt-3.6b", "weight": 3, "max_nodes": 2},
    ]),
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-fleet-") as tmp:
        for name, cluster, jobs in CASES:
            why = check(binary, tmp, name, jobs, cluster)
            if why:
                print("FAIL %s: %s" % (name, why))
                failed += 1
    print("%d passed, %d failed" % (len(CASES) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
