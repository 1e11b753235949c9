/* tests/slurp.h: a whole file read into a NUL-terminated buffer the caller frees, for tests (include
 * after cmocka.h: a file that cannot be read fails the test), and several into a scratch buffer for
 * damaged copies. */
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

/* n files read (texts[i], lens[i]); returns a buffer (caller frees) with room for the longest plus extra
 * bytes and a NUL, for damaged copies; *cap is that room less the NUL */
static inline char *test_slurp_many(const char *const *paths, int n, char **texts, size_t *lens, size_t extra,
                                    size_t *cap) {
  size_t longest = 0;
  for (int i = 0; i < n; i++) {
    texts[i] = test_slurp(paths[i], &lens[i]);
    if (lens[i] > longest) longest = lens[i];
  }
  *cap = longest + extra;
  char *b = malloc(*cap + 1);
  assert_non_null(b);
  return b;
}

#endif
