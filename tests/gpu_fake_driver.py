#!/usr/bin/env python3
"""tests/gpu_fake_driver.py: the cuda evaluator's whole device path without a GPU: `mptune tune
--evaluator cuda` with the stand-in driver tests/fake_cuda.c (MPT_CUDA_DRIVER_LIB) and the real NVRTC.
A kernel whose tuning parameter `fmode` picks what the driver acts out (see fake_cuda.c) is tuned over
every mode, on one rank and on a worker: each failure is classified (runtime error, timeout, wrong
result, crash, compile error, launch error) and the next variant runs in a fresh context, unaffected.
With the device lost after a fault (FAKE_CUDA_DEAD) the run stops with one message, logging no
configuration as failed that never ran, and resumes once the device is back (it logged every remaining
configuration as a "device not ready" runtime error before). Skipped (77) without NVRTC."""
import json
import os
import subprocess
import sys
import tempfile

import h5py

MPTUNE = os.environ["MPTUNE"]
MPIEXEC = os.environ["MPIEXEC"]
FAKE = os.path.join(os.environ["MPT_BINARY_DIR"], "tests", "libfake_cuda.so")

KERNEL = r"""
#define STR2(x) #x
#define STR(x) STR2(x)
__device__ const char mpt_fake_marker[] = "MPT_FAKE_MODE=" STR(fmode) ";";
__constant__ float filt[16];
extern "C" __global__ void fk(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2 + filt[0] + mpt_fake_marker[0];
}
"""
PROBLEM = {
    "General": {"BenchmarkName": "fake_modes", "OutputFormat": "JSON"},
    "ConfigurationSpace": {"TuningParameters": [
        {"Name": "fmode", "Type": "int", "Values": "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]", "Default": 0},
        {"Name": "block_size_x", "Type": "int", "Values": "[256]", "Default": 256}], "Conditions": []},
    "KernelSpecification": {
        "Language": "CUDA", "KernelName": "fk", "KernelFile": "fk.cu", "ProblemSize": [1000],
        "Arguments": [
            {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly",
             "FillType": "Constant", "FillValue": 0.0, "Size": 1000, "Output": 1},
            {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly",
             "FillType": "Random", "FillValue": 1.0, "Size": 1000},
            {"Name": "filt", "Type": "float", "MemoryType": "Vector", "MemType": "Constant",
             "AccessType": "ReadOnly", "FillType": "Constant", "FillValue": 1.0, "Size": 16},
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 1000}]}}
# fmode -> the status mptune must log (spaces/obs.h: 0 ok, 1 compile, 2 launch, 3 runtime, 4 wrong
# result, 5 timeout, 6 crash)
WANT = {0: 0, 1: 3, 2: 3, 3: 5, 4: 4, 5: 6, 6: 1, 7: 2, 8: 2, 9: 3}
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAIL:", what, flush=True)


def tune(tmp, log, np, *extra, dead=None):
    env = dict(os.environ, MPT_CUDA_DRIVER_LIB=FAKE)
    if dead:
        env["FAKE_CUDA_DEAD"] = dead
    cmd = [MPTUNE, "tune", "fk.json", "--evaluator", "cuda", "--strategy", "brute_force", "--budget", "10",
           "--timeout", "3", "--log", log, "--progress", "off", *extra]
    if np > 1:
        cmd = [MPIEXEC, "-n", str(np)] + cmd
    p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=600, env=env)
    print(f"$ {' '.join(cmd)} -> {p.returncode}\n{p.stdout[-1500:]}{p.stderr[-1500:]}", flush=True)
    check("Sanitizer" not in p.stderr and "runtime error:" not in p.stderr, "a sanitizer report")
    return p


def records(log):
    """fmode -> (status, reason) of the log's records, in order (fmode's value index is its value)"""
    with h5py.File(log, "r") as f:
        ev = f["evaluations"][:int(f["count"][()])]
    return [(int(r["config"][0]), int(r["status"]), r["reason"].decode(errors="replace")) for r in ev]


def main():
    if not os.path.exists(FAKE):
        print(f"FAIL: {FAKE} was not built")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "fk.cu"), "w") as f:
            f.write(KERNEL)
        with open(os.path.join(tmp, "fk.json"), "w") as f:
            json.dump(PROBLEM, f)
        for np in (1, 2):
            log = os.path.join(tmp, f"modes{np}.h5")
            p = tune(tmp, log, np)
            if p.returncode != 0 and "NVRTC not found" in p.stderr:
                print("SKIPPED: NVRTC is not installed")
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
    print("gpu_fake_driver:", "ok" if failures == 0 else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
