/* tests/kernels/vector_add_cxx.cpp: a C++ kernel for the cpu evaluator (T1: vector_add_cxx.json): c = a + b,
 * tile_size elements at a time through a function template and std::transform, called by its C name (extern
 * "C": the cpu evaluator finds the kernel by its unmangled symbol). */
#include <algorithm>
#include <cstdint>
#include <functional>

#ifndef tile_size
#define tile_size 64
#endif

template <typename T, int Tile>
static void add_tiles(T *c, const T *a, const T *b, std::int32_t n) {
  for (std::int32_t i = 0; i < n; i += Tile) {
    std::int32_t end = std::min(n, i + Tile);
    std::transform(a + i, a + end, b + i, c + i, std::plus<T>());
  }
}

extern "C" void vector_add(float *c, const float *a, const float *b, std::int32_t n) {
  add_tiles<float, tile_size>(c, a, b, n);
}
