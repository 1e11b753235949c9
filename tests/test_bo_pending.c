/* tests/test_bo_pending.c: the evaluations pending from earlier asks (asynchronous workers) fantasized on the
 * pool of a batch (bo option pending_pool, gp/gp_pool.h mpt_gp_pool_predict_candidate / _add_candidate):
 * the pool's posterior at a candidate and after fantasies at candidates against the GP given the same
 * observations; asynchronous bo runs on a real brute-forced space (convolution on the A6000, replayed) with
 * a pool of every candidate normalized as the GP picking what fantasies over every candidate pick
 * (pending_pool=0), the default rule's picks valid, distinct, deterministic and different from that; and
 * synchronous rounds (no evaluation pending at an ask) picking exactly what they picked without the rule. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/replay/replay.h"
#include "gp/gp.h"
#include "gp/gp_pool.h"
#include "spaces/space.h"
#include "spaces/sys/rng.h"
#include "strategies/strategy.h"
#include "tests/bo_replay.h"
#include "tests/conv_fixture.h"

static mpt_space *space;
static mpt_replay *rep;

static int setup(void **state) { return bo_replay_setup(state, "bo_pending", &space, &rep); }

static int teardown(void **state) {
  mpt_replay_free(rep);
  return conv_fixture_teardown(state);
}

/* the pool's posterior at candidates that are not members, each then added with its predicted mean (the
 * kriging believer), against the GP given the same points one by one (mpt_gp_add): the same predictions,
 * and the same posterior of the members at the end, up to V's float rounding; a bad id refused */
static void test_pool_candidates(void **state) {
  (void)state;
  enum { NC = 4000, DIM = 3, NOBS = 60, NP = 200, NF = 20 };
  mpt_rng r;
  mpt_rng_seed(&r, 5);
  double *X = malloc(sizeof(double) * NC * DIM), Xo[NOBS * DIM], y[NOBS];
  for (int i = 0; i < NC * DIM; i++) X[i] = (double)mpt_rng_below(&r, 11) / 10.0;
  for (int i = 0; i < NOBS; i++) {
    memcpy(Xo + i * DIM, X + (size_t)mpt_rng_below(&r, NC) * DIM, sizeof(double) * DIM);
    y[i] = sin(3.0 * Xo[i * DIM]) + Xo[i * DIM + 1] * Xo[i * DIM + 2];
  }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  cfg.noise = 1e-4;
  mpt_gp *a, *b;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &a, &err), 0);
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &b, &err), 0);
  assert_int_equal(mpt_gp_add_many(a, NOBS, Xo, y, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many(b, NOBS, Xo, y, NULL, &err), 0);
  int64_t ids[NP];
  double *PX = malloc(sizeof(double) * NP * DIM);
  for (int j = 0; j < NP; j++) { /* members: the even ids from 2 * NF on; the fantasies: ids 1, 3, 5, ... */
    ids[j] = 2 * NF + 2 * j;
    memcpy(PX + j * DIM, X + ids[j] * DIM, sizeof(double) * DIM);
  }
  mpt_gp_pool *p;
  assert_int_equal(mpt_gp_pool_create(&p, &err), 0);
  assert_int_equal(mpt_gp_pool_load(p, a, ids, PX, NP, &err), 0);
  double dm = 0, ds = 0, scale, fy[NF];
  mpt_gp_normalization(b, NULL, &scale);
  for (int f = 0; f < NF; f++) {
    int64_t c = 2 * f + 1;
    double pm, psd, gm, gsd;
    assert_int_equal(mpt_gp_pool_predict_candidate(p, c, X + c * DIM, &pm, &psd, &err), 0);
    mpt_gp_predict_block(b, c, c + 1, &gm, &gsd);
    dm = fmax(dm, fabs(pm - gm));
    ds = fmax(ds, fabs(psd - gsd));
    if (f % 2) assert_int_equal(mpt_gp_pool_add_candidate(p, c, X + c * DIM, pm, &err), 0); /* its solve reused */
    else { /* another prediction in between: the solve is redone */
      double m2;
      assert_int_equal(mpt_gp_pool_predict_candidate(p, ids[0], PX, &m2, NULL, &err), 0);
      assert_int_equal(mpt_gp_pool_add_candidate(p, c, X + c * DIM, pm, &err), 0);
    }
    assert_int_equal(mpt_gp_add(b, X + c * DIM, pm, &err), 0);
    fy[f] = pm;
  }
  printf("pool at candidates: max |mean diff| %.3g, max |sd diff| %.3g (output scale %.3g)\n", dm, ds, scale);
  assert_true(dm < 1e-4 * scale && ds < 1e-4 * scale);
  double m1[NP], v1[NP], m2, v2, dv = 0;
  dm = 0;
  mpt_gp_pool_predict_var(p, 0, NP, m1, v1);
  for (int j = 0; j < NP; j++) {
    mpt_gp_predict_block_var(b, ids[j], ids[j] + 1, &m2, &v2);
    dm = fmax(dm, fabs(m1[j] - m2));
    dv = fmax(dv, fabs(v1[j] - v2));
  }
  printf("pool members after %d fantasies at candidates: max |mean diff| %.3g, max |var diff| %.3g\n", NF, dm, dv);
  assert_true(dm < 1e-3 * scale && dv < 1e-5);
  /* the same fantasies planned (one matrix product for their columns of V against the members'): the same
   * posterior up to the product's rounding; a plan left halfway (another candidate) and the rest unplanned too */
  mpt_gp_pool *q;
  assert_int_equal(mpt_gp_pool_create(&q, &err), 0);
  for (int leave = 0; leave < 2; leave++) {
    int64_t cand[NF];
    for (int f = 0; f < NF; f++) cand[f] = leave && f == NF / 2 ? 2 * NF + 1 : 2 * f + 1; /* 2 NF + 1: not added */
    assert_int_equal(mpt_gp_pool_load(q, a, ids, PX, NP, &err), 0);
    assert_int_equal(mpt_gp_pool_plan_candidates(q, cand, NF, &err), 0);
    for (int f = 0; f < NF; f++)
      assert_int_equal(mpt_gp_pool_add_candidate(q, 2 * f + 1, X + (2 * f + 1) * DIM, fy[f], &err), 0);
    double m3[NP], v3[NP], dq = 0;
    mpt_gp_pool_predict_var(q, 0, NP, m3, v3);
    for (int j = 0; j < NP; j++) dq = fmax(dq, fmax(fabs(m3[j] - m1[j]), fabs(v3[j] - v1[j])));
    printf("planned fantasies%s: max |diff| %.3g against unplanned\n", leave ? " (plan left halfway)" : "", dq);
    assert_true(dq < 1e-9 * scale);
  }
  int64_t bad = NC;
  assert_int_not_equal(mpt_gp_pool_plan_candidates(q, &bad, 1, &err), 0);
  mpt_gp_pool_free(q);
  assert_int_not_equal(mpt_gp_pool_add_candidate(p, NC, X, 0.0, &err), 0);
  assert_int_not_equal(mpt_gp_pool_predict_candidate(p, -1, X, &m2, NULL, &err), 0);
  mpt_gp_pool_free(p);
  mpt_gp_free(a);
  mpt_gp_free(b);
  free(X);
  free(PX);
}

/* `total` evaluations of bo with options opts, `workers` in flight or rounds of ask(batch) (bo_replay_drive);
 * ids out (in ask order); returns how many were asked */
static int64_t run(const char *const *opts, int n_opts, int workers, int batch, int64_t total, int64_t *ids) {
  mpt_strategy *s;
  mpt_error err;
  assert_int_equal(mpt_strategy_create("bo", space, opts, n_opts, 3, total, &s, &err), 0);
  bo_drive d = {.rep = rep};
  int64_t asked = bo_replay_drive(s, &d, workers, batch, total, ids);
  mpt_strategy_destroy(s);
  return asked;
}

/* 12 workers, 120 evaluations: a pool of every candidate with the GP's normalization picks what fantasies over
 * every candidate pick (up to rounding at near-ties later: the pool's V is read from the GP's float V, the GP
 * solves the fantasies' own rows); the default rule (a pool of 512) is deterministic, valid, distinct, and
 * picks differently */
static void test_async_pending(void **state) {
  (void)state;
  enum { T = 120, W = 12 };
  const char *full[] = {"pending_pool=0"};
  const char *all[] = {"batch_pool=100000", "batch_normalization=fantasies"};
  int64_t a[T], b[T], c[T], d[T];
  assert_int_equal(run(full, 1, W, 1, T, a), T);
  assert_int_equal(run(all, 2, W, 1, T, b), T);
  int64_t same = 0;
  while (same < T && a[same] == b[same]) same++;
  printf("asynchronous, %d workers: a pool of every candidate picks as fantasies over every candidate for the "
         "first %lld of %d evaluations\n", W, (long long)same, T);
  assert_true(same >= 100);
  assert_int_equal(run(NULL, 0, W, 1, T, c), T);
  bo_check_valid_distinct(space, c, T);
  assert_int_equal(run(NULL, 0, W, 1, T, d), T);
  assert_memory_equal(c, d, sizeof c);
  assert_memory_not_equal(a, c, sizeof c);
}

/* synchronous rounds of 16 (nothing pending from an earlier ask) and of 1: the rule never applies, the picks
 * are those without it */
static void test_sync_unchanged(void **state) {
  (void)state;
  enum { T = 106 };
  const char *off[] = {"pending_pool=0"};
  int64_t a[T], b[T];
  for (int batch = 1; batch <= 16; batch += 15) {
    assert_int_equal(run(off, 1, 1, batch, T, a), T);
    assert_int_equal(run(NULL, 0, 1, batch, T, b), T);
    assert_memory_equal(a, b, sizeof a);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pool_candidates),
      cmocka_unit_test(test_async_pending),
      cmocka_unit_test(test_sync_unchanged),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
