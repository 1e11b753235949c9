/* gp/gp_kernel.c: the covariance of the serial GP (gp/gp.h): kernel values by name, and the vectorized
 * kernel rows (a straight-line exp, exp_neg) from a point to a block of candidates, to the observations and
 * between given points and observations. The candidates' distances: gp/gp_cand.c. */
#include "gp/gp.h"
#include "gp/gp_cand.h"
#include "gp/gp_impl.h"
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdint.h>
#include <string.h>

#include "gp/gp_hot.h"

double mpt_gp_kernel_eval(int kernel, double r) { return kern_r2(kernel, r * r); }
double mpt_gp_kernel_r2(int kernel, double r2) { return kern_r2(kernel, r2); }

/* exp(-t) for 0 <= t <= 708 in straight-line arithmetic that vectorizes (glibc's exp does not):
 * t = k ln2 - r with k = round(t / ln2), |r| <= ln2/2 (Cody-Waite, ln2 split so that k * LN2_HI is
 * exact), exp(-r) by its Taylor polynomial of degree 13 (truncation < 5e-18), times 2^-k built in the
 * exponent bits. Matérn 3/2 kernel values were within 2 ulp of libm's over 2e6 arguments, none
 * different after rounding into V (float); tests/test_gp.c checks the kernel row against libm. With
 * the same V the GP's results and bo's proposals stay the same (checked with mptune bench). */
static inline double exp_neg(double t) {
  double x = -t;
  double kd = x * 1.4426950408889634 + 0x1.8p52; /* round(x / ln2) in the low mantissa bits */
  uint64_t ki;
  memcpy(&ki, &kd, sizeof ki);
  kd -= 0x1.8p52;
  double r = (x - kd * 0x1.62e42fee00000p-1) - kd * 0x1.a39ef35793c76p-33;
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  uint64_t sb = (ki + 1023) << 52; /* 2^k: the magic constant's own bits shift out */
  double sc;
  memcpy(&sc, &sb, sizeof sc);
  return p * sc;
}

/* k[j] = variance * kernel(t[j]) where t[j] is the kernel's argument of exp (see kernel_row) */
GP_HOT static void kernel_from_t(int kernel, int64_t n, double variance, const double *t,
                                 double *k) { /* t may be k (in place) */
  switch (kernel) {
  case MPT_GP_MATERN32:
    for (int64_t j = 0; j < n; j++) k[j] = variance * ((1.0 + t[j]) * exp_neg(t[j]));
    break;
  case MPT_GP_MATERN52:
    for (int64_t j = 0; j < n; j++) k[j] = variance * ((1.0 + t[j] + t[j] * t[j] / 3.0) * exp_neg(t[j]));
    break;
  default: /* Matérn 1/2: exp(-sqrt(r2)); squared exponential: exp(-0.5 r2) */
    for (int64_t j = 0; j < n; j++) k[j] = variance * exp_neg(t[j]);
    break;
  }
}

/* kx[i] = variance * k(x, Xo_i), i < n (distances over the observations by dimension: the same sums) */
void gp_kernel_obs(const mpt_gp *gp, const double *x, const double *inv_ls, double variance,
                   double *kx) {
  if (gp->n == 0) return;
  mpt_gp_dist2_row(gp->n, gp->dim, x, gp->XoT, (size_t)gp->cap, inv_ls, kx);
  for (int i = 0; i < gp->n; i++) kx[i] = variance * kern_r2(gp->cfg.kernel, kx[i]);
}

/* gp_kernel_obs for the observations from `from` on: kx[i], from <= i < n (the same values) */
void gp_kernel_obs_from(const mpt_gp *gp, const double *x, int from, double *kx) {
  if (gp->n <= from) return;
  mpt_gp_dist2_row(gp->n - from, gp->dim, x, gp->XoT + from, (size_t)gp->cap, gp->inv_ls, kx + from);
  for (int i = from; i < gp->n; i++) kx[i] = gp->variance * kern_r2(gp->cfg.kernel, kx[i]);
}

/* in place: t[j] = squared scaled distance r2 -> variance * kernel(r2), j < bc (vectorized) */
static void kernel_from_r2(int kernel, int64_t bc, double variance, double *t) {
  int64_t j = 0;
#if defined(__SSE2__)
  /* sqrt does not auto-vectorize (errno semantics): SSE2 pairs, the same correctly rounded roots */
  if (kernel != MPT_GP_SE) {
    const __m128d c = _mm_set1_pd(kernel == MPT_GP_MATERN12 ? 1.0 : kernel == MPT_GP_MATERN32 ? 3.0 : 5.0);
    const __m128d cap = _mm_set1_pd(708.0);
    for (; j + 2 <= bc; j += 2) {
      __m128d r2 = _mm_loadu_pd(t + j);
      __m128d a = kernel == MPT_GP_MATERN12 ? _mm_sqrt_pd(r2) : _mm_sqrt_pd(_mm_mul_pd(c, r2));
      _mm_storeu_pd(t + j, _mm_min_pd(a, cap)); /* a < 708 ? a : 708 */
    }
  }
#endif
  for (; j < bc; j++) {
    double r2 = t[j];
    double a = kernel == MPT_GP_MATERN12 ? sqrt(r2) : kernel == MPT_GP_MATERN32 ? sqrt(3.0 * r2)
             : kernel == MPT_GP_MATERN52 ? sqrt(5.0 * r2) : 0.5 * r2;
    t[j] = a < 708.0 ? a : 708.0;
  }
  kernel_from_t(kernel, bc, variance, t, t);
}

/* k[j] = variance * k(x, X_{b+j}) for j < bc (bc <= GP_BLOCK): the same arithmetic as kern_r2/dist2
 * except exp (exp_neg). Beyond t = 708 (exp < 3.3e-308) the argument is clamped: the covariance is
 * then ~1e-303 instead of a subnormal or 0, the same nothing once rounded into V (float). */
void gp_kernel_row(const mpt_gp *gp, const double *x, int64_t b, int64_t bc, double *k) {
  mpt_gp_cands_dist2(&gp->cs, x, gp->inv_ls, b, bc, k); /* in place: r2, then the argument of exp, then the kernel */
  kernel_from_r2(gp->cfg.kernel, bc, gp->variance, k);
}

/* r2[j] = dist2(P + ids[j] * ld, x) (the point first, as mpt_gp_dist2_row: the same sums) */
GP_HOT static void dist2_points(int64_t np, int dim, const double *restrict P, size_t ld,
                                const int64_t *restrict ids, const double *restrict x, size_t xs,
                                const double *restrict inv_ls, double *restrict r2) {
  for (int64_t j = 0; j < np; j++) r2[j] = 0.0;
  for (int d = 0; d < dim; d++) {
    double xd = x[(size_t)d * xs], il = inv_ls[d];
    for (int64_t j = 0; j < np; j++) {
      double q = (P[(size_t)ids[j] * ld + (size_t)d] - xd) * il;
      r2[j] += q * q;
    }
  }
}

void mpt_gp_kernel_obs_points(const mpt_gp *gp, int i, int64_t np, const double *P, size_t ld, const int64_t *ids,
                              double *k) {
  if (np <= 0) return;
  dist2_points(np, gp->dim, P, ld, ids, gp->XoT + i, (size_t)gp->cap, gp->inv_ls, k);
  kernel_from_r2(gp->cfg.kernel, np, gp->variance, k);
}

void mpt_gp_kernel_obs_range(const mpt_gp *gp, const double *x, int from, int to, double *k) {
  if (to <= from) return;
  mpt_gp_dist2_row(to - from, gp->dim, x, gp->XoT + from, (size_t)gp->cap, gp->inv_ls, k);
  kernel_from_r2(gp->cfg.kernel, to - from, gp->variance, k);
}
