/* tests/test_gp_dist.c: the ScaLAPACK path of gp/ (gp/gp_dist.h) under mpiexec.mpich -n 4 against LAPACK and
 * the serial GP (gp/gp.h), on covariances of configurations of paper_dedispersion (../shared/data/t1): the
 * factor, the solves (pdpotrs, pdtrsm) and the log-determinant agree with LAPACK to 1e-10 relative for
 * n = 500 and 2000, the log marginal likelihood with mpt_gp_log_marginal, its gradient with central
 * differences of itself, and the posterior with mpt_gp_predict_point. Every test is entered by every rank. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <mpi.h>
#include <string.h>
#include "gp/gp.h"
#include "gp/gp_dist.h"
#include "tests/gp_dist_fixture.h"

static int g_rank;
static gpd_points g_pts;

static double max_abs(const double *a, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fabs(a[i]) > m ? fabs(a[i]) : m;
  return m;
}

/* max |a - b| / max |b| */
static double rel_err(const double *a, const double *b, size_t n) {
  double e = 0;
  for (size_t i = 0; i < n; i++) e = fabs(a[i] - b[i]) > e ? fabs(a[i] - b[i]) : e;
  double s = max_abs(b, n);
  return e / (s > 0 ? s : 1);
}

static void hyper_of(mpt_gp_dist_hyper *h, double *inv_ls, double ls, double noise) {
  for (int q = 0; q < g_pts.dim; q++) inv_ls[q] = 1.0 / (ls * (1.0 + 0.1 * q));
  h->kernel = MPT_GP_MATERN32;
  h->dim = g_pts.dim;
  h->inv_ls = inv_ls;
  h->variance = 1.3;
  h->noise = noise;
}

static void check_factor_solves(int n) {
  double inv_ls[64];
  mpt_gp_dist_hyper h;
  hyper_of(&h, inv_ls, 0.6, 1e-4);
  double *X = gpd_encode(&g_pts, n, 3, 5), *y = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
  double *z = malloc(sizeof(double) * n), *L = malloc(sizeof(double) * (size_t)n * n);
  double *K = calloc((size_t)n * n, sizeof(double));
  gpd_outputs(X, n, g_pts.dim, y);
  mpt_gp_dist *d;
  mpt_error err;
  assert_int_equal(mpt_gp_dist_create(MPI_COMM_WORLD, n, 32, &d, &err), 0);
  assert_int_equal(mpt_gp_dist_factor(d, &h, X, &err), 0);
  double ld = mpt_gp_dist_logdet(d);
  assert_int_equal(mpt_gp_dist_solve(d, y, x, &err), 0);
  assert_int_equal(mpt_gp_dist_lower_solve(d, y, z, &err), 0);
  mpt_gp_dist_gather_lower(d, L);
  gpd_full_cov(&h, X, n, K);
  assert_int_equal(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, K, n), 0);
  for (int i = 0; i < n; i++) for (int j = i + 1; j < n; j++) K[(size_t)i * n + j] = 0;
  assert_true(rel_err(L, K, (size_t)n * n) < 1e-10);
  double ld_ref = 0, *xr = malloc(sizeof(double) * n), *zr = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) ld_ref += 2 * log(K[(size_t)i * n + i]);
  assert_true(fabs(ld - ld_ref) <= 1e-10 * fabs(ld_ref));
  memcpy(xr, y, sizeof(double) * n);
  memcpy(zr, y, sizeof(double) * n);
  LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', n, 1, K, n, xr, 1);
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, K, n, zr, 1);
  assert_true(rel_err(x, xr, n) < 1e-10);
  assert_true(rel_err(z, zr, n) < 1e-10);
  if (g_rank == 0) printf("n %d: factor %.1e, solve %.1e, trsm %.1e, logdet %.1e (relative)\n", n,
                          rel_err(L, K, (size_t)n * n), rel_err(x, xr, n), rel_err(z, zr, n), fabs(ld - ld_ref) / fabs(ld_ref));
  mpt_gp_dist_free(d);
  free(X); free(y); free(x); free(z); free(L); free(K); free(xr); free(zr);
}

static void test_factor_solves_500(void **state) { (void)state; check_factor_solves(500); }
static void test_factor_solves_2000(void **state) { (void)state; check_factor_solves(2000); }

/* a serial GP without candidates holding the n points and outputs */
static mpt_gp *serial_gp(const mpt_gp_dist_hyper *h, const double *X, const double *y, int n) {
  mpt_gp_config c;
  mpt_gp_config_default(&c);
  c.kernel = (mpt_gp_kernel)h->kernel;
  mpt_gp *gp;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&c, h->dim, 0, NULL, &gp, &err), 0);
  for (int i = 0; i < n; i++) assert_int_equal(mpt_gp_add(gp, X + (size_t)i * h->dim, y[i], &err), 0);
  double ls[64];
  for (int q = 0; q < h->dim; q++) ls[q] = 1.0 / h->inv_ls[q];
  assert_int_equal(mpt_gp_set_hyper(gp, ls, h->variance, h->noise, &err), 0);
  return gp;
}

static void test_lml_and_gradient(void **state) {
  (void)state;
  int n = 1200, dim = g_pts.dim;
  double inv_ls[64], g[66], ls[64];
  mpt_gp_dist_hyper h;
  hyper_of(&h, inv_ls, 0.7, 1e-3);
  double *X = gpd_encode(&g_pts, n, 11, 7), *y = malloc(sizeof(double) * n), *zy = malloc(sizeof(double) * n);
  gpd_outputs(X, n, dim, y);
  mpt_gp *gp = serial_gp(&h, X, y, n);
  double m, s, ref, lml;
  mpt_gp_normalization(gp, &m, &s);
  for (int i = 0; i < n; i++) zy[i] = (y[i] - m) / s;
  mpt_error err;
  for (int q = 0; q < dim; q++) ls[q] = 1.0 / inv_ls[q];
  assert_int_equal(mpt_gp_log_marginal(gp, ls, h.variance, h.noise, &ref, &err), 0);
  mpt_gp_dist *d;
  assert_int_equal(mpt_gp_dist_create(MPI_COMM_WORLD, n, 64, &d, &err), 0);
  assert_int_equal(mpt_gp_dist_lml(d, &h, X, zy, &lml, g, &err), 0);
  assert_true(fabs(lml - ref) <= 1e-10 * fabs(ref));
  /* each gradient component against central differences in the log-hyperparameter */
  const double e = 1e-5;
  for (int k = 0; k < dim + 2; k++) {
    double lp, lm, save_il = k < dim ? inv_ls[k] : 0, save_v = h.variance, save_n = h.noise;
    for (int sgn = 1; sgn >= -1; sgn -= 2) {
      if (k < dim) inv_ls[k] = save_il * exp(-sgn * e);
      else if (k == dim) h.variance = save_v * exp(sgn * e);
      else h.noise = save_n * exp(sgn * e);
      assert_int_equal(mpt_gp_dist_lml(d, &h, X, zy, sgn > 0 ? &lp : &lm, NULL, &err), 0);
    }
    if (k < dim) inv_ls[k] = save_il;
    h.variance = save_v;
    h.noise = save_n;
    double fd = (lp - lm) / (2 * e);
    assert_true(fabs(fd - g[k]) <= 1e-5 * (fabs(g[k]) > 1 ? fabs(g[k]) : 1));
  }
  if (g_rank == 0) printf("lml %.12g (serial %.12g), d/dlog variance %.6g\n", lml, ref, g[dim]);
  mpt_gp_dist_free(d);
  mpt_gp_free(gp);
  free(X); free(y); free(zy);
}

static void test_posterior(void **state) {
  (void)state;
  int n = 800, nc = 60, dim = g_pts.dim;
  double inv_ls[64];
  mpt_gp_dist_hyper h;
  hyper_of(&h, inv_ls, 0.5, 1e-3);
  double *X = gpd_encode(&g_pts, n, 1, 13), *C = gpd_encode(&g_pts, nc, 5, 101);
  double *y = malloc(sizeof(double) * n), *a = malloc(sizeof(double) * n);
  double *mean = malloc(sizeof(double) * nc), *var = malloc(sizeof(double) * nc);
  double *mr = malloc(sizeof(double) * nc), *sr = malloc(sizeof(double) * nc), *sd = malloc(sizeof(double) * nc);
  gpd_outputs(X, n, dim, y);
  mpt_gp *gp = serial_gp(&h, X, y, n);
  double m, s;
  mpt_gp_normalization(gp, &m, &s);
  for (int i = 0; i < n; i++) a[i] = y[i] - m;
  mpt_error err;
  mpt_gp_dist *d;
  assert_int_equal(mpt_gp_dist_create(MPI_COMM_WORLD, n, 48, &d, &err), 0);
  assert_int_equal(mpt_gp_dist_factor(d, &h, X, &err), 0);
  assert_int_equal(mpt_gp_dist_solve(d, a, a, &err), 0);
  assert_int_equal(mpt_gp_dist_posterior(d, &h, X, a, m, nc, C, mean, var, &err), 0);
  for (int c = 0; c < nc; c++) {
    mpt_gp_predict_point(gp, C + (size_t)c * dim, &mr[c], &sr[c]);
    sd[c] = s * sqrt(var[c]);
  }
  assert_true(rel_err(mean, mr, nc) < 1e-10);
  assert_true(rel_err(sd, sr, nc) < 1e-10);
  mpt_gp_dist_free(d);
  mpt_gp_free(gp);
  free(X); free(C); free(y); free(a); free(mean); free(var); free(mr); free(sr); free(sd);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  if (gpd_open("paper_dedispersion.json", &g_pts) != 0) {
    MPI_Finalize();
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_factor_solves_500), cmocka_unit_test(test_factor_solves_2000),
      cmocka_unit_test(test_lml_and_gradient), cmocka_unit_test(test_posterior),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL), any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  gpd_close(&g_pts);
  MPI_Finalize();
  return any ? 1 : 0;
}
