/* examples/cpu/matmul.c: tunable single-precision matrix multiply C = A * B (n x n, row-major) for
 * mptune's cpu evaluator (T1: matmul.json). One call computes the whole product; the tunable
 * parameters arrive as defines: cache blocking (tile_i, tile_j, tile_k), the loop order inside a block
 * (0: i-j-k dot products, B read with stride n; 1: i-k-j row updates), unrolling of the k loop
 * (unroll_k) and an explicit vector width for the j loop (vec, loop_order 1). grid_size_x/y (defined by
 * mptune from ProblemSize and GridDivX/Y, as Kernel Tuner does) are the numbers of column/row blocks. */
#include <stdint.h>
#include <string.h>

#ifndef kernel_tuner /* defaults when compiled by hand */
#define tile_i 8
#define tile_j 64
#define tile_k 64
#define unroll_k 1
#define vec 1
#define loop_order 0
#define grid_size_x 4
#define grid_size_y 32
#endif

#define MPT_PRAGMA(x) _Pragma(#x)
#define MPT_UNROLL(n) MPT_PRAGMA(GCC unroll n)

#if vec > 1
typedef float vfloat __attribute__((vector_size(vec * sizeof(float))));
#endif

static inline int min_i(int a, int b) { return a < b ? a : b; }

void matmul(float *restrict C, const float *restrict A, const float *restrict B, int32_t n) {
  memset(C, 0, sizeof(float) * (size_t)n * (size_t)n);
  for (int by = 0; by < grid_size_y; by++) {
    const int i0 = by * tile_i, i1 = min_i(i0 + tile_i, n);
    for (int k0 = 0; k0 < n; k0 += tile_k) {
      const int k1 = min_i(k0 + tile_k, n);
      for (int bx = 0; bx < grid_size_x; bx++) {
        const int j0 = bx * tile_j, j1 = min_i(j0 + tile_j, n);
#if loop_order == 0
        for (int i = i0; i < i1; i++)
          for (int j = j0; j < j1; j++) {
            float s = C[(size_t)i * n + j];
            MPT_UNROLL(unroll_k)
            for (int k = k0; k < k1; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
          }
#else
        for (int i = i0; i < i1; i++) {
          float *restrict c = C + (size_t)i * n;
          MPT_UNROLL(unroll_k)
          for (int k = k0; k < k1; k++) {
            const float a = A[(size_t)i * n + k];
            const float *restrict b = B + (size_t)k * n;
            int j = j0;
#if vec > 1
            const vfloat av = a - (vfloat){0};
            for (; j + vec <= j1; j += vec) {
              vfloat cv, bv;
              memcpy(&cv, c + j, sizeof cv);
              memcpy(&bv, b + j, sizeof bv);
              cv += av * bv;
              memcpy(c + j, &cv, sizeof cv);
            }
#endif
            for (; j < j1; j++) c[j] += a * b[j];
          }
        }
#endif
      }
    }
  }
}
