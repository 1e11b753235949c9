/* gp/gp_ahead.c: rows of the factor solved ahead (mpt_gp_ahead, gp/gp.h): the points an ask is about to add in
 * runs (strategies/bo/bo_model.c), their rows of L solved over the observations already in the GP in one pass over
 * L per 64 points, and continued by each run (gp_ahead_presolve, called by mpt_gp_add_many_ahead in
 * gp/gp_batch.c) over the observations added since. gp_solve_many's entries depend only on the rows of L before
 * them, so the rows are the bits gp_presolve solves in one go. */
#include <stdlib.h>
#include <string.h>
#include "gp/gp_impl.h"

struct mpt_gp_ahead {
  const mpt_gp *gp;
  uint64_t gen;    /* gp->l_gen when solved */
  int n0, dim;     /* observations solved over, inputs per point */
  int k, next;     /* points, the next to be added */
  double *X;       /* k x dim */
  double *rows;    /* k x n0: each point's row of L over the first n0 observations */
  size_t cap_x, cap_rows;
};

int mpt_gp_ahead_create(mpt_gp_ahead **out, mpt_error *err) {
  *out = calloc(1, sizeof **out);
  return *out ? 0 : mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory for rows solved ahead");
}

void mpt_gp_ahead_free(mpt_gp_ahead *a) {
  if (!a) return;
  free(a->X);
  free(a->rows);
  free(a);
}

/* *p grown to n doubles (kept when big enough); 0 or -1 */
static int room(double **p, size_t *cap, size_t n) {
  if (n <= *cap) return 0;
  double *q = realloc(*p, sizeof(double) * n);
  if (!q) return -1;
  *p = q;
  *cap = n;
  return 0;
}

int mpt_gp_ahead_solve(mpt_gp_ahead *a, const mpt_gp *gp, int k, const double *X, mpt_error *err) {
  a->k = a->next = 0;
  if (k <= 0) return 0;
  int n0 = gp->n;
  if (room(&a->X, &a->cap_x, (size_t)k * (size_t)gp->dim) || room(&a->rows, &a->cap_rows, (size_t)k * (size_t)n0))
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory solving %d rows ahead", k);
  memcpy(a->X, X, sizeof(double) * (size_t)k * (size_t)gp->dim);
  for (int j = 0; j < k; j++) /* as gp_presolve: the kernel values, then the solve */
    gp_kernel_obs(gp, X + (size_t)j * gp->dim, gp->inv_ls, gp->variance, a->rows + (size_t)j * n0);
  for (int j0 = 0; j0 < k && n0 > 0; j0 += 64) {
    double *x[64];
    int m = k - j0 < 64 ? k - j0 : 64;
    for (int j = 0; j < m; j++) x[j] = a->rows + (size_t)(j0 + j) * n0;
    gp_solve_many(n0, gp->L, (size_t)gp->cap, m, x);
  }
  a->gp = gp;
  a->gen = gp->l_gen;
  a->n0 = n0;
  a->dim = gp->dim;
  a->k = k;
  return 0;
}

int gp_ahead_presolve(mpt_gp_ahead *a, mpt_gp *gp, int k, const double *X, const double *y_all, double *ywork) {
  if (!a || a->k == 0) return 0;
  if (a->gp != gp || a->gen != gp->l_gen || gp->n < a->n0 || a->next + k > a->k ||
      memcmp(a->X + (size_t)a->next * a->dim, X, sizeof(double) * (size_t)k * (size_t)a->dim) != 0) {
    a->k = 0; /* no longer holds: dropped */
    return 0;
  }
  const double *rows = a->rows + (size_t)a->next * a->n0;
  a->next += k;
  if (k == 1 || k + 1 > GP_MAX_RHS || gp->cap < gp->n + k) return 0;
  int n0 = gp->n, from = a->n0;
  double *x[GP_MAX_RHS];
  for (int j = 0; j < k; j++) {
    x[j] = gp->L + (size_t)(n0 + j) * gp->cap;
    memcpy(x[j], rows + (size_t)j * from, sizeof(double) * (size_t)from);
    if (n0 > from) gp_kernel_obs_from(gp, X + (size_t)j * gp->dim, from, x[j]);
  }
  gp_solve_many_from(from, n0, gp->L, (size_t)gp->cap, k, x);
  if (y_all) { /* every output replaced: solved over all of L (one right-hand side: the same bits alone) */
    memcpy(ywork, y_all, sizeof(double) * (size_t)n0);
    if (n0 > 0) gp_solve_many(n0, gp->L, (size_t)gp->cap, 1, &ywork);
  }
  return 1;
}
