/* gp/gp_pool_plan.c: the plan of the pool's next extra observations (gp/gp_pool.h,
 * mpt_gp_pool_plan_candidates, _plan_columns): the planned candidates' columns of V, their A, B, var, and their
 * products with the members' columns from one dgemm, read by the adds that follow the plan's order
 * (gp/gp_pool_fantasy.c). */
#include <cblas.h>
#include <string.h>
#include "gp/gp_pool_impl.h"

/* room for a plan of n candidates; 0 or an error */
static int plan_room(mpt_gp_pool *p, int64_t n, mpt_error *err) {
  if (gp_pool_reserve((void **)&p->plan_ids, n, sizeof(int64_t)) ||
      gp_pool_reserve((void **)&p->plan_L, n * p->n0, sizeof(double)) ||
      gp_pool_reserve((void **)&p->plan_G, n * p->n, sizeof(double)) ||
      gp_pool_reserve((void **)&p->plan_abv, 3 * n, sizeof(double)) ||
      gp_pool_reserve((void **)&p->V0d, p->n * p->n0, sizeof(double)))
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory for %lld planned pool observations", (long long)n);
  return 0;
}

/* the plan of cand[0..n), whose columns (plan_L) and A, B, var (plan_abv) are filled: their products with the
 * members' columns, and the plan started */
static void plan_start(mpt_gp_pool *p, const int64_t *cand, int64_t n) {
  int n0 = p->n0;
  memcpy(p->plan_ids, cand, sizeof(int64_t) * (size_t)n);
  /* G (n x members) = plan_L (n x n0) . V0^T (V0: members x n0) */
  if (n0 > 0 && p->n > 0) {
    for (int64_t i = 0; i < p->n * n0; i++) p->V0d[i] = p->V0[i];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)p->n, n0, 1.0, p->plan_L, n0, p->V0d, n0, 0.0,
                p->plan_G, (int)p->n);
  }
  else if (p->n > 0) memset(p->plan_G, 0, sizeof(double) * (size_t)n * (size_t)p->n);
  p->plan_n = n;
  p->plan_nf0 = p->nf;
}

int mpt_gp_pool_plan_candidates(mpt_gp_pool *p, const int64_t *cand, int64_t n, mpt_error *err) {
  const mpt_gp *gp = p->gp;
  int n0 = p->n0;
  p->plan_n = p->plan_next = 0;
  if (n <= 0 || n0 == 0 || p->n == 0) return 0;
  int rc = plan_room(p, n, err);
  if (rc) return rc;
  for (int64_t q = 0; q < n; q++) {
    int64_t c = cand[q];
    if (c < 0 || c >= gp->n_cand) return mpt_error_set(err, MPT_ERR_VALUE, "gp: pool candidate %lld out of range", (long long)c);
    const float *col = gp_pool_gp_column(gp, c);
    double *row = p->plan_L + (size_t)q * n0;
    for (int i = 0; i < n0; i++) row[i] = col[(size_t)i * GP_VB];
    p->plan_abv[3 * q] = gp->A[c];
    p->plan_abv[3 * q + 1] = gp->B[c];
    p->plan_abv[3 * q + 2] = gp->var[c];
  }
  plan_start(p, cand, n);
  return 0;
}

int mpt_gp_pool_plan_columns(mpt_gp_pool *p, const int64_t *cand, int64_t n, const float *V, const double *abv,
                             mpt_error *err) {
  int n0 = p->n0;
  p->plan_n = p->plan_next = 0;
  if (n <= 0) return 0;
  int rc = plan_room(p, n, err);
  if (rc) return rc;
  for (int64_t q = 0; q < n * n0; q++) p->plan_L[q] = V[q];
  memcpy(p->plan_abv, abv, sizeof(double) * 3 * (size_t)n);
  plan_start(p, cand, n);
  return 0;
}
