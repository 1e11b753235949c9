/* tests/test_strategy_base.c: the strategy base layer and the `random` and `brute_force` strategies on
 * a real space (convolution_milo.json): creation errors, option errors, no duplicates, validity,
 * whole-space coverage, determinism per seed, warm start (tell before ask) and resume. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "strategies/strategy.h"
#include "tests/conv_space.h"

typedef struct fixture { mpt_problem *p; mpt_space *s; } fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f || conv_space_load(&f->p, &f->s)) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  mpt_space_free(f->s);
  mpt_problem_free(f->p);
  free(f);
  return 0;
}

static void test_unknown_strategy(void **state) {
  fixture *f = *state;
  mpt_strategy *s = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  int rc = mpt_strategy_create("no_such_strategy", f->s, NULL, 0, 1, 10, &s, &err);
  assert_int_equal(rc, MPT_ERR_NAME);
  assert_null(s);
  assert_non_null(strstr(err.msg, "no_such_strategy"));
  assert_non_null(strstr(err.msg, "random"));
  assert_non_null(strstr(err.msg, "brute_force"));
}

static void test_bad_options(void **state) {
  fixture *f = *state;
  mpt_strategy *s = NULL;
  mpt_error err;
  const char *opts[] = {"popsize=3"};
  mpt_error_clear(&err);
  assert_int_equal(mpt_strategy_create("random", f->s, opts, 1, 1, 10, &s, &err), MPT_ERR_NAME);
  assert_null(s);
  assert_non_null(strstr(err.msg, "random"));
  assert_non_null(strstr(err.msg, "popsize"));
  const char *bad[] = {"novalue"};
  mpt_error_clear(&err);
  assert_int_equal(mpt_strategy_create("brute_force", f->s, bad, 1, 1, 10, &s, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "brute_force"));
}

/* Kernel Tuner's strategy names find our strategies (the strategy keeps our name), the names list says them,
 * and Kernel Tuner's names of bo's options are read as ours, values checked as ours */
static void test_kernel_tuner_names(void **state) {
  fixture *f = *state;
  static const char *const pairs[][2] = {{"bayes_opt", "bo"}, {"genetic_algorithm", "ga"}, {"diff_evo", "de"},
                                         {"firefly_algorithm", "firefly"}, {"simulated_annealing", "sa"},
                                         {"random_sample", "random"}, {"brute_force", "brute_force"},
                                         {"pso", "pso"}, {"mls", "mls"}};
  for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
    const mpt_strategy_type *t = mpt_strategy_find(pairs[k][0]);
    assert_non_null(t);
    assert_ptr_equal(t, mpt_strategy_find(pairs[k][1]));
    assert_string_equal(t->name, pairs[k][1]);
  }
  assert_null(mpt_strategy_find("bayes"));
  assert_null(mpt_strategy_find("memetic")); /* Kernel Tuner's memetic is not our ga_memetic */
  mpt_strategy *s = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_strategy_create("simulated_annealing", f->s, NULL, 0, 1, 10, &s, &err), 0);
  assert_string_equal(s->type->name, "sa");
  mpt_strategy_destroy(s);
  char names[1024];
  mpt_strategy_names(names, sizeof names);
  assert_int_equal(strncmp(names, "random, brute_force,", 20), 0);
  assert_non_null(strstr(names, "; Kernel Tuner's names: random_sample (random), genetic_algorithm (ga),"));
  assert_non_null(strstr(names, "bayes_opt (bo)"));
  assert_null(strstr(names, "pso (pso)")); /* the same name is not said twice */
  assert_int_equal(mpt_strategy_create("bayes", f->s, NULL, 0, 1, 10, &s, &err), MPT_ERR_NAME);
  assert_non_null(strstr(err.msg, "bayes_opt (bo)"));
  /* bo's options by Kernel Tuner's names: popsize is the initial sample, the last one given wins */
  const char *opts[] = {"initial_samples=3", "popsize=7", "covariancekernel=matern52", "method=poi"};
  assert_int_equal(mpt_strategy_create("bayes_opt", f->s, opts, 4, 1, 50, &s, &err), 0);
  assert_int_equal(mpt_strategy_opt_int(s, "initial_samples"), 7);
  assert_string_equal(mpt_strategy_opt_str(s, "kernel"), "matern52");
  assert_string_equal(mpt_strategy_opt_str(s, "acquisition"), "poi");
  assert_int_equal(s->n_opts, 3); /* kept under our names */
  mpt_strategy_destroy(s);
  const mpt_strategy_type *bo = mpt_strategy_find("bo");
  assert_int_equal(mpt_strategy_check_option(bo, "covariancekernel=rbf", &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "bad value for option 'covariancekernel'"));
  assert_non_null(strstr(err.msg, "matern32"));
  assert_int_equal(mpt_strategy_check_option(bo, "popsize=5", &err), 0);
  assert_int_equal(mpt_strategy_check_option(mpt_strategy_find("ga"), "covariancekernel=matern32", &err), MPT_ERR_NAME);
  char aliases[256];
  assert_int_equal(mpt_strategy_option_aliases(bo, aliases, sizeof aliases), 3);
  assert_string_equal(aliases, "popsize (initial_samples), covariancekernel (kernel), method (acquisition)");
  assert_int_equal(mpt_strategy_option_aliases(mpt_strategy_find("ga"), aliases, sizeof aliases), 0);
}

static void test_brute_force_order(void **state) {
  fixture *f = *state;
  int64_t size = mpt_space_size(f->s);
  assert_true(size > 100);
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("brute_force", f->s, NULL, 0, 7, size, &s, &err), 0);
  int64_t ids[37], expect = 0;
  int r;
  while ((r = mpt_strategy_ask(s, 37, ids)) > 0)
    for (int i = 0; i < r; i++) assert_int_equal(ids[i], expect++);
  assert_int_equal(expect, size);
  assert_int_equal(mpt_strategy_ask(s, 5, ids), 0);
  mpt_strategy_destroy(s);
}

/* asks everything in batches of 13 and checks validity and distinctness; fills order[] */
static void drain(mpt_strategy *s, int64_t size, int64_t *order, int64_t *count) {
  uint8_t *hit = calloc((size_t)size, 1);
  int64_t ids[13];
  int r;
  *count = 0;
  while ((r = mpt_strategy_ask(s, 13, ids)) > 0) {
    for (int i = 0; i < r; i++) {
      assert_true(ids[i] >= 0 && ids[i] < size);
      assert_int_equal(hit[ids[i]], 0);
      hit[ids[i]] = 1;
      order[(*count)++] = ids[i];
    }
  }
  free(hit);
}

static void test_random_all_distinct_and_deterministic(void **state) {
  fixture *f = *state;
  int64_t size = mpt_space_size(f->s);
  int64_t *a = malloc((size_t)size * sizeof *a), *b = malloc((size_t)size * sizeof *b), *c = malloc((size_t)size * sizeof *c);
  int64_t na, nb, nc;
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("random", f->s, NULL, 0, 42, 0, &s, &err), 0);
  drain(s, size, a, &na);
  mpt_strategy_destroy(s);
  assert_int_equal(na, size);
  assert_int_equal(mpt_strategy_create("random", f->s, NULL, 0, 42, 0, &s, &err), 0);
  drain(s, size, b, &nb);
  mpt_strategy_destroy(s);
  assert_memory_equal(a, b, (size_t)size * sizeof *a);
  assert_int_equal(mpt_strategy_create("random", f->s, NULL, 0, 43, 0, &s, &err), 0);
  drain(s, size, c, &nc);
  mpt_strategy_destroy(s);
  assert_int_equal(nc, size);
  assert_true(memcmp(a, c, (size_t)size * sizeof *a) != 0);
  /* not sorted: the first 50 are not ascending */
  int ascending = 1;
  for (int i = 1; i < 50; i++) if (a[i] < a[i - 1]) ascending = 0;
  assert_false(ascending);
  free(a); free(b); free(c);
}

static void test_warm_start_skips_told(void **state) {
  fixture *f = *state;
  int64_t size = mpt_space_size(f->s);
  const char *names[] = {"random", "brute_force"};
  for (int k = 0; k < 2; k++) {
    mpt_strategy *s;
    mpt_error err;
    assert_int_equal(mpt_strategy_create(names[k], f->s, NULL, 0, 3, 0, &s, &err), 0);
    /* tell every even id before the first ask */
    int64_t told = 0;
    for (int64_t id = 0; id < size; id += 2) {
      mpt_obs o;
      mpt_obs_init(&o, id);
      o.objective = (double)id;
      mpt_strategy_tell(s, &o, 1);
      told++;
    }
    assert_int_equal(s->n_told, told);
    assert_int_equal(s->n_seen, told);
    /* a told id twice counts as told but not as newly seen */
    mpt_obs o;
    mpt_obs_init(&o, 0);
    mpt_strategy_tell(s, &o, 1);
    assert_int_equal(s->n_seen, told);
    int64_t *order = malloc((size_t)size * sizeof *order), n;
    drain(s, size, order, &n);
    assert_int_equal(n, size - told);
    for (int64_t i = 0; i < n; i++) assert_int_equal(order[i] % 2, 1);
    mpt_strategy_destroy(s);
    free(order);
  }
}

/* a resumed run (fresh instance told the first run's asks) never repeats them and covers the rest */
static void test_resume_random(void **state) {
  fixture *f = *state;
  int64_t size = mpt_space_size(f->s);
  mpt_strategy *a, *b;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("random", f->s, NULL, 0, 9, 0, &a, &err), 0);
  int64_t first[100];
  assert_int_equal(mpt_strategy_ask(a, 100, first), 100);
  assert_int_equal(mpt_strategy_create("random", f->s, NULL, 0, 9, 0, &b, &err), 0);
  for (int i = 0; i < 100; i++) {
    mpt_obs o;
    mpt_obs_init(&o, first[i]);
    mpt_strategy_tell(b, &o, 1);
  }
  int64_t *rest = malloc((size_t)size * sizeof *rest), *cont = malloc((size_t)size * sizeof *cont), n, nc;
  drain(b, size, rest, &n);
  assert_int_equal(n, size - 100);
  for (int64_t i = 0; i < n; i++)
    for (int j = 0; j < 100; j++) assert_true(rest[i] != first[j]);
  /* the lazily shuffled permutation draws the same positions whether or not an id was told: the
   * resumed run continues exactly like the uninterrupted one */
  drain(a, size, cont, &nc);
  assert_int_equal(nc, n);
  assert_memory_equal(rest, cont, (size_t)n * sizeof *rest);
  free(rest);
  free(cont);
  mpt_strategy_destroy(a);
  mpt_strategy_destroy(b);
}

/* the shared "random free id" helper: never returns an excluded id, draws uniformly among the free ones,
 * scans when draws miss, and gives -1 when nothing is free or (without the scan) the draws miss */
static void test_random_free(void **state) {
  (void)state;
  enum { N = 200 };
  uint8_t a[N] = {0}, b[N] = {0};
  for (int i = 0; i < N; i++) {
    a[i] = i % 2 == 0;  /* even ids excluded by the first mask */
    b[i] = i % 3 == 0;  /* multiples of 3 by the second */
  }
  mpt_rng rng;
  mpt_rng_seed(&rng, 7);
  int hits[N] = {0};
  for (int t = 0; t < 20000; t++) {
    int64_t id = mpt_strategy_random_free(&rng, N, a, b, 64, 1);
    assert_true(id >= 0 && id < N);
    assert_false(a[id] || b[id]);
    hits[id]++;
  }
  /* 67 free ids (odd, not multiples of 3), about 300 draws each: every one drawn, none far off */
  int n_free = 0;
  for (int i = 0; i < N; i++)
    if (!a[i] && !b[i]) {
      n_free++;
      assert_in_range(hits[i], 180, 420);
    }
  assert_int_equal(n_free, 67);
  /* one free id: the scan finds it even with no draws at all; without the scan the draws must hit it */
  memset(a, 1, sizeof a);
  a[123] = 0;
  assert_int_equal(mpt_strategy_random_free(&rng, N, a, NULL, 0, 1), 123);
  assert_int_equal(mpt_strategy_random_free(&rng, N, a, NULL, 0, 0), -1);
  a[123] = 1;
  assert_int_equal(mpt_strategy_random_free(&rng, N, a, NULL, 64, 1), -1);
  assert_int_equal(mpt_strategy_random_free(&rng, 0, a, NULL, 64, 1), -1);
}

static void test_bad_args(void **state) {
  fixture *f = *state;
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("random", f->s, NULL, 0, 1, -5, &s, &err), MPT_ERR_VALUE);
  assert_int_equal(mpt_strategy_create("random", f->s, NULL, 0, 1, 5, &s, &err), 0);
  int64_t ids[4];
  assert_int_equal(mpt_strategy_ask(s, 0, ids), 0);
  assert_int_equal(mpt_strategy_ask(s, -3, ids), 0);
  mpt_obs o;
  mpt_obs_init(&o, -1);
  mpt_strategy_tell(s, &o, 1); /* out of range: ignored */
  mpt_obs_init(&o, mpt_space_size(f->s));
  mpt_strategy_tell(s, &o, 1);
  assert_int_equal(s->n_told, 0);
  assert_int_equal(s->n_seen, 0);
  mpt_strategy_destroy(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_unknown_strategy),
    cmocka_unit_test(test_bad_options),
    cmocka_unit_test(test_kernel_tuner_names),
    cmocka_unit_test(test_brute_force_order),
    cmocka_unit_test(test_random_all_distinct_and_deterministic),
    cmocka_unit_test(test_warm_start_skips_told),
    cmocka_unit_test(test_resume_random),
    cmocka_unit_test(test_random_free),
    cmocka_unit_test(test_bad_args),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
