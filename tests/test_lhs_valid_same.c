/* tests/test_lhs_valid_same.c: mpt_space_sample_lhs_valid (one pruned pass over the valid set for the
 * whole design, spaces/space_nearest.c) picks exactly the ids, and leaves the generator in exactly the
 * state, of the straightforward algorithm kept here (a full scan of the valid set per design point), on shared T1 files, inline spaces with many invalid configurations and free
 * parameters, parameter subsets, designs larger than the space, many seeds, designs in many chunks of
 * targets; plus the value counts, and the memory of a large design (bounded by the chunks). */
#include <setjmp.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "spaces/space_internal.h"

/* ---- the reference: the per-point scan, verbatim apart from names ---- */
static int64_t ref_nearest_unused(const mpt_space *sp, const int *params, int np, const int *tgt, const uint8_t *used,
                                  mpt_rng *rng) {
  int64_t pick = -1, ties = 0, N = mpt_space_size(sp);
  int bm = -1, bdist = 0;
  for (int64_t c = 0; c < N; c++) {
    if (used[c]) continue;
    int match = 0, dist = 0;
    for (int d = 0; d < np; d++) {
      int df = mpt_space_value_index(sp, c, params[d]) - tgt[d];
      match += df == 0;
      dist += df < 0 ? -df : df;
    }
    if (match > bm || (match == bm && dist < bdist)) {
      bm = match;
      bdist = dist;
      pick = c;
      ties = 1;
    } else if (match == bm && dist == bdist && mpt_rng_below(rng, (uint64_t)++ties) == 0) {
      pick = c;
    }
  }
  return pick;
}

static void ref_strata(mpt_rng *rng, int64_t n, int64_t *perm, double *u) {
  for (int64_t j = 0; j < n; j++) perm[j] = j;
  mpt_rng_shuffle(rng, perm, n);
  for (int64_t j = 0; j < n; j++) u[j] = ((double)perm[j] + mpt_rng_uniform(rng)) / (double)n;
}

static int64_t ref_lhs_valid(const mpt_space *sp, const int *params, int np, mpt_rng *rng, int64_t n, int64_t *ids) {
  int64_t N = mpt_space_size(sp);
  int A = np > 0 ? np : 1, tot = 0, off[64];
  assert_true(np <= 64);
  for (int d = 0; d < np; d++) {
    off[d] = tot;
    tot += mpt_space_n_values(sp, params[d]);
  }
  int64_t *cnt = calloc((size_t)(tot > 0 ? tot : 1), sizeof(int64_t)), *perm = malloc(sizeof(int64_t) * (size_t)n);
  double *u = malloc(sizeof(double) * (size_t)n);
  int *tgt = malloc(sizeof(int) * (size_t)n * (size_t)A);
  uint8_t *used = calloc((size_t)(N > 0 ? N : 1), 1);
  int64_t m = 0;
  for (int64_t c = 0; c < N; c++)
    for (int d = 0; d < np; d++) cnt[off[d] + mpt_space_value_index(sp, c, params[d])]++;
  for (int d = 0; d < np; d++) {
    int nv = mpt_space_n_values(sp, params[d]);
    for (int v = 1; v < nv; v++) cnt[off[d] + v] += cnt[off[d] + v - 1];
    ref_strata(rng, n, perm, u);
    for (int64_t j = 0; j < n; j++) {
      double q = u[j] * (double)N;
      int v = 0;
      while (v < nv - 1 && (double)cnt[off[d] + v] <= q) v++;
      tgt[(size_t)j * A + d] = v;
    }
  }
  for (int64_t j = 0; j < n; j++) {
    int64_t pick = ref_nearest_unused(sp, params, np, tgt + (size_t)j * A, used, rng);
    if (pick < 0) break;
    used[pick] = 1;
    ids[m++] = pick;
  }
  free(cnt); free(perm); free(u); free(tgt); free(used);
  return m;
}

/* ---- spaces ---- */
static mpt_space *load(const char *file, const char *text, mpt_problem **p) {
  mpt_error err = {0};
  int rc;
  if (file) {
    char path[1024];
    assert_non_null(getenv("MPT_SHARED_DATA"));
    snprintf(path, sizeof path, "%s/t1/%s", getenv("MPT_SHARED_DATA"), file);
    rc = mpt_problem_load(path, p, &err);
  } else {
    rc = mpt_problem_parse(text, "inline.json", p, &err);
  }
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  mpt_space *s = NULL;
  rc = mpt_space_build(*p, &s, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  return s;
}

/* the parameters with more than one value (bo's active parameters), or all of them */
static int param_list(const mpt_space *s, int active_only, int *params) {
  int np = 0;
  for (int p = 0; p < mpt_space_dims(s); p++)
    if (!active_only || mpt_space_n_values(s, p) > 1) params[np++] = p;
  return np;
}

/* the design and the generator's next output equal the reference's for every seed and design size */
static void check_same(const mpt_space *s, const int *params, int np, int seeds, const int64_t *sizes, int nsizes) {
  int64_t N = mpt_space_size(s);
  /* value counts from the rows equal counting every configuration */
  int off = 0, offs[64];
  for (int d = 0; d < np; d++) offs[d] = off, off += mpt_space_n_values(s, params[d]);
  int64_t *want = calloc((size_t)off + 1, sizeof(int64_t)), *got = calloc((size_t)off + 1, sizeof(int64_t));
  for (int64_t c = 0; c < N; c++)
    for (int d = 0; d < np; d++) want[offs[d] + mpt_space_value_index(s, c, params[d])]++;
  mpt_space__value_counts(s, params, np, offs, got);
  assert_memory_equal(want, got, sizeof(int64_t) * (size_t)(off + 1));
  free(want);
  free(got);
  for (int k = 0; k < nsizes; k++) {
    int64_t n = sizes[k], *a = malloc(sizeof(int64_t) * (size_t)n), *b = malloc(sizeof(int64_t) * (size_t)n);
    for (int seed = 1; seed <= seeds; seed++) {
      mpt_rng ra, rb;
      mpt_rng_seed(&ra, (uint64_t)seed);
      mpt_rng_seed(&rb, (uint64_t)seed);
      int64_t ma = ref_lhs_valid(s, params, np, &ra, n, a), mb = mpt_space_sample_lhs_valid(s, params, np, &rb, n, b);
      if (ma != mb || memcmp(a, b, sizeof(int64_t) * (size_t)ma) != 0)
        fail_msg("size %lld, n %lld, np %d, seed %d: designs differ", (long long)N, (long long)n, np, seed);
      assert_true(mpt_rng_next(&ra) == mpt_rng_next(&rb)); /* the same draws were made */
    }
    free(a);
    free(b);
  }
}

static void test_shared_files(void **state) {
  (void)state;
  static const struct {
    const char *file;
    int seeds;
  } files[] = {{"convolution_milo.json", 40}, {"dedispersion_milo.json", 10}, {"gemm_milo.json", 3}, {"paper_hotspot.json", 2}};
  int64_t sizes[] = {1, 20, 45};
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    mpt_problem *p = NULL;
    mpt_space *s = load(files[f].file, NULL, &p);
    int params[64];
    for (int active = 1; active >= 0; active--) {
      int np = param_list(s, active, params);
      check_same(s, params, np, files[f].seeds, sizes, 3);
    }
    /* one two-valued parameter: a few key levels with huge ties (many kept ids, or the scan) */
    for (int q = 0; q < mpt_space_dims(s); q++)
      if (mpt_space_n_values(s, q) == 2) {
        check_same(s, &q, 1, 2, sizes + 1, 1);
        break;
      }
    mpt_space_free(s);
    mpt_problem_free(p);
  }
}

static void test_inline_spaces(void **state) {
  (void)state;
  static const char *spaces[] = {
      /* most configurations invalid, no free parameter */
      "{\"ConfigurationSpace\": {\"TuningParameters\": ["
      "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(12))\"},"
      "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(9))\"},"
      "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"list(range(7))\"}],"
      "\"Conditions\": [{\"Expression\": \"a + b + c < 6 or (a == 11 and b % 3 == 0)\"}]}}",
      /* constrained and free parameters mixed, a single-parameter condition */
      "{\"ConfigurationSpace\": {\"TuningParameters\": ["
      "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(1, 7))\"},"
      "{\"Name\": \"f\", \"Type\": \"int\", \"Values\": \"[1, 2, 3, 4]\"},"
      "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1, 2, 3, 4, 5]\"},"
      "{\"Name\": \"g\", \"Type\": \"int\", \"Values\": \"[0, 1, 2]\"},"
      "{\"Name\": \"h\", \"Type\": \"int\", \"Values\": \"[7]\"},"
      "{\"Name\": \"s\", \"Type\": \"string\", \"Values\": \"['x', 'y', 'z']\"}],"
      "\"Conditions\": [{\"Expression\": \"a * b <= 12\"}, {\"Expression\": \"a % 2 == 0 or s != 'y'\"},"
      "{\"Expression\": \"f != 2\"}]}}",
      /* free parameters only */
      "{\"ConfigurationSpace\": {\"TuningParameters\": ["
      "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(5))\"},"
      "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(4))\"},"
      "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"list(range(6))\"}]}}",
      /* a constraint leaves a >= 2 only with b == 0 (test_space's marginals case) */
      "{\"ConfigurationSpace\": {\"TuningParameters\": ["
      "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(10))\"},"
      "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(10))\"}],"
      "\"Conditions\": [{\"Expression\": \"a < 2 or b == 0\"}]}}",
      /* no valid configuration */
      "{\"ConfigurationSpace\": {\"TuningParameters\": ["
      "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}, {\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}],"
      "\"Conditions\": [{\"Expression\": \"a + b > 5\"}]}}"};
  int64_t sizes[] = {1, 2, 7, 20, 300};
  for (size_t k = 0; k < sizeof spaces / sizeof spaces[0]; k++) {
    mpt_problem *p = NULL;
    mpt_space *s = load(NULL, spaces[k], &p);
    int params[64];
    for (int active = 1; active >= 0; active--) {
      int np = param_list(s, active, params);
      check_same(s, params, np, 60, sizes, 5);
      if (np > 1) check_same(s, params + 1, np - 1, 20, sizes, 5); /* a subset */
      check_same(s, params, 0, 3, sizes, 3);           /* no parameter: every key ties */
    }
    mpt_space_free(s);
    mpt_problem_free(p);
  }
}

/* the same designs when the targets go in chunks of a few (a pass per chunk, picks across chunk ends) */
static void test_small_chunks(void **state) {
  (void)state;
  mpt_problem *p = NULL;
  mpt_space *s = load(NULL,
                      "{\"ConfigurationSpace\": {\"TuningParameters\": ["
                      "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(1, 7))\"},"
                      "{\"Name\": \"f\", \"Type\": \"int\", \"Values\": \"[1, 2, 3, 4]\"},"
                      "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1, 2, 3, 4, 5]\"},"
                      "{\"Name\": \"g\", \"Type\": \"int\", \"Values\": \"[0, 1, 2]\"}],"
                      "\"Conditions\": [{\"Expression\": \"a * b <= 12\"}]}}",
                      &p);
  int params[64], np = param_list(s, 1, params);
  int64_t sizes[] = {2, 9, 40, 250};
  static const int64_t chunks[] = {1, 3, 40, 777};
  for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
    mpt_space__nearest_set_chunk(chunks[c]);
    check_same(s, params, np, 15, sizes, 4);
  }
  mpt_space__nearest_set_chunk(0);
  mpt_space_free(s);
  mpt_problem_free(p);
}

/* a design of 6,000 points: the pass's memory grows as the square of the targets (j + 1 heap entries and
 * at least j + 1 kept ids for target j: some 300 MB at once), chunks bound it. Peak RSS of a child */
static void test_large_design_memory(void **state) {
  (void)state;
  mpt_problem *p = NULL;
  mpt_space *s = load(NULL,
                      "{\"ConfigurationSpace\": {\"TuningParameters\": ["
                      "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(40))\"},"
                      "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(40))\"},"
                      "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"list(range(25))\"}],"
                      "\"Conditions\": [{\"Expression\": \"a + b < 60\"}]}}",
                      &p);
  int params[64], np = param_list(s, 1, params);
  int64_t n = 6000;
  assert_true(mpt_space_size(s) > n);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)n);
    mpt_rng rng;
    mpt_rng_seed(&rng, 1);
    _exit(ids && mpt_space_sample_lhs_valid(s, params, np, &rng, n, ids) == n ? 0 : 1);
  }
  int status = 0;
  struct rusage ru;
  assert_int_equal(wait4(pid, &status, 0, &ru), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  printf("lhs_valid, %lld points of %lld: child peak RSS %ld MB\n", (long long)n, (long long)mpt_space_size(s),
         ru.ru_maxrss / 1024);
#ifndef __SANITIZE_ADDRESS__ /* AddressSanitizer's quarantine keeps the freed chunks' memory: no bound to check */
  assert_true(ru.ru_maxrss < 100 * 1024); /* KB */
#endif
  mpt_space_free(s);
  mpt_problem_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_shared_files), cmocka_unit_test(test_inline_spaces),
                                     cmocka_unit_test(test_small_chunks), cmocka_unit_test(test_large_design_memory)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
