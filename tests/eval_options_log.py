#!/usr/bin/env python3
"""tests/eval_options_log.py: the evaluator options a run measured with are in its run log. Under mpiexec -n 2
(rank 1 evaluates) with the cpu evaluator and the purpose-made failing kernel (tests/kernels/failing.c: mode 0
correct, mode 5 exhausts memory): --evaluator-option memory_limit_mb=64 is recorded (the root attribute
evaluator_options, one a line) and shown by `mptune show` (text and JSON); a --resume without
--evaluator-option goes on with the logged ones on the worker (the memory hog's crash names the 64 MiB limit,
not the 128 MiB MPT_CPU_MEMORY_LIMIT_MB gives when no option does) and says so; a --resume with another
--evaluator-option measures with that one, says so and records it (as --option does for the strategy's); logged
options the evaluator of the resume does not take are refused before anything is written. Under AddressSanitizer
(no address-space limit) the hog is a timeout (after 3 s) and its reason names no limit: the limit is checked in
the release build only."""
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py

from checks import check, exit_code
from standins import MPTUNE, mptune_cmd, run

SRC = os.environ["MPT_SOURCE_DIR"]
SANITIZE = os.environ.get("MPT_SANITIZE") == "1"
ENV = {"MPT_CPU_MEMORY_LIMIT_MB": "128", "OPENBLAS_NUM_THREADS": "1"}


def problem(tmp):
    """failing.json with the modes 0 (the default, id 0) and 5 (the memory hog, id 1) only"""
    with open(os.path.join(SRC, "tests", "kernels", "failing.json")) as f:
        t1 = json.load(f)
    for p in t1["ConfigurationSpace"]["TuningParameters"]:
        p["Values"] = {"mode": "[0, 5]", "scale": "[1]"}[p["Name"]]
    t1["KernelSpecification"]["KernelFile"] = os.path.join(SRC, "tests", "kernels", "failing.c")
    path = os.path.join(tmp, "modes.json")
    with open(path, "w") as f:
        json.dump(t1, f)
    return path


def tune(tmp, prob, log, budget, *extra):
    return run(mptune_cmd(["tune", prob, "--strategy", "brute_force", "--budget", str(budget), "--timeout", "3" if SANITIZE else "20",
                           "--confirm", "0", "--log", log, "--progress", "off", *extra], 2), tmp, env=ENV)


def logged(log):
    with h5py.File(log, "r") as f:
        text = f.attrs.get("evaluator_options")
        text = text.decode() if isinstance(text, bytes) else text
        ev = f["evaluations"][: int(f["count"][()])]
        reasons = {int(r["id"]): (r["reason"].decode() if isinstance(r["reason"], bytes) else r["reason"]) for r in ev}
        return text, reasons


def hog_limit(reason):
    """the MiB of the address-space limit the memory hog's crash names (None: none named)"""
    m = re.search(r"RLIMIT_AS, (\d+) MiB above", reason or "")
    return int(m.group(1)) if m else None


def main():
    with tempfile.TemporaryDirectory() as tmp:
        prob = problem(tmp)
        log = os.path.join(tmp, "run.h5")
        p = tune(tmp, prob, log, 1, "--evaluator-option", "memory_limit_mb=64")
        text, _ = logged(log)
        check(p.returncode == 0 and text == "memory_limit_mb=64", f"the option is recorded: {text!r}")
        s = subprocess.run([MPTUNE, "show", log], cwd=tmp, capture_output=True, text=True)
        check(s.returncode == 0 and re.search(r"^run: tune, .* evaluator auto \(memory_limit_mb=64\)$", s.stdout, re.M),
              f"mptune show names it: {s.stdout[:600]}")
        s = subprocess.run([MPTUNE, "show", log, "--json"], cwd=tmp, capture_output=True, text=True)
        check(s.returncode == 0 and json.loads(s.stdout).get("evaluator_options") == ["memory_limit_mb=64"],
              "mptune show --json: evaluator_options")

        # resumed without --evaluator-option: the logged one, on the worker
        p = tune(tmp, prob, log, 2, "--resume")
        text, reasons = logged(log)
        check(p.returncode == 0 and "note: continuing with the evaluator options " + log + " was measured with, "
              "'memory_limit_mb=64'" in p.stdout and text == "memory_limit_mb=64", "a plain resume takes the logged one")
        check(SANITIZE or hog_limit(reasons.get(1)) == 64, f"... and the worker measures with it: {reasons.get(1)!r}")

        # resumed with another one: that one, said and recorded
        log2 = os.path.join(tmp, "run2.h5")
        tune(tmp, prob, log2, 1, "--evaluator-option", "memory_limit_mb=64")
        p = tune(tmp, prob, log2, 2, "--resume", "--evaluator-option", "memory_limit_mb=96")
        text, reasons = logged(log2)
        check(p.returncode == 0 and f"note: {log2} was measured with the evaluator options 'memory_limit_mb=64'; "
              "continuing with the --evaluator-option given, 'memory_limit_mb=96'" in p.stdout
              and text == "memory_limit_mb=96", f"a resume with another option: said and recorded ({text!r})")
        check(SANITIZE or hog_limit(reasons.get(1)) == 96, f"... and measured with: {reasons.get(1)!r}")

        # logged options the evaluator of the resume does not take: refused, the log unchanged
        log3 = os.path.join(tmp, "run3.h5")
        tune(tmp, prob, log3, 1, "--evaluator-option", "memory_limit_mb=64")
        before = open(log3, "rb").read()
        p = run(mptune_cmd(["tune", prob, "--budget", "2", "--log", log3, "--resume", "--evaluator", "cuda"], 2), tmp,
                env=ENV)
        check(p.returncode != 0 and f"{log3} was measured with the evaluator option memory_limit_mb=64, which "
              "--evaluator cuda does not take" in p.stderr and p.stderr.count("mptune tune:") == 1
              and open(log3, "rb").read() == before, "logged options another evaluator does not take: one error")
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
