/* tests/test_gp.c: gp/ against a direct dense solve (LAPACK dposv on the full covariance) and against
 * closed forms (one and two observations), incremental extension vs refactorization, truncation
 * (fantasy rollback), marginal likelihood vs dense formula, and the hyperparameter fit; the vectorized
 * kernel row (against libm, far candidates exactly at the prior), add_outputs over several blocks,
 * coded vs double candidates, candidates given blockwise by a callback, grouped codes (index + one-hot) and V's panels over several blocks and a growth, the kept variance sum;
 * batches of observations added in one pass (mpt_gp_add_many) as single adds, to a stated tolerance; a pool of
 * candidates conditioned on extra observations (gp/gp_pool.h) as the GP given them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp.h"
#include "gp/gp_pool.h"
#include "spaces/sys/rng.h"

static double kfun(int kernel, const double *a, const double *b, const double *ls, int dim) {
  double r2 = 0;
  for (int d = 0; d < dim; d++) r2 += ((a[d] - b[d]) / ls[d]) * ((a[d] - b[d]) / ls[d]);
  return mpt_gp_kernel_eval(kernel, sqrt(r2));
}

/* dense reference: mean/sd at every candidate with observed-mean + std normalization */
static void dense_predict(int kernel, int dim, const double *ls, double variance, double noise, int n,
                          const double *Xo, const double *y, int nc, const double *X, double *mean,
                          double *sd) {
  double m = 0, s = 0;
  for (int i = 0; i < n; i++) m += y[i];
  m /= n;
  for (int i = 0; i < n; i++) s += (y[i] - m) * (y[i] - m);
  s = n >= 2 ? sqrt(s / n) : 1.0;
  double *K = malloc(sizeof(double) * n * n), *rhs = malloc(sizeof(double) * n * (nc + 1));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      K[i * n + j] = variance * kfun(kernel, Xo + i * dim, Xo + j * dim, ls, dim) + (i == j ? noise + 1e-8 * variance : 0);
  /* columns: y_norm, then k(Xo, x_c) for every candidate */
  int nr = nc + 1;
  for (int i = 0; i < n; i++) {
    rhs[i * nr] = (y[i] - m) / s;
    for (int c = 0; c < nc; c++) rhs[i * nr + 1 + c] = variance * kfun(kernel, Xo + i * dim, X + c * dim, ls, dim);
  }
  double *kc = malloc(sizeof(double) * n * nc);
  for (int i = 0; i < n; i++)
    for (int c = 0; c < nc; c++) kc[i * nc + c] = rhs[i * nr + 1 + c];
  assert_int_equal(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', n, nr, K, n, rhs, nr), 0);
  for (int c = 0; c < nc; c++) {
    double mu = 0, q = 0;
    for (int i = 0; i < n; i++) {
      mu += kc[i * nc + c] * rhs[i * nr];
      q += kc[i * nc + c] * rhs[i * nr + 1 + c];
    }
    mean[c] = m + s * mu;
    double v = variance - q;
    sd[c] = s * sqrt(v > 0 ? v : 0);
  }
  free(K); free(rhs); free(kc);
}

static void random_points(mpt_rng *r, int n, int dim, double *X) {
  for (int i = 0; i < n * dim; i++) X[i] = mpt_rng_uniform(r);
}

static void test_kernels_closed_form(void **state) {
  (void)state;
  double r = 0.7;
  assert_true(fabs(mpt_gp_kernel_eval(MPT_GP_MATERN12, r) - exp(-r)) < 1e-15);
  assert_true(fabs(mpt_gp_kernel_eval(MPT_GP_MATERN32, r) - (1 + sqrt(3) * r) * exp(-sqrt(3) * r)) < 1e-15);
  assert_true(fabs(mpt_gp_kernel_eval(MPT_GP_MATERN52, r) - (1 + sqrt(5) * r + 5 * r * r / 3) * exp(-sqrt(5) * r)) < 1e-15);
  assert_true(fabs(mpt_gp_kernel_eval(MPT_GP_SE, r) - exp(-r * r / 2)) < 1e-15);
  for (int k = 0; k < MPT_GP_KERNEL_COUNT; k++) {
    assert_true(fabs(mpt_gp_kernel_eval(k, 0) - 1) < 1e-15);
    assert_int_equal(mpt_gp_kernel_parse(mpt_gp_kernel_name(k)), k);
  }
  assert_int_equal(mpt_gp_kernel_parse("nope"), -1);
}

/* one observation, constant zero mean, no scaling: mean = k/(v+noise) * y, var = v - k^2/(v+noise) */
static void test_one_and_two_obs_closed_form(void **state) {
  (void)state;
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  cfg.mean = MPT_GP_MEAN_CONSTANT;
  cfg.mean_constant = 0;
  cfg.normalize_scale = 0;
  cfg.noise = 0.1;
  cfg.lengthscale = 0.5;
  cfg.kernel = MPT_GP_SE;
  double X[3] = {0.0, 0.3, 1.0};
  mpt_gp *gp;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, 1, 3, X, &gp, &err), 0);
  double x1 = 0.0, y1 = 2.0;
  assert_int_equal(mpt_gp_add(gp, &x1, y1, &err), 0);
  double mean[3], sd[3];
  mpt_gp_predict_block(gp, 0, 3, mean, sd);
  double nv = 1 + 0.1 + 1e-8;
  for (int c = 0; c < 3; c++) {
    double k = exp(-0.5 * (X[c] / 0.5) * (X[c] / 0.5));
    assert_true(fabs(mean[c] - k / nv * y1) < 1e-6);
    assert_true(fabs(sd[c] - sqrt(1 - k * k / nv)) < 1e-6);
  }
  /* two observations: 2x2 inverse by hand */
  double x2 = 1.0, y2 = -1.0;
  assert_int_equal(mpt_gp_add(gp, &x2, y2, &err), 0);
  mpt_gp_predict_block(gp, 0, 3, mean, sd);
  double k12 = exp(-0.5 * 4.0);
  double det = nv * nv - k12 * k12;
  double a1 = (nv * y1 - k12 * y2) / det, a2 = (-k12 * y1 + nv * y2) / det;
  for (int c = 0; c < 3; c++) {
    double ka = exp(-0.5 * (X[c] / 0.5) * (X[c] / 0.5)), kb = exp(-0.5 * ((X[c] - 1) / 0.5) * ((X[c] - 1) / 0.5));
    double mu = ka * a1 + kb * a2;
    double q = (nv * ka * ka - 2 * k12 * ka * kb + nv * kb * kb) / det;
    assert_true(fabs(mean[c] - mu) < 1e-6);
    assert_true(fabs(sd[c] - sqrt(1 - q)) < 1e-6);
  }
  mpt_gp_free(gp);
}

/* incremental adds vs dense solve, all kernels, per-dim lengthscales, then refactor, then truncate */
static void test_vs_dense(void **state) {
  (void)state;
  mpt_rng r;
  mpt_rng_seed(&r, 7);
  enum { DIM = 4, NC = 300, NO = 60 };
  double *X = malloc(sizeof(double) * NC * DIM), *Xo = malloc(sizeof(double) * NO * DIM), y[NO];
  random_points(&r, NC, DIM, X);
  for (int i = 0; i < NO; i++) {
    int c = (int)mpt_rng_below(&r, NC);
    memcpy(Xo + i * DIM, X + c * DIM, sizeof(double) * DIM);
    Xo[i * DIM] += 0.01 * i; /* distinct points, some off the candidate grid */
    y[i] = sin(3 * Xo[i * DIM]) + Xo[i * DIM + 1] * Xo[i * DIM + 2] + 0.1 * mpt_rng_normal(&r);
  }
  double mean[NC], sd[NC], rm[NC], rs[NC];
  for (int kernel = 0; kernel < MPT_GP_KERNEL_COUNT; kernel++) {
    mpt_gp_config cfg;
    mpt_gp_config_default(&cfg);
    cfg.kernel = kernel;
    cfg.noise = 1e-3;
    cfg.lengthscale = 0.6;
    mpt_gp *gp;
    mpt_error err;
    assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &gp, &err), 0);
    for (int i = 0; i < NO; i++) assert_int_equal(mpt_gp_add(gp, Xo + i * DIM, y[i], &err), 0);
    assert_int_equal(mpt_gp_n_obs(gp), NO);
    double ls[DIM] = {0.6, 0.6, 0.6, 0.6};
    dense_predict(kernel, DIM, ls, 1.0, 1e-3, NO, Xo, y, NC, X, rm, rs);
    mpt_gp_predict_block(gp, 0, NC, mean, sd);
    for (int c = 0; c < NC; c++) {
      assert_true(fabs(mean[c] - rm[c]) < 2e-3);
      assert_true(fabs(sd[c] - rs[c]) < 2e-3);
    }
    /* point prediction (double precision path) matches tightly, and so does the weights form */
    double alpha[NO], m0;
    mpt_gp_mean_weights(gp, alpha, &m0);
    for (int c = 0; c < NC; c += 37) {
      double pm, ps;
      mpt_gp_predict_point(gp, X + c * DIM, &pm, &ps);
      assert_true(fabs(pm - rm[c]) < 1e-6);
      assert_true(fabs(ps - rs[c]) < 1e-5);
      assert_true(fabs(mpt_gp_mean_with_weights(gp, alpha, m0, X + c * DIM) - rm[c]) < 1e-6);
      /* kernel values in two ranges (as bo's feasibility cache extends them): the same sum, bit for bit */
      double k[NO], mu = m0, mu_seq = m0;
      mpt_gp_kernel_obs_range(gp, X + c * DIM, 0, 23, k);
      mpt_gp_kernel_obs_range(gp, X + c * DIM, 23, NO, k + 23);
      for (int i = 0; i < NO; i++) mu_seq += alpha[i] * k[i];
      mu = mpt_gp_mean_from_kernel(alpha, m0, k, NO);
      assert_true(mu == mpt_gp_mean_with_weights(gp, alpha, m0, X + c * DIM));
      assert_true(fabs(mu - mu_seq) < 1e-12 * (1 + fabs(mu_seq))); /* the same sum in another order */
      assert_true(mpt_gp_mean_from_kernel(alpha, m0, k, 0) == m0);
      for (int nn = 1; nn < 12; nn++) { /* tails of every length */
        double ref = m0;
        for (int i = 0; i < nn; i++) ref += alpha[i] * k[i];
        assert_true(fabs(mpt_gp_mean_from_kernel(alpha, m0, k, nn) - ref) < 1e-12 * (1 + fabs(ref)));
      }
      assert_true(fabs(k[5] - kfun(kernel, X + c * DIM, Xo + 5 * DIM, ls, DIM)) < 1e-12);
      /* one observation against many points (bo extends its kept values so): the same bits */
      int64_t ids[5] = {c, (c + 11) % NC, (c + 101) % NC, c, (c + 7) % NC};
      double kp[5], k1[1];
      for (int i = 0; i < NO; i += 13) {
        mpt_gp_kernel_obs_points(gp, i, 5, X, DIM, ids, kp);
        for (int q = 0; q < 5; q++) {
          mpt_gp_kernel_obs_range(gp, X + ids[q] * DIM, i, i + 1, k1);
          assert_true(kp[q] == k1[0]);
        }
      }
    }
    /* new per-dimension hyperparameters: refactor from scratch */
    double ls2[DIM] = {0.3, 1.0, 2.0, 0.5};
    assert_int_equal(mpt_gp_set_hyper(gp, ls2, 1.7, 1e-2, &err), 0);
    dense_predict(kernel, DIM, ls2, 1.7, 1e-2, NO, Xo, y, NC, X, rm, rs);
    mpt_gp_predict_block(gp, 0, NC, mean, sd);
    for (int c = 0; c < NC; c++) {
      assert_true(fabs(mean[c] - rm[c]) < 2e-3);
      assert_true(fabs(sd[c] - rs[c]) < 2e-3);
    }
    /* log marginal likelihood vs dense formula */
    double lml;
    assert_int_equal(mpt_gp_log_marginal(gp, NULL, 0, 0, &lml, &err), 0);
    {
      double m = 0, s = 0;
      for (int i = 0; i < NO; i++) m += y[i];
      m /= NO;
      for (int i = 0; i < NO; i++) s += (y[i] - m) * (y[i] - m);
      s = sqrt(s / NO);
      double *K = malloc(sizeof(double) * NO * NO), b[NO], yn[NO];
      for (int i = 0; i < NO; i++) {
        yn[i] = b[i] = (y[i] - m) / s;
        for (int j = 0; j < NO; j++)
          K[i * NO + j] = 1.7 * kfun(kernel, Xo + i * DIM, Xo + j * DIM, ls2, DIM) + (i == j ? 1e-2 + 1.7e-8 : 0);
      }
      assert_int_equal(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', NO, 1, K, NO, b, 1), 0);
      double q = 0, ld = 0;
      for (int i = 0; i < NO; i++) { q += yn[i] * b[i]; ld += log(K[i * NO + i]); }
      double ref = -0.5 * q - ld - 0.5 * NO * log(2 * M_PI);
      assert_true(fabs(lml - ref) < 1e-6 * (1 + fabs(ref)));
      free(K);
    }
    /* new outputs for the same points (re-transformed objective): matches the dense solve */
    {
      double y2[NO];
      for (int i = 0; i < NO; i++) y2[i] = exp(y[i]) - 0.3 * i / NO;
      assert_int_equal(mpt_gp_set_outputs(gp, y2, &err), 0);
      dense_predict(kernel, DIM, ls2, 1.7, 1e-2, NO, Xo, y2, NC, X, rm, rs);
      mpt_gp_predict_block(gp, 0, NC, mean, sd);
      for (int c = 0; c < NC; c++) {
        assert_true(fabs(mean[c] - rm[c]) < 2e-3);
        assert_true(fabs(sd[c] - rs[c]) < 2e-3);
      }
      /* and adding one more observation afterwards stays consistent */
      double *Xo2 = malloc(sizeof(double) * (NO + 1) * DIM), y3[NO + 1];
      memcpy(Xo2, Xo, sizeof(double) * NO * DIM);
      memcpy(y3, y2, sizeof y2);
      for (int d = 0; d < DIM; d++) Xo2[NO * DIM + d] = 0.5;
      y3[NO] = 1.25;
      assert_int_equal(mpt_gp_add(gp, Xo2 + NO * DIM, y3[NO], &err), 0);
      dense_predict(kernel, DIM, ls2, 1.7, 1e-2, NO + 1, Xo2, y3, NC, X, rm, rs);
      mpt_gp_predict_block(gp, 0, NC, mean, sd);
      for (int c = 0; c < NC; c++) {
        assert_true(fabs(mean[c] - rm[c]) < 2e-3);
        assert_true(fabs(sd[c] - rs[c]) < 2e-3);
      }
      assert_int_equal(mpt_gp_truncate(gp, NO, &err), 0);
      assert_int_equal(mpt_gp_set_outputs(gp, y, &err), 0);
      free(Xo2);
    }
    /* fantasize 10 points, truncate, and compare with a GP that never saw them */
    mpt_gp_predict_block(gp, 0, NC, rm, rs);
    double s_before, s_after;
    mpt_gp_normalization(gp, NULL, &s_before);
    for (int i = 0; i < 10; i++) assert_int_equal(mpt_gp_add(gp, X + i * DIM, 0.5 * i, &err), 0);
    mpt_gp_predict_block(gp, 0, NC, mean, sd);
    mpt_gp_normalization(gp, NULL, &s_after);
    assert_true(sd[3] / s_after < rs[3] / s_before && sd[3] / s_after < 0.15); /* X_3 now observed */
    assert_int_equal(mpt_gp_truncate(gp, NO, &err), 0);
    mpt_gp_predict_block(gp, 0, NC, mean, sd);
    for (int c = 0; c < NC; c++) {
      assert_true(fabs(mean[c] - rm[c]) < 1e-6);
      assert_true(fabs(sd[c] - rs[c]) < 1e-5);
    }
    assert_int_not_equal(mpt_gp_truncate(gp, NO + 1, &err), 0);
    mpt_gp_free(gp);
  }
  free(X);
  free(Xo);
}

/* The kernel row of a new observation (vectorized exp, argument clamped far away): one observation,
 * constant zero mean, no scaling, so mean = k/(v+noise) y and sd = sqrt(v - k^2/(v+noise)) at every
 * candidate, k from libm (mpt_gp_kernel_eval); candidates far away get exactly the prior. */
static void test_kernel_row_accuracy(void **state) {
  (void)state;
  enum { DIM = 3, NC = 5000, NFAR = 40 };
  mpt_rng r;
  mpt_rng_seed(&r, 11);
  double *X = malloc(sizeof(double) * NC * DIM), *mean = malloc(sizeof(double) * NC), *sd = malloc(sizeof(double) * NC);
  random_points(&r, NC, DIM, X);
  for (int c = 0; c < NFAR; c++) /* far: scaled distances from ~570 to ~23000 (exp argument beyond 708) */
    for (int d = 0; d < DIM; d++) X[c * DIM + d] = 100.0 + 100.0 * c + d;
  double ls[DIM] = {0.3, 0.3, 0.3};
  for (int kernel = 0; kernel < MPT_GP_KERNEL_COUNT; kernel++) {
    mpt_gp_config cfg;
    mpt_gp_config_default(&cfg);
    cfg.kernel = kernel;
    cfg.mean = MPT_GP_MEAN_CONSTANT;
    cfg.mean_constant = 0;
    cfg.normalize_scale = 0;
    cfg.noise = 0.1;
    cfg.lengthscale = 0.3;
    mpt_gp *gp;
    mpt_error err;
    assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &gp, &err), 0);
    double x0[DIM] = {0.4, 0.5, 0.6}, y0 = 2.0, nv = 1 + 0.1 + 1e-8;
    assert_int_equal(mpt_gp_add(gp, x0, y0, &err), 0);
    mpt_gp_predict_block(gp, 0, NC, mean, sd);
    for (int c = 0; c < NC; c++) {
      double k = kfun(kernel, x0, X + c * DIM, ls, DIM);
      assert_true(isfinite(mean[c]) && isfinite(sd[c]));
      /* V is float: relative 6e-8 from rounding k / L into it, nothing more */
      assert_true(fabs(mean[c] - k / nv * y0) <= 2e-7 * fabs(k / nv * y0) + 1e-44); /* + float subnormals */
      assert_true(fabs(sd[c] - sqrt(1 - k * k / nv)) < 2e-7);
      if (c < NFAR) { /* k < 1e-300: the observation tells nothing here */
        assert_true(mean[c] == 0.0);
        assert_true(sd[c] == 1.0);
      }
    }
    mpt_gp_free(gp);
  }
  free(X); free(mean); free(sd);
}

/* mpt_gp_add_outputs (new row of V and the re-transformed outputs in one pass over the blocks of V) against
 * mpt_gp_add + mpt_gp_set_outputs and against the dense solve, with several candidate blocks and an
 * observation count that is not a multiple of the 8-row groups; also from an empty GP */
static void test_add_outputs_blocks(void **state) {
  (void)state;
  enum { DIM = 3, NC = 2600, NO = 45 };
  mpt_rng r;
  mpt_rng_seed(&r, 5);
  double *X = malloc(sizeof(double) * NC * DIM), Xo[NO * DIM], y[NO], y2[NO];
  double *m1 = malloc(sizeof(double) * NC), *s1 = malloc(sizeof(double) * NC);
  double *m2 = malloc(sizeof(double) * NC), *s2 = malloc(sizeof(double) * NC);
  double *rm = malloc(sizeof(double) * NC), *rs = malloc(sizeof(double) * NC);
  random_points(&r, NC, DIM, X);
  for (int i = 0; i < NO; i++) {
    int c = (int)mpt_rng_below(&r, NC);
    memcpy(Xo + i * DIM, X + c * DIM, sizeof(double) * DIM);
    Xo[i * DIM + 1] += 0.003 * i;
    y[i] = sin(4 * Xo[i * DIM]) + Xo[i * DIM + 2] + 0.05 * mpt_rng_normal(&r);
    y2[i] = exp(y[i]) * (1 + 0.01 * i); /* every output changes, as with a rank transform */
  }
  double ls[DIM] = {0.4, 0.4, 0.4};
  for (int kernel = 0; kernel < MPT_GP_KERNEL_COUNT; kernel++) {
    mpt_gp_config cfg;
    mpt_gp_config_default(&cfg);
    cfg.kernel = kernel;
    cfg.noise = 1e-3;
    cfg.lengthscale = 0.4;
    mpt_gp *g1, *g2;
    mpt_error err;
    assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &g1, &err), 0);
    assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &g2, &err), 0);
    /* from empty: add_outputs with one output is add */
    assert_int_equal(mpt_gp_add_outputs(g1, Xo, y, &err), 0);
    assert_int_equal(mpt_gp_add(g2, Xo, y[0], &err), 0);
    mpt_gp_predict_block(g1, 0, NC, m1, s1);
    mpt_gp_predict_block(g2, 0, NC, m2, s2);
    for (int c = 0; c < NC; c++) {
      assert_true(m1[c] == m2[c]);
      assert_true(s1[c] == s2[c]);
    }
    for (int i = 1; i < NO - 1; i++) {
      assert_int_equal(mpt_gp_add(g1, Xo + i * DIM, y[i], &err), 0);
      assert_int_equal(mpt_gp_add(g2, Xo + i * DIM, y[i], &err), 0);
    }
    assert_int_equal(mpt_gp_add_outputs(g1, Xo + (NO - 1) * DIM, y2, &err), 0);
    assert_int_equal(mpt_gp_add(g2, Xo + (NO - 1) * DIM, y2[NO - 1], &err), 0);
    assert_int_equal(mpt_gp_set_outputs(g2, y2, &err), 0);
    assert_int_equal(mpt_gp_n_obs(g1), NO);
    mpt_gp_predict_block(g1, 0, NC, m1, s1);
    mpt_gp_predict_block(g2, 0, NC, m2, s2);
    dense_predict(kernel, DIM, ls, 1.0, 1e-3, NO, Xo, y2, NC, X, rm, rs);
    double scale;
    mpt_gp_normalization(g1, NULL, &scale);
    for (int c = 0; c < NC; c++) {
      assert_true(fabs(m1[c] - m2[c]) < 1e-4 * scale);
      assert_true(fabs(s1[c] - s2[c]) < 1e-4 * scale);
      assert_true(fabs(m1[c] - rm[c]) < 2e-3 * scale);
      assert_true(fabs(s1[c] - rs[c]) < 2e-3 * scale);
    }
    /* a fantasy and its rollback restore the state after add_outputs */
    assert_int_equal(mpt_gp_add(g1, X, 0.5, &err), 0);
    assert_int_equal(mpt_gp_truncate(g1, NO, &err), 0);
    mpt_gp_predict_block(g1, 0, NC, m2, s2);
    for (int c = 0; c < NC; c++) {
      assert_true(fabs(m1[c] - m2[c]) < 1e-6 * scale);
      assert_true(fabs(s1[c] - s2[c]) < 1e-5 * scale);
    }
    mpt_gp_free(g1);
    mpt_gp_free(g2);
  }
  free(X); free(m1); free(s1); free(m2); free(s2); free(rm); free(rs);
}

/* mpt_gp_create_from's rows: from a table, recording that they come blockwise and in ascending order */
typedef struct fill_log {
  const double *X;
  int dim;
  int64_t next, max_rows, calls;
} fill_log;

static void fill_rows(void *ctx, int64_t first, int64_t n, double *rows) {
  fill_log *f = ctx;
  if (first == 0) f->next = 0; /* a second pass starts over */
  assert_true(first == f->next);
  f->next = first + n;
  if (n > f->max_rows) f->max_rows = n;
  f->calls++;
  memcpy(rows, f->X + first * f->dim, sizeof(double) * (size_t)(n * f->dim));
}

/* A GP whose candidates come from a callback, a block at a time (bo keeps no table of them), is the GP
 * of the same rows given as a table, bit for bit: coded candidates (a grid) and doubles (a grid plus
 * random points, fetched twice), over adds and a refactor, every kernel. */
static void test_create_from_rows(void **state) {
  (void)state;
  enum { DIM = 3, NG = 2500, NX = 300, NO = 30 };
  mpt_rng r;
  mpt_rng_seed(&r, 21);
  double *X = malloc(sizeof(double) * (NG + NX) * DIM), Xo[NO * DIM], y[NO];
  for (int c = 0; c < NG; c++) {
    X[c * DIM + 0] = (c % 10) / 9.0;
    X[c * DIM + 1] = ((c / 10) % 25) / 24.0;
    X[c * DIM + 2] = (c % 2) ? 0.35355339059327373 : 0.0;
  }
  random_points(&r, NX, DIM, X + NG * DIM);
  for (int i = 0; i < NO; i++) {
    memcpy(Xo + i * DIM, X + (size_t)mpt_rng_below(&r, NG + NX) * DIM, sizeof(double) * DIM);
    y[i] = cos(4 * Xo[i * DIM]) + Xo[i * DIM + 1] + 0.1 * mpt_rng_normal(&r);
  }
  double *m1 = malloc(sizeof(double) * (NG + NX)), *s1 = malloc(sizeof(double) * (NG + NX));
  double *m2 = malloc(sizeof(double) * (NG + NX)), *s2 = malloc(sizeof(double) * (NG + NX));
  for (int kernel = 0; kernel < MPT_GP_KERNEL_COUNT; kernel++)
    for (int nc = NG; nc <= NG + NX; nc += NX) {
      mpt_gp_config cfg;
      mpt_gp_config_default(&cfg);
      cfg.kernel = kernel;
      cfg.lengthscale = 0.6;
      mpt_gp *g1, *g2;
      mpt_error err;
      fill_log f = {X, DIM, 0, 0, 0};
      assert_int_equal(mpt_gp_create(&cfg, DIM, nc, X, &g1, &err), 0);
      assert_int_equal(mpt_gp_create_from(&cfg, DIM, nc, fill_rows, &f, &g2, &err), 0);
      assert_true(f.max_rows < nc / 2);   /* blockwise, never the whole table */
      assert_true(f.next == nc);          /* every row, the last pass to the end */
      assert_true(mpt_gp_bytes(g1) == mpt_gp_bytes(g2));
      for (int i = 0; i < NO; i++) {
        assert_int_equal(mpt_gp_add(g1, Xo + i * DIM, y[i], &err), 0);
        assert_int_equal(mpt_gp_add(g2, Xo + i * DIM, y[i], &err), 0);
      }
      for (int round = 0; round < 2; round++) {
        mpt_gp_predict_block(g1, 0, nc, m1, s1);
        mpt_gp_predict_block(g2, 0, nc, m2, s2);
        for (int c = 0; c < nc; c++) {
          assert_true(m1[c] == m2[c]);
          assert_true(s1[c] == s2[c]);
        }
        double ls[DIM] = {0.3, 0.9, 1.4};
        assert_int_equal(mpt_gp_set_hyper(g1, ls, 1.2, 1e-3, &err), 0);
        assert_int_equal(mpt_gp_set_hyper(g2, ls, 1.2, 1e-3, &err), 0);
      }
      mpt_gp_free(g1);
      mpt_gp_free(g2);
    }
  free(X); free(m1); free(s1); free(m2); free(s2);
}

/* Candidates on a grid are stored as codes into per-dimension value tables; with 256 more random
 * candidates appended the same GP keeps doubles. Both must give the same bits on the grid candidates
 * (adds, add_outputs, fantasies and a refactor with new lengthscales), for every kernel. */
static void test_coded_candidates(void **state) {
  (void)state;
  enum { DIM = 4, NG = 2048, NX = 256, NO = 40 };
  mpt_rng r;
  mpt_rng_seed(&r, 9);
  double *X = malloc(sizeof(double) * (NG + NX) * DIM), Xo[NO * DIM], y[NO];
  for (int c = 0; c < NG; c++) { /* 8 x 16 x 16 grid, and a one-hot-like dimension with 2 values */
    X[c * DIM + 0] = (c % 8) / 7.0;
    X[c * DIM + 1] = ((c / 8) % 16) / 15.0;
    X[c * DIM + 2] = (c / 128) / 15.0;
    X[c * DIM + 3] = (c % 3 == 0) ? 0.7071067811865476 : 0.0;
  }
  random_points(&r, NX, DIM, X + NG * DIM);
  for (int i = 0; i < NO; i++) {
    const double *src = X + (size_t)mpt_rng_below(&r, i % 4 == 3 ? NG + NX : NG) * DIM;
    memcpy(Xo + i * DIM, src, sizeof(double) * DIM);
    y[i] = sin(5 * Xo[i * DIM]) + Xo[i * DIM + 1] - Xo[i * DIM + 3] + 0.1 * mpt_rng_normal(&r);
  }
  double *m1 = malloc(sizeof(double) * NG), *s1 = malloc(sizeof(double) * NG);
  double *m2 = malloc(sizeof(double) * NG), *s2 = malloc(sizeof(double) * NG);
  for (int kernel = 0; kernel < MPT_GP_KERNEL_COUNT; kernel++) {
    mpt_gp_config cfg;
    mpt_gp_config_default(&cfg);
    cfg.kernel = kernel;
    cfg.lengthscale = 0.5;
    cfg.noise = 1e-4;
    mpt_gp *g1, *g2;
    mpt_error err;
    assert_int_equal(mpt_gp_create(&cfg, DIM, NG, X, &g1, &err), 0);
    assert_int_equal(mpt_gp_create(&cfg, DIM, NG + NX, X, &g2, &err), 0);
    assert_true(mpt_gp_bytes(g1) < mpt_gp_bytes(g2) - (int64_t)NG * DIM * 6); /* codes: 1 byte, not 8 */
    for (int i = 0; i < NO; i++) {
      if (i % 5 == 4) {
        assert_int_equal(mpt_gp_add_outputs(g1, Xo + i * DIM, y, &err), 0);
        assert_int_equal(mpt_gp_add_outputs(g2, Xo + i * DIM, y, &err), 0);
      } else {
        assert_int_equal(mpt_gp_add(g1, Xo + i * DIM, y[i], &err), 0);
        assert_int_equal(mpt_gp_add(g2, Xo + i * DIM, y[i], &err), 0);
      }
    }
    for (int round = 0; round < 2; round++) {
      mpt_gp_predict_block(g1, 0, NG, m1, s1);
      mpt_gp_predict_block(g2, 0, NG, m2, s2);
      for (int c = 0; c < NG; c++) {
        assert_true(m1[c] == m2[c]);
        assert_true(s1[c] == s2[c]);
      }
      double ls[DIM] = {0.3, 0.8, 1.5, 0.4}; /* refactor from scratch, then compare again */
      assert_int_equal(mpt_gp_set_hyper(g1, ls, 1.3, 1e-3, &err), 0);
      assert_int_equal(mpt_gp_set_hyper(g2, ls, 1.3, 1e-3, &err), 0);
    }
    mpt_gp_free(g1);
    mpt_gp_free(g2);
  }
  free(X); free(m1); free(s1); free(m2); free(s2);
}

/* sum over candidates without skip[c] of (sd / scale)^2 from mpt_gp_predict_block (double reference) */
static double direct_variance_sum(const mpt_gp *gp, int64_t n, const uint8_t *skip, double *sd, int64_t *cnt) {
  double scale, s = 0;
  mpt_gp_normalization(gp, NULL, &scale);
  mpt_gp_predict_block(gp, 0, n, NULL, sd);
  *cnt = 0;
  for (int64_t c = 0; c < n; c++)
    if (!skip || !skip[c]) {
      s += (sd[c] / scale) * (sd[c] / scale);
      (*cnt)++;
    }
  return s;
}

/* An index+one-hot encoding of 4 parameters on a full grid (8 x 8 x 9 x 8 = 4608 candidates: two
 * blocks, the last panel partial): each one-hot column is a function of its parameter's index column,
 * so the coded GP sums distances by 4 groups instead of 37 dimensions. Against the dense solve in
 * double, against the same candidates kept as doubles (256 random candidates appended), through the
 * growth of the factor from 64 to 128 rows (V's panels move), add_outputs, fantasies and their rollback
 * and a refactor; the kept sum of the posterior variances against the direct sum, with and without
 * skipped candidates. */
static void test_grouped_codes_panels(void **state) {
  (void)state;
  enum { P = 4, DIM = 4 + 8 + 8 + 9 + 8, NG = 8 * 8 * 9 * 8, NX = 256, NO = 70 };
  static const int nvals[P] = {8, 8, 9, 8};
  mpt_rng r;
  mpt_rng_seed(&r, 17);
  double *X = calloc((size_t)(NG + NX) * DIM, sizeof(double)), *Xo = malloc(sizeof(double) * NO * DIM);
  double y[NO], y2[NO];
  for (int c = 0; c < NG; c++) {
    int rest = c, off = P;
    for (int p = 0; p < P; p++) {
      int v = rest % nvals[p];
      rest /= nvals[p];
      X[c * DIM + p] = v / (nvals[p] - 1.0);
      X[c * DIM + off + v] = 0.5 * 0.7071067811865476;
      off += nvals[p];
    }
  }
  random_points(&r, NX, DIM, X + NG * DIM);
  for (int i = 0; i < NO; i++) {
    memcpy(Xo + i * DIM, X + (size_t)mpt_rng_below(&r, NG) * DIM, sizeof(double) * DIM);
    y[i] = sin(4 * Xo[i * DIM]) + Xo[i * DIM + 1] * Xo[i * DIM + 2] - Xo[i * DIM + 3] + 0.05 * mpt_rng_normal(&r);
    y2[i] = exp(y[i]) * (1 + 0.01 * i);
  }
  double *m1 = malloc(sizeof(double) * NG), *s1 = malloc(sizeof(double) * NG);
  double *m2 = malloc(sizeof(double) * NG), *s2 = malloc(sizeof(double) * NG);
  double *rm = malloc(sizeof(double) * NG), *rs = malloc(sizeof(double) * NG);
  uint8_t *skip = calloc(NG, 1);
  for (int c = 0; c < NG; c += 7) skip[c] = 1;
  double ls[DIM];
  for (int d = 0; d < DIM; d++) ls[d] = 0.8;
  for (int kernel = 0; kernel < MPT_GP_KERNEL_COUNT; kernel++) {
    mpt_gp_config cfg;
    mpt_gp_config_default(&cfg);
    cfg.kernel = kernel;
    cfg.lengthscale = 0.8;
    cfg.noise = 1e-3;
    mpt_gp *g1, *g2;
    mpt_error err;
    assert_int_equal(mpt_gp_create(&cfg, DIM, NG, X, &g1, &err), 0);
    assert_int_equal(mpt_gp_create(&cfg, DIM, NG + NX, X, &g2, &err), 0);
    /* codes: 4 group bytes per candidate, not 37 (nor 37 doubles) */
    assert_true(mpt_gp_bytes(g1) < mpt_gp_bytes(g2) - (int64_t)NG * DIM * 7);
    int64_t cnt, cnt_ref;
    assert_true(fabs(mpt_gp_variance_sum(g1, NULL, &cnt) - NG * 1.0) < 1e-9 * NG && cnt == NG);
    for (int i = 0; i < NO; i++) {
      if (i % 9 == 8) {
        assert_int_equal(mpt_gp_add_outputs(g1, Xo + i * DIM, y, &err), 0);
        assert_int_equal(mpt_gp_add_outputs(g2, Xo + i * DIM, y, &err), 0);
      } else {
        assert_int_equal(mpt_gp_add(g1, Xo + i * DIM, y[i], &err), 0);
        assert_int_equal(mpt_gp_add(g2, Xo + i * DIM, y[i], &err), 0);
      }
    }
    dense_predict(kernel, DIM, ls, 1.0, 1e-3, NO, Xo, y, NG, X, rm, rs);
    mpt_gp_predict_block(g1, 0, NG, m1, s1);
    mpt_gp_predict_block(g2, 0, NG, m2, s2);
    double scale;
    mpt_gp_normalization(g1, NULL, &scale);
    for (int c = 0; c < NG; c++) {
      assert_true(fabs(m1[c] - rm[c]) < 2e-3 * scale);
      assert_true(fabs(s1[c] - rs[c]) < 2e-3 * scale);
      assert_true(fabs(m1[c] - m2[c]) < 1e-5 * scale); /* the grouped sums differ from dist2 by rounding only */
      assert_true(fabs(s1[c] - s2[c]) < 1e-5 * scale);
    }
    for (int pass = 0; pass < 4; pass++) {
      /* pass 0: after the adds; 1: after a fantasy rollback; 2: after add_outputs; 3: after a refactor */
      if (pass == 1) {
        for (int i = 0; i < 5; i++) assert_int_equal(mpt_gp_add(g1, X + (size_t)(i * 901) * DIM, 0.1 * i, &err), 0);
        assert_int_equal(mpt_gp_truncate(g1, NO, &err), 0);
      } else if (pass == 2) {
        assert_int_equal(mpt_gp_truncate(g1, NO - 1, &err), 0);
        assert_int_equal(mpt_gp_add_outputs(g1, Xo + (NO - 1) * DIM, y2, &err), 0);
      } else if (pass == 3) {
        double ls2[DIM];
        for (int d = 0; d < DIM; d++) ls2[d] = 0.5 + 0.05 * d;
        assert_int_equal(mpt_gp_set_hyper(g1, ls2, 1.4, 1e-3, &err), 0);
      }
      for (int sk = 0; sk < 2; sk++) {
        double ref = direct_variance_sum(g1, NG, sk ? skip : NULL, s1, &cnt_ref);
        double got = mpt_gp_variance_sum(g1, sk ? skip : NULL, &cnt);
        assert_int_equal(cnt, cnt_ref);
        assert_true(fabs(got - ref) < 1e-9 * ref);
      }
    }
    if (kernel == MPT_GP_MATERN32) { /* after the refactor, against the dense solve with the new outputs */
      double ls2[DIM];
      for (int d = 0; d < DIM; d++) ls2[d] = 0.5 + 0.05 * d;
      dense_predict(kernel, DIM, ls2, 1.4, 1e-3, NO, Xo, y2, NG, X, rm, rs);
      mpt_gp_predict_block(g1, 0, NG, m1, s1);
      mpt_gp_normalization(g1, NULL, &scale);
      for (int c = 0; c < NG; c++) {
        assert_true(fabs(m1[c] - rm[c]) < 2e-3 * scale);
        assert_true(fabs(s1[c] - rs[c]) < 2e-3 * scale);
      }
    }
    mpt_gp_free(g1);
    mpt_gp_free(g2);
  }
  free(X); free(Xo); free(m1); free(s1); free(m2); free(s2); free(rm); free(rs); free(skip);
}

/* the fit recovers a short lengthscale on a fast-varying function and a long one on a slow one */
static void test_fit(void **state) {
  (void)state;
  mpt_rng r;
  mpt_rng_seed(&r, 11);
  enum { NO = 50 };
  double X[NO], yf[NO], ys[NO];
  for (int i = 0; i < NO; i++) {
    X[i] = (i + 0.5 * mpt_rng_uniform(&r)) / NO;
    yf[i] = sin(25 * X[i]);
    ys[i] = X[i] * X[i];
  }
  double lsf = 0, lss = 0;
  for (int which = 0; which < 2; which++) {
    mpt_gp_config cfg;
    mpt_gp_config_default(&cfg);
    cfg.lengthscale = 1.0;
    cfg.noise = 1e-4;
    mpt_gp *gp;
    mpt_error err;
    assert_int_equal(mpt_gp_create(&cfg, 1, NO, X, &gp, &err), 0);
    for (int i = 0; i < NO; i++) assert_int_equal(mpt_gp_add(gp, X + i, which ? ys[i] : yf[i], &err), 0);
    double before, after;
    assert_int_equal(mpt_gp_log_marginal(gp, NULL, 0, 0, &before, &err), 0);
    mpt_gp_fit_options o;
    mpt_gp_fit_options_default(&o);
    double best;
    assert_int_equal(mpt_gp_fit(gp, &o, &best, &err), 0);
    assert_int_equal(mpt_gp_log_marginal(gp, NULL, 0, 0, &after, &err), 0);
    assert_true(after > before);
    double ls;
    mpt_gp_get_hyper(gp, &ls, NULL, NULL);
    if (which) lss = ls; else lsf = ls;
    /* after refit the incremental state equals a fresh computation */
    double mean[NO], sd[NO];
    mpt_gp_predict_block(gp, 0, NO, mean, sd);
    for (int i = 0; i < NO; i++) assert_true(fabs(mean[i] - (which ? ys[i] : yf[i])) < 0.05);
    mpt_gp_free(gp);
  }
  assert_true(lsf < 0.3);
  assert_true(lss > 2 * lsf);
}

static void test_bad_input(void **state) {
  (void)state;
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  mpt_gp *gp;
  mpt_error err;
  cfg.lengthscale = -1;
  assert_int_equal(mpt_gp_create(&cfg, 2, 0, NULL, &gp, &err), MPT_ERR_VALUE);
  mpt_gp_config_default(&cfg);
  assert_int_equal(mpt_gp_create(&cfg, 0, 0, NULL, &gp, &err), MPT_ERR_VALUE);
  assert_int_equal(mpt_gp_create(&cfg, 2, 0, NULL, &gp, &err), 0);
  double x[2] = {0, 0};
  assert_int_equal(mpt_gp_add(gp, x, NAN, &err), MPT_ERR_VALUE);
  assert_int_equal(mpt_gp_add(gp, x, 1.0, &err), 0);
  /* a non-finite input is refused: it was taken, and every later mean was NaN for good */
  double xn[2] = {NAN, 0}, xi[2] = {0, INFINITY}, x1[2] = {1, 1};
  assert_int_equal(mpt_gp_add(gp, xn, 2.0, &err), MPT_ERR_VALUE);
  assert_int_equal(mpt_gp_add(gp, xi, 2.0, &err), MPT_ERR_VALUE);
  assert_int_equal(mpt_gp_n_obs(gp), 1);
  assert_int_equal(mpt_gp_add(gp, x1, 2.0, &err), 0);
  double mu, sd;
  mpt_gp_predict_point(gp, x, &mu, &sd);
  assert_true(isfinite(mu) && isfinite(sd));
  double ls[2] = {1, 0};
  assert_int_equal(mpt_gp_set_hyper(gp, ls, 1, 0, &err), MPT_ERR_VALUE);
  mpt_gp_free(gp);
}

/* Many observations added one by one (as a long run adds them) stay on the exact posterior: the
 * incremental means and sds of every candidate against the double-precision point predictions
 * (triangular solves with the factor), on grid points in 7 dimensions (as configurations are).
 * Squared-exponential kernel with noise 1e-6: its new observations are nearly predicted by the earlier
 * ones, and with float sums alone the mean drifts 0.89 prior sd from the exact one by 600 observations;
 * Matern 3/2 with bo's noise 1e-4 drifts 9e-4. Every third observation comes with new outputs for all
 * (mpt_gp_add_outputs, as bo's rank transform gives them). */
static void long_run_case(int kernel, double noise, double tol_mean, double tol_sd) {
  enum { DIM = 7, NC = 1200, NO = 600 };
  mpt_rng r;
  mpt_rng_seed(&r, 3);
  double *X = malloc(sizeof(double) * NC * DIM), *Xo = malloc(sizeof(double) * NO * DIM), *y = malloc(sizeof(double) * NO);
  int *used = calloc(NC, sizeof(int));
  assert_non_null(X); assert_non_null(Xo); assert_non_null(y); assert_non_null(used);
  for (int i = 0; i < NC * DIM; i++) X[i] = floor(mpt_rng_uniform(&r) * 5) / 4;
  for (int i = 0; i < NO; i++) {
    int c;
    do c = (int)mpt_rng_below(&r, NC); while (used[c]);
    used[c] = 1;
    memcpy(Xo + i * DIM, X + c * DIM, sizeof(double) * DIM);
    y[i] = sin(3 * Xo[i * DIM]) + Xo[i * DIM + 1] * Xo[i * DIM + 2] + 0.05 * mpt_rng_normal(&r);
  }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  cfg.kernel = kernel;
  cfg.noise = noise;
  cfg.lengthscale = 2.0;
  mpt_gp *gp;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &gp, &err), 0);
  for (int i = 0; i < NO; i++) {
    if (i % 3 == 2) { /* outputs changed with the new point (as bo's rank transform changes them) */
      double *ya = malloc(sizeof(double) * (i + 1));
      for (int j = 0; j <= i; j++) ya[j] = y[j] + 0.01 * (i % 7);
      assert_int_equal(mpt_gp_add_outputs(gp, Xo + i * DIM, ya, &err), 0);
      free(ya);
    } else {
      assert_int_equal(mpt_gp_add(gp, Xo + i * DIM, y[i], &err), 0);
    }
  }
  double *mean = malloc(sizeof(double) * NC), *sd = malloc(sizeof(double) * NC), m, s;
  mpt_gp_predict_block(gp, 0, NC, mean, sd);
  mpt_gp_normalization(gp, &m, &s);
  double dm = 0, ds = 0;
  for (int c = 0; c < NC; c += 3) {
    double pm, ps;
    mpt_gp_predict_point(gp, X + c * DIM, &pm, &ps);
    if (fabs(mean[c] - pm) / s > dm) dm = fabs(mean[c] - pm) / s;
    if (fabs(sd[c] - ps) / s > ds) ds = fabs(sd[c] - ps) / s;
  }
  print_message("kernel %s noise %g, %d observations: max |mean - exact| %.3g, max |sd - exact| %.3g (prior sd)\n",
                mpt_gp_kernel_name(kernel), noise, NO, dm, ds);
  assert_true(dm < tol_mean);
  assert_true(ds < tol_sd);
  mpt_gp_free(gp);
  free(X); free(Xo); free(y); free(used); free(mean); free(sd);
}

static void test_long_run_accuracy(void **state) {
  (void)state;
  long_run_case(MPT_GP_SE, 1e-6, 0.03, 2e-4);        /* float sums: 0.89, 0.0039 */
  long_run_case(MPT_GP_MATERN32, 1e-4, 2e-4, 5e-5);  /* float sums: 9.1e-4, 1.1e-4 */
  long_run_case(MPT_GP_MATERN52, 1e-6, 2e-3, 2e-4);  /* float sums: 0.033, 1.0e-3 */
}

/* the largest error of the means (relative to the outputs' range) and of the sds (relative to the prior sd)
 * of V's predictions of gp against its own exact posterior from the factor (mpt_gp_predict_point, in
 * double) at every 7th of the nc candidates X */
static void err_vs_factor(const mpt_gp *gp, int nc, int dim, const double *X, const double *m, const double *s,
                          double yrange, double prior_sd, double *em, double *es) {
  *em = *es = 0;
  for (int c = 0; c < nc; c += 7) {
    double pm, ps;
    mpt_gp_predict_point(gp, X + (size_t)c * dim, &pm, &ps);
    *em = fmax(*em, fabs(m[c] - pm) / yrange);
    *es = fmax(*es, fabs(s[c] - ps) / prior_sd);
  }
}

/* mpt_gp_add_many against single adds, for batches that cross a growth of the factor (64 -> 128 -> 256),
 * that replace every output with the last add, that hold observations the earlier ones nearly predict
 * (their rows of V in double sums), over 200 (runs of 64). The batch path sums with FMAs in blocks (not
 * bit for bit single adds): the means and sds differ from single adds' by at most 1e-5 (of the outputs'
 * range, of the prior sd) or, where V's float rounding makes single adds themselves err more, twice
 * their error against the exact posterior from the factor; the variance sums agree to 1e-6 relative;
 * against its own factor the batch GP errs at most twice as much as single adds (plus 1e-7): no
 * accuracy lost; every sd >= 0. A non-finite input refuses the batch and leaves the GP as it was. */
static void test_add_many(void **state) {
  (void)state;
  enum { NC = 9000, DIM = 4, NOBS = 300 };
  mpt_rng r;
  mpt_rng_seed(&r, 17);
  double *X = malloc(sizeof(double) * NC * DIM), *Xo = malloc(sizeof(double) * NOBS * DIM), y[NOBS], yall[NOBS];
  for (int i = 0; i < NC * DIM; i++) X[i] = (double)(mpt_rng_next(&r) % 7) / 6.0;
  double ylo = INFINITY, yhi = -INFINITY;
  for (int i = 0; i < NOBS; i++) {
    const double *src = X + (size_t)(mpt_rng_next(&r) % NC) * DIM;
    for (int d = 0; d < DIM; d++) Xo[i * DIM + d] = src[d] + (i % 5 == 4 ? 1e-4 * d : 0.0); /* some nearly repeated */
    y[i] = sin(3.0 * Xo[i * DIM]) + Xo[i * DIM + 1] * Xo[i * DIM + 2];
    yall[i] = y[i] * 0.5 + 1.0;
    ylo = fmin(ylo, fmin(y[i], yall[i]));
    yhi = fmax(yhi, fmax(y[i], yall[i]));
  }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  cfg.noise = 1e-6;
  mpt_gp *a, *b;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &a, &err), 0);
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &b, &err), 0);
  int steps[] = {1, 49, 20, 30, 200}, at = 0; /* 1, 50 (64), 70 (> 64), 100 (all replaced), 300 (> 256, runs) */
  double *ma = malloc(sizeof(double) * NC * 4), *sa = ma + NC, *mb = ma + 2 * NC, *sb = ma + 3 * NC;
  for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
    int k = steps[s], repl = s == 3;
    for (int j = 0; j < k; j++) {
      if (repl && j == k - 1) assert_int_equal(mpt_gp_add_outputs(a, Xo + (at + j) * DIM, yall, &err), 0);
      else assert_int_equal(mpt_gp_add(a, Xo + (at + j) * DIM, y[at + j], &err), 0);
    }
    assert_int_equal(mpt_gp_add_many(b, k, Xo + at * DIM, y + at, repl ? yall : NULL, &err), 0);
    at += k;
    assert_int_equal(mpt_gp_n_obs(a), mpt_gp_n_obs(b));
    mpt_gp_predict_block(a, 0, NC, ma, sa);
    mpt_gp_predict_block(b, 0, NC, mb, sb);
    double dm = 0, ds = 0, va = mpt_gp_variance_sum(a, NULL, NULL), vb = mpt_gp_variance_sum(b, NULL, NULL);
    for (int c = 0; c < NC; c++) {
      dm = fmax(dm, fabs(ma[c] - mb[c]) / (yhi - ylo));
      ds = fmax(ds, fabs(sa[c] - sb[c]) / sqrt(cfg.variance));
      assert_true(sb[c] >= 0);
    }
    double eam, eas, ebm, ebs;
    err_vs_factor(a, NC, DIM, X, ma, sa, yhi - ylo, sqrt(cfg.variance), &eam, &eas);
    err_vs_factor(b, NC, DIM, X, mb, sb, yhi - ylo, sqrt(cfg.variance), &ebm, &ebs);
    printf("add_many(%d) to %d observations: batch vs single adds: means %.2g, sds %.2g, variance sum %.2g; "
           "against the factor: single adds %.2g / %.2g, batch %.2g / %.2g\n", k, at, dm, ds, fabs(va - vb) / va,
           eam, eas, ebm, ebs);
    assert_true(dm <= fmax(1e-5, 2 * eam));
    assert_true(ds <= fmax(1e-5, 2 * eas));
    assert_true(fabs(va - vb) <= 1e-6 * va);
    assert_true(ebm <= 2 * eam + 1e-7);
    assert_true(ebs <= 2 * eas + 1e-7);
  }
  free(ma);
  double bad[2 * DIM], by[2] = {1.0, NAN};
  memcpy(bad, Xo, sizeof bad);
  assert_int_not_equal(mpt_gp_add_many(b, 2, bad, by, NULL, &err), 0);
  assert_non_null(strstr(err.msg, "not finite"));
  assert_int_equal(mpt_gp_n_obs(b), NOBS);
  mpt_gp_free(a);
  mpt_gp_free(b);
  free(X);
  free(Xo);
}

/* a pool of candidates conditioned on extra observations (gp/gp_pool.h) against the GP given the same
 * observations: the same means and sds up to V's float rounding; the GP itself untouched */
static void test_pool(void **state) {
  (void)state;
  enum { NC = 5000, DIM = 3, NOBS = 80, NP = 300, NX = 12 };
  mpt_rng r;
  mpt_rng_seed(&r, 23);
  double *X = malloc(sizeof(double) * NC * DIM), Xo[(NOBS + NX) * DIM], y[NOBS + NX];
  random_points(&r, NC, DIM, X);
  for (int i = 0; i < NOBS + NX; i++) {
    memcpy(Xo + i * DIM, X + (size_t)mpt_rng_below(&r, NC) * DIM, sizeof(double) * DIM);
    y[i] = cos(4.0 * Xo[i * DIM]) + Xo[i * DIM + 2];
  }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  cfg.noise = 1e-4;
  mpt_gp *a, *b;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &a, &err), 0);
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &b, &err), 0);
  assert_int_equal(mpt_gp_add_many(a, NOBS, Xo, y, NULL, &err), 0);
  assert_int_equal(mpt_gp_add_many(b, NOBS + NX, Xo, y, NULL, &err), 0);
  int64_t ids[NP];
  double *PX = malloc(sizeof(double) * NP * DIM), before[NP], m1[NP], v1[NP];
  for (int j = 0; j < NP; j++) {
    ids[j] = (int64_t)mpt_rng_below(&r, NC);
    memcpy(PX + j * DIM, X + ids[j] * DIM, sizeof(double) * DIM);
  }
  mpt_gp_pool *p;
  assert_int_equal(mpt_gp_pool_create(&p, &err), 0);
  mpt_gp_predict_block(a, 0, NP, before, NULL);
  for (int round = 0; round < 2; round++) { /* a second load reuses the pool */
    assert_int_equal(mpt_gp_pool_load(p, a, ids, PX, NP, &err), 0);
    assert_int_equal(mpt_gp_pool_size(p), NP);
    for (int k = 0; k < NX; k++) assert_int_equal(mpt_gp_pool_add(p, Xo + (NOBS + k) * DIM, y[NOBS + k], &err), 0);
    double pm, ps, fm, fs;
    mpt_gp_pool_normalization(p, &pm, &ps);
    mpt_gp_normalization(b, &fm, &fs);
    assert_true(fabs(pm - fm) < 1e-12 && fabs(ps - fs) < 1e-12);
    mpt_gp_pool_predict_var(p, 0, NP, m1, v1);
    for (int j = 0; j < NP; j++) {
      double m2, v2;
      assert_int_equal(mpt_gp_pool_id(p, j), ids[j]);
      mpt_gp_predict_block_var(b, ids[j], ids[j] + 1, &m2, &v2);
      assert_true(fabs(m1[j] - m2) < 1e-4 * fs);
      assert_true(fabs(v1[j] - v2) < 1e-4);
    }
  }
  assert_int_equal(mpt_gp_n_obs(a), NOBS);
  double again[NP];
  mpt_gp_predict_block(a, 0, NP, again, NULL);
  assert_memory_equal(before, again, sizeof before);
  /* a member's column of V for the solve (mpt_gp_pool_add_member): the same posterior up to V's float rounding */
  mpt_gp_pool *q;
  assert_int_equal(mpt_gp_pool_create(&q, &err), 0);
  assert_int_equal(mpt_gp_pool_load(p, a, ids, PX, NP, &err), 0);
  assert_int_equal(mpt_gp_pool_load(q, a, ids, PX, NP, &err), 0);
  for (int j = 0; j < 5; j++) {
    assert_int_equal(mpt_gp_pool_add(p, PX + j * 7 * DIM, y[j], &err), 0);
    assert_int_equal(mpt_gp_pool_add_member(q, j * 7, y[j], &err), 0);
  }
  double m2[NP], v2[NP];
  mpt_gp_pool_predict_var(p, 0, NP, m1, v1);
  mpt_gp_pool_predict_var(q, 0, NP, m2, v2);
  double dm = 0, dv = 0;
  for (int j = 0; j < NP; j++) {
    dm = fmax(dm, fabs(m1[j] - m2[j]));
    dv = fmax(dv, fabs(v1[j] - v2[j]));
  }
  printf("pool: a member's column for the solve: max |mean diff| %.3g, max |var diff| %.3g\n", dm, dv);
  assert_true(dm < 1e-3 && dv < 1e-6); /* V is float: 1e-7 relative, times 1 / L_nn of the new point */
  assert_int_not_equal(mpt_gp_pool_add_member(q, NP, 0.0, &err), 0);
  mpt_gp_pool_free(q);
  int64_t bad = NC;
  assert_int_not_equal(mpt_gp_pool_load(p, a, &bad, PX, 1, &err), 0);
  mpt_gp_pool_free(p);
  mpt_gp_free(a);
  mpt_gp_free(b);
  free(X);
  free(PX);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kernels_closed_form),
      cmocka_unit_test(test_one_and_two_obs_closed_form),
      cmocka_unit_test(test_vs_dense),
      cmocka_unit_test(test_kernel_row_accuracy),
      cmocka_unit_test(test_add_outputs_blocks),
      cmocka_unit_test(test_coded_candidates),
      cmocka_unit_test(test_create_from_rows),
      cmocka_unit_test(test_grouped_codes_panels),
      cmocka_unit_test(test_fit),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_long_run_accuracy),
      cmocka_unit_test(test_add_many),
      cmocka_unit_test(test_pool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
