/* examples/gpu/gemm.cu: a tunable single-precision matrix multiply C = A * B (row-major, M = N = K =
 * 2048), one source for CUDA (NVRTC) and HIP (hiprtc). Tunable parameters arrive as -D defines:
 * block_size_x/y (threads), tile_size_x/y (outputs per thread along n/m, strided by the block size so
 * stores stay coalesced), use_shmem (stage tile_k-wide slabs of A and B in shared memory), tile_k
 * (the slab width), loop_unroll (unroll factor of the inner k loop; 1: not unrolled). Every output
 * accumulates its K products in the same order in every configuration, so all variants give the same
 * result. */
#ifndef SIZE_M
#define SIZE_M 2048
#endif
#ifndef SIZE_N
#define SIZE_N 2048
#endif
#ifndef SIZE_K
#define SIZE_K 2048
#endif
#define BM (block_size_y * tile_size_y) /* rows of C per block */
#define BN (block_size_x * tile_size_x) /* columns of C per block */

#define MPT_PRAGMA(x) _Pragma(#x)
#define MPT_UNROLL(n) MPT_PRAGMA(unroll n)
#define UNROLL_K MPT_UNROLL(loop_unroll)

extern "C" __global__ void gemm_kernel(float *C, const float *A, const float *B) {
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[tile_size_y][tile_size_x];
#pragma unroll
  for (int i = 0; i < tile_size_y; i++)
#pragma unroll
    for (int j = 0; j < tile_size_x; j++) acc[i][j] = 0.0f;

#if use_shmem == 1
  __shared__ float sA[BM][tile_k];
  __shared__ float sB[tile_k][BN];
  const int tid = ty * block_size_x + tx;
  for (int k0 = 0; k0 < SIZE_K; k0 += tile_k) {
    for (int e = tid; e < BM * tile_k; e += block_size_x * block_size_y) {
      const int r = e / tile_k, c = e % tile_k;
      sA[r][c] = A[(size_t)(row0 + r) * SIZE_K + k0 + c];
    }
    for (int e = tid; e < tile_k * BN; e += block_size_x * block_size_y) {
      const int r = e / BN, c = e % BN;
      sB[r][c] = B[(size_t)(k0 + r) * SIZE_N + col0 + c];
    }
    __syncthreads();
    UNROLL_K
    for (int k = 0; k < tile_k; k++) {
      float b[tile_size_x];
#pragma unroll
      for (int j = 0; j < tile_size_x; j++) b[j] = sB[k][tx + j * block_size_x];
#pragma unroll
      for (int i = 0; i < tile_size_y; i++) {
        const float a = sA[ty + i * block_size_y][k];
#pragma unroll
        for (int j = 0; j < tile_size_x; j++) acc[i][j] += a * b[j];
      }
    }
    __syncthreads();
  }
#else
  UNROLL_K
  for (int k = 0; k < SIZE_K; k++) {
    float b[tile_size_x];
#pragma unroll
    for (int j = 0; j < tile_size_x; j++) b[j] = B[(size_t)k * SIZE_N + col0 + tx + j * block_size_x];
#pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
      const float a = A[(size_t)(row0 + ty + i * block_size_y) * SIZE_K + k];
#pragma unroll
      for (int j = 0; j < tile_size_x; j++) acc[i][j] += a * b[j];
    }
  }
#endif

#pragma unroll
  for (int i = 0; i < tile_size_y; i++)
#pragma unroll
    for (int j = 0; j < tile_size_x; j++)
      C[(size_t)(row0 + ty + i * block_size_y) * SIZE_N + col0 + tx + j * block_size_x] = acc[i][j];
}
