/* gp/gp_add_row.c: the first half of adding an observation (gp_add_prepare, gp/gp_impl.h): checks, room,
 * its new row of the Cholesky factor and of wy, w1 by forward substitution in a fixed order (one or several
 * right-hand sides in one pass over L), the point appended; gp_presolve the rows of a batch's new points
 * solved at once. The pass over V that follows: gp/gp_add.c (single adds), gp/gp_batch.c (a batch). */
#include "gp/gp.h"
#include "gp/gp_impl.h"
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gp/gp_hot.h"

typedef double gp_v4d __attribute__((vector_size(32)));

/* x = L^-1 x and, with y, y = L^-1 y for the lower factor L (n rows, stride ld) by forward substitution
 * in one pass over L, by blocks of 32 rows: the dot products of a block's rows with the solved part
 * before the block are independent (4 interleaved partial sums each: they overlap in the pipeline and in
 * memory), then the triangle of the block in row order. A fixed order: the same results on every
 * machine, unlike BLAS kernels chosen by CPU. */
GP_HOT static void solve_lower2(int n, const double *restrict L, size_t ld, double *restrict x, double *restrict y) {
  double px[32], py[32];
  for (int i0 = 0; i0 < n; i0 += 32) {
    int i1 = i0 + 32 < n ? i0 + 32 : n;
    for (int i = i0; i < i1; i++) { /* i0 is a multiple of 4 */
      const double *restrict Li = L + (size_t)i * ld;
      if (i + 4 < n) /* rows are ld apart and partly used: the prefetcher does not see them coming */
        for (int j = 0; j <= i + 4; j += 8) __builtin_prefetch(Li + 4 * ld + j);
      gp_v4d sx = {0}, sy = {0};
      for (int j = 0; j < i0; j += 4) {
        gp_v4d lv, xv;
        memcpy(&lv, Li + j, sizeof lv);
        memcpy(&xv, x + j, sizeof xv);
        sx += lv * xv;
        if (y) {
          gp_v4d yv;
          memcpy(&yv, y + j, sizeof yv);
          sy += lv * yv;
        }
      }
      double t[4];
      memcpy(t, &sx, sizeof t);
      px[i - i0] = (t[0] + t[1]) + (t[2] + t[3]);
      memcpy(t, &sy, sizeof t);
      py[i - i0] = (t[0] + t[1]) + (t[2] + t[3]);
    }
    for (int i = i0; i < i1; i++) {
      const double *restrict Li = L + (size_t)i * ld;
      double dx = px[i - i0], dy = py[i - i0];
      for (int j = i0; j < i; j++) {
        dx += Li[j] * x[j];
        if (y) dy += Li[j] * y[j];
      }
      x[i] = (x[i] - dx) / Li[i];
      if (y) y[i] = (y[i] - dy) / Li[i];
    }
  }
}

/* solve_lower2's forward substitution for rows [from, to) of m right-hand sides x[j] at once (their
 * entries before `from` already solved), each with solve_lower2's operations in its order: the same
 * results, one pass over the rows of L for all of them (the new observations of mpt_gp_add_many) */
GP_HOT static void solve_rows(int from, int to, const double *restrict L, size_t ld, int m, double *const *x) {
  double px[32 * GP_MAX_RHS];
  for (int i0 = from / 32 * 32; i0 < to; i0 += 32) {
    int i1 = i0 + 32 < to ? i0 + 32 : to, ia = i0 > from ? i0 : from;
    for (int i = ia; i < i1; i++) {
      const double *restrict Li = L + (size_t)i * ld;
      gp_v4d s[GP_MAX_RHS];
      for (int r = 0; r < m; r++) s[r] = (gp_v4d){0};
      for (int j = 0; j < i0; j += 4) {
        gp_v4d lv;
        memcpy(&lv, Li + j, sizeof lv);
        for (int r = 0; r < m; r++) {
          gp_v4d xv;
          memcpy(&xv, x[r] + j, sizeof xv);
          s[r] += lv * xv;
        }
      }
      for (int r = 0; r < m; r++) {
        double t[4];
        memcpy(t, &s[r], sizeof t);
        px[(i - i0) * GP_MAX_RHS + r] = (t[0] + t[1]) + (t[2] + t[3]);
      }
    }
    for (int i = ia; i < i1; i++) {
      const double *restrict Li = L + (size_t)i * ld;
      for (int r = 0; r < m; r++) {
        double d = px[(i - i0) * GP_MAX_RHS + r], *xr = x[r];
        for (int j = i0; j < i; j++) d += Li[j] * xr[j];
        xr[i] = (xr[i] - d) / Li[i];
      }
    }
  }
}

int gp_presolve(mpt_gp *gp, int k, const double *X, const double *y_all, double *ywork) {
  int n0 = gp->n;
  if (k + 1 > GP_MAX_RHS || gp->cap < n0 + k) return -1;
  for (int j = 0; j < k; j++)
    gp_kernel_obs(gp, X + (size_t)j * gp->dim, gp->inv_ls, gp->variance, gp->L + (size_t)(n0 + j) * gp->cap);
  if (y_all) memcpy(ywork, y_all, sizeof(double) * (size_t)n0);
  double *x[GP_MAX_RHS];
  for (int j = 0; j < k; j++) x[j] = gp->L + (size_t)(n0 + j) * gp->cap;
  if (y_all) x[k] = ywork;
  if (n0 > 0) gp_solve_many(n0, gp->L, (size_t)gp->cap, k + (y_all ? 1 : 0), x);
  return 0;
}

/* The first half of adding observation x (output y; with y_all, n_obs + 1 outputs, the last the new
 * point's, replacing every output): checks, room, the new row of the factor and of wy, w1 (the pass over
 * the candidates still to come), the point appended and n_obs incremented. lf and wf (room for n_obs
 * floats; NULL: the GP's scratch) get the float pass's copies of the row and, with y_all, of wy. */
int gp_add_prepare(mpt_gp *gp, const double *x, double y, const double *y_all, float *lf, float *wf, gp_row *r,
                   mpt_error *err) {
  return gp_add_prepare_from(gp, x, y, y_all, 0, NULL, lf, wf, r, err);
}

int gp_add_prepare_from(mpt_gp *gp, const double *x, double y, const double *y_all, int pre, const double *ypre,
                        float *lf, float *wf, gp_row *r, mpt_error *err) {
  if (!isfinite(y)) return mpt_error_set(err, MPT_ERR_VALUE, "gp: observation is not finite");
  for (int j = 0; j < gp->dim; j++) /* a NaN or infinite input would make the whole model NaN for good */
    if (!isfinite(x[j])) return mpt_error_set(err, MPT_ERR_VALUE, "gp: input coordinate %d is not finite", j);
  if (y_all)
    for (int i = 0; i < gp->n; i++)
      if (!isfinite(y_all[i])) return mpt_error_set(err, MPT_ERR_VALUE, "gp: output %d is not finite", i);
  if (gp->n == gp->cap) {
    int rc = gp_grow(gp, err);
    if (rc) return rc;
  }
  if (!lf) { /* the GP's own scratch (after the growth, which moves it) */
    lf = gp->lf;
    wf = gp->wf;
  }
  int n = gp->n, cap = gp->cap, dim = gp->dim;
  double ne = mpt_gp_noise_eff(gp->noise, gp->variance);
  double *l = gp->L + (size_t)n * cap;          /* new row of L */
  if (pre == 0) gp_kernel_obs(gp, x, gp->inv_ls, gp->variance, l);
  else gp_kernel_obs_from(gp, x, pre, l);
  if (y_all) { /* all outputs change: wy = L^-1 y over the extended factor (solved with l, one pass over L) */
    memcpy(gp->yo, y_all, sizeof(double) * (size_t)n);
    memcpy(gp->wy, y_all, sizeof(double) * (size_t)n);
    if (pre > 0) memcpy(gp->wy, ypre, sizeof(double) * (size_t)pre);
  }
  if (pre == 0 && n > 0) solve_lower2(n, gp->L, (size_t)cap, l, y_all ? gp->wy : NULL);
  else if (n > pre) solve_rows(pre, n, gp->L, (size_t)cap, y_all ? 2 : 1, (double *const[]){l, gp->wy});
  double ll = n > 0 ? cblas_ddot(n, l, 1, l, 1) : 0.0;
  double d = gp->variance + ne - ll;
  if (d < ne) d = ne; /* the posterior variance is >= 0: only rounding can push it below */
  double lnn = sqrt(d);
  l[n] = lnn;
  r->w1n = (1.0 - (n > 0 ? cblas_ddot(n, l, 1, gp->w1, 1) : 0.0)) / lnn;
  r->wyn = (y - (n > 0 ? cblas_ddot(n, l, 1, gp->wy, 1) : 0.0)) / lnn;
  r->inv_lnn = 1.0 / lnn;
  r->exact = sqrt(gp->variance + ne) * r->inv_lnn > GP_EXACT_GAIN;
  r->n = n;
  r->l = l;
  r->wy = y_all ? gp->wy : NULL;
  r->lf = lf;
  r->wf = y_all ? wf : NULL;
  if (!r->exact) { /* the float pass's copies (the double pass reads l and wy) */
    for (int i = 0; i < n; i++) lf[i] = (float)l[i];
    if (y_all)
      for (int i = 0; i < n; i++) wf[i] = (float)gp->wy[i];
  }
  memcpy(gp->Xo + (size_t)n * dim, x, sizeof(double) * (size_t)dim);
  for (int k = 0; k < dim; k++) gp->XoT[(size_t)k * cap + n] = x[k];
  gp->yo[n] = y;
  gp->wy[n] = r->wyn;
  gp->w1[n] = r->w1n;
  gp->n = n + 1;
  return 0;
}
