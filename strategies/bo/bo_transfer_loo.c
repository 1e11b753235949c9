/* strategies/bo/bo_transfer_loo.c: leave-one-out predictive densities of this device's observations with and
 * without bo's transfer prior mean (strategies/bo/bo_transfer_loo.h).
 *
 * Both models share the GP's inputs, kernel, lengthscales and noise, so they share C = K + noise I and its
 * inverse; only the outputs differ. For normalized outputs u (mean removed, divided by their sd s), leaving
 * observation i out predicts it with the error [C^-1 u]_i / [C^-1]_ii and the variance 1 / [C^-1]_ii (Rasmussen
 * and Williams, eq. 5.12), so the sum of the log densities in t's units is
 *   sum_i ( -[C^-1 u]_i^2 / (2 [C^-1]_ii) + log([C^-1]_ii) / 2 ) - n log s   (constants dropped).
 * The prior mean's weights were fitted on every observation, the left-out one too: a small bias towards
 * transfer (a handful of weights, shrunk, against up to 256 observations). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_multitask.h"
#include "strategies/bo/bo_transfer_loo.h"

#define LOO_MAX_OBS 256

/* the summed leave-one-out log density of outputs y[0, n) given Cinv (n x n, lower triangle filled in full); a is
 * scratch for n values */
static double loo_sum(const double *Cinv, const double *y, int n, double *a, double *pred) {
  double mean = 0, ss = 0;
  for (int i = 0; i < n; i++) mean += y[i];
  mean /= n;
  for (int i = 0; i < n; i++) ss += (y[i] - mean) * (y[i] - mean);
  double s = sqrt(ss / (n - 1));
  if (!(s > 1e-12)) s = 1e-12;
  for (int i = 0; i < n; i++) a[i] = (y[i] - mean) / s;
  double *u = a + n;
  cblas_dsymv(CblasRowMajor, CblasLower, n, 1.0, Cinv, n, a, 1, 0.0, u, 1);
  double sum = -n * log(s);
  for (int i = 0; i < n; i++) {
    double d = Cinv[(size_t)i * n + i];
    sum += -0.5 * u[i] * u[i] / d + 0.5 * log(d);
    if (pred) pred[i] = y[i] - s * u[i] / d; /* the leave-one-out mean in y's units */
  }
  return sum;
}

/* the correlation of a[0, n) and b[0, n) (0 when either is constant) */
static double correlation(const double *a, const double *b, int n) {
  double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
  for (int i = 0; i < n; i++) { ma += a[i]; mb += b[i]; }
  ma /= n;
  mb /= n;
  for (int i = 0; i < n; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
}

int bo_transfer_loo(bo_state *b, const int64_t *obs, const double *t, const double *offset, int n, int by_corr,
                    double *plain, double *with, mpt_error *err) {
  *plain = *with = 0;
  if (n < 3) return 0;
  const int D = b->D, step = (n + LOO_MAX_OBS - 1) / LOO_MAX_OBS, m = (n + step - 1) / step;
  double var, noise;
  double *inv_ls = malloc((size_t)D * sizeof *inv_ls), *X = malloc((size_t)m * D * sizeof *X),
         *C = malloc((size_t)m * m * sizeof *C), *y = malloc((size_t)m * 5 * sizeof *y);
  int rc = 0;
  if (!inv_ls || !X || !C || !y) {
    rc = mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for the leave-one-out check of transfer");
    goto done;
  }
  mpt_gp_get_hyper(b->gp, inv_ls, &var, &noise);
  for (int d = 0; d < D; d++) inv_ls[d] = 1.0 / inv_ls[d];
  for (int i = 0; i < m; i++) memcpy(X + (size_t)i * D, bo_point(b, obs[(size_t)i * step]), (size_t)D * sizeof *X);
  bo_kernel_matrix(mpt_gp_kernel_of(b->gp), inv_ls, D, X, m, X, m, C);
  for (int i = 0; i < m; i++) C[(size_t)i * m + i] += noise / (var > 0 ? var : 1) + MPT_GP_JITTER;
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', m, C, m) != 0 || LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'L', m, C, m) != 0)
    goto done; /* no verdict: both 0 */
  double *pred = y + 3 * m, *yt = y + 4 * m;
  for (int i = 0; i < m; i++) yt[i] = y[i] = t[(size_t)i * step];
  *plain = loo_sum(C, y, m, y + m, pred);
  if (by_corr) *plain = correlation(pred, yt, m);
  for (int i = 0; i < m; i++) y[i] = t[(size_t)i * step] - offset[(size_t)i * step];
  *with = loo_sum(C, y, m, y + m, pred);
  for (int i = 0; by_corr && i < m; i++) pred[i] += offset[(size_t)i * step];
  if (by_corr) *with = correlation(pred, yt, m);
done:
  free(inv_ls); free(X); free(C); free(y);
  return rc;
}
