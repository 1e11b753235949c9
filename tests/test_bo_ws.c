/* tests/test_bo_ws.c: bo's working set of candidates on huge spaces (strategies/bo/bo_ws.c, option working_set)
 * and the GP's replaced candidates under it (gp/gp_replace.c, mpt_gp_replace_candidates): the replaced columns
 * against a GP created with the new candidates; bo with a forced small working set on a real brute-forced space
 * (convolution on the A6000, replayed): every pick and every pending evaluation in the working set, the set a
 * bijection of slots and configurations, its refresh bringing in the incumbent's neighbours, deterministic, with
 * batches, asynchronous workers (the pool of pending evaluations), failures (the feasibility model) and another
 * device's observations (transfer); a working set larger than the space changes no pick. */
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
#include "tests/conv_fixture.h"

static mpt_space *space;
static mpt_replay *rep, *rep_other;

static int setup(void **state) {
  int rc = conv_fixture_setup(state, "bo_ws");
  if (rc) return rc;
  fixture *f = *state;
  space = f->s;
  char path[2048];
  mpt_error err;
  snprintf(path, sizeof path, "%s/brute-forced/convolution_A6000_T4.json.gz", f->dir);
  if (mpt_replay_load(path, space, &rep, &err)) { fprintf(stderr, "%s\n", err.msg); return -1; }
  snprintf(path, sizeof path, "%s/brute-forced/convolution_A100_T4.json.gz", f->dir);
  if (mpt_replay_load(path, space, &rep_other, &err)) { fprintf(stderr, "%s\n", err.msg); return -1; }
  return 0;
}

static int teardown(void **state) {
  mpt_replay_free(rep);
  mpt_replay_free(rep_other);
  return conv_fixture_teardown(state);
}

/* NC candidates on a grid of 11 values per dimension (kept as codes), NOBS observations: slots replaced by
 * other grid points against a GP created with the replaced candidates and given the same observations (means,
 * variances, variance sum to rounding; the other slots bit for bit unchanged); then both given more
 * observations and new hyperparameters (the stored candidates are the new ones); a point off the grid refused */
static void test_replace_exact(void **state) {
  (void)state;
  enum { NC = 3000, DIM = 4, NOBS = 150, NR = 300, MORE = 20 };
  mpt_rng r;
  mpt_rng_seed(&r, 11);
  double *X = malloc(sizeof(double) * NC * DIM), *X2 = malloc(sizeof(double) * NC * DIM);
  double *Xo = malloc(sizeof(double) * (NOBS + MORE) * DIM), y[NOBS + MORE], *XR = malloc(sizeof(double) * NR * DIM);
  int64_t slots[NR];
  for (int i = 0; i < NC * DIM; i++) X[i] = (double)mpt_rng_below(&r, 11) / 10.0;
  for (int i = 0; i < (NOBS + MORE) * DIM; i++) Xo[i] = (double)mpt_rng_below(&r, 11) / 10.0;
  for (int i = 0; i < NOBS + MORE; i++) y[i] = sin(3.0 * Xo[i * DIM]) + Xo[i * DIM + 1] * Xo[i * DIM + 2] - Xo[i * DIM + 3];
  memcpy(X2, X, sizeof(double) * NC * DIM);
  for (int j = 0; j < NR; j++) { /* every tenth slot, and a few at the end (a partial panel) */
    slots[j] = j < NR - 5 ? 10 * j + 3 : NC - 1 - (NR - 1 - j);
    for (int d = 0; d < DIM; d++) XR[j * DIM + d] = (double)mpt_rng_below(&r, 11) / 10.0;
    memcpy(X2 + slots[j] * DIM, XR + j * DIM, sizeof(double) * DIM);
  }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  cfg.noise = 1e-4;
  mpt_gp *a, *c;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &a, &err), 0);
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X2, &c, &err), 0);
  assert_int_equal(mpt_gp_add_many(a, NOBS, Xo, y, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many(c, NOBS, Xo, y, NULL, &err), 0);
  double *m0 = malloc(sizeof(double) * NC), *v0 = malloc(sizeof(double) * NC);
  double *m1 = malloc(sizeof(double) * NC), *v1 = malloc(sizeof(double) * NC);
  double *m2 = malloc(sizeof(double) * NC), *v2 = malloc(sizeof(double) * NC);
  mpt_gp_predict_block_var(a, 0, NC, m0, v0);
  double off[DIM] = {0.05, 0.1, 0.2, 0.3}; /* 0.05 is not on the grid */
  int64_t one = 7;
  assert_int_not_equal(mpt_gp_candidate_fits(a, off), 1);
  assert_int_not_equal(mpt_gp_replace_candidates(a, 1, &one, off, &err), 0);
  int64_t bad = NC;
  assert_int_not_equal(mpt_gp_replace_candidates(a, 1, &bad, XR, &err), 0);
  assert_int_equal(mpt_gp_replace_candidates(a, NR, slots, XR, &err), 0);
  for (int round = 0; round < 3; round++) {
    double scale, dm = 0, dv = 0;
    mpt_gp_normalization(c, NULL, &scale);
    mpt_gp_predict_block_var(a, 0, NC, m1, v1);
    mpt_gp_predict_block_var(c, 0, NC, m2, v2);
    int64_t changed = 0;
    for (int64_t k = 0; k < NC; k++) {
      dm = fmax(dm, fabs(m1[k] - m2[k]));
      dv = fmax(dv, fabs(v1[k] - v2[k]));
      if (round == 0) changed += m1[k] != m0[k] || v1[k] != v0[k];
    }
    double s1 = mpt_gp_variance_sum(a, NULL, NULL), s2 = mpt_gp_variance_sum(c, NULL, NULL);
    printf("round %d: replaced candidates against a fresh GP: max |mean diff| %.3g (scale %.3g), max |var diff| %.3g, "
           "variance sums %.9g / %.9g\n", round, dm, scale, dv, s1, s2);
    assert_true(dm < 1e-5 * scale && dv < 1e-5);
    assert_true(fabs(s1 - s2) < 1e-6 * s2);
    if (round == 0) assert_true(changed <= NR); /* the other slots bit for bit as before */
    if (round == 0) { /* more observations: their rows over the new candidates' codes */
      assert_int_equal(mpt_gp_add_many(a, MORE, Xo + NOBS * DIM, y + NOBS, NULL, &err), 0);
      assert_int_equal(mpt_gp_add_many(c, MORE, Xo + NOBS * DIM, y + NOBS, NULL, &err), 0);
    } else if (round == 1) { /* refactored from scratch over the stored candidates */
      double ls[DIM] = {0.7, 1.1, 0.9, 2.0};
      assert_int_equal(mpt_gp_set_hyper(a, ls, 1.3, 1e-3, &err), 0);
      assert_int_equal(mpt_gp_set_hyper(c, ls, 1.3, 1e-3, &err), 0);
    }
  }
  mpt_gp_free(a);
  mpt_gp_free(c);
  free(X); free(X2); free(Xo); free(XR); free(m0); free(v0); free(m1); free(v1); free(m2); free(v2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_replace_exact),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
