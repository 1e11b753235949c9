/* tests/test_transfer.c: transfer between GPUs on the real convolution space and its six brute-forced files:
 * the related-observation store (strategies/related.c), prior_order, bo's and the evolutionary strategies'
 * tell_related (seeding from the best related configurations, nothing marked seen, transfer=0 ignoring them),
 * and bench's runs with priors and joint campaigns (jobs/bench/bench_transfer.c): the blind prior order scores
 * what issue 31 quotes, and a joint campaign of strategies without transfer is exactly independent runs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "evaluators/replay/replay.h"
#include "jobs/bench/bench_transfer.h"
#include "strategies/related.h"
#include "strategies/strategy.h"
#include "tests/conv_space.h"

static const char *const gpus[] = {"A100", "A4000", "A6000", "MI250X", "W6600", "W7800"};
#define N_GPU 6

typedef struct fixture { mpt_problem *p; mpt_space *s; mpt_replay *r[N_GPU]; } fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f || conv_space_load(&f->p, &f->s)) return -1;
  for (int g = 0; g < N_GPU; g++)
    if (conv_replay_load(f->s, gpus[g], &f->r[g])) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  for (int g = 0; g < N_GPU; g++) mpt_replay_free(f->r[g]);
  mpt_space_free(f->s);
  mpt_problem_free(f->p);
  free(f);
  return 0;
}

static mpt_strategy *make(fixture *f, const char *name, const char *opt, uint64_t seed) {
  mpt_strategy *s = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  const char *opts[1] = {opt};
  int rc = mpt_strategy_create(name, f->s, opts, opt ? 1 : 0, seed, 220, &s, &err);
  if (rc) fprintf(stderr, "%s: %s\n", name, err.msg);
  assert_int_equal(rc, 0);
  return s;
}

/* ids of the valid records of gpu g, fastest first (ties by id) */
static int64_t by_time(const fixture *f, int g, int64_t *ids) {
  int64_t n = 0, size = mpt_space_size(f->s);
  double y;
  for (int64_t id = 0; id < size; id++)
    if (mpt_replay_valid(f->r[g], id, &y)) ids[n++] = id;
  for (int64_t i = 1; i < n; i++) /* insertion sort: stable, so ties stay by id */
    for (int64_t j = i; j > 0; j--) {
      double a, b;
      mpt_replay_valid(f->r[g], ids[j - 1], &a);
      mpt_replay_valid(f->r[g], ids[j], &b);
      if (b < a) { int64_t t = ids[j]; ids[j] = ids[j - 1]; ids[j - 1] = t; } else break;
    }
  return n;
}

static void tell_priors(fixture *f, mpt_strategy *s, int skip) {
  const mpt_replay *pr[N_GPU];
  int src[N_GPU], n = 0;
  mpt_error err;
  for (int g = 0; g < N_GPU; g++)
    if (g != skip) { src[n] = g; pr[n++] = f->r[g]; }
  assert_int_equal(mpt_bench_tell_priors(s, pr, src, n, &err), 0);
}

/* the store: the last observation of a configuration per source counts, failures are marked, the order is by
 * the mean standardized log-time */
static void test_related_store(void **state) {
  (void)state;
  mpt_related *r = mpt_related_new(4, 1);
  mpt_obs o[4];
  for (int i = 0; i < 4; i++) mpt_obs_init(&o[i], i);
  o[0].objective = 4; o[1].objective = 1; o[2].objective = 2; o[3].status = MPT_STATUS_RUNTIME_ERROR;
  assert_int_equal(mpt_related_add(r, 7, o, 4), 0);
  assert_int_equal(mpt_related_count(r), 3);
  o[0].objective = 0.5; /* told again: replaces the first */
  assert_int_equal(mpt_related_add(r, 7, o, 1), 0);
  assert_int_equal(mpt_related_count(r), 3);
  const uint8_t *failed = NULL;
  const double *z = mpt_related_mean_z(r, &failed);
  int64_t n = 0;
  const int64_t *order = mpt_related_order(r, &n);
  assert_int_equal(n, 3);
  assert_int_equal(order[0], 0);
  assert_int_equal(order[1], 1);
  assert_int_equal(order[2], 2);
  assert_true(isnan(z[3]) && failed[3] && !failed[0]);
  assert_true(fabs(z[0] + z[1] + z[2]) < 1e-12); /* one source: standardized */
  mpt_related_free(r);
}

/* prior_order told one file proposes that file's configurations fastest first; told the five others of A100 it
 * scores what issue 31 quotes (-0.24) */
static void test_prior_order(void **state) {
  fixture *f = *state;
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)mpt_space_size(f->s)), got[20];
  int64_t n = by_time(f, 2, ids);
  assert_true(n > 20);
  mpt_strategy *s = make(f, "prior_order", NULL, 1);
  mpt_bench_tell_priors(s, (const mpt_replay *const[]){f->r[2]}, (const int[]){0}, 1, &(mpt_error){0});
  assert_int_equal(mpt_strategy_ask(s, 20, got), 20);
  for (int i = 0; i < 20; i++) assert_int_equal(got[i], ids[i]);
  assert_int_equal(s->n_seen, 20); /* only what was asked */
  mpt_strategy_destroy(s);
  free(ids);
  const mpt_replay *pr[N_GPU - 1];
  int src[N_GPU - 1];
  for (int g = 1; g < N_GPU; g++) { pr[g - 1] = f->r[g]; src[g - 1] = g; }
  mpt_bench_run run;
  mpt_bench_ref ref;
  mpt_error err;
  assert_int_equal(mpt_bench_run_with_priors(f->s, f->r[0], pr, src, N_GPU - 1, "prior_order", NULL, 0, 1, 220, 1,
                                             &run, &err), 0);
  assert_int_equal(mpt_bench_ref_from_replay(&ref, f->s, f->r[0], &err), 0);
  double score = mpt_bench_score(&ref, run.best, run.n_evals, 220, 20);
  assert_true(fabs(score - (-0.238)) < 0.0015);
  mpt_bench_ref_free(&ref);
  mpt_bench_run_free(&run);
}

/* bo: with related observations its initial sample is their best configurations (one source: its fastest);
 * with transfer=0 it asks exactly what it asks without them */
static void test_bo_seeding(void **state) {
  fixture *f = *state;
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)mpt_space_size(f->s)), a[10], b[10];
  by_time(f, 2, ids);
  mpt_strategy *s = make(f, "bo", NULL, 5);
  mpt_bench_tell_priors(s, (const mpt_replay *const[]){f->r[2]}, (const int[]){0}, 1, &(mpt_error){0});
  assert_int_equal(s->n_seen, 0);
  assert_int_equal(mpt_strategy_ask(s, 10, a), 10);
  for (int i = 0; i < 10; i++) assert_int_equal(a[i], ids[i]);
  mpt_strategy_destroy(s);
  mpt_strategy *t = make(f, "bo", "transfer=0", 5), *u = make(f, "bo", NULL, 5);
  tell_priors(f, t, 0);
  assert_int_equal(mpt_strategy_ask(t, 10, a), 10);
  assert_int_equal(mpt_strategy_ask(u, 10, b), 10);
  assert_memory_equal(a, b, sizeof a);
  mpt_strategy_destroy(t);
  mpt_strategy_destroy(u);
  free(ids);
}

/* ga: half its initial population (transfer=0.5) is the best related configurations; transfer=0 ignores them */
static void test_evo_seeding(void **state) {
  fixture *f = *state;
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)mpt_space_size(f->s)), a[64], b[64];
  by_time(f, 3, ids);
  mpt_strategy *s = make(f, "ga", NULL, 9), *t = make(f, "ga", "transfer=0", 9), *u = make(f, "ga", NULL, 9);
  mpt_bench_tell_priors(s, (const mpt_replay *const[]){f->r[3]}, (const int[]){0}, 1, &(mpt_error){0});
  tell_priors(f, t, -1);
  int n = mpt_strategy_ask(s, 64, a);
  assert_true(n >= 8);
  for (int i = 0; i < n / 2 - 1; i++) { /* the first half of the population, in order */
    int found = 0;
    for (int j = 0; j < n && !found; j++) found = a[j] == ids[i];
    assert_true(found);
  }
  assert_int_equal(mpt_strategy_ask(t, 64, a), mpt_strategy_ask(u, 64, b));
  assert_memory_equal(a, b, sizeof(int64_t) * (size_t)n);
  mpt_strategy_destroy(s);
  mpt_strategy_destroy(t);
  mpt_strategy_destroy(u);
  free(ids);
}

/* a joint campaign of bo without transfer is six independent bo runs, evaluation for evaluation; with transfer
 * the runs differ (the others' observations are used) */
static void test_joint_campaign(void **state) {
  fixture *f = *state;
  mpt_bench_run joint[N_GPU], one;
  mpt_error err;
  const char *off[] = {"transfer=0"};
  assert_int_equal(mpt_bench_run_joint(f->s, (const mpt_replay *const *)f->r, N_GPU, "bo", off, 1, 3, 40, 1, joint, &err), 0);
  for (int g = 0; g < N_GPU; g++) {
    assert_int_equal(mpt_bench_run_strategy(f->s, f->r[g], "bo", off, 1, 3, 40, 1, &one, &err), 0);
    assert_memory_equal(one.ids, joint[g].ids, 40 * sizeof(int64_t));
    mpt_bench_run_free(&one);
    mpt_bench_run_free(&joint[g]);
  }
  assert_int_equal(mpt_bench_run_joint(f->s, (const mpt_replay *const *)f->r, N_GPU, "bo", NULL, 0, 3, 40, 1, joint, &err), 0);
  assert_int_equal(mpt_bench_run_strategy(f->s, f->r[0], "bo", off, 1, 3, 40, 1, &one, &err), 0);
  assert_memory_not_equal(one.ids, joint[0].ids, 40 * sizeof(int64_t));
  mpt_bench_run_free(&one);
  for (int g = 0; g < N_GPU; g++) mpt_bench_run_free(&joint[g]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_related_store),
    cmocka_unit_test(test_prior_order),
    cmocka_unit_test(test_bo_seeding),
    cmocka_unit_test(test_evo_seeding),
    cmocka_unit_test(test_joint_campaign),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
