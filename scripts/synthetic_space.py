#!/usr/bin/python3
"""scripts/synthetic_space.py: a synthetic brute-forced space (T4, gzip) over the valid configurations of a
T1 problem, for strategy benchmarks on problems without measured data (docs/PERFORMANCE.md uses it for
gemm_milo and hotspot_milo). The objective is heavy-tailed like kernel times: exp(main effects of every
parameter value + interactions of as many random parameter pairs as there are free parameters + a
per-configuration rugged term), and failures are structured (12% of the value pairs of one interacting
pair fail) plus 2% at random. Deterministic for a seed (no use of Python's randomized hash).

With EVAL_MS (optional) every evaluation takes that long: its compile time is EVAL_MS less its runtimes (for
projections on the virtual clock: `mptune tune --virtual-workers N`); without it compile times are 0.

usage: mptune space PROBLEM.json --list LIST.csv
       /usr/bin/python3 scripts/synthetic_space.py LIST.csv OUT_T4.json.gz SEED [EVAL_MS]
"""
import csv
import gzip
import json
import math
import random
import sys


def parse_value(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__.split("usage:")[1].strip())
    src, out, seed = argv[1], argv[2], int(argv[3])
    eval_ms = float(argv[4]) if len(argv) == 5 else 0.0
    rng = random.Random(seed)
    with open(src, newline="") as f:
        rows = list(csv.reader(f))
    if len(rows) < 2:
        sys.exit(f"{src}: no configurations (expected the CSV of `mptune space --list`)")
    hdr, rows = rows[0], rows[1:]
    vals = [sorted(set(r[i] for r in rows)) for i in range(len(hdr))]
    act = [i for i in range(len(hdr)) if len(vals[i]) > 1]
    if len(act) < 2:
        sys.exit(f"{src}: fewer than two parameters with more than one value")
    main_eff = {(i, v): rng.gauss(0, 0.35) for i in act for v in vals[i]}
    pairs = [tuple(rng.sample(act, 2)) for _ in range(len(act))]
    inter = {(i, j, a, b): rng.gauss(0, 0.3) for (i, j) in pairs for a in vals[i] for b in vals[j]}
    fi, fj = pairs[0]
    failset = {(a, b) for a in vals[fi] for b in vals[fj] if rng.random() < 0.12}
    results, failed = [], 0
    for r in rows:
        s = sum(main_eff[(i, r[i])] for i in act) + sum(inter[(i, j, r[i], r[j])] for (i, j) in pairs)
        s += random.Random(f"{seed}|{'|'.join(r)}").gauss(0, 0.15)  # rugged, fixed per configuration
        t = math.exp(s)
        ok = (r[fi], r[fj]) not in failset and rng.random() >= 0.02
        failed += not ok
        results.append({
            "timestamp": "2026-11-22 00:00:00+00:00",
            "configuration": {hdr[k]: parse_value(r[k]) for k in range(len(hdr))},
            "times": {"compilation": max(0.0, eval_ms - (t if ok else 0.0)) if eval_ms else 0, "framework": 0, "search_algorithm": 0, "validation": 0,
                      "runtimes": [t] if ok else []},
            "invalidity": "correct" if ok else "runtime",  # failures as in the measured files
            "correctness": 1 if ok else 0,
            "measurements": [{"name": "time", "value": t, "unit": "ms"} if ok else
                             {"name": "time", "value": "RuntimeFailedConfig", "unit": ""}],
            "objectives": ["time"],
        })
    with gzip.open(out, "wt") as f:
        json.dump({"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"}, "results": results}, f)
    print(f"{out}: {len(results)} configurations, {failed} failed")


if __name__ == "__main__":
    main(sys.argv)
