#!/usr/bin/python3
"""tests/model_ranks_e2e.py: `mptune tune --model-ranks K` end to end under mpiexec.mpich with the replay
evaluator (convolution_milo on the brute-forced A100 space, ../shared/data): bo on one worker evaluates the
same configurations in the same order with two model ranks (-n 4 --model-ranks 2) as without (-n 2), the
model ranks evaluate nothing (one worker in the device table and the log), and bad uses get one clear
message and a non-zero exit: too few ranks, a strategy without a model, bo options the model ranks do not
serve, K < 1.

Environment (set by ctest): MPTUNE, MPIEXEC, MPT_SHARED_DATA.
"""
import os
import subprocess
import sys
import tempfile

import h5py

MPTUNE = os.environ.get("MPTUNE", "build/mptune")
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec.mpich")
DATA = os.environ.get("MPT_SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
T1 = os.path.join(DATA, "t1", "convolution_milo.json")
A100 = os.path.join(DATA, "brute-forced", "convolution_A100_T4.json.gz")
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)


def tune(np, log, *extra):
    cmd = [MPIEXEC, "-n", str(np), MPTUNE, "tune", T1, "--simulate", A100, "--strategy", "bo", "--budget", "40",
           "--seed", "3", "--log", log, "--progress", "off"] + list(extra)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300, env=env)
    print("$", " ".join(cmd), "-> rc", p.returncode, flush=True)
    return p


def logged(log):
    with h5py.File(log, "r") as h:
        ev = h["evaluations"]
        return [int(i) for i in ev["id"]], sorted(set(int(r) for r in ev["rank"]))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        plain, dist = os.path.join(tmp, "plain.h5"), os.path.join(tmp, "dist.h5")
        p = tune(2, plain)
        check(p.returncode == 0, "bo with -n 2 runs: " + p.stderr[-300:])
        p = tune(4, dist, "--model-ranks", "2")
        check(p.returncode == 0, "bo with -n 4 --model-ranks 2 runs: " + p.stderr[-300:])
        check(", 1 worker" in p.stdout, "the model ranks are not workers: " + p.stdout[:300])
        ids_plain, ranks_plain = logged(plain)
        ids_dist, ranks_dist = logged(dist)
        check(len(ids_dist) == 40, "40 evaluations logged with model ranks")
        check(ids_plain == ids_dist, "the same configurations in the same order: %s / %s" % (ids_plain, ids_dist))
        check(ranks_dist == [1], "only rank 1 evaluated with model ranks 2 and 3: %s" % ranks_dist)
        bad = [
            (2, ["--model-ranks", "2"], "needs more than 2 ranks"),
            (3, ["--model-ranks", "1", "--strategy", "random"], "only bo has"),
            (3, ["--model-ranks", "1", "--option", "acquisition=multi"], "acquisition=ei"),
            (2, ["--model-ranks", "0"], "--model-ranks"),
        ]
        for np, extra, want in bad:
            p = tune(np, os.path.join(tmp, "bad.h5"), *extra)
            check(p.returncode != 0 and want in p.stderr, "refused with '%s': rc %d, %s" % (want, p.returncode, p.stderr[-300:]))
            check("Traceback" not in p.stderr and "BAD TERMINATION" not in p.stdout + p.stderr, "no crash: " + p.stderr[-300:])
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
