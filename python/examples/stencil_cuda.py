#!/usr/bin/env python3
"""python/examples/stencil_cuda.py: Kernel Tuner's classic 2-D stencil in CUDA (a 5-point average over a
domain), tuned with mptune's Python front-end: the thread block's shape is tuned, the grid follows from
the problem size (Kernel Tuner's default grid_div: the block size parameters), a string restriction caps
the threads per block. Needs an NVIDIA GPU and NVRTC (tests/python_cuda.py runs it with the stand-in
driver of tests/fake_cuda.c).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/stencil_cuda.py [--ranks N] [--workdir DIR]"""
import argparse

import numpy as np

from mptune import ErrorConfig, tune_kernel

WIDTH, HEIGHT = 1024, 512
KERNEL = """
#define domain_width %d
#define domain_height %d

__global__ void stencil_kernel(float *x_new, const float *x_old) {
    int x = blockIdx.x * block_size_x + threadIdx.x;
    int y = blockIdx.y * block_size_y + threadIdx.y;
    if (y > 0 && y < domain_height - 1 && x > 0 && x < domain_width - 1) {
        x_new[y * domain_width + x] = (x_old[y * domain_width + x] + x_old[y * domain_width + x - 1] +
                                       x_old[y * domain_width + x + 1] + x_old[(y + 1) * domain_width + x] +
                                       x_old[(y - 1) * domain_width + x]) / 5.0f;
    }
}
""" % (WIDTH, HEIGHT)
TUNE_PARAMS = {"block_size_x": [32, 64, 128], "block_size_y": [1, 2, 4, 8]}
RESTRICTIONS = ["block_size_x * block_size_y <= 512"]


def data():
    """(x_new, x_old): the output (a copy of the input, so that the border stays as it was) and the input"""
    x_old = np.random.default_rng(11).standard_normal((HEIGHT, WIDTH)).astype(np.float32)
    return np.copy(x_old), x_old


def reference(x_old):
    """the stencil computed with numpy"""
    out = np.copy(x_old)
    out[1:-1, 1:-1] = (x_old[1:-1, 1:-1] + x_old[1:-1, :-2] + x_old[1:-1, 2:] + x_old[2:, 1:-1] +
                       x_old[:-2, 1:-1]) / np.float32(5)
    return out


def tune(ranks=1, workdir=None, answer="numpy", quiet=False, **options):
    """tunes the kernel; (results, env) as tune_kernel returns them. answer: "numpy" (the stencil computed
    with numpy), None (no check) or a list with one entry per argument"""
    x_new, x_old = data()
    if isinstance(answer, str):
        answer = [reference(x_old), None]
    return tune_kernel("stencil_kernel", KERNEL, (WIDTH, HEIGHT), [x_new, x_old], TUNE_PARAMS, lang="CUDA",
                       restrictions=RESTRICTIONS, answer=answer, atol=1e-5, ranks=ranks, workdir=workdir,
                       quiet=quiet, **options)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--workdir")
    args = ap.parse_args()
    results, env = tune(args.ranks, args.workdir)
    timed = [r for r in results if not isinstance(r["time"], ErrorConfig)]
    print(f"{len(results)} configurations on {env['device_name']}, {len(timed)} valid")
    if timed:
        best = min(timed, key=lambda r: r["time"])
        print(f"best: block_size_x={best['block_size_x']} block_size_y={best['block_size_y']}: {best['time']:.4f} ms")


if __name__ == "__main__":
    main()
