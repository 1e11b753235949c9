#!/usr/bin/env python3
"""python/examples/matmul_cuda.py: Kernel Tuner's classic matrix multiply in CUDA, C = A B with shared-memory
tiles and several outputs per thread (tile_size_x by tile_size_y), tuned with mptune's Python front-end:
grid_div_x/y divide the problem by the block and the tile, string restrictions keep the tiles square, the
threads per block and the shared memory within the GPU's limits. Needs an NVIDIA GPU and NVRTC
(tests/python_cuda.py runs it with the stand-in driver of tests/fake_cuda.c).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/matmul_cuda.py [--ranks N] [--workdir DIR]"""
import argparse

import numpy as np

from mptune import ErrorConfig, tune_kernel

WIDTH = 512
KERNEL = """
#define WIDTH %d

__global__ void matmul_kernel(float *C, const float *A, const float *B) {
    __shared__ float sA[block_size_y * tile_size_y][block_size_x];
    __shared__ float sB[block_size_y * tile_size_y][block_size_x * tile_size_x];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * block_size_x * tile_size_x + tx;
    int y = blockIdx.y * block_size_y * tile_size_y + ty;
    float sum[tile_size_y][tile_size_x];
    #pragma unroll
    for (int i = 0; i < tile_size_y; i++)
        #pragma unroll
        for (int j = 0; j < tile_size_x; j++)
            sum[i][j] = 0.0f;
    for (int k = 0; k < WIDTH; k += block_size_x) {
        __syncthreads();
        #pragma unroll
        for (int i = 0; i < tile_size_y; i++) {
            sA[ty + block_size_y * i][tx] = A[(y + i * block_size_y) * WIDTH + k + tx];
            #pragma unroll
            for (int j = 0; j < tile_size_x; j++)
                sB[ty + block_size_y * i][tx + j * block_size_x] =
                    B[(k + ty + block_size_y * i) * WIDTH + x + j * block_size_x];
        }
        __syncthreads();
        #pragma unroll
        for (int kb = 0; kb < block_size_x; kb++)
            #pragma unroll
            for (int i = 0; i < tile_size_y; i++)
                #pragma unroll
                for (int j = 0; j < tile_size_x; j++)
                    sum[i][j] += sA[ty + block_size_y * i][kb] * sB[kb][tx + j * block_size_x];
    }
    #pragma unroll
    for (int i = 0; i < tile_size_y; i++)
        #pragma unroll
        for (int j = 0; j < tile_size_x; j++)
            C[(y + i * block_size_y) * WIDTH + x + j * block_size_x] = sum[i][j];
}
""" % WIDTH
TUNE_PARAMS = {"block_size_x": [16, 32, 64], "block_size_y": [1, 2, 4, 8, 16, 32],
               "tile_size_x": [1, 2, 4], "tile_size_y": [1, 2, 4, 8]}
RESTRICTIONS = ["block_size_x == block_size_y * tile_size_y",  # square tiles of A and B in shared memory
                "block_size_x * block_size_y <= 1024",
                "block_size_x * block_size_x * (1 + tile_size_x) * 4 <= 48 * 1024"]
GRID_DIV_X = ["block_size_x", "tile_size_x"]
GRID_DIV_Y = ["block_size_y", "tile_size_y"]


def data():
    """(C, A, B)"""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((WIDTH, WIDTH)).astype(np.float32)
    b = rng.standard_normal((WIDTH, WIDTH)).astype(np.float32)
    return np.zeros_like(a), a, b


def tune(ranks=1, workdir=None, answer="numpy", quiet=False, **options):
    """tunes the kernel; (results, env) as tune_kernel returns them. answer: "numpy" (A @ B computed with
    numpy), None (no check) or a list with one entry per argument"""
    c, a, b = data()
    if isinstance(answer, str):
        answer = [a @ b, None, None]
    return tune_kernel("matmul_kernel", KERNEL, (WIDTH, WIDTH), [c, a, b], TUNE_PARAMS, grid_div_x=GRID_DIV_X,
                       grid_div_y=GRID_DIV_Y, restrictions=RESTRICTIONS, answer=answer, atol=1e-3, lang="CUDA",
                       ranks=ranks, workdir=workdir, quiet=quiet, **options)


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
        print("best: " + ", ".join(f"{k}={best[k]}" for k in TUNE_PARAMS) + f": {best['time']:.4f} ms")


if __name__ == "__main__":
    main()
