#!/usr/bin/env python3
"""python/examples/vector_add_c.py: Kernel Tuner's classic vector add, in C, tuned with mptune's Python
front-end on the CPU (the cpu evaluator compiles every variant with cc). The script a Kernel Tuner user
writes, with `from mptune import tune_kernel` instead of `from kernel_tuner import tune_kernel`.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/vector_add_c.py [--ranks N] [--workdir DIR]"""
import argparse

import numpy as np

from mptune import ErrorConfig, tune_kernel

KERNEL = """
#include <stdint.h>
#define PRAGMA(x) _Pragma(#x)
#define UNROLL(n) PRAGMA(GCC unroll n)

void vector_add(float *c, const float *a, const float *b, int32_t n) {
    for (int32_t i = 0; i < n; i += block_size_x) {
        int32_t end = i + block_size_x < n ? i + block_size_x : n;
        UNROLL(unroll_x)
        for (int32_t j = i; j < end; j++)
            c[j] = a[j] + b[j];
    }
}
"""
SIZE = 1000000


def tune(ranks=2, workdir=None, wrong_answer=False, quiet=False, **options):
    """tunes the kernel; (results, env, answer) as tune_kernel returns them, and the expected output.
    wrong_answer: the answer is off by one everywhere, so every configuration fails verification."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal(SIZE).astype(np.float32)
    b = rng.standard_normal(SIZE).astype(np.float32)
    c = np.zeros_like(b)
    n = np.int32(SIZE)
    answer = a + b + (1 if wrong_answer else 0)
    tune_params = {"block_size_x": [64, 128, 256, 512, 1024], "unroll_x": [1, 2, 4, 8]}
    restrictions = ["block_size_x >= 16 * unroll_x"]
    results, env = tune_kernel("vector_add", KERNEL, SIZE, [c, a, b, n], tune_params, lang="C",
                               restrictions=restrictions, answer=[answer, None, None, None], atol=1e-6,
                               ranks=ranks, workdir=workdir, quiet=quiet, **options)
    return results, env, answer


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--workdir")
    args = ap.parse_args()
    results, env, _ = tune(args.ranks, args.workdir)
    timed = [r for r in results if not isinstance(r["time"], ErrorConfig)]
    best = min(timed, key=lambda r: r["time"])
    print(f"{len(results)} configurations on {env['device_name']}, {len(timed)} valid")
    print(f"best: block_size_x={best['block_size_x']} unroll_x={best['unroll_x']}: {best['time']:.4f} ms")


if __name__ == "__main__":
    main()
