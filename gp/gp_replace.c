/* gp/gp_replace.c: candidates of a GP replaced by other points (gp/gp.h mpt_gp_replace_candidates): the new
 * points stored (gp/gp_cand.h), their columns of V = L^-1 K(X_obs, x) from the current factor in one blocked
 * triangular solve, and their A, B, var summed as the factor from scratch sums them (gp/gp_factor.c). */
#include "gp/gp.h"
#include "gp/gp_impl.h"
#include <cblas.h>
#include <stdlib.h>

/* candidates solved per triangular solve: m x n_obs doubles of scratch */
#define REPLACE_BLOCK 256

int mpt_gp_candidate_fits(const mpt_gp *gp, const double *x) { return mpt_gp_cands_fits(&gp->cs, x); }

/* the columns of slots[0..m) (m <= REPLACE_BLOCK) from their points X, K: m x n scratch */
static void replace_block(mpt_gp *gp, int64_t m, const int64_t *slots, const double *X, double *K) {
  int n = gp->n, cap = gp->cap;
  for (int64_t j = 0; j < m; j++) gp_kernel_obs(gp, X + (size_t)j * (size_t)gp->dim, gp->inv_ls, gp->variance, K + (size_t)j * (size_t)n);
  /* row j of K L^-T is (L^-1 k_j)^T: the new column of V of candidate j */
  if (n > 0)
    cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, (int)m, n, 1.0, gp->L, cap, K, n);
  for (int64_t j = 0; j < m; j++) {
    int64_t c = slots[j];
    const double *v = K + (size_t)j * (size_t)n;
    double A = 0, B = 0, var = gp->variance;
    float *col = gp->V + (size_t)(c / GP_VB) * (size_t)cap * GP_VB + (size_t)(c % GP_VB);
    for (int i = 0; i < n; i++) {
      float f = (float)v[i];
      col[(size_t)i * GP_VB] = f;
      A += (double)f * gp->wy[i];
      B += (double)f * gp->w1[i];
      var -= (double)f * (double)f;
    }
    gp->A[c] = A;
    gp->B[c] = B;
    gp->var[c] = var;
  }
}

int mpt_gp_replace_candidates(mpt_gp *gp, int64_t m, const int64_t *slots, const double *X, mpt_error *err) {
  for (int64_t j = 0; j < m; j++) {
    if (slots[j] < 0 || slots[j] >= gp->n_cand)
      return mpt_error_set(err, MPT_ERR_VALUE, "gp: candidate %lld to replace is out of range (%lld candidates)",
                           (long long)slots[j], (long long)gp->n_cand);
    if (!mpt_gp_cands_fits(&gp->cs, X + (size_t)j * (size_t)gp->dim))
      return mpt_error_set(err, MPT_ERR_VALUE, "gp: replacement %lld has a value the candidates' codes do not hold",
                           (long long)j);
  }
  if (m <= 0) return 0;
  int64_t blk = m < REPLACE_BLOCK ? m : REPLACE_BLOCK;
  double *K = malloc(sizeof(double) * (size_t)blk * (size_t)(gp->n > 0 ? gp->n : 1));
  if (!K) return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory replacing %lld candidates", (long long)m);
  for (int64_t j = 0; j < m; j++) mpt_gp_cands_set(&gp->cs, slots[j], X + (size_t)j * (size_t)gp->dim);
  for (int64_t j0 = 0; j0 < m; j0 += blk) {
    int64_t mb = m - j0 < blk ? m - j0 : blk;
    replace_block(gp, mb, slots + j0, X + (size_t)j0 * (size_t)gp->dim, K);
  }
  free(K);
  gp->var_sum = gp_var_total(gp);
  return 0;
}
