/* tests/test_gp_ahead.c: rows of the factor solved ahead (mpt_gp_ahead, gp/gp.h): a GP given runs of observations
 * with their rows solved ahead has the same bits as one given the same runs by mpt_gp_add_many (posterior means
 * and variances of every candidate, the log marginal likelihood), with single adds, runs over 64, every output
 * replaced in a run, a refactor and a truncation in between (the rows solved ahead then dropped), and points that
 * are not the ones solved ahead. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp.h"
#include "spaces/sys/rng.h"

enum { NC = 1500, DIM = 3, NOBS = 400 };

/* the same posterior, bit for bit */
static void same_posterior(const mpt_gp *a, const mpt_gp *b) {
  static double ma[NC], va[NC], mb[NC], vb[NC];
  assert_int_equal(mpt_gp_n_obs(a), mpt_gp_n_obs(b));
  mpt_gp_predict_block_var(a, 0, NC, ma, va);
  mpt_gp_predict_block_var(b, 0, NC, mb, vb);
  assert_memory_equal(ma, mb, sizeof ma);
  assert_memory_equal(va, vb, sizeof va);
  double la, lb;
  mpt_error err;
  assert_int_equal(mpt_gp_log_marginal(a, NULL, 0, 0, &la, &err), 0);
  assert_int_equal(mpt_gp_log_marginal(b, NULL, 0, 0, &lb, &err), 0);
  assert_memory_equal(&la, &lb, sizeof la);
}

static void test_ahead_same_bits(void **state) {
  (void)state;
  mpt_rng r;
  mpt_rng_seed(&r, 17);
  double *X = malloc(sizeof(double) * NC * DIM), *Xo = malloc(sizeof(double) * NOBS * DIM), y[NOBS], yall[NOBS];
  for (int i = 0; i < NC * DIM; i++) X[i] = mpt_rng_uniform(&r);
  for (int i = 0; i < NOBS; i++) {
    int dup = i > 40 && i % 4 == 0; /* near-duplicates: observations the earlier ones nearly predict */
    for (int d = 0; d < DIM; d++)
      Xo[i * DIM + d] = dup ? Xo[(i / 2) * DIM + d] + 1e-4 * mpt_rng_uniform(&r) : X[(size_t)mpt_rng_below(&r, NC) * DIM + d];
    y[i] = cos(5.0 * Xo[i * DIM]) + Xo[i * DIM + 1] * Xo[i * DIM + 2];
    yall[i] = 0.5 * y[i] + 0.1;
  }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  cfg.noise = 1e-5;
  mpt_gp *a, *b;
  mpt_gp_ahead *ah;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &a, &err), 0);
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &b, &err), 0);
  assert_int_equal(mpt_gp_ahead_create(&ah, &err), 0);
  assert_int_equal(mpt_gp_add_many(a, 30, Xo, y, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many(b, 30, Xo, y, NULL, &err), 0);
  /* an ask's queue: runs of 16, a single one, 7, 70 (over 64), and 16 with every output replaced */
  int at = 30;
  const int runs[] = {16, 1, 16, 7, 70, 16};
  assert_int_equal(mpt_gp_ahead_solve(ah, b, 126, Xo + at * DIM, &err), 0);
  for (int q = 0; q < 6; q++) {
    int k = runs[q], last = q == 5;
    assert_int_equal(mpt_gp_add_many(a, k, Xo + at * DIM, y + at, last ? yall : NULL, &err), 0);
    assert_int_equal(mpt_gp_add_many_ahead(b, ah, k, Xo + at * DIM, y + at, last ? yall : NULL, &err), 0);
    at += k;
    same_posterior(a, b);
  }
  /* new hyperparameters (a refactor) after the first run: the rest solve as without */
  assert_int_equal(mpt_gp_ahead_solve(ah, b, 48, Xo + at * DIM, &err), 0);
  for (int q = 0; q < 3; q++) {
    if (q == 1) {
      double ls[DIM] = {0.3, 0.4, 0.5};
      assert_int_equal(mpt_gp_set_hyper(a, ls, 1.2, 1e-4, &err), 0);
      assert_int_equal(mpt_gp_set_hyper(b, ls, 1.2, 1e-4, &err), 0);
    }
    assert_int_equal(mpt_gp_add_many(a, 16, Xo + at * DIM, y + at, NULL, &err), 0);
    assert_int_equal(mpt_gp_add_many_ahead(b, ah, 16, Xo + at * DIM, y + at, NULL, &err), 0);
    at += 16;
    same_posterior(a, b);
  }
  /* truncated below the rows solved over, then other points added: dropped */
  assert_int_equal(mpt_gp_ahead_solve(ah, b, 32, Xo + at * DIM, &err), 0);
  assert_int_equal(mpt_gp_truncate(a, at - 20, &err), 0);
  assert_int_equal(mpt_gp_truncate(b, at - 20, &err), 0);
  assert_int_equal(mpt_gp_add_many(a, 20, Xo + (at + 100) * DIM, y + at, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many_ahead(b, ah, 20, Xo + (at + 100) * DIM, y + at, NULL, &err), 0);
  same_posterior(a, b);
  /* points other than those solved ahead */
  assert_int_equal(mpt_gp_ahead_solve(ah, b, 32, Xo + at * DIM, &err), 0);
  assert_int_equal(mpt_gp_add_many(a, 16, Xo + (at + 1) * DIM, y + at, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many_ahead(b, ah, 16, Xo + (at + 1) * DIM, y + at, NULL, &err), 0);
  same_posterior(a, b);
  mpt_gp_ahead_free(ah);
  mpt_gp_free(a);
  mpt_gp_free(b);
  free(X);
  free(Xo);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ahead_same_bits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
