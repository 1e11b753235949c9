/* strategies/bo/bo_multitask.c: the two-task intrinsic coregionalization model of this device and the related
 * sources pooled, its correlation fitted by marginal likelihood (strategies/bo/bo_multitask.h).
 *
 * Both tasks share the covariance function of bo's GP (its kernel and lengthscales, unit variance on
 * standardized outputs). The others are the pooled column at a sample of the related configurations, observed
 * with noise 0.01 (as the summary GP of bo_transfer.c). With B = [[1, rho], [rho, 1]] the joint likelihood of
 * both tasks' outputs is that of the others (which does not depend on rho) times that of this device given the
 * others, so rho maximizes the latter: a Gaussian with the mean rho * col at this device's configurations and the
 * covariance K_tt + noise - rho^2 Q, Q = K_to K_oo^-1 K_ot. Each grid value costs one Cholesky factor of this
 * device's observations (at most ICM_MAX_OBS of them, evenly spaced over the told order beyond that). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_multitask.h"

#define ICM_MAX_OBS 256
#define ICM_OTHERS_NOISE 0.01

static const double rho_grid[] = {0.0, 0.2, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99};

/* K[i * nb + j] = k(A_i, B_j) with unit variance (strategies/bo/bo_multitask.h) */
void bo_kernel_matrix(int kernel, const double *inv_ls, int D, const double *A, int na, const double *B, int nb,
                      double *K) {
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++) {
      double r2 = 0;
      for (int d = 0; d < D; d++) {
        double u = (A[(size_t)i * D + d] - B[(size_t)j * D + d]) * inv_ls[d];
        r2 += u * u;
      }
      K[(size_t)i * nb + j] = mpt_gp_kernel_r2(kernel, r2);
    }
}

/* log density of r under N(0, C) with C = Ktt + noise I - rho^2 Q (lower triangles; C is scratch); -INFINITY
 * when C is not positive definite */
static double conditional_lml(const double *Ktt, const double *Q, double noise, double rho, const double *yt,
                              const double *ct, int nt, double *C, double *r) {
  for (int i = 0; i < nt; i++) {
    for (int j = 0; j <= i; j++) C[(size_t)i * nt + j] = Ktt[(size_t)i * nt + j] - rho * rho * Q[(size_t)i * nt + j];
    C[(size_t)i * nt + i] += noise;
    r[i] = yt[i] - rho * ct[i];
  }
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', nt, C, nt) != 0) return -INFINITY;
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, nt, C, nt, r, 1);
  double lml = -0.5 * cblas_ddot(nt, r, 1, r, 1);
  for (int i = 0; i < nt; i++) lml -= log(C[(size_t)i * nt + i]);
  return lml;
}

/* Q = K_to K_oo^-1 K_ot (lower triangle) from Koo (m x m, overwritten by its factor) and Kot (m x nt, overwritten);
 * 0, or -1 when K_oo is not positive definite */
static int others_explained(double *Koo, double *Kot, int m, int nt, double *Q) {
  for (int j = 0; j < m; j++) Koo[(size_t)j * m + j] += ICM_OTHERS_NOISE;
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', m, Koo, m) != 0) return -1;
  cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, m, nt, 1.0, Koo, m, Kot, nt);
  cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, nt, m, 1.0, Kot, nt, 0.0, Q, nt);
  return 0;
}

/* the mean and standard deviation of t[0, n) */
static void moments(const double *t, int n, double *mean, double *sd) {
  double s = 0, s2 = 0;
  for (int i = 0; i < n; i++) s += t[i];
  *mean = s / n;
  for (int i = 0; i < n; i++) s2 += (t[i] - *mean) * (t[i] - *mean);
  *sd = sqrt(s2 / (n - 1));
}

int bo_icm_correlation(bo_state *b, const int64_t *obs, const double *t, int n, const double *col,
                       const int64_t *others, int64_t m64, double *rho, double *sd_t, mpt_error *err) {
  *rho = 0;
  *sd_t = 0;
  if (n < 3 || m64 < 1) return 0;
  double mean;
  moments(t, n, &mean, sd_t);
  if (!(*sd_t > 1e-12)) return 0;
  const int D = b->D, m = (int)m64, step = (n + ICM_MAX_OBS - 1) / ICM_MAX_OBS, nt = (n + step - 1) / step;
  double var, noise;
  double *ls = malloc((size_t)D * sizeof *ls), *xt = malloc((size_t)nt * D * sizeof *xt),
         *xo = malloc((size_t)m * D * sizeof *xo), *yt = malloc((size_t)nt * 2 * sizeof *yt),
         *Ktt = malloc((size_t)nt * nt * sizeof *Ktt), *Q = malloc((size_t)nt * nt * sizeof *Q),
         *C = malloc((size_t)nt * nt * sizeof *C), *Koo = malloc((size_t)m * m * sizeof *Koo),
         *Kot = malloc((size_t)m * nt * sizeof *Kot), *r = malloc((size_t)nt * sizeof *r);
  int rc = 0;
  if (!ls || !xt || !xo || !yt || !Ktt || !Q || !C || !Koo || !Kot || !r) {
    rc = mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for the two-task model of transfer");
    goto done;
  }
  double *ct = yt + nt;
  mpt_gp_get_hyper(b->gp, ls, &var, &noise);
  for (int d = 0; d < D; d++) ls[d] = 1.0 / ls[d];
  for (int i = 0; i < nt; i++) {
    int k = i * step;
    memcpy(xt + (size_t)i * D, bo_point(b, obs[k]), (size_t)D * sizeof *xt);
    yt[i] = (t[k] - mean) / *sd_t;
    ct[i] = col[obs[k]];
  }
  for (int j = 0; j < m; j++) memcpy(xo + (size_t)j * D, bo_point(b, others[j]), (size_t)D * sizeof *xo);
  int kernel = mpt_gp_kernel_of(b->gp);
  bo_kernel_matrix(kernel, ls, D, xt, nt, xt, nt, Ktt);
  bo_kernel_matrix(kernel, ls, D, xo, m, xo, m, Koo);
  bo_kernel_matrix(kernel, ls, D, xo, m, xt, nt, Kot);
  if (others_explained(Koo, Kot, m, nt, Q) != 0) goto done; /* no correlation learnt */
  double best = -INFINITY, nz = noise / (var > 0 ? var : 1) + MPT_GP_JITTER;
  for (size_t g = 0; g < sizeof rho_grid / sizeof *rho_grid; g++) {
    double lml = conditional_lml(Ktt, Q, nz, rho_grid[g], yt, ct, nt, C, r);
    if (lml > best) { best = lml; *rho = rho_grid[g]; }
  }
done:
  free(ls); free(xt); free(xo); free(yt); free(Ktt); free(Q); free(C); free(Koo); free(Kot); free(r);
  return rc;
}
