/* tests/kernels/vector_add_vec.c: c = a + b over n floats, `vecsize` lanes at a time with aligned vector loads
 * and stores of GCC's vector extension (as Kernel Tuner's examples/c/vector_add), each sum staged in the Local
 * buffer `scratch`. A vector of 8 or 16 floats is 32 or 64 bytes, and its aligned accesses fault unless the
 * buffers are aligned that far. T1: vector_add_vec.json. */
#include <stdint.h>

#ifndef vecsize
#define vecsize 1
#endif

typedef float vfloat __attribute__((vector_size(vecsize * sizeof(float))));

void vector_add(float *c, const float *a, const float *b, float *scratch, int32_t n) {
  for (int32_t i = 0; i + vecsize <= n; i += vecsize) {
    *(vfloat *)scratch = *(const vfloat *)&a[i] + *(const vfloat *)&b[i];
    *(vfloat *)&c[i] = *(const vfloat *)scratch;
  }
}
