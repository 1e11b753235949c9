/* tests/kernels/returns_time.c: a kernel in Kernel Tuner's C convention (T1: returns_time.json): it returns its
 * own time in ms as a float, here `reported` / 100 (a parameter), whatever the call took. out[i] = 2 in[i]. */
#include <stdint.h>

#ifndef reported
#define reported 125
#endif

float twice(float *out, const float *in, int32_t n) {
  for (int32_t i = 0; i < n; i++) out[i] = 2.0f * in[i];
  return reported / 100.0f;
}
