/* tests/kernels/omp.c: an OpenMP kernel (tests/cpu_tune.sh): its thread pool outlives each call, which
 * crashed the evaluation child when it unloaded the variant under the running threads. */
#include <stdint.h>
void twice(float *out, const float *in, int32_t n) {
#pragma omp parallel for schedule(static, 16 + chunk)
  for (int32_t i = 0; i < n; i++) out[i] = 2.0f * in[i];
}
