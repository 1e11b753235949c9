#!/usr/bin/env python3
"""tests/gpu_fake_driver.py: the cuda evaluator's whole device path without a GPU: `mptune tune
--evaluator cuda` with the stand-in driver tests/fake_cuda.c (MPT_CUDA_DRIVER_LIB) and the real NVRTC.
A kernel whose tuning parameter `fmode` picks what the driver acts out (see fake_cuda.c) is tuned over
every mode, on one rank and on a worker: each failure is classified (runtime error, timeout, wrong
result, crash, compile error, launch error) and the next variant runs in a fresh context, unaffected.
With the device lost after a fault (FAKE_CUDA_DEAD) the run stops with one message, logging no
configuration as failed that never ran, and resumes once the device is back (it logged every remaining
configuration as a "device not ready" runtime error before). A kernel of 300 arguments gets every one
(the table was cut at 256). A device architecture NVRTC refuses (a setup error: every variant would
fail alike) stops the run at the first configuration with one message, the log intact and resumable
(every configuration was logged as failed before). A compile that hangs (the kernel includes a FIFO no
one writes to, so NVRTC blocks) ends at the run's stop request (--time and --grace, on one rank and on a
worker told to stop) within seconds, logged as cancelled and compiled again on --resume; it waited out
its whole compile timeout (300 s) before. Skipped (77) without NVRTC."""
import json
import os
import subprocess
import sys
import tempfile
import time

import h5py

from checks import check, exit_code
from standins import FAKE_CUDA, all_built, fk_kernel, fk_problem, mptune_cmd, \
    nvrtc_missing, run, write_fk

KERNEL = fk_kernel(constant_filter=True)
PROBLEM = fk_problem("fake_modes", [
    {"Name": "fmode", "Type": "int", "Values": "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]", "Default": 0},
    {"Name": "block_size_x", "Type": "int", "Values": "[256]", "Default": 256}], constant_filter=True)
# fmode -> the status mptune must log (spaces/sys/obs.h: 0 ok, 1 compile, 2 launch, 3 runtime, 4 wrong
# result, 5 timeout, 6 crash)
WANT = {0: 0, 1: 3, 2: 3, 3: 5, 4: 4, 5: 6, 6: 1, 7: 2, 8: 2, 9: 3}


def tune(tmp, log, np, *extra, dead=None, problem="fk.json", env_extra=None):
    env = dict(MPT_CUDA_DRIVER_LIB=FAKE_CUDA, **(env_extra or {}))
    if dead:
        env["FAKE_CUDA_DEAD"] = dead
    p = run(mptune_cmd(["tune", problem, "--evaluator", "cuda", "--strategy", "brute_force", "--budget", "10",
                        "--timeout", "3", "--log", log, "--progress", "off", *extra], np), tmp, env, out_tail=1500)
    check("Sanitizer" not in p.stderr and "runtime error:" not in p.stderr, "a sanitizer report")
    return p


def wide_problem(tmp, n_args):
    """a kernel of n_args arguments (out, then int scalars of value 1..n_args-1) that the fake driver
    checks one by one (fmode 10)"""
    params = ", ".join(["float *out"] + [f"int a{k}" for k in range(1, n_args)])
    src = (f'__device__ const char mpt_fake_marker[] = "MPT_FAKE_MODE=10;MPT_FAKE_NARGS={n_args};";\n'
           f'extern "C" __global__ void fw({params}) {{ out[0] = a1 + mpt_fake_marker[0]; }}\n')
    with open(os.path.join(tmp, "fw.cu"), "w") as f:
        f.write(src)
    args = [{"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly",
             "FillType": "Constant", "FillValue": 0.0, "Size": 16, "Output": 1}]
    args += [{"Name": f"a{k}", "Type": "int32", "MemoryType": "Scalar", "FillValue": k} for k in range(1, n_args)]
    problem = {"General": {"BenchmarkName": "wide", "OutputFormat": "JSON"},
               "ConfigurationSpace": {"TuningParameters": [
                   {"Name": "block_size_x", "Type": "int", "Values": "[32, 64]", "Default": 32}], "Conditions": []},
               "KernelSpecification": {"Language": "CUDA", "KernelName": "fw", "KernelFile": "fw.cu",
                                       "ProblemSize": [16], "Arguments": args}}
    with open(os.path.join(tmp, "fw.json"), "w") as f:
        json.dump(problem, f)


def setup_problem(tmp):
    """fk.json without an output to check (no reference run at open) and ten configurations (pad)"""
    p = json.loads(json.dumps(PROBLEM))
    p["ConfigurationSpace"]["TuningParameters"] = [
        {"Name": "fmode", "Type": "int", "Values": "[0]", "Default": 0},
        {"Name": "pad", "Type": "int", "Values": "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]", "Default": 0},
        {"Name": "block_size_x", "Type": "int", "Values": "[256]", "Default": 256}]
    p["KernelSpecification"]["Arguments"][0]["Output"] = 0
    with open(os.path.join(tmp, "setup.json"), "w") as f:
        json.dump(p, f)


def records(log):
    """fmode -> (status, reason) of the log's records, in order (fmode's value index is its value)"""
    with h5py.File(log, "r") as f:
        ev = f["evaluations"][:int(f["count"][()])]
    return [(int(r["config"][0]), int(r["status"]), r["reason"].decode(errors="replace")) for r in ev]


def hang_problem(tmp):
    """hang.json: one configuration whose source includes the FIFO hang.fifo: NVRTC blocks opening it"""
    fifo = os.path.join(tmp, "hang.fifo")
    os.mkfifo(fifo)
    with open(os.path.join(tmp, "hang.cu"), "w") as f:
        f.write(f'#include "{fifo}"\n' + KERNEL.replace("fk(", "hang("))
    p = json.loads(json.dumps(PROBLEM))
    p["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "[0]"
    p["KernelSpecification"].update(KernelName="hang", KernelFile="hang.cu")
    p["KernelSpecification"]["Arguments"][0]["Output"] = 0
    with open(os.path.join(tmp, "hang.json"), "w") as f:
        json.dump(p, f)
    return fifo


def check_compile_cancel(tmp):
    """the stop request (time budget 2 s, --grace 1) ends a hanging compile (timeout 300 s: --timeout 60)
    well before its timeout; the evaluation is logged as cancelled, and --resume compiles it again"""
    fifo = hang_problem(tmp)
    for np in (1, 2):
        log = os.path.join(tmp, f"hang{np}.h5")
        cmd = mptune_cmd(["tune", "hang.json", "--evaluator", "cuda", "--strategy", "brute_force", "--budget", "1",
                          "--timeout", "60", "--time", "2", "--grace", "1", "--log", log, "--progress", "off"], np)
        t0 = time.monotonic()
        # a session of its own: a run that does not stop is killed with its compiler child
        p = subprocess.Popen(cmd, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, MPT_CUDA_DRIVER_LIB=FAKE_CUDA), start_new_session=True)
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.communicate()
            check(False, f"-n {np}: a hanging compile was not cancelled by the stop request (60 s)")
            continue
        secs = time.monotonic() - t0
        print(f"$ {' '.join(cmd)} -> {p.returncode} in {secs:.1f} s\n{out[-1500:]}{err[-1500:]}", flush=True)
        # a stop that waited for the compile's timeout takes 60 s or more; 40 s leaves start-up room on loaded cores
        check(secs < 40, f"-n {np}: the stop took {secs:.1f} s with a hanging compile")
        got = records(log)
        # on one rank the evaluator's reason; with a coordinator the coordinator's (its in-flight record)
        check(p.returncode == 0 and len(got) == 1 and got[0][1] == 7 and "cancelled" in got[0][2]
              and (np > 1 or "cancelled while compiling" in got[0][2]),
              f"-n {np}: the hanging compile's record: rc {p.returncode}, {got}")
    os.unlink(fifo)
    with open(fifo, "w"):  # an empty file: the compile goes through
        pass
    p = tune(tmp, os.path.join(tmp, "hang2.h5"), 2, "--resume", "--budget", "1", problem="hang.json")
    got = records(os.path.join(tmp, "hang2.h5"))
    check(p.returncode == 0 and [st for _, st, _ in got] == [7, 0], f"the cancelled compile resumed: {got}")


def main():
    if not all_built(FAKE_CUDA):
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        write_fk(tmp, KERNEL, PROBLEM)
        for np in (1, 2):
            log = os.path.join(tmp, f"modes{np}.h5")
            p = tune(tmp, log, np)
            if nvrtc_missing(p):
                return 77
            check(p.returncode == 0, f"-n {np}: the run failed")
            got = records(log)
            check(sorted(m for m, _, _ in got) == list(range(10)), f"-n {np}: the modes run: {got}")
            for m, st, why in got:
                check(st == WANT[m], f"-n {np}: fmode {m}: status {st}, expected {WANT[m]} ({why})")
            reasons = {m: why for m, _, why in got}
            check("CUDA_ERROR_ILLEGAL_ADDRESS" in reasons.get(1, ""), f"fmode 1's reason: {reasons.get(1)}")
            check("CUDA_ERROR_INVALID_IMAGE" in reasons.get(6, ""), f"fmode 6's reason: {reasons.get(6)}")
            with h5py.File(log, "r") as f:  # the timings the driver reported: fmode 0 at 0..2 ms
                ev = f["evaluations"][:int(f["count"][()])]
                ok = [r for r in ev if int(r["status"]) == 0]
                check(len(ok) == 1 and 0 <= float(ok[0]["objective"]) <= 2.0, f"-n {np}: the timing of fmode 0: {ok}")
        # the device lost after fmode 1's fault: the run stops (resumable) and logs no failure it did not see
        dead = os.path.join(tmp, "dead")
        log = os.path.join(tmp, "lost.h5")
        p = tune(tmp, log, 2, dead=dead)
        check(p.returncode != 0 and "the device is not usable any more" in p.stderr,
              f"device lost: rc {p.returncode}, no message")
        got = records(log)
        check(not any("device not ready" in why for _, _, why in got), f"device lost: failures logged: {got}")
        check(len(got) < 10 and (1, 3) in [(m, st) for m, st, _ in got], f"device lost: the records {got}")
        os.unlink(dead)
        p = tune(tmp, log, 2, "--resume")
        got = records(log)
        check(p.returncode == 0 and sorted(m for m, _, _ in got) == list(range(10))
              and all(st == WANT[m] for m, st, _ in got), f"device back: the resumed run: {got}")
        # 300 kernel arguments: every one reaches the launch (the fake driver checks each), on one rank
        wide_problem(tmp, 300)
        log = os.path.join(tmp, "wide.h5")
        p = tune(tmp, log, 1, "--budget", "2", problem="fw.json")
        check(p.returncode == 0, f"300 arguments: rc {p.returncode}")
        if p.returncode == 0:
            got = records(log)
            check(len(got) == 2 and all(st == 0 for _, st, _ in got), f"300 arguments: the records {got}")
        # an architecture NVRTC refuses: one message at the first configuration, on one rank and on two
        # workers; what was logged before stays, and the run resumes once the device is one NVRTC knows
        setup_problem(tmp)
        for np in (1, 3):
            log = os.path.join(tmp, f"setup{np}.h5")
            p = tune(tmp, log, np, "--budget", "3", problem="setup.json")
            check(p.returncode == 0 and len(records(log)) == 3, f"-n {np}: the run before the bad architecture")
            p = tune(tmp, log, np, "--resume", "--budget", "10", problem="setup.json",
                     env_extra={"FAKE_CUDA_CC_MAJOR": "99"})
            msg = "refuses the device architecture sm_990 or KernelSpecification.CompilerOptions"
            check(p.returncode != 0 and p.stderr.count(msg) == 1 and "setup.json" in p.stderr,
                  f"-n {np}: bad architecture: rc {p.returncode}, not one message")
            got = records(log)
            check(len(got) == 3 and all(st == 0 for _, st, _ in got), f"-n {np}: bad architecture: the records {got}")
            p = tune(tmp, log, np, "--resume", "--budget", "10", problem="setup.json")
            got = records(log)
            check(p.returncode == 0 and len(got) == 10 and all(st == 0 for _, st, _ in got),
                  f"-n {np}: resumed on a known architecture: {got}")
        check_compile_cancel(tmp)
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
