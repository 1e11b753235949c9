/* tests/fuzz/fuzz.h: what the fuzz harnesses share: the libFuzzer entry points, the input as a
 * NUL-terminated text, and how a harness reports a finding (abort: libFuzzer and the standalone driver
 * keep the input that caused it) or a setup it cannot do. */
#ifndef MPT_FUZZ_H
#define MPT_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the input as a malloc'ed NUL-terminated string (text after a NUL byte is not seen), NULL without memory */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return NULL;
  if (size) memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

/* an invariant of the code under test does not hold for this input */
static inline void fuzz_finding(const char *what) {
  fprintf(stderr, "fuzz finding: %s\n", what);
  abort();
}

/* libFuzzer owns main(): a harness that cannot set itself up ends the process here */
static inline void fuzz_setup_failed(const char *harness, const char *why) {
  fprintf(stderr, "%s: %s\n", harness, why);
  exit(2);
}

#endif
