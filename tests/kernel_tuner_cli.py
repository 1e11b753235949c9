#!/usr/bin/python3
"""tests/kernel_tuner_cli.py: mptune as a Kernel Tuner user meets it, end to end on the replayed convolution
space. Kernel Tuner's strategy names (bayes_opt, genetic_algorithm, ...) are accepted by `tune --strategy`,
`tune --strategy NAME --help`, `bench --strategy` and a resume, and the run log keeps mptune's own name; bo's
options by Kernel Tuner's names (popsize, method) are read as ours.

Environment (set by ctest): MPTUNE, MPT_SHARED_DATA. Exit status 0 when everything holds.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import h5py

MPTUNE = os.environ["MPTUNE"]
DATA = os.environ["MPT_SHARED_DATA"]
T1 = os.path.join(DATA, "t1", "convolution_milo.json")
REPLAY = os.path.join(DATA, "brute-forced", "convolution_A100_T4.json.gz")


def run(args, expect_ok=True):
    p = subprocess.run([MPTUNE, *args], capture_output=True, text=True, timeout=300)
    if expect_ok and p.returncode != 0:
        sys.exit(f"FAIL: mptune {' '.join(args)} exited {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def attr(log, name):
    with h5py.File(log, "r") as f:
        v = f.attrs[name]
        return v.decode() if isinstance(v, bytes) else str(v)


def strategy_names(tmp):
    """Kernel Tuner's strategy names wherever a strategy name is; the log keeps ours"""
    log = os.path.join(tmp, "kt_names.h5")
    p = run(["tune", T1, "--simulate", REPLAY, "--strategy", "bayes_opt", "--option", "popsize=4",
             "--option", "method=poi", "--budget", "12", "--seed", "3", "--log", log, "--no-progress"])
    check(", strategy bo, budget 12," in p.stdout, "the header line names bo: " + p.stdout[:400])
    check(attr(log, "strategy") == "bo", "the log keeps our name: " + attr(log, "strategy"))
    # resumed with Kernel Tuner's name of the same strategy: the same strategy, no note of another one
    p = run(["tune", T1, "--simulate", REPLAY, "--strategy", "bayes_opt", "--budget", "15", "--log", log,
             "--resume", "--no-progress"])
    check("continuing with" not in p.stdout and "evaluations: 15 " in p.stdout, "resume with bayes_opt: " + p.stdout)
    check(attr(log, "strategy") == "bo", "the resumed log keeps our name: " + attr(log, "strategy"))
    # a strategy's options listed under Kernel Tuner's name, with Kernel Tuner's option names
    p = run(["tune", "--strategy", "genetic_algorithm", "--help"])
    check("options of strategy 'ga'" in p.stdout and "popsize" in p.stdout, "--help of genetic_algorithm: " + p.stdout)
    p = run(["tune", "--strategy", "bayes_opt", "--help"])
    check("Kernel Tuner's names of these options, read as ours: popsize (initial_samples)" in p.stdout,
          "--help of bayes_opt: " + p.stdout[-300:])
    p = run(["tune", "--strategy", "bayes", "--help"], expect_ok=False)
    check(p.returncode != 0 and "Kernel Tuner's names: random_sample (random)" in p.stderr, "unknown name: " + p.stderr)
    # bench: Kernel Tuner's names, and a global --option by Kernel Tuner's name of bo's option
    out = os.path.join(tmp, "bench")
    p = run(["bench", "--problem", T1, "--space", REPLAY, "--strategy", "random_sample,bayes_opt", "--option",
             "popsize=3", "--repeats", "1", "--budget", "15", "--out", out, "--no-plot", "--no-progress"])
    check("| space | random_sample | bayes_opt |" in p.stdout, "bench table: " + p.stdout[:300])
    print("ok: Kernel Tuner's strategy names")


def main(tmp):
    strategy_names(tmp)


if __name__ == "__main__":
    tmpdir = tempfile.mkdtemp(prefix="mpt_kt_")
    try:
        main(tmpdir)
    finally:
        if not os.environ.get("MPT_KEEP_TMP"):
            shutil.rmtree(tmpdir, ignore_errors=True)
