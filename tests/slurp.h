/* tests/slurp.h: a whole file read into a NUL-terminated buffer the caller frees, for tests (include
 * after cmocka.h: a file that cannot be read fails the test). */
#ifndef MPT_TESTS_SLURP_H
#define MPT_TESTS_SLURP_H
#include <stdio.h>
#include <stdlib.h>

static inline char *test_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  assert_non_null(s);
  assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = 0;
  fclose(f);
  if (len) *len = (size_t)n;
  return s;
}

#endif
