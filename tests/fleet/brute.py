#!/usr/bin/env python3
"""brute.py - strata fleet against brute force on small clusters.

For each case: every job's tokens/s on n nodes of each node group comes
from `strata plan` on a cluster of just those n nodes (the preset with n
nodes, or a spec of one group of n nodes); every split of the nodes is
enumerated (each job none, if it has no min_nodes or deadline, or n
nodes of one group, within its min and max; a job with a deadline only
on the fewest nodes of a group that make the tokens/s it needs); the
best under the case's objective -- fair: the most jobs running, then
the largest sum of weight x ln(tokens/s); throughput: the largest sum of
weight x tokens/s -- must be what `strata fleet --json` reports, its
jobs' figures must add up to it, a job left out must say why, and -o DIR
must hold exactly the plans of the jobs that run.

Usage: brute.py STRATA_BINARY
"""
import itertools
import json
import math
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
                    pts[(g, n)] = t
        value.append(pts)
    return value, caps


DEADLINE_S = 1000 * 3600  # "deadline": "1000h"


def items(job, pts):
    """The points a job may take: a deadline job's fewest nodes per group
    that make the tokens/s it needs, else every point."""
    if "tokens" not in job:
        return sorted(pts)
    need = job["tokens"] / DEADLINE_S
    out = []
    for g in sorted(set(g for g, _ in pts)):
        met = [n for (h, n), t in sorted(pts.items()) if h == g and t >= need]
        if met:
            out.append((g, met[0]))
    return out


def brute(jobs, tps, caps, objective):
    best, count = None, 0
    options = []
    for j, job in enumerate(jobs):
        must = "min_nodes" in job or "tokens" in job
        options.append(([] if must else [None]) + items(job, tps[j]))
    for split in itertools.product(*options):
        used = [0] * len(caps)
        for pick in split:
            if pick:
                used[pick[0]] += pick[1]
        if any(u > c for u, c in zip(used, caps)):
            continue
        count += 1
        w = [job.get("weight", 1) for job in jobs]
        if objective == "throughput":
            key = (0, sum(w[j] * tps[j][p] for j, p in enumerate(split) if p))
        else:
            key = (sum(1 for p in split if p),
                   sum(w[j] * math.log(tps[j][p])
                       for j, p in enumerate(split) if p))
        if best is None or key > best:
            best = key
    return best, count


def with_deadline(binary, tmp, jobs, cluster):
    """A job with "deadline_between": [a, b] gets the tokens that need the
    mean of its tokens/s on a and on b nodes of group 0 by the deadline."""
    tps, _ = curves(binary, tmp, jobs, cluster)
    for j, job in enumerate(jobs):
        if "deadline_between" in job:
            a, b = job.pop("deadline_between")
            need = (tps[j][(0, a)] + tps[j][(0, b)]) / 2
            job["tokens"] = need * DEADLINE_S
            job["deadline"] = "1000h"
    return jobs


def check(binary, tmp, name, jobs, cluster, objective):
    path = os.path.join(tmp, name + ".jobs.json")
    jobs = with_deadline(binary, tmp, [dict(j) for j in jobs], cluster)
    with open(path, "w") as f:
        json.dump({"jobs": jobs}, f)
    out_dir = os.path.join(tmp, name)
    os.mkdir(out_dir)
    rc, out, err = run(binary, "fleet", path, "--cluster", cluster, "--json",
                       "-o", out_dir, "--quiet", "--objective", objective)
    if rc != 0:
        return "fleet exited %d: %s" % (rc, err)
    got = json.loads(out)
    tps, caps = curves(binary, tmp, jobs, cluster)
    (ran, best), count = brute(jobs, tps, caps, objective)
    want = got["objective_value"]
    if abs(want - best) > 1e-9 * abs(best):
        return "fleet's %.12g, brute force's best %.12g" % (want, best)
    total, used, runs = 0.0, [0] * len(caps), 0
    for job, res in zip(jobs, got["jobs"]):
        if res["nodes"]:
            runs += 1
            total += job.get("weight", 1) * res["curve_tokens_per_second"]
            used[res["group"]] += res["nodes"]
            if not os.path.exists(res["plan"]):
                return "no plan file %s" % res["plan"]
        elif not res["why_not_run"]:
            return "job %s left out without a reason" % res["name"]
    want = got["weighted_tokens_per_second"]
    if abs(total - want) > 1e-9 * want:
        return "jobs add up to %.9g, the summary says %.9g" % (total, want)
    if objective == "fair" and runs != ran:
        return "%d jobs run, the brute force's best runs %d" % (runs, ran)
    if any(u > c for u, c in zip(used, caps)):
        return "nodes used %s beyond the groups' %s" % (used, caps)
    plans = sorted(os.listdir(out_dir))
    ran = sorted(r["name"] + ext for r in got["jobs"] if r["nodes"]
                 for ext in (".slurm", ".splan"))
    if plans != ran:
        return "-o holds %s, the jobs that run are %s" % (plans, ran)
    print("ok   %s (%s): %.9g, the best of %d splits" %
          (name, objective, best, count))
    return None


CASES = [
    ("three-jobs-preset", "dgx-h100:5", "fair", [
        {"name": "a", "model": "gpt-1.7b"},
        {"name": "b", "model": "llama3-8b", "weight": 2, "max_nodes": 3},
        {"name": "c", "model": "gpt-7.5b", "min_nodes": 1,
         "global_batch": 256},
    ]),
    ("three-jobs-throughput", "dgx-h100:5", "throughput", [
        {"name": "a", "model": "gpt-1.7b"},
        {"name": "b", "model": "llama3-8b", "weight": 2, "max_nodes": 3},
        {"name": "c", "model": "gpt-7.5b", "min_nodes": 1,
         "global_batch": 256},
    ]),
    ("deadline", "dgx-h100:5", "fair", [
        {"name": "d", "model": "gpt-1.7b", "deadline_between": [2, 3]},
        {"name": "e", "model": "llama3-8b", "weight": 3},
    ]),
    ("two-jobs-preset", "dgx-a100:4", "throughput", [
        {"name": "x", "model": "gpt-3.6b", "weight": 0.5},
        {"name": "y", "model": "gpt-1.7b", "min_nodes": 2},
    ]),
    ("gpus-and-npus", os.path.join(HERE, "..", "data", "topo",
                                   "h100-ascend.json"), "fair", [
        {"name": "llama", "model": "llama3-8b", "weight": 1},
        {"name": "gpt", "model": "gpt-7.5b", "min_nodes": 2},
    ]),
    ("mixed-groups-drained", os.path.join(HERE, "mixed.json"), "fair", [
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
        for name, cluster, objective, jobs in CASES:
            why = check(binary, tmp, name, jobs, cluster, objective)
            if why:
                print("FAIL %s: %s" % (name, why))
                failed += 1
    print("%d passed, %d failed" % (len(CASES) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
