#!/usr/bin/python3
"""tests/t4_evaluators.py: the T4 export of a run of every evaluator this machine can run validates against the
T4 results schema (../shared/data/schemas/T4-results-1.0.0.json), with every status each evaluator logs:
sim (a replayed space with failures, and lacking configurations skipped), cpu (the failing kernel: ok,
compile_error, wrong_result, crash, timeout), cuda (the stand-in driver tests/fake_cuda.c with the real NVRTC:
also launch_error and runtime_error; skipped without NVRTC, as gpu_fake_driver is). hip needs the HIP runtime:
said and skipped. Each export holds one result per logged measurement, with the invalidity its status maps to.

Environment (set by ctest): MPTUNE, MPT_SHARED_DATA, MPT_SOURCE_DIR, MPT_BINARY_DIR, MPIEXEC, MPT_SANITIZE.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import jsonschema

MPTUNE = os.environ["MPTUNE"]
DATA = os.environ["MPT_SHARED_DATA"]
SOURCE = os.environ["MPT_SOURCE_DIR"]
SCHEMA = os.path.join(DATA, "schemas", "T4-results-1.0.0.json")
INVALIDITY = {"ok": "correct", "compile_error": "compile", "runtime_error": "runtime", "launch_error": "runtime",
              "crash": "runtime", "timeout": "timeout", "wrong_result": "correctness", "invalid": "constraints"}
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def statuses(log):
    """the status names of the log's records, in append order"""
    with h5py.File(log, "r") as f:
        names = {v: k for k, v in h5py.check_enum_dtype(f["evaluations"].dtype["status"]).items()}
        return [names[int(s)] for s in f["evaluations"][:int(f["count"][()])]["status"]]


def validated(what, log, t4):
    """the export of log, written by the run to t4, against the schema and the log's statuses"""
    with open(t4) as fh:
        doc = json.load(fh)
    with open(SCHEMA) as fh:
        jsonschema.validate(doc, json.load(fh))
    logged = [s for s in statuses(log) if s not in ("cancelled", "missing")]
    got = [r["invalidity"] for r in doc["results"]]
    check(got == [INVALIDITY[s] for s in logged], f"{what}: invalidity {got} for statuses {logged}")
    print(f"ok: {what}: {len(got)} results valid against the T4 schema ({', '.join(sorted(set(logged)))})")
    return set(logged)


def tune(what, args, cwd, env=None, np=1):
    cmd = [MPTUNE, "tune", *args, "--no-progress"]
    if np > 1:
        cmd = [os.environ["MPIEXEC"], "-n", str(np), *cmd]
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, env=dict(os.environ, **(env or {})))
    return p


def sim(tmp):
    """a replayed space with failures (the A6000: compile and runtime) and a configuration it lacks"""
    with gzip.open(os.path.join(DATA, "brute-forced", "convolution_A6000_T4.json.gz"), "rt") as fh:
        doc = json.load(fh)
    doc["results"] = [r for i, r in enumerate(doc["results"]) if i % 7]
    part = os.path.join(tmp, "part_T4.json")
    with open(part, "w") as fh:
        json.dump(doc, fh)
    log, t4 = os.path.join(tmp, "sim.h5"), os.path.join(tmp, "sim_T4.json")
    p = tune("sim", [os.path.join(DATA, "t1", "convolution_milo.json"), "--simulate", part, "--simulate-missing", "skip",
                     "--strategy", "random", "--seed", "3", "--budget", "300", "--log", log, "--t4", t4], tmp)
    check(p.returncode == 0, "sim: " + p.stderr[-800:])
    check("missing" in statuses(log), "sim: no configuration skipped")
    seen = validated("sim", log, t4)
    check({"ok", "compile_error", "runtime_error"} <= seen, f"sim: statuses {seen}")


def cpu(tmp):
    """the failing kernel, every mode: a correct, a non-compiling, a wrong, a crashing, a hanging variant"""
    log, t4 = os.path.join(tmp, "cpu.h5"), os.path.join(tmp, "cpu_T4.json")
    p = tune("cpu", [os.path.join(SOURCE, "tests", "kernels", "failing.json"), "--strategy", "brute_force", "--budget",
                     "14", "--timeout", "2", "--log", log, "--t4", t4], tmp, env={"MPT_CPU_MEMORY_LIMIT_MB": "64"}, np=2)
    check(p.returncode == 0, "cpu: " + p.stdout[-800:] + p.stderr[-800:])
    seen = validated("cpu", log, t4)
    check({"ok", "compile_error", "wrong_result", "crash", "timeout"} <= seen, f"cpu: statuses {seen}")


def cuda(tmp):
    """the stand-in driver acting out every failure (gpu_fake_driver.py's kernel and problem)"""
    import gpu_fake_driver as fake
    from standins import FAKE_CUDA, nvrtc_missing, write_fk
    write_fk(tmp, fake.KERNEL, fake.PROBLEM)
    log, t4 = os.path.join(tmp, "cuda.h5"), os.path.join(tmp, "cuda_T4.json")
    p = tune("cuda", ["fk.json", "--evaluator", "cuda", "--strategy", "brute_force", "--budget", "10", "--timeout", "3",
                      "--log", log, "--t4", t4], tmp, env={"MPT_CUDA_DRIVER_LIB": FAKE_CUDA})
    if nvrtc_missing(p, "skipped: cuda (NVRTC is not installed)"):
        return
    check(p.returncode == 0, "cuda: " + p.stdout[-800:] + p.stderr[-800:])
    seen = validated("cuda", log, t4)
    check({"ok", "compile_error", "launch_error", "runtime_error", "wrong_result", "timeout", "crash"} <= seen,
          f"cuda: statuses {seen}")


def main(tmp):
    sim(tmp)
    cpu(tmp)
    cuda(tmp)
    print("skipped: hip (no HIP runtime on a machine without an AMD GPU; its export is the same writer's)")


if __name__ == "__main__":
    tmpdir = tempfile.mkdtemp(prefix="mpt_t4ev_")
    try:
        main(tmpdir)
    finally:
        if not os.environ.get("MPT_KEEP_TMP"):
            shutil.rmtree(tmpdir, ignore_errors=True)
