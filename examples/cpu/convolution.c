/* examples/cpu/convolution.c: tunable 2-D convolution (single precision, "valid" mode) for mptune's
 * cpu evaluator (T1: convolution.json): out[y][x] = sum_{fy,fx} in[y+fy][x+fx] * filter[fy][fx] with
 * an input of (h + filter_height - 1) x (w + filter_width - 1). Tunable: blocking of the output
 * (tile_x columns by tile_y rows), output rows computed together (rows), the loop order (0: a dot
 * product per output pixel; 1: per filter tap, a row update over the block that vectorizes), full
 * unrolling of the filter loops (unroll_fx, unroll_fy) and an explicit vector width (vec, loop_order 1).
 * grid_size_x/y (from ProblemSize and GridDivX/Y) are the numbers of blocks. */
#include <stdint.h>
#include <string.h>

#ifndef kernel_tuner /* defaults when compiled by hand */
#define tile_x 16
#define tile_y 1
#define rows 1
#define loop_order 0
#define unroll_fx 0
#define unroll_fy 0
#define vec 1
#define filter_width 7
#define filter_height 7
#define grid_size_x 32
#define grid_size_y 512
#endif

#define MPT_PRAGMA(x) _Pragma(#x)
#define MPT_UNROLL(n) MPT_PRAGMA(GCC unroll n)
#if unroll_fx
#define UNROLL_FX MPT_UNROLL(filter_width)
#else
#define UNROLL_FX MPT_UNROLL(1)
#endif
#if unroll_fy
#define UNROLL_FY MPT_UNROLL(filter_height)
#else
#define UNROLL_FY MPT_UNROLL(1)
#endif

#if vec > 1
typedef float vfloat __attribute__((vector_size(vec * sizeof(float))));
#endif

static inline int min_i(int a, int b) { return a < b ? a : b; }

void convolution(float *restrict out, const float *restrict in, const float *restrict filter, int32_t w, int32_t h) {
  const int iw = w + filter_width - 1;
  for (int by = 0; by < grid_size_y; by++) {
    const int y0 = by * tile_y, y1 = min_i(y0 + tile_y, h);
    for (int bx = 0; bx < grid_size_x; bx++) {
      const int x0 = bx * tile_x, x1 = min_i(x0 + tile_x, w);
      for (int y = y0; y < y1; y += rows) {
        const int nr = min_i(rows, y1 - y);
#if loop_order == 0
        for (int x = x0; x < x1; x++) {
          float s[rows];
          for (int r = 0; r < rows; r++) s[r] = 0.0f;
          UNROLL_FY
          for (int fy = 0; fy < filter_height; fy++) {
            UNROLL_FX
            for (int fx = 0; fx < filter_width; fx++) {
              const float f = filter[fy * filter_width + fx];
              for (int r = 0; r < rows; r++) s[r] += in[(size_t)(y + r + fy) * iw + x + fx] * f;
            }
          }
          for (int r = 0; r < nr; r++) out[(size_t)(y + r) * w + x] = s[r];
        }
#else
        float acc[rows][tile_x];
        memset(acc, 0, sizeof acc);
        const int n = x1 - x0;
        UNROLL_FY
        for (int fy = 0; fy < filter_height; fy++) {
          UNROLL_FX
          for (int fx = 0; fx < filter_width; fx++) {
            const float f = filter[fy * filter_width + fx];
            for (int r = 0; r < rows; r++) {
              const float *restrict src = in + (size_t)(y + r + fy) * iw + x0 + fx;
              float *restrict a = acc[r];
              int j = 0;
#if vec > 1
              const vfloat fv = f - (vfloat){0};
              for (; j + vec <= n; j += vec) {
                vfloat av, sv;
                memcpy(&av, a + j, sizeof av);
                memcpy(&sv, src + j, sizeof sv);
                av += fv * sv;
                memcpy(a + j, &av, sizeof av);
              }
#endif
              for (; j < n; j++) a[j] += f * src[j];
            }
          }
        }
        for (int r = 0; r < nr; r++) memcpy(out + (size_t)(y + r) * w + x0, acc[r], sizeof(float) * (size_t)n);
#endif
      }
    }
  }
}
