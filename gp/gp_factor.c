/* gp/gp_factor.c: the factor of the observations from scratch (LAPACK dpotrf with jitter and retries): new
 * hyperparameters refactor L, V and the posterior state; the log marginal likelihood (or its backend,
 * mpt_gp_set_lml_backend). Its maximization: gp/gp_fit.c. */
#include "gp/gp.h"
#include "gp/gp_cand.h"
#include "gp/gp_impl.h"
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline double dist2(const double *a, const double *b, const double *inv_ls, int dim) {
  double s = 0;
  for (int d = 0; d < dim; d++) {
    double t = (a[d] - b[d]) * inv_ls[d];
    s += t * t;
  }
  return s;
}

/* K(Xo, Xo) + noise I into a (ld x n, row-major, lower), then Cholesky; adds jitter on failure. */
static int factor_obs(const mpt_gp *gp, const double *inv_ls, double variance, double noise, double *a,
                      int ld, mpt_error *err) {
  int n = gp->n;
  double ne = mpt_gp_noise_eff(noise, variance);
  for (int attempt = 0; attempt < 6; attempt++) {
    for (int i = 0; i < n; i++) {
      const double *xi = gp->Xo + (size_t)i * gp->dim;
      for (int j = 0; j < i; j++)
        a[(size_t)i * ld + j] =
            variance * kern_r2(gp->cfg.kernel, dist2(xi, gp->Xo + (size_t)j * gp->dim, inv_ls, gp->dim));
      a[(size_t)i * ld + i] = variance + ne;
    }
    lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, a, ld);
    if (info == 0) return 0;
    if (info < 0) break;
    ne = ne * 100 + 1e-10 * variance;
  }
  return mpt_error_set(err, MPT_ERR_VALUE, "gp: covariance matrix of %d observations is not positive definite", n);
}

static int refactor(mpt_gp *gp, mpt_error *err) {
  int n = gp->n, cap = gp->cap, dim = gp->dim;
  gp->l_gen++; /* L changes: rows solved ahead over it no longer hold */
  for (int64_t c = 0; c < gp->n_pad; c++) {
    gp->A[c] = 0;
    gp->B[c] = 0;
    gp->var[c] = gp->variance;
  }
  gp->var_sum = gp_var_total(gp);
  if (n == 0) return 0;
  int rc = factor_obs(gp, gp->inv_ls, gp->variance, gp->noise, gp->L, cap, err);
  if (rc) return rc;
  memcpy(gp->wy, gp->yo, sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) gp->w1[i] = 1.0;
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, gp->L, cap, gp->wy, 1);
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, gp->L, cap, gp->w1, 1);
  int64_t bsz = 1024;
  double *K = malloc(sizeof(double) * (size_t)n * (size_t)bsz);
  if (!K) return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory refactoring");
  for (int64_t b = 0; b < gp->n_cand; b += bsz) {
    int64_t bc = gp->n_cand - b < bsz ? gp->n_cand - b : bsz;
    for (int i = 0; i < n; i++) {
      double *kr = K + (size_t)i * bsz;
      mpt_gp_cands_dist2(&gp->cs, gp->Xo + (size_t)i * dim, gp->inv_ls, b, bc, kr);
      for (int64_t j = 0; j < bc; j++) kr[j] = gp->variance * kern_r2(gp->cfg.kernel, kr[j]);
    }
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, (int)bc, 1.0, gp->L,
                cap, K, (int)bsz);
    for (int i = 0; i < n; i++) {
      const double *krow = K + (size_t)i * bsz;
      double wyi = gp->wy[i], w1i = gp->w1[i];
      for (int64_t j = 0; j < bc; j++) {
        float v = (float)krow[j];
        int64_t c = b + j;
        gp->V[((size_t)(c / GP_VB) * (size_t)cap + (size_t)i) * GP_VB + (size_t)(c % GP_VB)] = v;
        gp->A[c] += (double)v * wyi;
        gp->B[c] += (double)v * w1i;
        gp->var[c] -= (double)v * (double)v;
      }
      for (int64_t c = b + bc; c < gp->n_pad && c < b + bsz; c++) /* padding candidates: V = 0 */
        gp->V[((size_t)(c / GP_VB) * (size_t)cap + (size_t)i) * GP_VB + (size_t)(c % GP_VB)] = 0.0f;
    }
  }
  free(K);
  gp->var_sum = gp_var_total(gp);
  return 0;
}

int mpt_gp_set_hyper(mpt_gp *gp, const double *ls, double variance, double noise, mpt_error *err) {
  if (!(variance > 0) || !(noise >= 0))
    return mpt_error_set(err, MPT_ERR_VALUE, "gp: bad hyperparameters (variance %g, noise %g)", variance, noise);
  for (int d = 0; d < gp->dim; d++)
    if (!(ls[d] > 0)) return mpt_error_set(err, MPT_ERR_VALUE, "gp: lengthscale %d is %g (must be > 0)", d, ls[d]);
  for (int d = 0; d < gp->dim; d++) {
    gp->ls[d] = ls[d];
    gp->inv_ls[d] = 1.0 / ls[d];
  }
  gp->variance = variance;
  gp->noise = noise;
  return refactor(gp, err);
}

int mpt_gp_log_marginal(const mpt_gp *gp, const double *ls, double variance, double noise, double *lml,
                        mpt_error *err) {
  int n = gp->n;
  *lml = 0;
  if (n == 0) return 0;
  if (gp->lml_fn) { /* the backend (the model ranks' ScaLAPACK path), unless it declines (> 0) */
    int rc = gp->lml_fn(gp->lml_ctx, gp, ls ? ls : gp->ls, ls ? variance : gp->variance, ls ? noise : gp->noise, lml, err);
    if (rc <= 0) return rc;
  }
  double *inv_ls = malloc(sizeof(double) * (size_t)gp->dim);
  double *a = malloc(sizeof(double) * (size_t)n * (size_t)n);
  double *z = malloc(sizeof(double) * (size_t)n);
  if (!inv_ls || !a || !z) {
    free(inv_ls); free(a); free(z);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory");
  }
  for (int d = 0; d < gp->dim; d++) inv_ls[d] = 1.0 / (ls ? ls[d] : gp->ls[d]);
  if (!ls) {
    variance = gp->variance;
    noise = gp->noise;
  }
  int rc = factor_obs(gp, inv_ls, variance, noise, a, n, err);
  if (rc == 0) {
    double m, s;
    mpt_gp_normalization(gp, &m, &s);
    for (int i = 0; i < n; i++) z[i] = (gp->yo[i] - m) / s;
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, a, n, z, 1);
    double q = cblas_ddot(n, z, 1, z, 1), ld = 0;
    for (int i = 0; i < n; i++) ld += log(a[(size_t)i * n + i]);
    *lml = -0.5 * q - ld - 0.5 * n * log(2 * M_PI);
  }
  free(inv_ls); free(a); free(z);
  return rc;
}

void mpt_gp_set_lml_backend(mpt_gp *gp, mpt_gp_lml_fn fn, void *ctx) {
  gp->lml_fn = fn;
  gp->lml_ctx = ctx;
}
