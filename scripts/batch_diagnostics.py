#!/usr/bin/python3
"""scripts/batch_diagnostics.py: where a batched strategy loses against ask(1) on brute-forced spaces.

Runs tests/bo_harness (BO_HARNESS_TRACE=1: every evaluation) for each replay file at --batch B and
prints, per space and over all of them:
  - the score and the mean score term at k = 20, 40, ..., budget (as mptune bench scores a run),
  - the hitting time: evaluations until a run's best comes within --within (default 3 %) of the
    best objective any run found; quartiles and the runs that never got there,
  - with B > 1, for each position j of a round (after the initial sample): how often the pick there
    beats the best known when the round was asked, and how often it is that round's winning pick.

    /usr/bin/python3 scripts/batch_diagnostics.py --harness build/tests/bo_harness \
        --problem ../shared/data/t1/convolution_milo.json --batch 16 --repeats 70 --seed0 1 \
        ../shared/data/brute-forced/convolution_{A100,A4000,A6000,MI250X,W6600,W7800}_T4.json.gz

Extra bo_harness options (--option key=value) follow after `--`. docs/PERFORMANCE.md ("batched bo")
has its output for ask(1) and ask(16).
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys


def run_harness(args, replay):
    cmd = [args.harness, args.problem, replay, "--repeats", str(args.repeats), "--seed0", str(args.seed0),
           "--batch", str(args.batch), "--budget", str(args.budget)] + args.extra
    env = dict(os.environ, BO_HARNESS_TRACE="1", BO_HARNESS_CURVE="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"batch_diagnostics: {' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()}")
    runs, cur = [], []
    for line in out.stdout.splitlines() + out.stderr.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].isdigit():
            if int(f[0]) == 1 and cur:
                runs.append(cur)
                cur = []
            cur.append(math.inf if f[1] == "nan" else float(f[1]))
    if cur:
        runs.append(cur)
    text = out.stdout + out.stderr
    score = re.search(r"score (-?[0-9.]+)", text)
    curve = re.search(r"score at k=20,40,\.\.\.: (.*)", text)
    if not runs or not score or not curve:
        sys.exit(f"batch_diagnostics: no trace or score from {' '.join(cmd)}")
    return runs, float(score.group(1)), [float(x) for x in curve.group(1).split()]


def positions(runs, batch, n_init):
    """per position of a round: runs where the pick beats the round-start best, and where it wins the round"""
    better, wins, total = [0] * batch, [0] * batch, [0] * batch
    for r in runs:
        best = min(r[:n_init])
        for s in range(n_init, len(r), batch):
            rd = r[s:s + batch]
            b = min(rd)
            for j, v in enumerate(rd):
                total[j] += 1
                better[j] += v < best
                wins[j] += v < best and v == b
            best = min(best, b)
    return better, wins, total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--harness", default="build/tests/bo_harness")
    ap.add_argument("--problem", required=True)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=35)
    ap.add_argument("--seed0", type=int, default=1)
    ap.add_argument("--budget", type=int, default=220)
    ap.add_argument("--within", type=float, default=0.03, help="hitting time: within this share of the best found")
    ap.add_argument("--initial", type=int, default=10, help="evaluations before the first model round")
    ap.add_argument("replays", nargs="+")
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    args = ap.parse_args(argv)
    args.extra = extra
    curves, scores = [], []
    pos_all = [[0] * args.batch for _ in range(3)]
    for rep in args.replays:
        runs, score, curve = run_harness(args, rep)
        scores.append(score)
        curves.append(curve)
        target = min(min(r) for r in runs) * (1 + args.within)
        hits = sorted(next((k + 1 for k, v in enumerate(r) if v <= target), math.inf) for r in runs)
        finite = [h for h in hits if h < math.inf]
        q = statistics.quantiles(finite, n=4) if len(finite) >= 2 else [math.nan] * 3
        name = os.path.basename(rep).split(".")[0]
        print(f"{name}: score {score:.3f}; evaluations to within {args.within:.0%} of the best found: "
              f"quartiles {q[0]:.0f} {q[1]:.0f} {q[2]:.0f}, never {len(hits) - len(finite)} of {len(hits)}")
        if args.batch > 1:
            for acc, part in zip(pos_all, positions(runs, args.batch, args.initial)):
                for j in range(args.batch):
                    acc[j] += part[j]
    n = len(scores)
    print(f"mean score {sum(scores) / n:.4f} over {n} spaces")
    print("mean term at k = 20, 40, ...:", " ".join(f"{sum(c[i] for c in curves) / n:.3f}" for i in range(len(curves[0]))))
    if args.batch > 1:
        better, wins, total = pos_all
        print("position in round: share of picks better than the round-start best / winning the round")
        for j in range(args.batch):
            if total[j]:
                print(f"  {j:2d}  {better[j] / total[j]:.3f}  {wins[j] / total[j]:.3f}")


if __name__ == "__main__":
    main()
