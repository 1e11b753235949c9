/* tests/test_bo_ws_shrink.c: a GP's candidates narrowed to a subset (gp/gp_keep.c, mpt_gp_keep_candidates) against
 * a GP created over the kept candidates alone, and bo's working set that shrinks once the observations are many
 * (strategies/bo/bo_ws.c, option working_set_bound) on a real brute-forced space (convolution on the A6000,
 * replayed): the set shrinks to the bound at its refreshes, every pick and pending evaluation stays inside it, and
 * the strategy's GP equals a fresh one over the kept slots. */
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
#include "spaces/space.h"
#include "spaces/sys/rng.h"
#include "strategies/strategy.h"
#include "strategies/bo/bo_state.h"
#include "strategies/bo/bo_ws.h"
#include "tests/bo_replay.h"
#include "tests/conv_fixture.h"

static mpt_space *space;
static mpt_replay *rep;

static int setup(void **state) { return bo_replay_setup(state, "bo_ws_shrink", &space, &rep); }

static int teardown(void **state) {
  mpt_replay_free(rep);
  return conv_fixture_teardown(state);
}

/* a and c's means and variances over their nc candidates agree to rounding (means within tol x the scale, variances
 * within 1e-5, and their variance sums) */
static void assert_same_posterior(const mpt_gp *a, const mpt_gp *c, int64_t nc, double tol, const char *what) {
  double *m1 = malloc(sizeof(double) * (size_t)nc), *v1 = malloc(sizeof(double) * (size_t)nc);
  double *m2 = malloc(sizeof(double) * (size_t)nc), *v2 = malloc(sizeof(double) * (size_t)nc);
  double scale, dm = 0, dv = 0;
  mpt_gp_normalization(c, NULL, &scale);
  mpt_gp_predict_block_var(a, 0, nc, m1, v1);
  mpt_gp_predict_block_var(c, 0, nc, m2, v2);
  for (int64_t k = 0; k < nc; k++) {
    dm = fmax(dm, fabs(m1[k] - m2[k]));
    dv = fmax(dv, fabs(v1[k] - v2[k]));
  }
  double s1 = mpt_gp_variance_sum(a, NULL, NULL), s2 = mpt_gp_variance_sum(c, NULL, NULL);
  printf("%s: against a fresh GP over the kept candidates: max |mean diff| %.3g (scale %.3g), max |var diff| %.3g, "
         "variance sums %.9g / %.9g\n", what, dm, scale, dv, s1, s2);
  assert_true(dm < tol * scale && dv < 1e-5);
  assert_true(fabs(s1 - s2) < 1e-6 * (s2 > 1 ? s2 : 1));
  free(m1); free(v1); free(m2); free(v2);
}

/* NC candidates (on a grid of 11 values per dimension: kept as codes; or NC2 off-grid ones: kept as doubles), NOBS
 * observations; every third candidate and the last few (a partial panel) kept: bit for bit their posterior before,
 * and to rounding a GP created over them alone and given the same observations; then both given more observations
 * and new hyperparameters (the stored points are the kept ones); keep lists out of order or range refused */
static void keep_exact(int64_t NC, int grid) {
  enum { DIM = 4, NOBS = 150, MORE = 20 };
  mpt_rng r;
  mpt_rng_seed(&r, 13);
  double *X = malloc(sizeof(double) * (size_t)NC * DIM), *XK = malloc(sizeof(double) * (size_t)NC * DIM);
  double *Xo = malloc(sizeof(double) * (NOBS + MORE) * DIM), y[NOBS + MORE];
  int64_t *keep = malloc(sizeof(int64_t) * (size_t)NC), k = 0;
  for (int64_t i = 0; i < NC * DIM; i++) X[i] = grid ? (double)mpt_rng_below(&r, 11) / 10.0 : mpt_rng_uniform(&r);
  for (int i = 0; i < (NOBS + MORE) * DIM; i++) Xo[i] = (double)mpt_rng_below(&r, 11) / 10.0;
  for (int i = 0; i < NOBS + MORE; i++) y[i] = sin(3.0 * Xo[i * DIM]) + Xo[i * DIM + 1] * Xo[i * DIM + 2] - Xo[i * DIM + 3];
  for (int64_t c = 0; c < NC; c++)
    if (c % 3 == 1 || c >= NC - 5) {
      memcpy(XK + k * DIM, X + c * DIM, sizeof(double) * DIM);
      keep[k++] = c;
    }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  cfg.noise = 1e-4;
  mpt_gp *a, *c;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &a, &err), 0);
  assert_int_equal(mpt_gp_create(&cfg, DIM, k, XK, &c, &err), 0);
  assert_int_equal(mpt_gp_add_many(a, NOBS, Xo, y, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many(c, NOBS, Xo, y, NULL, &err), 0);
  double *m0 = malloc(sizeof(double) * (size_t)NC), *v0 = malloc(sizeof(double) * (size_t)NC);
  double *m1 = malloc(sizeof(double) * (size_t)NC), *v1 = malloc(sizeof(double) * (size_t)NC);
  mpt_gp_predict_block_var(a, 0, NC, m0, v0);
  int64_t bad[2] = {5, 4}, out = NC;
  assert_int_not_equal(mpt_gp_keep_candidates(a, 2, bad, &err), 0);
  assert_int_not_equal(mpt_gp_keep_candidates(a, 1, &out, &err), 0);
  assert_int_equal(mpt_gp_keep_candidates(a, k, keep, &err), 0);
  int64_t before = mpt_gp_bytes(c);
  assert_true(mpt_gp_bytes(a) == before); /* the same size as a GP created over the kept candidates */
  mpt_gp_predict_block_var(a, 0, k, m1, v1);
  for (int64_t j = 0; j < k; j++) { /* the kept candidates' posterior bit for bit */
    assert_true(m1[j] == m0[keep[j]]);
    assert_true(v1[j] == v0[keep[j]]);
  }
  assert_same_posterior(a, c, k, 1e-5, "kept");
  assert_int_equal(mpt_gp_add_many(a, MORE, Xo + NOBS * DIM, y + NOBS, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many(c, MORE, Xo + NOBS * DIM, y + NOBS, NULL, &err), 0);
  assert_same_posterior(a, c, k, 1e-5, "more observations");
  double ls[DIM] = {0.7, 1.1, 0.9, 2.0};
  assert_int_equal(mpt_gp_set_hyper(a, ls, 1.3, 1e-3, &err), 0);
  assert_int_equal(mpt_gp_set_hyper(c, ls, 1.3, 1e-3, &err), 0);
  assert_same_posterior(a, c, k, 1e-5, "refactored");
  mpt_gp_free(a);
  mpt_gp_free(c);
  free(X); free(XK); free(Xo); free(keep); free(m0); free(v0); free(m1); free(v1);
}

static void test_keep_exact(void **state) {
  (void)state;
  keep_exact(3000, 1);
  keep_exact(200, 0);
}

/* what a run checks after every ask */
typedef struct shrink_watch {
  int64_t bound, min, slots, shrinks, outside, bad_size;
} shrink_watch;

/* after an ask: every model-based pick pending in the working set (an initial sample's picks get their slots at the
 * next ask), and a shrink to max(min, bound / observations) */
static void watch_ask(void *ctx, const mpt_strategy *s) {
  shrink_watch *w = ctx;
  const bo_state *b = s->data;
  for (int64_t k = 0; k < b->n_pend; k++) w->outside += b->ws_slot[b->pend[k].id] < 0 && b->pend[k].af >= 0;
  if (b->n_slots == w->slots) return;
  int64_t n = mpt_gp_n_obs(b->gp), want = w->bound / n > w->min ? w->bound / n : w->min;
  w->bad_size += b->n_slots > w->slots || b->n_slots != want;
  w->shrinks++;
  w->slots = b->n_slots;
}

/* the working set a bijection of its slots and configurations */
static void check_bijection(const bo_state *b) {
  int64_t in = 0;
  for (int64_t c = 0; c < b->n_slots; c++) assert_int_equal(b->ws_slot[b->ws_id[c]], c);
  for (int64_t id = 0; id < b->N; id++) in += b->ws_slot[id] >= 0;
  assert_int_equal(in, b->n_slots);
}

/* the strategy's GP against one created over its slots and given its observations and hyperparameters */
static void check_fresh_gp(bo_state *b) {
  mpt_gp *c;
  mpt_error err;
  int n = mpt_gp_n_obs(b->gp), D = b->D;
  double *ls = malloc(sizeof(double) * (size_t)D), var, noise;
  mpt_gp_get_hyper(b->gp, ls, &var, &noise);
  assert_int_equal(mpt_gp_create_from(&b->gcfg, D, b->n_slots, bo_encode_slots, b, &c, &err), 0);
  assert_int_equal(mpt_gp_set_hyper(c, ls, var, noise, &err), 0);
  assert_int_equal(mpt_gp_add_many(c, n, mpt_gp_obs_points(b->gp), mpt_gp_obs_outputs(b->gp), NULL, &err), 0);
  /* 1e-4: bo's GP has taken its observations in runs, with outputs replaced and candidates swapped in, in float V
   * (a working set that never shrinks differs from a fresh GP by 2e-5 x the scale here too) */
  assert_same_posterior(b->gp, c, b->n_slots, 1e-4, "bo's working set after its shrinks");
  mpt_gp_free(c);
  free(ls);
}

/* working_set=2048 of the space's 4362 configurations, bound 2048 x 40 observations, min 256; 240 evaluations in
 * synchronous rounds of 1, then with 8 asynchronous workers (the pool of pending evaluations): the set shrinks at
 * its refreshes to max(256, bound / observations), below 512 by the end; every pick valid and distinct, every pending
 * evaluation in the set, the set a bijection, the GP a fresh one's over the kept slots; the same picks again from
 * the same seed; the search still finds configurations within 15 % of the space's best */
static void test_ws_shrinks(void **state) {
  (void)state;
  enum { T = 240 };
  const char *opts[] = {"working_set=2048", "working_set_bound=81920", "working_set_min=256"};
  double opt = INFINITY;
  for (int64_t id = 0; id < mpt_space_size(space); id++) {
    mpt_obs o = bo_replay_observe(rep, id);
    if (mpt_obs_valid(&o) && o.objective < opt) opt = o.objective;
  }
  int workers[] = {1, 8};
  for (int m = 0; m < 2; m++) {
    int64_t a[T], again[T];
    for (int rep_run = 0; rep_run < 2; rep_run++) {
      mpt_strategy *s;
      mpt_error err;
      assert_int_equal(mpt_strategy_create("bo", space, opts, 3, 3, T, &s, &err), 0);
      shrink_watch w = {81920, 256, 2048, 0, 0, 0};
      bo_drive d = {.rep = rep, .asked = watch_ask, .ctx = &w};
      bo_replay_drive(s, &d, workers[m], 1, T, rep_run ? again : a);
      bo_state *b = s->data;
      double best = INFINITY;
      for (int64_t i = 0; i < b->n_obs; i++)
        if (b->obs_ok[i] && b->obs_y[i] < best) best = b->obs_y[i];
      printf("workers %d: %lld shrinks, %lld slots at the end (%d observations in the GP), pending outside %lld, "
             "best %.4g (optimum %.4g)\n", workers[m], (long long)w.shrinks, (long long)b->n_slots,
             mpt_gp_n_obs(b->gp), (long long)w.outside, best, opt);
      assert_true(w.shrinks >= 3);
      assert_int_equal(w.bad_size, 0);
      assert_true(b->n_slots < 512);
      assert_int_equal(w.outside, 0);
      assert_true(best <= 1.15 * opt);
      check_bijection(b);
      check_fresh_gp(b);
      mpt_strategy_destroy(s);
    }
    bo_check_valid_distinct(space, a, T);
    assert_memory_equal(a, again, sizeof a);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_keep_exact),
      cmocka_unit_test(test_ws_shrinks),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
