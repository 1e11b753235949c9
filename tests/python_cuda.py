#!/usr/bin/env python3
"""tests/python_cuda.py: Kernel Tuner's 2-D stencil and matrix multiply in CUDA (python/examples/
stencil_cuda.py, matmul_cuda.py) tuned by mptune's Python front-end with the cuda evaluator on the
stand-in driver tests/fake_cuda.c (MPT_CUDA_DRIVER_LIB) and the real NVRTC: every valid configuration
(as many as Python's evaluation of the restrictions finds) compiles and is timed, `time` is the mean of
the iterations the driver reported, the device is the stand-in's. The stand-in runs no kernel, so an
output keeps the contents it was given: an answer equal to them passes verification, one that differs
(as the real result would) makes every result a WrongResultConfig. The matrix multiply runs on a worker
rank with grid_div_x/y. Skipped (77) without NVRTC."""
import itertools
import json
import os
import sys
import tempfile

import numpy as np

import mptune
from checks import check, exit_code
from standins import FAKE_CUDA, MPIEXEC, all_built

SRC = os.environ["MPT_SOURCE_DIR"]
sys.path.insert(0, os.path.join(SRC, "python", "examples"))
import matmul_cuda  # noqa: E402  (the examples, from python/examples)
import stencil_cuda  # noqa: E402


def valid_count(tune_params, restrictions):
    names = list(tune_params)
    return sum(all(eval(r, {}, dict(zip(names, v))) for r in restrictions)
               for v in itertools.product(*tune_params.values()))


def check_timed(results, example, what):
    want = valid_count(example.TUNE_PARAMS, example.RESTRICTIONS)
    check(len(results) == want, f"{what}: {len(results)} results, {want} valid configurations")
    bad = [(r["status"], r["error"][:300]) for r in results if r["status"] != "ok"]
    check(not bad, f"{what}: failed configurations: {bad[:3]}")
    for r in results:
        # the stand-in reports launch count % 3 ms per launch (fmode 0)
        ok = len(r["times"]) == 7 and all(t in (0.0, 1.0, 2.0) for t in r["times"])
        check(ok and abs(r["time"] - np.mean(r["times"])) < 1e-9, f"{what}: the timing of {r}")


def test_stencil(tmp):
    x_new, x_old = stencil_cuda.data()
    results, env = stencil_cuda.tune(workdir=os.path.join(tmp, "stencil"), answer=[x_new, None], quiet=True)
    check_timed(results, stencil_cuda, "stencil")
    check(env["device_name"] == "Fake GPU 0" and env["evaluator"] == "cuda" and env["lang"] == "CUDA",
          f"stencil: env {env}")
    with open(os.path.join(tmp, "stencil", "problem.json")) as f:
        k = json.load(f)["KernelSpecification"]
    check(k["GridDivX"] == ["block_size_x"] and k["GridDivY"] == ["block_size_y"] and
          k["ProblemSize"] == [stencil_cuda.WIDTH, stencil_cuda.HEIGHT], f"stencil: the launch fields {k}")
    results, env = stencil_cuda.tune(workdir=os.path.join(tmp, "stencil_wrong"), answer=[x_new + 1, None], quiet=True)
    check(len(results) == valid_count(stencil_cuda.TUNE_PARAMS, stencil_cuda.RESTRICTIONS), "stencil: a wrong answer")
    for r in results:
        check(isinstance(r["time"], mptune.WrongResultConfig) and r["status"] == "wrong_result" and
              "arg0" in r["error"] and "values differ" in r["error"], f"stencil: a wrong answer gave {r}")


def test_matmul(tmp):
    c, a, b = matmul_cuda.data()
    results, env = matmul_cuda.tune(ranks=2, workdir=os.path.join(tmp, "matmul"), answer=[c, None, None],
                                    quiet=True)
    check_timed(results, matmul_cuda, "matmul")
    check(env["devices"] and env["devices"][0]["rank"] == 1 and env["device_name"] == "Fake GPU 0",
          f"matmul: evaluated on the worker: {env['devices']}")
    with open(os.path.join(tmp, "matmul", "problem.json")) as f:
        k = json.load(f)["KernelSpecification"]
    check(k["GridDivX"] == ["block_size_x", "tile_size_x"] and k["GridDivY"] == ["block_size_y", "tile_size_y"],
          f"matmul: grid_div {k['GridDivX']} {k['GridDivY']}")


CONSTANT_KERNEL = """
__constant__ float coef[4];
extern "C" __global__ void scale(float *x, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * block_size_x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) x[i] = tile[threadIdx.x] * coef[i % 4];
}
"""


def test_memory_args(tmp):
    """cmem_args (a __constant__ symbol, not a kernel parameter) and smem_args (dynamic shared memory)"""
    x, n = np.ones(4096, np.float32), np.int32(4096)
    results, env = mptune.tune_kernel("scale", CONSTANT_KERNEL, 4096, [x, n], {"block_size_x": [32, 64, 128]},
                                      cmem_args={"coef": np.arange(4, dtype=np.float32)},
                                      smem_args={"size": "block_size_x * 4"}, answer=[x, None], quiet=True,
                                      workdir=os.path.join(tmp, "scale"))
    bad = [(r["status"], r["error"][:300]) for r in results if r["status"] != "ok"]
    check(len(results) == 3 and not bad, f"constant and shared memory: {len(results)} results, failures {bad}")


def test_device(tmp):
    """device=1: mptune runs with CUDA_VISIBLE_DEVICES=1, so its worker binds to the second GPU (the launcher is
    wrapped here to see the variable: the stand-in driver has one GPU and ignores it)"""
    seen = os.path.join(tmp, "visible")
    wrapper = os.path.join(tmp, "mpiexec-wrapper")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/sh\necho "${{CUDA_VISIBLE_DEVICES-unset}}" > {seen}\nexec {MPIEXEC} "$@"\n')
    os.chmod(wrapper, 0o755)
    os.environ["MPTUNE_MPIEXEC"] = wrapper
    try:
        results, env = stencil_cuda.tune(workdir=os.path.join(tmp, "device"), answer=None, quiet=True, device=1)
    finally:
        del os.environ["MPTUNE_MPIEXEC"]
    with open(seen) as f:
        visible = f.read().strip()
    check(visible == "1" and env["command"][0] == wrapper and all(r["status"] == "ok" for r in results),
          f"device=1: CUDA_VISIBLE_DEVICES={visible}, {env['command'][0]}")


def main():
    if not all_built(FAKE_CUDA):
        return 1
    os.environ["MPT_CUDA_DRIVER_LIB"] = FAKE_CUDA
    with tempfile.TemporaryDirectory() as tmp:
        try:
            test_stencil(tmp)
        except mptune.RunError as e:
            if "NVRTC not found" in str(e):
                print("SKIPPED: NVRTC is not installed")
                return 77
            raise
        test_memory_args(tmp)
        test_device(tmp)
        test_matmul(tmp)
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
