#!/usr/bin/env python3
"""tests/python_vector_add.py: Kernel Tuner's vector add in C (python/examples/vector_add_c.py) tuned for
real by mptune's Python front-end: the example script run as a user runs it (mpiexec.mpich, a coordinator
and a worker, the cpu evaluator compiling every variant with cc) tunes every valid configuration, each
verified against the answer; the best it prints is the best mptune printed and the best of the run log
read here with h5py alone (docs/RUNLOG.md); read_log gives the results tune_kernel returned. A wrong
answer makes every result a WrongResultConfig naming the output. run_kernel runs one configuration and
returns its timing, refuses to be read as Kernel Tuner's output arrays, and raises on a configuration
that does not compile. Without $MPTUNE the package in the build tree finds build/mptune beside it."""
import itertools
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

import mptune

SRC = os.environ["MPT_SOURCE_DIR"]
BUILD = os.environ["MPT_BINARY_DIR"]
EXAMPLE = os.path.join(SRC, "python", "examples", "vector_add_c.py")
sys.path.insert(0, os.path.dirname(EXAMPLE))
import vector_add_c  # noqa: E402  (the example, from python/examples)
from checks import check, exit_code  # noqa: E402



def log_best(path):
    """(config, objective) of the best ok record of a run log, read with h5py as docs/RUNLOG.md shows"""
    with h5py.File(path, "r") as f:
        text = lambda v: v.decode() if isinstance(v, bytes) else v  # noqa: E731
        names = [text(n) for n in f["parameters"].attrs["names"]]
        values = {n: [text(v) for v in f["parameters"][n][:].tolist()] for n in names}
        ev = f["evaluations"][: int(f["count"][()])]
        status = h5py.check_enum_dtype(f["evaluations"].dtype["status"])
        ok = ev["status"] == status["ok"]
        best = ev[ok][np.argmin(ev["objective"][ok])]
        return {n: values[n][best["config"][p]] for p, n in enumerate(names)}, float(best["objective"]), len(ev)


def valid_configurations():
    params = {"block_size_x": [64, 128, 256, 512, 1024], "unroll_x": [1, 2, 4, 8]}
    return [dict(zip(params, v)) for v in itertools.product(*params.values()) if v[0] >= 16 * v[1]]


def test_example_script(tmp):
    """the example run as a script; its results through the API"""
    wd = os.path.join(tmp, "va")
    p = subprocess.run([sys.executable, EXAMPLE, "--ranks", "2", "--workdir", wd], capture_output=True, text=True,
                       timeout=600)
    print(p.stdout + p.stderr[-3000:])
    check(p.returncode == 0, f"the example exited with {p.returncode}")
    if p.returncode != 0:
        return
    check("progress:" in p.stderr and "best: " in p.stderr, "mptune's progress and summary reach stderr")
    printed = re.search(r"^best: block_size_x=(\d+) unroll_x=(\d+): ([0-9.]+) ms$", p.stdout, re.M)
    summary = re.search(r"^best: block_size_x=(\d+),unroll_x=(\d+)$", p.stderr, re.M)
    config, objective, n_records = log_best(os.path.join(wd, "run.h5"))
    # mptune's summary names the best confirmed (--confirm, default 3): another finalist when the confirmation
    # reorders them (re-measured CPU timings vary), while the results hold the search's measurements
    reordered = "confirmation reorders the finalists" in p.stderr
    check(printed and summary and (reordered or printed.groups()[:2] == summary.groups()) and
          (reordered or summary.groups() == (str(config["block_size_x"]), str(config["unroll_x"]))),
          f"the best: the example printed {printed and printed.groups()}, mptune {summary and summary.groups()}, "
          f"the log has {config}")
    results = mptune.read_log(os.path.join(wd, "run.h5"))
    valid = valid_configurations()
    check(len(results) == len(valid) == n_records, f"{len(results)} results, {len(valid)} valid configurations")
    check(sorted((r["block_size_x"], r["unroll_x"]) for r in results) ==
          sorted((c["block_size_x"], c["unroll_x"]) for c in valid), "every valid configuration was tuned")
    check(all(r["status"] == "ok" and isinstance(r["time"], float) and r["time"] > 0 for r in results),
          f"every configuration valid: {[(r['status'], r['error']) for r in results if r['status'] != 'ok']}")
    check(all(len(r["times"]) == 7 and abs(r["time"] - np.mean(r["times"])) <= 1e-9 * r["time"] for r in results),
          "time is the mean of 7 iterations")
    best = min(results, key=lambda r: r["time"])
    check({k: best[k] for k in config} == config and best["time"] == objective,
          f"the best result {best} is the log's best {config} {objective}")


def test_api(tmp):
    """tune_kernel's return, a wrong answer, read_log"""
    results, env, answer = vector_add_c.tune(ranks=2, workdir=os.path.join(tmp, "api"), quiet=True)
    check(len(results) == len(valid_configurations()) and all(r["status"] == "ok" for r in results),
          f"the answer checked: {[(r['status'], r['error']) for r in results if r['status'] != 'ok']}")
    check(mptune.read_log(env["log"]) == results, "read_log gives the results tune_kernel returned")
    check(env["device_name"] and env["devices"][0]["vendor"] == "CPU" and env["devices"][0]["rank"] == 1 and
          env["problem_size"] == [vector_add_c.SIZE] and env["strategy"] == "brute_force" and
          env["budget"] == len(results) and env["mptune_version"] and env["ranks"] == 2,
          f"env: {env}")
    results, env, _ = vector_add_c.tune(ranks=2, workdir=os.path.join(tmp, "wrong"), wrong_answer=True, quiet=True)
    check(len(results) == len(valid_configurations()), f"{len(results)} results with a wrong answer")
    for r in results:
        check(isinstance(r["time"], mptune.WrongResultConfig) and str(r["time"]) == "WrongResultConfig" and
              r["status"] == "wrong_result" and "arg0: 1000000 of 1000000 values differ" in r["error"] and
              r["times"] == [],
              f"a wrong answer: {r}")
    # the default work directory: a temporary one (in a temporary root of this test's own), gone after a
    # successful run
    root = os.path.join(tmp, "tmproot")
    os.mkdir(root)
    tempfile.tempdir = root
    try:
        results, env, _ = vector_add_c.tune(ranks=1, quiet=True, strategy="random_sample",
                                            strategy_options={"max_fevals": 3})
    finally:
        tempfile.tempdir = None
    check(len(results) == 3 and env["workdir"] is None and env["log"] is None, f"a temporary work directory: {env}")
    check(not os.listdir(root), f"the temporary work directory was left: {os.listdir(root)}")


def test_run_kernel(tmp):
    c, a, b, n = np.zeros(1000, np.float32), np.ones(1000, np.float32), np.ones(1000, np.float32), np.int32(1000)
    run = mptune.run_kernel("vector_add", vector_add_c.KERNEL, 1000, [c, a, b, n], {"block_size_x": 128, "unroll_x": 4},
                            lang="C", workdir=os.path.join(tmp, "one"), quiet=True)
    check(run["time"] > 0 and len(run["times"]) == 7 and run["block_size_x"] == 128 and run.result["unroll_x"] == 4,
          f"run_kernel's timing: {run!r}")
    # the kernel from files: the kernel first, then a header it includes from another directory
    os.makedirs(os.path.join(tmp, "src", "include"))
    kernel_file = os.path.join(tmp, "src", "add.c")
    header = os.path.join(tmp, "src", "include", "add_op.h")
    with open(header, "w") as f:
        f.write("#define ADD(x, y) ((x) + (y))\n")
    with open(kernel_file, "w") as f:
        f.write('#include <stdint.h>\n#include "add_op.h"\n'
                "void add(float *c, const float *a, const float *b, int32_t n) {\n"
                "  for (int32_t i = 0; i < n; i++) c[i] = ADD(a[i], b[i]);\n}\n")
    files_run = mptune.run_kernel("add", [kernel_file, header], 1000, [c, a, b, n], {"block_size_x": 1}, lang="C",
                                  workdir=os.path.join(tmp, "files"), quiet=True)
    check(files_run["status"] == "ok", f"the kernel from files: {files_run!r}")
    for use in (lambda r: r[0], lambda r: list(r), lambda r: len(r)):
        try:
            use(run)
            check(False, "run_kernel's result was read as output arrays")
        except TypeError as e:
            check("not the kernel's output arrays" in str(e), f"the message: {e}")
    # a failure keeps the default (temporary) work directory and names it
    root = os.path.join(tmp, "tmproot_bad")
    os.mkdir(root)
    tempfile.tempdir = root
    try:
        mptune.run_kernel("vector_add", vector_add_c.KERNEL, 1000, [c, a, b, n], {"block_size_x": 128, "unroll_x": -1},
                          lang="C", quiet=True)
        check(False, "run_kernel of a configuration that does not compile returned")
    except mptune.KernelRunError as e:
        print(f"refused as expected: {e}")
        check("does not compile" in str(e) and "unroll" in str(e), f"the compile error's message: {e}")
        kept = [os.path.join(root, d) for d in os.listdir(root)]
        check(len(kept) == 1 and kept[0] in str(e) and os.path.isfile(os.path.join(kept[0], "problem.json")),
              f"the work directory kept: {kept}")
    finally:
        tempfile.tempdir = None


def test_build_tree_executable():
    """$MPTUNE unset: build/python/mptune finds build/mptune"""
    env = {k: v for k, v in os.environ.items() if k != "MPTUNE"}
    env.update(PYTHONPATH=os.path.join(BUILD, "python"), PATH="/usr/bin:/bin")
    p = subprocess.run([sys.executable, "-c", "import mptune.runner as r; print(r.find_mptune())"], env=env,
                       capture_output=True, text=True)
    check(p.returncode == 0 and os.path.samefile(p.stdout.strip(), os.path.join(BUILD, "mptune")),
          f"the executable found from the build tree: {p.stdout} {p.stderr}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_example_script(tmp)
        test_api(tmp)
        test_run_kernel(tmp)
        test_build_tree_executable()
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
