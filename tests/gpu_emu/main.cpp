// tests/gpu_emu/main.cpp: one configuration of a GPU example (EMU_CONVOLUTION or EMU_GEMM, with the
// tunable parameters as -D defines) run through emu.h on a small problem and compared with a plain
// loop computing the same sums in the same order. Prints "PASS" or the first mismatch.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>
#include "emu.h"

static uint64_t emu_state = 88172645463325252ull;
static float emu_rand() {  // xorshift, values in [0, 1)
  emu_state ^= emu_state << 13;
  emu_state ^= emu_state >> 7;
  emu_state ^= emu_state << 17;
  return (float)((emu_state >> 40) * (1.0 / 16777216.0));
}

static int compare(const std::vector<float> &got, const std::vector<float> &want, const char *what) {
  for (size_t i = 0; i < want.size(); i++)
    if (!(std::fabs(got[i] - want[i]) <= 1e-5f * std::fabs(want[i]) + 1e-6f)) {
      std::printf("FAIL %s: element %zu is %g, expected %g\n", what, i, got[i], want[i]);
      return 1;
    }
  std::printf("PASS %s (%zu elements)\n", what, want.size());
  return 0;
}

#if defined(EMU_CONVOLUTION)
#define image_width 67   // not a multiple of any block: partial blocks and tiles are exercised
#define image_height 45
#include "../../examples/gpu/convolution.cu"
int main() {
  std::vector<float> in((size_t)input_width * input_height), out((size_t)image_width * image_height, -1.0f),
      want(out.size());
  for (auto &v : in) v = emu_rand();
  for (auto &v : d_filter) v = emu_rand();
  for (int y = 0; y < image_height; y++)
    for (int x = 0; x < image_width; x++) {
      float s = 0;
      for (int fi = 0; fi < filter_height; fi++)
        for (int fj = 0; fj < filter_width; fj++)
          s += in[(size_t)(y + fi) * input_width + x + fj] * d_filter[fi * filter_width + fj];
      want[(size_t)y * image_width + x] = s;
    }
  dim3 grid{(unsigned)((image_width + block_size_x * tile_size_x - 1) / (block_size_x * tile_size_x)),
            (unsigned)((image_height + block_size_y * tile_size_y - 1) / (block_size_y * tile_size_y)), 1};
  emu_launch([&] { convolution_kernel(out.data(), in.data()); }, grid, dim3{block_size_x, block_size_y, 1});
  return compare(out, want, "convolution");
}
#elif defined(EMU_GEMM)
#define SIZE_M 128
#define SIZE_N 128
#define SIZE_K 96
#include "../../examples/gpu/gemm.cu"
int main() {
  std::vector<float> A((size_t)SIZE_M * SIZE_K), B((size_t)SIZE_K * SIZE_N), C((size_t)SIZE_M * SIZE_N, -1.0f),
      want(C.size());
  for (auto &v : A) v = emu_rand();
  for (auto &v : B) v = emu_rand();
  for (int m = 0; m < SIZE_M; m++)
    for (int n = 0; n < SIZE_N; n++) {
      float s = 0;
      for (int k = 0; k < SIZE_K; k++) s += A[(size_t)m * SIZE_K + k] * B[(size_t)k * SIZE_N + n];
      want[(size_t)m * SIZE_N + n] = s;
    }
  dim3 grid{(unsigned)(SIZE_N / BN), (unsigned)(SIZE_M / BM), 1};
  emu_launch([&] { gemm_kernel(C.data(), A.data(), B.data()); }, grid, dim3{block_size_x, block_size_y, 1});
  return compare(C, want, "gemm");
}
#else
#error "define EMU_CONVOLUTION or EMU_GEMM"
#endif
