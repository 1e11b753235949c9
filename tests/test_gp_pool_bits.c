/* tests/test_gp_pool_bits.c: the pool's fantasies (gp/gp_pool_fantasy.c) give, bit for bit, the values of the
 * plain formulas in their stated order: each extra observation's row of L (serial sums over the GP's part and
 * the extra rows before it), its row of V over the members (each member's column times l in 4 interleaved
 * partial sums, then the extra rows in order) and the members' A, B, var. The reference below is the
 * arithmetic bo's picks were measured with; the pool may group and interleave the sums for speed, never
 * reorder them. The members' columns as loaded: the GP's, whatever the order the pool gathers them in. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_pool_impl.h"
#include "spaces/sys/rng.h"

/* variance * k(a, b), as the pool evaluates it */
static double ref_kern(const mpt_gp *gp, const double *a, const double *b) {
  double r2 = 0;
  for (int d = 0; d < gp->dim; d++) {
    double t = (a[d] - b[d]) * gp->inv_ls[d];
    r2 += t * t;
  }
  return gp->variance * mpt_gp_kernel_eval(gp->cfg.kernel, sqrt(r2));
}

/* a[i] widened times b[i] summed in 4 lanes (i mod 4, in order), the rest into lane 0, then (0 + 1) + (2 + 3) */
static double ref_dot_float(const float *a, const double *b, int n) {
  double t[4] = {0, 0, 0, 0};
  int i = 0;
  for (; i + 4 <= n; i += 4)
    for (int e = 0; e < 4; e++) t[e] += (double)a[i + e] * b[i + e];
  for (; i < n; i++) t[0] += (double)a[i] * b[i];
  return (t[0] + t[1]) + (t[2] + t[3]);
}

static const double *ref_fl_row(const mpt_gp_pool *p, int j) {
  return p->FL + (size_t)j * p->n0 + (size_t)j * (j + 1) / 2;
}

/* the next extra observation at x (member j, or a free point when j < 0) with output y, from the pool's state:
 * its row of L (n0 + nf values, then L_nn) into l, its row of V into v, the members' A, B, var after it */
static void reference(const mpt_gp_pool *p, const double *x, int64_t j, double y, double *l, double *v, double *A,
                      double *B, double *var) {
  const mpt_gp *gp = p->gp;
  int n0 = p->n0, nf = p->nf, nt = n0 + nf;
  if (j >= 0)
    for (int i = 0; i < n0; i++) l[i] = p->V0[(size_t)j * n0 + i];
  else {
    mpt_gp_kernel_obs_range(gp, x, 0, n0, l);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n0, gp->L, gp->cap, l, 1);
  }
  for (int f = 0; f < nf; f++) {
    const double *row = ref_fl_row(p, f);
    double s = 0;
    for (int i = 0; i < n0 + f; i++) s += row[i] * l[i];
    l[n0 + f] = (ref_kern(gp, x, p->fx + (size_t)f * p->dim) - s) / row[n0 + f];
  }
  double ne = mpt_gp_noise_eff(gp->noise, gp->variance), ll = 0;
  for (int i = 0; i < nt; i++) ll += l[i] * l[i];
  double d = gp->variance + ne - ll, lnn = sqrt(d < ne ? ne : d), sy = y, s1 = 1;
  l[nt] = lnn;
  for (int i = 0; i < n0; i++) { sy -= l[i] * gp->wy[i]; s1 -= l[i] * gp->w1[i]; }
  for (int f = 0; f < nf; f++) { sy -= l[n0 + f] * p->fwy[f]; s1 -= l[n0 + f] * p->fw1[f]; }
  double wyn = sy / lnn, w1n = s1 / lnn;
  for (int64_t c = 0; c < p->n; c++) {
    double s = ref_dot_float(p->V0 + (size_t)c * n0, l, n0);
    for (int f = 0; f < nf; f++) s += p->Fv[(size_t)f * p->cap + c] * l[n0 + f];
    double vc = (ref_kern(gp, x, p->X + (size_t)c * p->dim) - s) / lnn;
    v[c] = vc;
    A[c] = p->A[c] + vc * wyn;
    B[c] = p->B[c] + vc * w1n;
    var[c] = p->var[c] - vc * vc;
  }
}

/* after the pool took the extra observation: the same bits as the reference */
static void check_same(const mpt_gp_pool *p, const double *l, const double *v, const double *A, const double *B,
                       const double *var) {
  int f = p->nf - 1;
  assert_memory_equal(ref_fl_row(p, f), l, sizeof(double) * (size_t)(p->n0 + f + 1));
  assert_memory_equal(p->Fv + (size_t)f * p->cap, v, sizeof(double) * (size_t)p->n);
  assert_memory_equal(p->A, A, sizeof(double) * (size_t)p->n);
  assert_memory_equal(p->B, B, sizeof(double) * (size_t)p->n);
  assert_memory_equal(p->var, var, sizeof(double) * (size_t)p->n);
}

/* a GP of 203 observations, a pool of 101 members (neither a multiple of 4 or 8), 13 pending candidates planned
 * and fantasized, then 30 fantasies at members and 3 at free points, each checked bit for bit */
static void test_fantasies_bit_for_bit(void **state) {
  (void)state;
  enum { NC = 3000, DIM = 3, NOBS = 203, NP = 101, NPEND = 13, NMEM = 30 };
  mpt_rng r;
  mpt_rng_seed(&r, 41);
  double *X = malloc(sizeof(double) * NC * DIM), *Xo = malloc(sizeof(double) * NOBS * DIM), y[NOBS];
  for (int i = 0; i < NC * DIM; i++) X[i] = mpt_rng_uniform(&r);
  for (int i = 0; i < NOBS; i++) {
    memcpy(Xo + i * DIM, X + (size_t)mpt_rng_below(&r, NC) * DIM, sizeof(double) * DIM);
    y[i] = cos(4.0 * Xo[i * DIM]) + Xo[i * DIM + 2];
  }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  cfg.noise = 1e-3;
  mpt_gp *gp;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &gp, &err), 0);
  assert_int_equal(mpt_gp_add_many(gp, NOBS, Xo, y, NULL, &err), 0);
  int64_t ids[NP], pend[NPEND];
  double *PX = malloc(sizeof(double) * NP * DIM);
  for (int j = 0; j < NP; j++) {
    ids[j] = (int64_t)mpt_rng_below(&r, NC);
    memcpy(PX + j * DIM, X + ids[j] * DIM, sizeof(double) * DIM);
  }
  for (int q = 0; q < NPEND; q++) pend[q] = (int64_t)mpt_rng_below(&r, NC);
  mpt_gp_pool *p;
  assert_int_equal(mpt_gp_pool_create(&p, &err), 0);
  assert_int_equal(mpt_gp_pool_load(p, gp, ids, PX, NP, &err), 0);
  assert_int_equal(mpt_gp_pool_plan_candidates(p, pend, NPEND, &err), 0);
  for (int q = 0; q < NPEND; q++) {
    double mu, sd;
    assert_int_equal(mpt_gp_pool_predict_candidate(p, pend[q], X + pend[q] * DIM, &mu, &sd, &err), 0);
    assert_int_equal(mpt_gp_pool_add_candidate(p, pend[q], X + pend[q] * DIM, mu + 0.1 * sd, &err), 0);
  }
  int nmax = NOBS + NPEND + NMEM + 4;
  double *l = malloc(sizeof(double) * (size_t)nmax), v[NP], A[NP], B[NP], var[NP];
  for (int k = 0; k < NMEM + 3; k++) {
    double mu = 0, vv = 0, yk;
    if (k % 11 == 10) { /* a free point */
      double x[DIM];
      for (int d = 0; d < DIM; d++) x[d] = mpt_rng_uniform(&r);
      yk = 0.3 * k;
      reference(p, x, -1, yk, l, v, A, B, var);
      assert_int_equal(mpt_gp_pool_add(p, x, yk, &err), 0);
    } else {
      int64_t j = (int64_t)mpt_rng_below(&r, NP);
      mpt_gp_pool_predict_var(p, j, j + 1, &mu, &vv);
      yk = mu + 0.5 * sqrt(vv);
      reference(p, PX + j * DIM, j, yk, l, v, A, B, var);
      assert_int_equal(mpt_gp_pool_add_member(p, j, yk, &err), 0);
    }
    check_same(p, l, v, A, B, var);
  }
  assert_int_equal(p->nf, NPEND + NMEM + 3);
  mpt_gp_pool_free(p);
  mpt_gp_free(gp);
  free(X); free(Xo); free(PX); free(l);
}

/* the members' columns as the pool loads them: each the GP's column of V, whatever the members' order, with
 * several members in one panel of V and one candidate twice */
static void test_load_columns(void **state) {
  (void)state;
  enum { NC = 700, DIM = 2, NOBS = 45, NP = 9 };
  mpt_rng r;
  mpt_rng_seed(&r, 5);
  double X[NC * DIM], Xo[NOBS * DIM], y[NOBS], PX[NP * DIM];
  for (int i = 0; i < NC * DIM; i++) X[i] = mpt_rng_uniform(&r);
  for (int i = 0; i < NOBS; i++) {
    memcpy(Xo + i * DIM, X + (size_t)mpt_rng_below(&r, NC) * DIM, sizeof(double) * DIM);
    y[i] = sin(3.0 * Xo[i * DIM]) + Xo[i * DIM + 1];
  }
  mpt_gp_config cfg;
  mpt_gp_config_default(&cfg);
  mpt_gp *gp;
  mpt_error err;
  assert_int_equal(mpt_gp_create(&cfg, DIM, NC, X, &gp, &err), 0);
  assert_int_equal(mpt_gp_add_many(gp, NOBS, Xo, y, NULL, &err), 0);
  int64_t ids[NP] = {650, 3, 40, 33, 699, 35, 3, 64, 0};
  for (int j = 0; j < NP; j++) memcpy(PX + j * DIM, X + ids[j] * DIM, sizeof(double) * DIM);
  mpt_gp_pool *p;
  assert_int_equal(mpt_gp_pool_create(&p, &err), 0);
  assert_int_equal(mpt_gp_pool_load(p, gp, ids, PX, NP, &err), 0);
  for (int j = 0; j < NP; j++) {
    const float *col = gp_pool_gp_column(gp, ids[j]);
    for (int i = 0; i < NOBS; i++) assert_true(p->V0[(size_t)j * NOBS + i] == col[(size_t)i * GP_VB]);
    assert_true(p->A[j] == gp->A[ids[j]] && p->B[j] == gp->B[ids[j]] && p->var[j] == gp->var[ids[j]]);
  }
  int64_t bad[2] = {1, NC};
  assert_int_not_equal(mpt_gp_pool_load(p, gp, bad, PX, 2, &err), 0);
  mpt_gp_pool_free(p);
  mpt_gp_free(gp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fantasies_bit_for_bit),
      cmocka_unit_test(test_load_columns),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
