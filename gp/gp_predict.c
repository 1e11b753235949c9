/* gp/gp_predict.c: what the serial GP predicts (gp/gp.h): the outputs' normalization, the candidates'
 * posterior mean and variance from the incremental state (A, B, var), a point's from the factor, the mean's
 * weights L^-T (wy - m w1) and a mean from kernel values, the sum of the candidates' variances. */
#include "gp/gp.h"
#include "gp/gp_impl.h"
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gp/gp_hot.h"

typedef double gp_v4d __attribute__((vector_size(32)));

/* x = L^-T x (backward substitution by rows of L: one axpy per row) */
GP_HOT static void solve_lower_trans(int n, const double *restrict L, size_t ld, double *restrict x) {
  for (int i = n - 1; i >= 0; i--) {
    const double *restrict Li = L + (size_t)i * ld;
    double xi = x[i] / Li[i];
    x[i] = xi;
    for (int j = 0; j < i; j++) x[j] -= Li[j] * xi;
  }
}

void mpt_gp_normalization(const mpt_gp *gp, double *mean, double *scale) {
  double m = 0, s = 1;
  int n = gp->n;
  if (gp->cfg.mean == MPT_GP_MEAN_CONSTANT) {
    m = gp->cfg.mean_constant;
  } else if (n > 0) {
    for (int i = 0; i < n; i++) m += gp->yo[i];
    m /= n;
  }
  if (gp->cfg.normalize_scale && n >= 2) {
    double mu = 0, ss = 0;
    for (int i = 0; i < n; i++) mu += gp->yo[i];
    mu /= n;
    for (int i = 0; i < n; i++) ss += (gp->yo[i] - mu) * (gp->yo[i] - mu);
    ss = sqrt(ss / n);
    if (ss > 1e-12 * (fabs(mu) + 1e-300) && ss > 0) s = ss;
  }
  if (mean) *mean = m;
  if (scale) *scale = s;
}

void mpt_gp_predict_block_var(const mpt_gp *gp, int64_t begin, int64_t end, double *mean, double *var) {
  double m, s;
  mpt_gp_normalization(gp, &m, &s);
  for (int64_t c = begin; c < end; c++) {
    if (mean) mean[c - begin] = m + gp->A[c] - m * gp->B[c];
    if (var) var[c - begin] = gp->var[c] > 0 ? gp->var[c] : 0.0;
  }
}

void mpt_gp_predict_block(const mpt_gp *gp, int64_t begin, int64_t end, double *mean, double *sd) {
  mpt_gp_predict_block_var(gp, begin, end, mean, sd);
  if (!sd) return;
  double m, s;
  mpt_gp_normalization(gp, &m, &s);
  for (int64_t c = 0; c < end - begin; c++) sd[c] = s * sqrt(sd[c]);
}

void mpt_gp_predict_point(const mpt_gp *gp, const double *x, double *mean, double *sd) {
  double m, s;
  mpt_gp_normalization(gp, &m, &s);
  int n = gp->n;
  double *l = gp->tmpd;
  double mu = m, var = gp->variance;
  if (n > 0) {
    gp_kernel_obs(gp, x, gp->inv_ls, gp->variance, l);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, gp->L, gp->cap, l, 1);
    for (int i = 0; i < n; i++) {
      mu += l[i] * (gp->wy[i] - m * gp->w1[i]);
      var -= l[i] * l[i];
    }
  }
  if (mean) *mean = mu;
  if (sd) *sd = s * sqrt(var > 0 ? var : 0.0);
}

void mpt_gp_mean_weights(const mpt_gp *gp, double *alpha, double *m0) {
  double m, s;
  mpt_gp_normalization(gp, &m, &s);
  int n = gp->n;
  for (int i = 0; i < n; i++) alpha[i] = gp->wy[i] - m * gp->w1[i];
  if (n > 0) solve_lower_trans(n, gp->L, (size_t)gp->cap, alpha);
  *m0 = m;
}

double mpt_gp_mean_with_weights(const mpt_gp *gp, const double *alpha, double m0, const double *x) {
  if (gp->n == 0) return m0;
  mpt_gp_kernel_obs_range(gp, x, 0, gp->n, gp->tmpd); /* kernel values to all observations at once */
  return mpt_gp_mean_from_kernel(alpha, m0, gp->tmpd, gp->n);
}

GP_HOT double mpt_gp_mean_from_kernel(const double *alpha, double m0, const double *k, int n) {
  gp_v4d s0 = {0}, s1 = {0};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    gp_v4d a0, a1, k0, k1;
    memcpy(&a0, alpha + i, sizeof a0);
    memcpy(&a1, alpha + i + 4, sizeof a1);
    memcpy(&k0, k + i, sizeof k0);
    memcpy(&k1, k + i + 4, sizeof k1);
    s0 += a0 * k0;
    s1 += a1 * k1;
  }
  double t[8];
  memcpy(t, &s0, sizeof s0);
  memcpy(t + 4, &s1, sizeof s1);
  for (int r = 0; i < n; i++, r++) t[r] += alpha[i] * k[i];
  return m0 + (((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7])));
}

double mpt_gp_variance_sum(const mpt_gp *gp, const uint8_t *skip, int64_t *count) {
  double sub = 0;
  int64_t ns = 0;
  for (int64_t c = 0; skip && c < gp->n_cand; c++) {
    if (c + 8 <= gp->n_cand) { /* 8 flags at a time: most candidates are not skipped */
      uint64_t f;
      memcpy(&f, skip + c, sizeof f);
      if (f == 0) { c += 7; continue; }
    }
    if (skip[c]) {
      ns++;
      sub += gp->var[c] > 0 ? gp->var[c] : 0.0;
    }
  }
  if (count) *count = gp->n_cand - ns;
  double s = gp->var_sum - sub;
  return s > 0 && ns < gp->n_cand ? s : 0.0;
}
