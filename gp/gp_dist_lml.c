/* gp/gp_dist_lml.c: on the distributed factor (gp/gp_dist.h): the log marginal likelihood, its gradient
 * with respect to the log-hyperparameters (K^-1 by pdpotri, then one pass over the local lower blocks) and
 * the posterior at given points (the cross-covariance block-cyclic, pdtrsm). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp.h"
#include "gp/gp_dist.h"
#include "gp/gp_dist_blacs.h"

/* d k / d r2 of the unit-variance kernel at squared scaled distance r2 > 0 */
static double dk_dr2(int kernel, double r2) {
  switch (kernel) {
  case MPT_GP_MATERN12: {
    double t = sqrt(r2);
    return t > 0 ? -exp(-t) / (2.0 * t) : 0.0;
  }
  case MPT_GP_MATERN32: return -1.5 * exp(-sqrt(3.0 * r2));
  case MPT_GP_MATERN52: {
    double t = sqrt(5.0 * r2);
    return -(5.0 / 6.0) * exp(-t) * (1.0 + t);
  }
  default: return -0.5 * exp(-0.5 * r2);
  }
}

/* g += weight * dK_ij / d(log lengthscales, log variance, log noise) for one pair i, j */
static void pair_grad(const mpt_gp_dist_hyper *h, const double *xi, const double *xj, int diag, double noise_eff,
                      double weight, double *g) {
  int dim = h->dim;
  if (diag) {
    g[dim] += weight * (h->variance + MPT_GP_JITTER * h->variance);
    g[dim + 1] += weight * (noise_eff - MPT_GP_JITTER * h->variance);
    return;
  }
  double r2 = mpt_gp_dist_dist2(xi, xj, h->inv_ls, dim);
  double dk = weight * h->variance * dk_dr2(h->kernel, r2);
  for (int q = 0; q < dim; q++) {
    double t = (xi[q] - xj[q]) * h->inv_ls[q];
    g[q] += dk * (-2.0 * t * t);
  }
  g[dim] += weight * h->variance * mpt_gp_kernel_r2(h->kernel, r2);
}

/* grad = 0.5 sum_ij (a_i a_j - Kinv_ij) dK_ij, over the local lower blocks of Kinv (W) */
static void grad_from_inverse(const mpt_gp_dist *d, const mpt_gp_dist_hyper *h, const double *X, const double *a,
                              const double *W, double *grad) {
  memset(grad, 0, sizeof(double) * (size_t)(h->dim + 2));
  for (int lj = 0; lj < d->nloc; lj++) {
    int j = mpt_gp_dist_col(d, lj);
    for (int li = 0; li < d->mloc; li++) {
      int i = mpt_gp_dist_row(d, li);
      if (i < j) continue;
      double w = (a[i] * a[j] - W[(size_t)lj * d->lld + li]) * (i == j ? 0.5 : 1.0); /* 2 x 0.5 off the diagonal */
      pair_grad(h, X + (size_t)i * h->dim, X + (size_t)j * h->dim, i == j, d->noise_eff, w, grad);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, grad, h->dim + 2, MPI_DOUBLE, MPI_SUM, d->comm);
}

/* K^-1 from the factor into the local blocks of a new array (pdpotri on a copy); NULL out of memory */
static double *inverse(const mpt_gp_dist *d, mpt_error *err) {
  size_t sz = (size_t)d->lld * (size_t)(d->nloc > 0 ? d->nloc : 1);
  double *W = malloc(sizeof(double) * sz);
  int ok = W != NULL, all = 0, one = 1, info = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, d->comm);
  if (!all) {
    free(W);
    mpt_error_set(err, MPT_ERR_NOMEM, "gp_dist: no memory for the inverse covariance");
    return NULL;
  }
  memcpy(W, d->A, sizeof(double) * sz);
  pdpotri_("L", &d->n, W, &one, &one, d->desc, &info);
  return W;
}

int mpt_gp_dist_lml(mpt_gp_dist *d, const mpt_gp_dist_hyper *h, const double *X, const double *y, double *lml,
                    double *grad, mpt_error *err) {
  int n = d->n, rc = mpt_gp_dist_factor(d, h, X, err);
  if (rc) return rc;
  double *a = malloc(sizeof(double) * (size_t)n);
  if (!a) return mpt_error_set(err, MPT_ERR_NOMEM, "gp_dist: out of memory");
  if ((rc = mpt_gp_dist_solve(d, y, a, err)) != 0) { free(a); return rc; }
  double q = 0;
  for (int i = 0; i < n; i++) q += y[i] * a[i];
  *lml = -0.5 * q - 0.5 * mpt_gp_dist_logdet(d) - 0.5 * n * log(2 * M_PI);
  if (grad) {
    double *W = inverse(d, err);
    if (!W) { free(a); return err->code; }
    grad_from_inverse(d, h, X, a, W, grad);
    free(W);
  }
  free(a);
  return 0;
}

/* the local blocks of the n x nc cross-covariance k(X, C) (leading dimension d->lld) */
static void fill_cross(const mpt_gp_dist *d, const mpt_gp_dist_hyper *h, const double *X, const double *C, int ncl,
                       double *B) {
  for (int lj = 0; lj < ncl; lj++) {
    const double *c = C + (size_t)mpt_gp_dist_col(d, lj) * h->dim;
    for (int li = 0; li < d->mloc; li++) {
      double r2 = mpt_gp_dist_dist2(c, X + (size_t)mpt_gp_dist_row(d, li) * h->dim, h->inv_ls, h->dim);
      B[(size_t)lj * d->lld + li] = h->variance * mpt_gp_kernel_r2(h->kernel, r2);
    }
  }
}

/* out[c] = sum over the local rows of column c of f(B, alpha), for every local column, then summed over all ranks */
static void column_sums(const mpt_gp_dist *d, const double *B, int ncl, int nc, const double *alpha, double *out) {
  memset(out, 0, sizeof(double) * (size_t)nc);
  for (int lj = 0; lj < ncl; lj++) {
    const double *col = B + (size_t)lj * d->lld;
    double s = 0;
    for (int li = 0; li < d->mloc; li++) s += alpha ? col[li] * alpha[mpt_gp_dist_row(d, li)] : col[li] * col[li];
    out[mpt_gp_dist_col(d, lj)] = s;
  }
  MPI_Allreduce(MPI_IN_PLACE, out, nc, MPI_DOUBLE, MPI_SUM, d->comm);
}

int mpt_gp_dist_posterior(const mpt_gp_dist *d, const mpt_gp_dist_hyper *h, const double *X, const double *alpha,
                          double m0, int nc, const double *C, double *mean, double *var, mpt_error *err) {
  if (!d->factored) return mpt_error_set(err, MPT_ERR_VALUE, "gp_dist: posterior before a factorization");
  if (nc < 1) return 0;
  int zero = 0, one = 1, info = 0, desc[9];
  int ncl = numroc_(&nc, &d->nb, &d->mycol, &zero, &d->npcol);
  descinit_(desc, &d->n, &nc, &d->nb, &d->nb, &zero, &zero, (int *)&d->ctxt, (int *)&d->lld, &info);
  double *B = malloc(sizeof(double) * (size_t)d->lld * (size_t)(ncl > 0 ? ncl : 1));
  int ok = B != NULL, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, d->comm);
  if (!all) { free(B); return mpt_error_set(err, MPT_ERR_NOMEM, "gp_dist: no memory for %d points", nc); }
  fill_cross(d, h, X, C, ncl, B);
  column_sums(d, B, ncl, nc, alpha, mean);
  for (int c = 0; c < nc; c++) mean[c] += m0;
  double a1 = 1.0;
  pdtrsm_("L", "L", "N", "N", &d->n, &nc, &a1, d->A, &one, &one, d->desc, B, &one, &one, desc);
  column_sums(d, B, ncl, nc, NULL, var);
  for (int c = 0; c < nc; c++) var[c] = h->variance - var[c] > 0 ? h->variance - var[c] : 0.0;
  free(B);
  return 0;
}
