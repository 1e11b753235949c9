#!/usr/bin/python3
"""scripts/bench_pipeline.py [--rounds R] [--budget B] [--np N] [--ahead ARGS] PROBLEM.json...: the evaluation
pipeline measured (docs/PERFORMANCE.md, "Compile-ahead"). For each problem, R rounds of two runs interleaved, one
without compile-ahead (--lookahead 0: each variant compiles when its worker gets to it, as before) and one with
it (ARGS, default: mptune's defaults), each `mpiexec.mpich -n N mptune tune PROBLEM --strategy random --seed 1
--budget B`, so both measure the same configurations. Prints per run the evaluations/s and the share of the wall
time the device worked (the summary's `rate:` and `devices:` lines), and per problem the ratio of each
configuration's median time with compile-ahead to without (the median and the spread of those ratios over the
configurations both measured, every round pooled): timings with compile-ahead must match the ones without.
Needs h5py (/usr/bin/python3). Run from the repository root with build/mptune built."""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

import h5py


def run(np, problem, budget, extra, log):
    cmd = ["mpiexec.mpich", "-n", str(np), "build/mptune", "tune", problem, "--strategy", "random", "--seed", "1",
           "--budget", str(budget), "--log", log, "--force", "--progress", "off"] + extra
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    rate = float(re.search(r"rate: ([0-9.]+) evaluations/s", p.stdout).group(1))
    dev = re.search(r"devices: worked ([0-9.]+) %", p.stdout)
    with h5py.File(log, "r") as f:
        data = f["evaluations"][:int(f["count"][()])]
    medians = {int(r["id"]): float(r["median"]) for r in data if int(r["status"]) == 0}
    return rate, float(dev.group(1)) if dev else float("nan"), medians


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--ahead", default="", help="options of the compile-ahead runs (default: none, mptune's defaults)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mpt-bench-pipeline-")
    modes = (("without", ["--lookahead", "0"]), ("with", a.ahead.split()))
    for problem in a.problems:
        name = os.path.basename(problem)
        times = {"without": {}, "with": {}}
        for r in range(a.rounds):
            for mode, extra in modes:
                rate, worked, med = run(a.np, problem, a.budget, extra, os.path.join(tmp, f"{mode}.h5"))
                print(f"{name} round {r + 1} {mode:7s} compile-ahead: {rate:6.2f} evaluations/s, device worked "
                      f"{worked:5.1f} % of the wall time", flush=True)
                for i, m in med.items():
                    times[mode].setdefault(i, []).append(m)
        noise = [b / a for m in times["without"].values() for a, b in zip(m, m[1:]) if a > 0]
        if noise:
            print(f"{name}: the same without compile-ahead, one round / the one before: median "
                  f"{statistics.median(noise):.3f} over {len(noise)} configurations (the machine's noise)", flush=True)
        ratios = []
        for i in times["with"]:
            if i in times["without"]:
                ratios += [w / o for w in times["with"][i] for o in times["without"][i] if o > 0]
        if ratios:
            q = statistics.quantiles(ratios, n=10)
            print(f"{name}: per-configuration median time with / without compile-ahead: median {statistics.median(ratios):.3f}"
                  f" (p10 {q[0]:.3f}, p90 {q[-1]:.3f}) over {len(ratios)} pairs of {len(times['with'])} configurations",
                  flush=True)


if __name__ == "__main__":
    main()
