#!/usr/bin/env python3
"""reference.py - bench/bench_bridge.py's reference rows on the real table
(tests/data/bridge/recipes.tsv): a row is superseded exactly when a later
release states the same strata estimate command, and a token-drop row is
its own recipe (the capacity factor in its command).

Usage: reference.py    (exits 1 on a failed check)
"""
import csv
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def find(rows, release, system, model, variant="-", precision=None):
    for i, r in enumerate(rows):
        if (r["release"], r["system"], r["model"], r["variant"]) == (
                release, system, model, variant) and (
                precision is None or r["precision"] == precision):
            return i
    raise KeyError((release, system, model, variant))


def main():
    bench = load("bench_bridge",
                 os.path.join(HERE, "..", "..", "bench", "bench_bridge.py"))
    run = bench.load_run()
    with open(run.TSV, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)

    check(bench.release_order("26.02") < bench.release_order("26.02.01") <
          bench.release_order("26.04"), "release order")
    for sysname in bench.SYSTEMS:
        sub = [r for r in rows if r["system"] == sysname]
        later = bench.superseded(run, sub)
        for i, rel in later.items():
            a = run.timing_key(run.command(sub[i])[0])
            j = [k for k, r in enumerate(sub) if r["release"] == rel and
                 run.timing_key(run.command(r)[0]) == a]
            check(j and bench.release_order(rel) >
                  bench.release_order(sub[i]["release"]),
                  "%s row %d superseded by %s: no later row of its "
                  "command" % (sysname, i, rel))
        for i, r in enumerate(sub):
            a, why = run.command(r)
            if i in later or a is None or why:
                continue
            for k, x in enumerate(sub):
                b, wb = run.command(x)
                check(k == i or b is None or
                      run.timing_key(b) != run.timing_key(a) or bench.release_order(x["release"]) <=
                      bench.release_order(r["release"]),
                      "%s row %d kept though row %d (%s) states its "
                      "command" % (sysname, i, k, x["release"]))
    h = [r for r in rows if r["system"] == "H100"]
    later = bench.superseded(run, h)
    # Qwen3-30B-A3B at pp 2 vp 12: 26.02 (5113) gives way to 26.02.01
    i = find(h, "26.02", "H100", "Qwen3_30B_a3B")
    check(later.get(i) == "26.02.01", "26.02 Qwen3-30B-A3B not superseded "
          "by 26.02.01: %s" % later.get(i))
    # the latest row of a command is kept
    check(find(h, "26.02.01", "H100", "Qwen3_30B_a3B") not in later,
          "26.02.01 Qwen3-30B-A3B superseded")
    # token drop is its own recipe: 25.09's row is not 25.11's dropless one
    t = find(h, "25.09", "H100", "Qwen3_235B_a22B", "tokendrop")
    d = find(h, "25.11", "H100", "Qwen3_235B_a22B")
    ta, da = run.command(h[t])[0], run.command(h[d])[0]
    check("--capacity-factor" in ta and "--capacity-factor" not in da,
          "token drop not stated as a capacity factor")
    check(t not in later, "the token-drop row superseded by %s" %
          later.get(t))
    for x in fails:
        print("FAIL " + x)
    print("reference rows: %d checks failed" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
