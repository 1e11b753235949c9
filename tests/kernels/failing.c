/* tests/kernels/failing.c: a purpose-made kernel for the cpu evaluator's failure tests (T1:
 * failing.json). out[i] = 2 * in[i] * scale / scale, with the parameter `mode` selecting a failure:
 * 0 correct, 1 does not compile, 2 wrong answer, 3 segmentation fault, 4 hangs, 5 exhausts memory,
 * 6 aborts (SIGABRT). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef mode
#define mode 0
#endif
#ifndef scale
#define scale 1
#endif

#if mode == 1
#error "mode 1: this variant does not compile"
#endif

void twice(float *out, const float *in, int32_t n) {
  for (int32_t i = 0; i < n; i++) out[i] = 2.0f * in[i] * scale / scale;
#if mode == 2
  out[n / 2] += 1.0f; /* one wrong element */
#elif mode == 3
  volatile float *volatile bad = (float *)(uintptr_t)16;
  *bad = 1.0f; /* SIGSEGV */
#elif mode == 4
  for (volatile int spin = 1; spin;) { /* hangs */
  }
#elif mode == 5
  static char *volatile keep; /* the memory escapes: the compiler keeps malloc and memset */
  for (;;) { /* allocate and touch memory until malloc fails, then crash on the NULL pointer */
    size_t chunk = (size_t)64 << 20;
    char *p = malloc(chunk);
    memset(p, 1, chunk);
    keep = p;
  }
#elif mode == 6
  abort();
#endif
}
