#!/usr/bin/env python3
"""tests/devices_auto_mixed.py: `--evaluator auto` (the default for a CUDA kernel) in one MPI job with an NVIDIA
worker and an AMD worker, through the real device paths on a machine without GPUs: an MPMD `mpiexec.mpich -n 1
mptune ... : -n 1 ... : -n 1 ...` in which rank 1 sees only the stand-in CUDA driver (tests/fake_cuda.c, with the
real NVRTC) and rank 2 only the stand-in HIP runtime (tests/fake_hip.c, with the real hiprtc). Each worker
picks its evaluator by the GPU it binds (cuda, hip), compiles every variant with its vendor's run-time
compiler, and its records carry its stand-in's timings (NVIDIA 0-2 ms, AMD 3-5 ms for a correct variant) and
statuses (wrong result, launch error) read from the compiled code object. The device table and the run log name
each worker's vendor, device, architecture, evaluator and limits; `mptune devices FILE.json` shows the same
workers grouped by device class, and MPTUNE_DEVICE_CLASS names a class. Workers that see both stand-ins (a
node with both kinds of GPU) spread over both, each with its vendor's evaluator. A worker with no GPU (neither
stand-in) fails the run with one message naming it. Skipped (77) without NVRTC or hiprtc."""
import os
import sys
import tempfile

import h5py

from checks import check, exit_code
from standins import FAKE_CUDA, FAKE_HIP, MPIEXEC, MPTUNE, NO_LIB, compilers_missing, fk_kernel, \
    fk_problem, run, write_fk

PROBLEM = fk_problem("mixed", [{"Name": "fmode", "Type": "int", "Values": "[0, 4, 8]", "Default": 0},
                               {"Name": "block_size_x", "Type": "int", "Values": "[64, 128, 256, 512]", "Default": 64}])
WANT = {0: 0, 4: 4, 8: 2}  # fmode -> status (0 ok, 2 launch error, 4 wrong result)


def env_args(cuda, hip, cls=None):
    """-env pairs of one MPMD part: which stand-in (or none) its rank sees"""
    pairs = [("MPT_CUDA_DRIVER_LIB", cuda), ("MPT_HIP_LIB", hip)]
    if cls:
        pairs.append(("MPTUNE_DEVICE_CLASS", cls))
    return [a for k, v in pairs for a in ("-env", k, v)]


def mpmd(tmp, args, workers):
    """rank 0 plain, then one rank per (cuda, hip[, class]) of workers, each running mptune args"""
    cmd = [MPIEXEC, "-n", "1"] + env_args(NO_LIB, NO_LIB) + [MPTUNE] + args
    for w in workers:
        cmd += [":", "-n", "1"] + env_args(*w) + [MPTUNE] + args
    return run(cmd, tmp, out_tail=3000, err_tail=3000)


def tune_mixed(tmp):
    p = mpmd(tmp, ["tune", "fk.json", "--strategy", "brute_force", "--budget", "12", "--log", "mixed.h5",
                   "--progress", "off", "--no-cross"], [(FAKE_CUDA, NO_LIB), (NO_LIB, FAKE_HIP)])
    check(p.returncode == 0, "the mixed run failed")
    rows = [l.split() for l in p.stdout.splitlines()]
    nv = [r for r in rows if r[:1] == ["1"] and "NVIDIA" in r and "sm_90" in r and r[-1] == "cuda"]
    amd = [r for r in rows if r[:1] == ["2"] and "AMD" in r and "gfx90a" in r and r[-1] == "hip"]
    check(len(nv) == 1 and len(amd) == 1, "the device table: rank 1 NVIDIA sm_90 cuda, rank 2 AMD gfx90a hip")
    with h5py.File(os.path.join(tmp, "mixed.h5"), "r") as f:
        ev = f["evaluations"][:int(f["count"][()])]
        devs = {int(d["rank"]): d for d in f["devices"][:]}
    check(devs[1]["vendor"] == b"NVIDIA" and devs[1]["evaluator"] == b"cuda", f"the log's device of rank 1: {devs[1]}")
    check(devs[2]["vendor"] == b"AMD" and devs[2]["evaluator"] == b"hip", f"the log's device of rank 2: {devs[2]}")
    # two device classes, a search each: the budget is per class
    for rank in (1, 2):
        ids = [int(r["id"]) for r in ev if int(r["rank"]) == rank]
        check(len(ids) == 12 and len(set(ids)) == 12, f"rank {rank}: 12 distinct records: {len(ids)}")
    for rank, (lo, hi) in ((1, (0, 2)), (2, (3, 5))):
        mine = [r for r in ev if int(r["rank"]) == rank]
        check(len(mine) > 0, f"rank {rank} evaluated nothing")
        for r in mine:
            mode = (0, 4, 8)[int(r["config"][0])]
            check(int(r["status"]) == WANT[mode], f"rank {rank} fmode {mode}: status {int(r['status'])} "
                  f"({r['reason'][:200]})")
            if mode == 0:
                check(lo <= float(r["objective"]) <= hi, f"rank {rank}: fmode 0 took {float(r['objective'])} ms, "
                      f"not its stand-in's {lo}-{hi}")


def devices_by_class(tmp):
    p = mpmd(tmp, ["devices", "fk.json"], [(FAKE_CUDA, NO_LIB), (NO_LIB, FAKE_HIP), (FAKE_CUDA, NO_LIB, "A100-slow")])
    out = p.stdout
    check(p.returncode == 0, "mptune devices failed")
    check("3 workers in 3 device classes" in out, "the class count")
    for key in ("class NVIDIA Fake GPU 0 (sm_90): 1 worker", "class AMD Fake AMD GPU 0 (gfx90a): 1 worker",
                "class A100-slow (named by the user; automatic key NVIDIA Fake GPU 0 (sm_90)): 1 worker"):
        check(key in out, f"'{key}' in the table")
    check("1024" in out and "64.0 KiB" in out, "the AMD device's limits (1024 threads, 64 KiB per block)")


def both_on_one_node(tmp):
    """every worker sees both stand-ins (a node with an NVIDIA and an AMD GPU): node-local worker rank 0 binds the
    NVIDIA GPU (cuda), 1 the AMD one (hip), 2 the NVIDIA one again"""
    p = mpmd(tmp, ["devices", "fk.json"], [(FAKE_CUDA, FAKE_HIP)] * 3)
    rows = {int(l.split()[0]): l.split() for l in p.stdout.splitlines() if l[:1].isdigit()}
    check(p.returncode == 0 and sorted(rows) == [1, 2, 3], f"devices on a mixed node: {p.stdout}")
    for rank, (vendor, ev) in ((1, ("NVIDIA", "cuda")), (2, ("AMD", "hip")), (3, ("NVIDIA", "cuda"))):
        check(rank in rows and rows[rank][2] == vendor and rows[rank][-1] == ev,
              f"mixed node: rank {rank} should bind {vendor} ({ev}): {rows.get(rank)}")


def no_gpu(tmp):
    """a worker without a GPU is named and left out, the run goes on with the others; with none left, it fails"""
    p = mpmd(tmp, ["tune", "fk.json", "--budget", "2", "--log", "some.h5", "--progress", "off"],
             [(FAKE_CUDA, NO_LIB), (NO_LIB, NO_LIB)])
    check(p.returncode == 0 and "evaluator 'auto' binds a GPU, and worker rank 2" in p.stderr,
          "a worker without a GPU: one message naming it, and the run goes on")
    with h5py.File(os.path.join(tmp, "some.h5"), "r") as f:
        ranks = {int(r["rank"]) for r in f["evaluations"][:int(f["count"][()])]}
    check(ranks == {1}, f"only the worker with a GPU evaluated: {ranks}")
    p = mpmd(tmp, ["tune", "fk.json", "--budget", "2", "--log", "none.h5", "--progress", "off"],
             [(NO_LIB, NO_LIB), (NO_LIB, NO_LIB)])
    check(p.returncode != 0 and "evaluator 'auto' binds a GPU" in p.stderr, "no worker with a GPU: the run fails")
    check(not os.path.exists(os.path.join(tmp, "none.h5")), "no log left by the failed start")


def main():
    with tempfile.TemporaryDirectory(prefix="mpt_mixed_") as tmp:
        write_fk(tmp, fk_kernel(external_marker=True), PROBLEM)
        if compilers_missing(tmp):
            return 77
        tune_mixed(tmp)
        devices_by_class(tmp)
        both_on_one_node(tmp)
        no_gpu(tmp)
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
