#!/usr/bin/env python3
"""bench_calibration.py - how far the model generalises, measured with its
own calibration fit (docs/calibration.md, docs/fidelity.md).

The runs are strata calibrate runs files (bench_fidelity --runs: Narayanan
et al. 2021 on A100; bench_bridge.py --runs: the Megatron-Bridge reference
rows on H100, B200 and GB200), each run labelled "GROUP|name".  Per group:

- table: the mean absolute step error of the table as it stands;
- leave-one-source-out (LOSO): the model's fitted parameters are set by
  hand, so the calibration fit stands for "fitted without this group": the
  six scales fitted (strata calibrate --allow-mixed, one set for every GPU)
  on the runs of every other group (at most --loso-max of them, taken
  evenly), then the group's runs predicted under them
  (strata calibrate --check);
- after calibrating on k = 1, 2, 3 of the group's runs (--draws draws,
  seeded): the mean absolute error on the group's other runs, the mean and
  the worst draw, beside the table's error on the same runs.

Every figure is the command's: the fit and the predictions are
`strata calibrate` and `strata calibrate --check` on files written here.

Usage: bench_calibration.py STRATA RUNS.json [RUNS.json ...]
                            [--draws N] [--loso-max N] [--seed S]
"""
import json
import os
import random
import subprocess
import sys
import tempfile


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        for r in d["runs"]:
            r = dict(r)
            for k in ("model", "cluster"):
                if k not in r and k in d:
                    r[k] = d[k]
            runs.append(r)
    return runs


def group_of(r):
    return r["label"].split("|", 1)[0]


def write(runs, path):
    with open(path, "w") as f:
        json.dump({"format": "strata-measurements", "version": 1,
                   "runs": runs}, f)


def calibrate(strata, tmp, train, mixed):
    """Fit on train: the calibration file's path, or None with why."""
    rp, cp = os.path.join(tmp, "train.json"), os.path.join(tmp, "cal.json")
    write(train, rp)
    cmd = [strata, "calibrate", rp, "--loo-max", "0", "-o", cp, "--json"]
    if mixed:
        cmd.append("--allow-mixed")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return cp, ""


def check(strata, tmp, test, cal):
    """Per test run: (measured, table's, under cal) steps."""
    rp = os.path.join(tmp, "test.json")
    write(test, rp)
    cmd = [strata, "calibrate", rp, "--json", "--allow-mixed"]
    if cal:
        cmd += ["--check", cal]
    else:  # the table: an empty calibration
        empty = os.path.join(tmp, "none.json")
        with open(empty, "w") as f:
            f.write('{"format": "strata-calibration", "version": 1}')
        cmd += ["--check", empty]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    out = json.loads(p.stdout)
    return [(r["measured_step_seconds"], r["step_seconds_before"],
             r["step_seconds_after"]) for r in out["runs"]]


def mae(pairs):
    return 100.0 * sum(abs(p / m - 1) for m, p in pairs) / len(pairs)


def evenly(runs, n):
    if len(runs) <= n:
        return runs
    step = len(runs) / float(n)
    return [runs[int(i * step)] for i in range(n)]


def loso(strata, tmp, runs, g, cap):
    test = [r for r in runs if group_of(r) == g]
    others = sorted({group_of(r) for r in runs} - {g})
    train = []
    for o in others:  # each other group its share of the cap
        rs = [r for r in runs if group_of(r) == o]
        train += evenly(rs, max(1, cap // len(others)))
    cal, why = calibrate(strata, tmp, train, True)
    if not cal:
        return None, why
    res = check(strata, tmp, test, cal)
    return mae([(m, a) for m, _, a in res]), len(train)


def draws(strata, tmp, rs, k, n, rng):
    """n draws of k runs: per draw (calibrated MAE, table MAE) on the rest."""
    out = []
    for _ in range(n):
        idx = rng.sample(range(len(rs)), k)
        train = [rs[i] for i in idx]
        test = [rs[i] for i in range(len(rs)) if i not in idx]
        cal, why = calibrate(strata, tmp, train, False)
        if not cal:
            out.append((None, why))
            continue
        res = check(strata, tmp, test, cal)
        out.append((mae([(m, a) for m, _, a in res]),
                    mae([(m, b) for m, b, _ in res])))
    return out


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__)
        return 2
    opts = {"--draws": 5, "--loso-max": 24, "--seed": 1}
    paths = []
    i = 1
    strata = args[0]
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = int(args[i + 1])
            i += 2
        else:
            paths.append(args[i])
            i += 1
    runs = load(paths)
    groups = []
    for r in runs:
        if group_of(r) not in groups:
            groups.append(group_of(r))
    rng = random.Random(opts["--seed"])
    print("## Generalisation: leave-one-source-out and calibration on k "
          "runs\n")
    print("Per group: the table's mean absolute step error; with the group "
          "left out of the fit of every parameter (LOSO: the calibration "
          "fitted on up to %d runs of the other groups); and on the group's "
          "other runs after calibrating on k of its runs (%d draws: mean, "
          "worst, and the table's error on the same runs).  Targets: LOSO "
          "<= 15 %%; after 3 runs <= 5 %%, worst draw <= 10 %%, never worse "
          "than the table by more than 1 point.\n"
          % (opts["--loso-max"], opts["--draws"]))
    print("| group | runs | table | LOSO | k=1 mean/worst (table) | "
          "k=2 mean/worst (table) | k=3 mean/worst (table) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for g in groups:
            rs = [r for r in runs if group_of(r) == g]
            base = mae([(m, b) for m, b, _ in check(strata, tmp, rs, None)])
            lo, _ = loso(strata, tmp, runs, g, opts["--loso-max"])
            cells = [g, str(len(rs)), "%.1f %%" % base,
                     "%.1f %%" % lo if lo is not None else "failed"]
            for k in (1, 2, 3):
                d = [x for x in draws(strata, tmp, rs, k, opts["--draws"], rng)
                     if x[0] is not None]
                if not d:
                    cells.append("failed")
                    continue
                cal = [x[0] for x in d]
                tab = [x[1] for x in d]
                worse = max(c - t for c, t in d)
                cells.append("%.1f / %.1f %% (%.1f); worst vs table %+.1f"
                             % (sum(cal) / len(cal), max(cal),
                                sum(tab) / len(tab), worse))
            print("| " + " | ".join(cells) + " |")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
