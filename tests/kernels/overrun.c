/* tests/kernels/overrun.c: out[i] = in[i] + 1, and with the parameter `mode` an access outside the argument
 * buffers for the cpu evaluator's crash reasons (T1: overrun.json): 0 correct, 1 writes 64 bytes past the end of
 * `out`, 2 reads 256 bytes before the start of `in`, 3 an aligned vector load at a misaligned address (a
 * general-protection fault on x86-64, which has no address). */
#include <stdint.h>

#ifndef mode
#define mode 0
#endif

typedef float v4f __attribute__((vector_size(16)));

void overrun(float *out, const float *in, int32_t n) {
  for (int32_t i = 0; i < n; i++) out[i] = in[i] + 1.0f;
#if mode == 1
  ((volatile float *)out)[n + 16] = 1.0f;
#elif mode == 2
  out[0] = ((const volatile float *)in)[-64];
#elif mode == 3
  v4f v = *(const volatile v4f *)(const void *)&in[1];
  out[0] = v[0];
#endif
}
