/* gp/gp.c: Gaussian-process regression (gp/gp.h): covariance functions, the Cholesky factor of the
 * observations (LAPACK dpotrf from scratch, extended by one row per observation), V = L^-1 K(X_obs,
 * X_cand) kept in float in panels of candidates and extended by one fused pass per observation (its
 * sums in double where the new observation is nearly predicted: GP_EXACT_GAIN),
 * incrementally maintained posterior mean/variance of every candidate (and their sum), and the log
 * marginal likelihood (its maximization over the hyperparameters: gp/gp_fit.c). The candidates and
 * their distances to a point: gp/gp_cand.c. */
#include "gp/gp.h"
#include "gp/gp_cand.h"
#include "gp/gp_impl.h"
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>


#include "gp/gp_hot.h"



void mpt_gp_config_default(mpt_gp_config *c) {
  memset(c, 0, sizeof *c);
  c->kernel = MPT_GP_MATERN32;
  c->lengthscale = 1.5;
  c->variance = 1.0;
  c->noise = 1e-6;
  c->mean = MPT_GP_MEAN_OBSERVED;
  c->mean_constant = 0.0;
  c->normalize_scale = 1;
}

static const char *const kernel_names[] = {"matern12", "matern32", "matern52", "se"};

const char *mpt_gp_kernel_name(int k) {
  return (k >= 0 && k < MPT_GP_KERNEL_COUNT) ? kernel_names[k] : NULL;
}

int mpt_gp_kernel_parse(const char *name) {
  if (!name) return -1;
  for (int k = 0; k < MPT_GP_KERNEL_COUNT; k++)
    if (strcmp(name, kernel_names[k]) == 0) return k;
  if (strcmp(name, "rbf") == 0 || strcmp(name, "squared_exponential") == 0) return MPT_GP_SE;
  return -1;
}

static inline double kern_r2(int kernel, double r2) {
  switch (kernel) {
  case MPT_GP_MATERN12: return exp(-sqrt(r2));
  case MPT_GP_MATERN32: {
    double t = sqrt(3.0 * r2);
    return (1.0 + t) * exp(-t);
  }
  case MPT_GP_MATERN52: {
    double t = sqrt(5.0 * r2);
    return (1.0 + t + t * t / 3.0) * exp(-t);
  }
  default: return exp(-0.5 * r2);
  }
}

double mpt_gp_kernel_eval(int kernel, double r) { return kern_r2(kernel, r * r); }
double mpt_gp_kernel_r2(int kernel, double r2) { return kern_r2(kernel, r2); }

static inline double dist2(const double *a, const double *b, const double *inv_ls, int dim) {
  double s = 0;
  for (int d = 0; d < dim; d++) {
    double t = (a[d] - b[d]) * inv_ls[d];
    s += t * t;
  }
  return s;
}

static double noise_eff(double noise, double variance) { return mpt_gp_noise_eff(noise, variance); }

/* var_sum from var: the panels' sums in order */
static double var_total(const mpt_gp *gp) {
  double s = 0;
  for (int64_t b = 0; b < gp->n_cand; b += GP_VB)
    s += gp_panel_var_sum(gp->var + b, gp->n_cand - b < GP_VB ? gp->n_cand - b : GP_VB);
  return s;
}


/* mpt_gp_create's rows: copied from the caller's table */
typedef struct rows_table {
  const double *X;
  int dim;
} rows_table;

static void rows_from_table(void *ctx, int64_t first, int64_t n, double *rows) {
  const rows_table *t = ctx;
  memcpy(rows, t->X + (size_t)first * (size_t)t->dim, sizeof(double) * (size_t)n * (size_t)t->dim);
}

int mpt_gp_create(const mpt_gp_config *cfg, int dim, int64_t n_cand, const double *X, mpt_gp **out,
                  mpt_error *err) {
  rows_table t = {X, dim};
  return mpt_gp_create_from(cfg, dim, n_cand, rows_from_table, &t, out, err);
}

int mpt_gp_create_from(const mpt_gp_config *cfg, int dim, int64_t n_cand, mpt_gp_cand_fn fill, void *ctx,
                       mpt_gp **out, mpt_error *err) {
  *out = NULL;
  if (dim < 1) return mpt_error_set(err, MPT_ERR_VALUE, "gp: dimension must be >= 1 (got %d)", dim);
  if (n_cand < 0) return mpt_error_set(err, MPT_ERR_VALUE, "gp: negative number of candidates");
  if (!(cfg->lengthscale > 0) || !(cfg->variance > 0) || !(cfg->noise >= 0) ||
      cfg->kernel < 0 || cfg->kernel >= MPT_GP_KERNEL_COUNT)
    return mpt_error_set(err, MPT_ERR_VALUE,
                         "gp: bad configuration (lengthscale %g, variance %g, noise %g, kernel %d)",
                         cfg->lengthscale, cfg->variance, cfg->noise, (int)cfg->kernel);
  mpt_gp *gp = calloc(1, sizeof *gp);
  if (!gp) return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory");
  gp->cfg = *cfg;
  gp->dim = dim;
  gp->n_cand = n_cand;
  gp->variance = cfg->variance;
  gp->noise = cfg->noise;
  gp->ls = malloc(sizeof(double) * (size_t)dim);
  gp->inv_ls = malloc(sizeof(double) * (size_t)dim);
  gp->n_pad = (n_cand + GP_VB - 1) / GP_VB * GP_VB;
  size_t np1 = (size_t)(gp->n_pad > 0 ? gp->n_pad : 1);
  gp->A = calloc(np1, sizeof(double));
  gp->B = calloc(np1, sizeof(double));
  gp->var = malloc(sizeof(double) * np1);
  gp->kbuf = malloc(sizeof(double) * GP_BLOCK);
  if (!gp->ls || !gp->inv_ls || !gp->A || !gp->B || !gp->var || !gp->kbuf || mpt_gp_cands_store(&gp->cs, n_cand, dim, fill, ctx)) {
    mpt_gp_free(gp);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory for %lld candidates", (long long)n_cand);
  }
  for (int d = 0; d < dim; d++) {
    gp->ls[d] = cfg->lengthscale;
    gp->inv_ls[d] = 1.0 / cfg->lengthscale;
  }
  for (int64_t c = 0; c < gp->n_pad; c++) gp->var[c] = gp->variance;
  gp->var_sum = var_total(gp);
  *out = gp;
  return 0;
}

void mpt_gp_free(mpt_gp *gp) {
  if (!gp) return;
  mpt_gp_cands_free(&gp->cs);
  free(gp->ls); free(gp->inv_ls); free(gp->Xo); free(gp->XoT); free(gp->yo); free(gp->L);
  free(gp->wy); free(gp->w1); free(gp->V); free(gp->A); free(gp->B); free(gp->var);
  free(gp->kbuf); free(gp->tmpd); free(gp->lf); free(gp->wf);
  free(gp);
}

int mpt_gp_dim(const mpt_gp *gp) { return gp->dim; }
int mpt_gp_kernel_of(const mpt_gp *gp) { return (int)gp->cfg.kernel; }
int mpt_gp_n_obs(const mpt_gp *gp) { return gp->n; }

/* bytes held with room for cap observations */
static int64_t bytes_at(const mpt_gp *gp, int64_t cap) {
  int64_t np = gp->n_pad, d = gp->dim;
  return (int64_t)sizeof *gp + mpt_gp_cands_bytes(&gp->cs) +
         np * 3 * 8 + cap * np * 4 + cap * cap * 8 +
         cap * (d + 5) * 8 + cap * 4 + GP_BLOCK * 8;
}

int64_t mpt_gp_bytes(const mpt_gp *gp) { return bytes_at(gp, gp->cap); }

/* gives the whole pages inside [p, p + bytes) back to the system (they read as zeros when touched again):
 * a panel's rows once moved up by grow, so that a growth does not keep the old V resident beside the new
 * (paper_hotspot: peak RSS 2.1 -> 1.4 GB over 1024 observations, docs/PERFORMANCE.md) */
static void release(void *p, size_t bytes) {
  uintptr_t a = (uintptr_t)p, e = a + bytes, pg = 4096;
  a = (a + pg - 1) / pg * pg;
  e = e / pg * pg;
  if (e > a) madvise((void *)a, e - a, MADV_DONTNEED);
}

static int grow(mpt_gp *gp, mpt_error *err) {
  int ncap = gp->cap ? gp->cap * 2 : 64;
  double need_mb = (double)bytes_at(gp, ncap) / 1048576.0;
  if (gp->cfg.max_bytes > 0 && bytes_at(gp, ncap) > gp->cfg.max_bytes)
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: room for %d observations needs %.1f MB, over the limit of %.1f MB",
                         ncap, need_mb, (double)gp->cfg.max_bytes / 1048576.0);
  double *Xo = realloc(gp->Xo, sizeof(double) * (size_t)ncap * (size_t)gp->dim);
  if (Xo) gp->Xo = Xo;
  double *yo = realloc(gp->yo, sizeof(double) * (size_t)ncap);
  if (yo) gp->yo = yo;
  double *wy = realloc(gp->wy, sizeof(double) * (size_t)ncap);
  if (wy) gp->wy = wy;
  double *w1 = realloc(gp->w1, sizeof(double) * (size_t)ncap);
  if (w1) gp->w1 = w1;
  double *td = realloc(gp->tmpd, sizeof(double) * (size_t)ncap);
  if (td) gp->tmpd = td;
  float *lf = realloc(gp->lf, sizeof(float) * (size_t)ncap);
  if (lf) gp->lf = lf;
  float *wf = realloc(gp->wf, sizeof(float) * (size_t)ncap);
  if (wf) gp->wf = wf;
  /* V: every panel gets ncap rows (in place: the panels move up below) */
  float *V = gp->n_pad > 0 ? realloc(gp->V, sizeof(float) * (size_t)ncap * (size_t)gp->n_pad) : gp->V;
  if (V) gp->V = V;
  double *L = calloc((size_t)ncap * (size_t)ncap, sizeof(double));
  double *XoT = malloc(sizeof(double) * (size_t)ncap * (size_t)gp->dim);
  if (!Xo || !yo || !wy || !w1 || !td || !lf || !wf || (gp->n_pad > 0 && !V) || !L || !XoT) {
    free(L);
    free(XoT);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory: room for %d observations needs %.1f MB", ncap,
                         need_mb);
  }
  for (int d = 0; d < gp->dim; d++)
    if (gp->n > 0) memcpy(XoT + (size_t)d * ncap, gp->XoT + (size_t)d * gp->cap, sizeof(double) * (size_t)gp->n);
  free(gp->XoT);
  gp->XoT = XoT;
  for (int64_t q = gp->n_pad / GP_VB - 1; q >= 1 && gp->n > 0; q--) { /* the last first: no overlap */
    memmove(gp->V + (size_t)q * ncap * GP_VB, gp->V + (size_t)q * gp->cap * GP_VB, sizeof(float) * GP_VB * (size_t)gp->n);
    int64_t gap = (int64_t)q * (ncap - gp->cap); /* the moved rows start this many rows above the old ones */
    release(gp->V + (size_t)q * gp->cap * GP_VB, sizeof(float) * GP_VB * (size_t)(gap < gp->n ? gap : gp->n));
  }
  for (int i = 0; i < gp->n; i++) memcpy(L + (size_t)i * ncap, gp->L + (size_t)i * gp->cap, sizeof(double) * (size_t)(i + 1));
  free(gp->L);
  gp->L = L;
  gp->cap = ncap;
  return 0;
}


int gp_reserve(mpt_gp *gp, int n, mpt_error *err) {
  while (gp->cap < n) {
    int rc = grow(gp, err);
    if (rc) return rc;
  }
  return 0;
}

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
static void kernel_obs(const mpt_gp *gp, const double *x, const double *inv_ls, double variance,
                       double *kx) {
  if (gp->n == 0) return;
  mpt_gp_dist2_row(gp->n, gp->dim, x, gp->XoT, (size_t)gp->cap, inv_ls, kx);
  for (int i = 0; i < gp->n; i++) kx[i] = variance * kern_r2(gp->cfg.kernel, kx[i]);
}


/* kernel_obs for the observations from `from` on: kx[i], from <= i < n (the same values) */
static void kernel_obs_from(const mpt_gp *gp, const double *x, int from, double *kx) {
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

typedef float gp_v8f __attribute__((vector_size(32)));

/* loads one row of a panel (GP_VB = 32 floats) into 4 vectors */
#define GP_ROW(p, r0, r1, r2, r3)                                                                        \
  gp_v8f r0, r1, r2, r3;                                                                                 \
  memcpy(&r0, (p), sizeof r0);                                                                           \
  memcpy(&r1, (p) + 8, sizeof r1);                                                                       \
  memcpy(&r2, (p) + 16, sizeof r2);                                                                      \
  memcpy(&r3, (p) + 24, sizeof r3)

/* One pass over np panels of V (P: the first, ps floats apart) for a new observation: per candidate
 * t = sum_i V_i l_i and, with w, a = sum_i V_i w_i over rows i < n, summed in row order in float (mul
 * then add: the same results in every clone and without vector units), then the new row
 * v = (k - t) / L_nn stored as row n and the rank-one update of the posterior state (with w, A is
 * replaced by a + v wyn: the outputs changed). Two panels are read side by side (two streams keep more
 * loads in flight than one; the sums are the same). Returns the sum of max(var, 0) over the first
 * nvalid candidates (panel_var_sum order). Observations that the earlier ones nearly predict take
 * add_panels_exact instead (GP_EXACT_GAIN). */
GP_HOT static double add_panels(int n, int64_t np, float *restrict P, size_t ps, const float *restrict l,
                                const float *restrict w, const double *restrict k, double inv_lnn, double wyn,
                                double w1n, double *restrict A, double *restrict B, double *restrict var,
                                int64_t nvalid) {
  double vs = 0;
  for (int64_t q = 0; q < np; q += 2) {
    int two = q + 1 < np;
    const float *restrict p0 = P + (size_t)q * ps, *restrict p1 = two ? p0 + ps : p0;
    gp_v8f t0 = {0}, t1 = {0}, t2 = {0}, t3 = {0}, a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    gp_v8f u0 = {0}, u1 = {0}, u2 = {0}, u3 = {0}, b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
    if (w) {
      for (int i = 0; i < n; i++) {
        GP_ROW(p0 + (size_t)i * GP_VB, r0, r1, r2, r3);
        GP_ROW(p1 + (size_t)i * GP_VB, s0, s1, s2, s3);
        float li = l[i], wi = w[i];
        t0 += r0 * li; t1 += r1 * li; t2 += r2 * li; t3 += r3 * li;
        a0 += r0 * wi; a1 += r1 * wi; a2 += r2 * wi; a3 += r3 * wi;
        u0 += s0 * li; u1 += s1 * li; u2 += s2 * li; u3 += s3 * li;
        b0 += s0 * wi; b1 += s1 * wi; b2 += s2 * wi; b3 += s3 * wi;
      }
    } else {
      for (int i = 0; i < n; i++) {
        GP_ROW(p0 + (size_t)i * GP_VB, r0, r1, r2, r3);
        GP_ROW(p1 + (size_t)i * GP_VB, s0, s1, s2, s3);
        float li = l[i];
        t0 += r0 * li; t1 += r1 * li; t2 += r2 * li; t3 += r3 * li;
        u0 += s0 * li; u1 += s1 * li; u2 += s2 * li; u3 += s3 * li;
      }
    }
    float t[2 * GP_VB], a[2 * GP_VB];
    memcpy(t, &t0, sizeof t0); memcpy(t + 8, &t1, sizeof t1); memcpy(t + 16, &t2, sizeof t2); memcpy(t + 24, &t3, sizeof t3);
    memcpy(t + 32, &u0, sizeof u0); memcpy(t + 40, &u1, sizeof u1); memcpy(t + 48, &u2, sizeof u2); memcpy(t + 56, &u3, sizeof u3);
    memcpy(a, &a0, sizeof a0); memcpy(a + 8, &a1, sizeof a1); memcpy(a + 16, &a2, sizeof a2); memcpy(a + 24, &a3, sizeof a3);
    memcpy(a + 32, &b0, sizeof b0); memcpy(a + 40, &b1, sizeof b1); memcpy(a + 48, &b2, sizeof b2); memcpy(a + 56, &b3, sizeof b3);
    for (int64_t h = 0; h <= two; h++) {
      int64_t qh = q + h;
      const float *restrict th = t + h * GP_VB, *restrict ah = a + h * GP_VB;
      const double *restrict kq = k + qh * GP_VB;
      double *restrict Aq = A + qh * GP_VB, *restrict Bq = B + qh * GP_VB, *restrict vq = var + qh * GP_VB;
      float *restrict vrow = P + (size_t)qh * ps + (size_t)n * GP_VB;
      if (w) {
        for (int r = 0; r < GP_VB; r++) {
          float v = (float)((kq[r] - (double)th[r]) * inv_lnn);
          vrow[r] = v;
          Aq[r] = (double)ah[r] + (double)v * wyn;
          Bq[r] += (double)v * w1n;
          vq[r] -= (double)v * (double)v;
        }
      } else {
        for (int r = 0; r < GP_VB; r++) {
          float v = (float)((kq[r] - (double)th[r]) * inv_lnn);
          vrow[r] = v;
          Aq[r] += (double)v * wyn;
          Bq[r] += (double)v * w1n;
          vq[r] -= (double)v * (double)v;
        }
      }
      int64_t nr = nvalid - qh * GP_VB;
      if (nr > 0) vs += gp_panel_var_sum(vq, nr < GP_VB ? nr : GP_VB);
    }
  }
  return vs;
}
#undef GP_ROW

/* add_panels with t and a summed in double from double l and w: the same pass for an observation that
 * the earlier ones nearly predict (small L_nn, whose 1 / L_nn amplifies every rounding of t) */
GP_HOT static double add_panels_exact(int n, int64_t np, float *restrict P, size_t ps, const double *restrict l,
                                      const double *restrict w, const double *restrict k, double inv_lnn, double wyn,
                                      double w1n, double *restrict A, double *restrict B, double *restrict var,
                                      int64_t nvalid) {
  double vs = 0;
  for (int64_t q = 0; q < np; q++) {
    float *restrict p0 = P + (size_t)q * ps;
    double t[GP_VB] = {0}, a[GP_VB] = {0};
    for (int i = 0; i < n; i++) {
      const float *restrict row = p0 + (size_t)i * GP_VB;
      double li = l[i];
      for (int r = 0; r < GP_VB; r++) t[r] += (double)row[r] * li;
      if (w) {
        double wi = w[i];
        for (int r = 0; r < GP_VB; r++) a[r] += (double)row[r] * wi;
      }
    }
    const double *restrict kq = k + q * GP_VB;
    double *restrict Aq = A + q * GP_VB, *restrict Bq = B + q * GP_VB, *restrict vq = var + q * GP_VB;
    float *restrict vrow = p0 + (size_t)n * GP_VB;
    for (int r = 0; r < GP_VB; r++) {
      float v = (float)((kq[r] - t[r]) * inv_lnn);
      vrow[r] = v;
      Aq[r] = (w ? a[r] : Aq[r]) + (double)v * wyn;
      Bq[r] += (double)v * w1n;
      vq[r] -= (double)v * (double)v;
    }
    int64_t nr = nvalid - q * GP_VB;
    if (nr > 0) vs += gp_panel_var_sum(vq, nr < GP_VB ? nr : GP_VB);
  }
  return vs;
}

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
    kernel_obs(gp, X + (size_t)j * gp->dim, gp->inv_ls, gp->variance, gp->L + (size_t)(n0 + j) * gp->cap);
  if (y_all) memcpy(ywork, y_all, sizeof(double) * (size_t)n0);
  double *x[GP_MAX_RHS];
  for (int j = 0; j < k; j++) x[j] = gp->L + (size_t)(n0 + j) * gp->cap;
  if (y_all) x[k] = ywork;
  if (n0 > 0) gp_solve_many(n0, gp->L, (size_t)gp->cap, k + (y_all ? 1 : 0), x);
  return 0;
}

/* x = L^-T x (backward substitution by rows of L: one axpy per row) */
GP_HOT static void solve_lower_trans(int n, const double *restrict L, size_t ld, double *restrict x) {
  for (int i = n - 1; i >= 0; i--) {
    const double *restrict Li = L + (size_t)i * ld;
    double xi = x[i] / Li[i];
    x[i] = xi;
    for (int j = 0; j < i; j++) x[j] -= Li[j] * xi;
  }
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
    int rc = grow(gp, err);
    if (rc) return rc;
  }
  if (!lf) { /* the GP's own scratch (after the growth, which moves it) */
    lf = gp->lf;
    wf = gp->wf;
  }
  int n = gp->n, cap = gp->cap, dim = gp->dim;
  double ne = noise_eff(gp->noise, gp->variance);
  double *l = gp->L + (size_t)n * cap;          /* new row of L */
  if (pre == 0) kernel_obs(gp, x, gp->inv_ls, gp->variance, l);
  else kernel_obs_from(gp, x, pre, l);
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

/* Adds one observation; with y_all (n_obs + 1 outputs, the last one the new point's) also replaces the
 * outputs of all observations, in the same pass over V (blocks small enough to stay in cache). */
static int add_impl(mpt_gp *gp, const double *x, double y, const double *y_all, mpt_error *err) {
  gp_row r;
  int rc = gp_add_prepare(gp, x, y, y_all, NULL, NULL, &r, err);
  if (rc) return rc;
  double vs = 0;
  const size_t ps = (size_t)gp->cap * GP_VB; /* floats from one panel to the next */
  for (int64_t b = 0; b < gp->n_pad; b += GP_BLOCK) { /* GP_BLOCK candidates: GP_BLOCK / GP_VB panels */
    int64_t bp = gp->n_pad - b < GP_BLOCK ? gp->n_pad - b : GP_BLOCK;
    int64_t bc = gp->n_cand - b < bp ? gp->n_cand - b : bp;
    gp_kernel_row(gp, x, b, bc, gp->kbuf);
    for (int64_t j = bc; j < bp; j++) gp->kbuf[j] = 0.0; /* padding: V stays 0 */
    if (r.exact)
      vs += add_panels_exact(r.n, bp / GP_VB, gp->V + (size_t)(b / GP_VB) * ps, ps, r.l, r.wy, gp->kbuf, r.inv_lnn,
                             r.wyn, r.w1n, gp->A + b, gp->B + b, gp->var + b, bc);
    else
      vs += add_panels(r.n, bp / GP_VB, gp->V + (size_t)(b / GP_VB) * ps, ps, r.lf, r.wf, gp->kbuf, r.inv_lnn,
                       r.wyn, r.w1n, gp->A + b, gp->B + b, gp->var + b, bc);
  }
  gp->var_sum = vs;
  return 0;
}

int mpt_gp_add(mpt_gp *gp, const double *x, double y, mpt_error *err) { return add_impl(gp, x, y, NULL, err); }

int mpt_gp_add_outputs(mpt_gp *gp, const double *x, const double *y_all, mpt_error *err) {
  return add_impl(gp, x, y_all[gp->n], y_all, err);
}

/* removes rows n_old - 1 down to n of one panel from its candidates' posterior state */
GP_HOT static void truncate_panel(int n_old, int n, const float *restrict p, const double *restrict wy,
                                  const double *restrict w1, double *restrict A, double *restrict B,
                                  double *restrict var) {
  for (int k = n_old - 1; k >= n; k--) {
    const float *restrict vrow = p + (size_t)k * GP_VB;
    double wyk = wy[k], w1k = w1[k];
    for (int r = 0; r < GP_VB; r++) {
      double v = vrow[r];
      A[r] -= v * wyk;
      B[r] -= v * w1k;
      var[r] += v * v;
    }
  }
}

int mpt_gp_truncate(mpt_gp *gp, int n, mpt_error *err) {
  if (n < 0 || n > gp->n)
    return mpt_error_set(err, MPT_ERR_VALUE, "gp: cannot truncate %d observations to %d", gp->n, n);
  if (n == gp->n) return 0;
  double vs = 0;
  for (int64_t b = 0; b < gp->n_pad; b += GP_VB) {
    const float *p = gp->V + (size_t)(b / GP_VB) * (size_t)gp->cap * GP_VB;
    truncate_panel(gp->n, n, p, gp->wy, gp->w1, gp->A + b, gp->B + b, gp->var + b);
    if (b < gp->n_cand) vs += gp_panel_var_sum(gp->var + b, gp->n_cand - b < GP_VB ? gp->n_cand - b : GP_VB);
  }
  gp->var_sum = vs;
  gp->n = n;
  return 0;
}

/* A[r] = sum_i V_ir wy_i over the n rows of one panel, in double, in row order */
GP_HOT static void panel_dot(int n, const float *restrict p, const double *restrict wy, double *restrict A) {
  double acc[GP_VB];
  for (int r = 0; r < GP_VB; r++) acc[r] = 0.0;
  for (int i = 0; i < n; i++)
    for (int r = 0; r < GP_VB; r++) acc[r] += (double)p[(size_t)i * GP_VB + r] * wy[i];
  for (int r = 0; r < GP_VB; r++) A[r] = acc[r];
}

int mpt_gp_set_outputs(mpt_gp *gp, const double *y, mpt_error *err) {
  int n = gp->n;
  for (int i = 0; i < n; i++)
    if (!isfinite(y[i])) return mpt_error_set(err, MPT_ERR_VALUE, "gp: output %d is not finite", i);
  if (n == 0) return 0;
  memcpy(gp->yo, y, sizeof(double) * (size_t)n);
  memcpy(gp->wy, y, sizeof(double) * (size_t)n);
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, gp->L, gp->cap, gp->wy, 1);
  /* A = V^T wy, accumulated in double (wy can be large and cancel), panel by panel */
  for (int64_t b = 0; b < gp->n_pad; b += GP_VB)
    panel_dot(n, gp->V + (size_t)(b / GP_VB) * (size_t)gp->cap * GP_VB, gp->wy, gp->A + b);
  return 0;
}

void mpt_gp_normalization(const mpt_gp *gp, double *mean, double *scale) {
  double m = 0, s = 1;
  int n = gp->n;
  if (gp->cfg.mean == MPT_GP_MEAN_CONSTANT) {
    m = gp->cfg.mean_constant;
  } else if (n > 0) {
    for (int i = 0; i < n; i++) m += gp->yo[i];
    m /= n;
  }
  if (gp->cfg.normalize_scale && n >= 2) {
    double mu = 0, ss = 0;
    for (int i = 0; i < n; i++) mu += gp->yo[i];
    mu /= n;
    for (int i = 0; i < n; i++) ss += (gp->yo[i] - mu) * (gp->yo[i] - mu);
    ss = sqrt(ss / n);
    if (ss > 1e-12 * (fabs(mu) + 1e-300) && ss > 0) s = ss;
  }
  if (mean) *mean = m;
  if (scale) *scale = s;
}

void mpt_gp_predict_block_var(const mpt_gp *gp, int64_t begin, int64_t end, double *mean, double *var) {
  double m, s;
  mpt_gp_normalization(gp, &m, &s);
  for (int64_t c = begin; c < end; c++) {
    if (mean) mean[c - begin] = m + gp->A[c] - m * gp->B[c];
    if (var) var[c - begin] = gp->var[c] > 0 ? gp->var[c] : 0.0;
  }
}

void mpt_gp_predict_block(const mpt_gp *gp, int64_t begin, int64_t end, double *mean, double *sd) {
  mpt_gp_predict_block_var(gp, begin, end, mean, sd);
  if (!sd) return;
  double m, s;
  mpt_gp_normalization(gp, &m, &s);
  for (int64_t c = 0; c < end - begin; c++) sd[c] = s * sqrt(sd[c]);
}

void mpt_gp_predict_point(const mpt_gp *gp, const double *x, double *mean, double *sd) {
  double m, s;
  mpt_gp_normalization(gp, &m, &s);
  int n = gp->n;
  double *l = gp->tmpd;
  double mu = m, var = gp->variance;
  if (n > 0) {
    kernel_obs(gp, x, gp->inv_ls, gp->variance, l);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, gp->L, gp->cap, l, 1);
    for (int i = 0; i < n; i++) {
      mu += l[i] * (gp->wy[i] - m * gp->w1[i]);
      var -= l[i] * l[i];
    }
  }
  if (mean) *mean = mu;
  if (sd) *sd = s * sqrt(var > 0 ? var : 0.0);
}

void mpt_gp_mean_weights(const mpt_gp *gp, double *alpha, double *m0) {
  double m, s;
  mpt_gp_normalization(gp, &m, &s);
  int n = gp->n;
  for (int i = 0; i < n; i++) alpha[i] = gp->wy[i] - m * gp->w1[i];
  if (n > 0) solve_lower_trans(n, gp->L, (size_t)gp->cap, alpha);
  *m0 = m;
}

double mpt_gp_mean_with_weights(const mpt_gp *gp, const double *alpha, double m0, const double *x) {
  if (gp->n == 0) return m0;
  mpt_gp_kernel_obs_range(gp, x, 0, gp->n, gp->tmpd); /* kernel values to all observations at once */
  return mpt_gp_mean_from_kernel(alpha, m0, gp->tmpd, gp->n);
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

GP_HOT double mpt_gp_mean_from_kernel(const double *alpha, double m0, const double *k, int n) {
  gp_v4d s0 = {0}, s1 = {0};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    gp_v4d a0, a1, k0, k1;
    memcpy(&a0, alpha + i, sizeof a0);
    memcpy(&a1, alpha + i + 4, sizeof a1);
    memcpy(&k0, k + i, sizeof k0);
    memcpy(&k1, k + i + 4, sizeof k1);
    s0 += a0 * k0;
    s1 += a1 * k1;
  }
  double t[8];
  memcpy(t, &s0, sizeof s0);
  memcpy(t + 4, &s1, sizeof s1);
  for (int r = 0; i < n; i++, r++) t[r] += alpha[i] * k[i];
  return m0 + (((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7])));
}

double mpt_gp_variance_sum(const mpt_gp *gp, const uint8_t *skip, int64_t *count) {
  double sub = 0;
  int64_t ns = 0;
  for (int64_t c = 0; skip && c < gp->n_cand; c++) {
    if (c + 8 <= gp->n_cand) { /* 8 flags at a time: most candidates are not skipped */
      uint64_t f;
      memcpy(&f, skip + c, sizeof f);
      if (f == 0) { c += 7; continue; }
    }
    if (skip[c]) {
      ns++;
      sub += gp->var[c] > 0 ? gp->var[c] : 0.0;
    }
  }
  if (count) *count = gp->n_cand - ns;
  double s = gp->var_sum - sub;
  return s > 0 && ns < gp->n_cand ? s : 0.0;
}

void mpt_gp_kernel_obs_range(const mpt_gp *gp, const double *x, int from, int to, double *k) {
  if (to <= from) return;
  mpt_gp_dist2_row(to - from, gp->dim, x, gp->XoT + from, (size_t)gp->cap, gp->inv_ls, k);
  kernel_from_r2(gp->cfg.kernel, to - from, gp->variance, k);
}

void mpt_gp_get_hyper(const mpt_gp *gp, double *ls, double *variance, double *noise) {
  if (ls) memcpy(ls, gp->ls, sizeof(double) * (size_t)gp->dim);
  if (variance) *variance = gp->variance;
  if (noise) *noise = gp->noise;
}

/* K(Xo, Xo) + noise I into a (ld x n, row-major, lower), then Cholesky; adds jitter on failure. */
static int factor_obs(const mpt_gp *gp, const double *inv_ls, double variance, double noise, double *a,
                      int ld, mpt_error *err) {
  int n = gp->n;
  double ne = noise_eff(noise, variance);
  for (int attempt = 0; attempt < 6; attempt++) {
    for (int i = 0; i < n; i++) {
      const double *xi = gp->Xo + (size_t)i * gp->dim;
      for (int j = 0; j < i; j++)
        a[(size_t)i * ld + j] =
            variance * kern_r2(gp->cfg.kernel, dist2(xi, gp->Xo + (size_t)j * gp->dim, inv_ls, gp->dim));
      a[(size_t)i * ld + i] = variance + ne;
    }
    lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, a, ld);
    if (info == 0) return 0;
    if (info < 0) break;
    ne = ne * 100 + 1e-10 * variance;
  }
  return mpt_error_set(err, MPT_ERR_VALUE, "gp: covariance matrix of %d observations is not positive definite", n);
}

static int refactor(mpt_gp *gp, mpt_error *err) {
  int n = gp->n, cap = gp->cap, dim = gp->dim;
  for (int64_t c = 0; c < gp->n_pad; c++) {
    gp->A[c] = 0;
    gp->B[c] = 0;
    gp->var[c] = gp->variance;
  }
  gp->var_sum = var_total(gp);
  if (n == 0) return 0;
  int rc = factor_obs(gp, gp->inv_ls, gp->variance, gp->noise, gp->L, cap, err);
  if (rc) return rc;
  memcpy(gp->wy, gp->yo, sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) gp->w1[i] = 1.0;
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, gp->L, cap, gp->wy, 1);
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, gp->L, cap, gp->w1, 1);
  int64_t bsz = 1024;
  double *K = malloc(sizeof(double) * (size_t)n * (size_t)bsz);
  if (!K) return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory refactoring");
  for (int64_t b = 0; b < gp->n_cand; b += bsz) {
    int64_t bc = gp->n_cand - b < bsz ? gp->n_cand - b : bsz;
    for (int i = 0; i < n; i++) {
      double *kr = K + (size_t)i * bsz;
      mpt_gp_cands_dist2(&gp->cs, gp->Xo + (size_t)i * dim, gp->inv_ls, b, bc, kr);
      for (int64_t j = 0; j < bc; j++) kr[j] = gp->variance * kern_r2(gp->cfg.kernel, kr[j]);
    }
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, (int)bc, 1.0, gp->L,
                cap, K, (int)bsz);
    for (int i = 0; i < n; i++) {
      const double *krow = K + (size_t)i * bsz;
      double wyi = gp->wy[i], w1i = gp->w1[i];
      for (int64_t j = 0; j < bc; j++) {
        float v = (float)krow[j];
        int64_t c = b + j;
        gp->V[((size_t)(c / GP_VB) * (size_t)cap + (size_t)i) * GP_VB + (size_t)(c % GP_VB)] = v;
        gp->A[c] += (double)v * wyi;
        gp->B[c] += (double)v * w1i;
        gp->var[c] -= (double)v * (double)v;
      }
      for (int64_t c = b + bc; c < gp->n_pad && c < b + bsz; c++) /* padding candidates: V = 0 */
        gp->V[((size_t)(c / GP_VB) * (size_t)cap + (size_t)i) * GP_VB + (size_t)(c % GP_VB)] = 0.0f;
    }
  }
  free(K);
  gp->var_sum = var_total(gp);
  return 0;
}

int mpt_gp_set_hyper(mpt_gp *gp, const double *ls, double variance, double noise, mpt_error *err) {
  if (!(variance > 0) || !(noise >= 0))
    return mpt_error_set(err, MPT_ERR_VALUE, "gp: bad hyperparameters (variance %g, noise %g)", variance, noise);
  for (int d = 0; d < gp->dim; d++)
    if (!(ls[d] > 0)) return mpt_error_set(err, MPT_ERR_VALUE, "gp: lengthscale %d is %g (must be > 0)", d, ls[d]);
  for (int d = 0; d < gp->dim; d++) {
    gp->ls[d] = ls[d];
    gp->inv_ls[d] = 1.0 / ls[d];
  }
  gp->variance = variance;
  gp->noise = noise;
  return refactor(gp, err);
}

int mpt_gp_log_marginal(const mpt_gp *gp, const double *ls, double variance, double noise, double *lml,
                        mpt_error *err) {
  int n = gp->n;
  *lml = 0;
  if (n == 0) return 0;
  if (gp->lml_fn) { /* the backend (the model ranks' ScaLAPACK path), unless it declines (> 0) */
    int rc = gp->lml_fn(gp->lml_ctx, gp, ls ? ls : gp->ls, ls ? variance : gp->variance, ls ? noise : gp->noise, lml, err);
    if (rc <= 0) return rc;
  }
  double *inv_ls = malloc(sizeof(double) * (size_t)gp->dim);
  double *a = malloc(sizeof(double) * (size_t)n * (size_t)n);
  double *z = malloc(sizeof(double) * (size_t)n);
  if (!inv_ls || !a || !z) {
    free(inv_ls); free(a); free(z);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory");
  }
  for (int d = 0; d < gp->dim; d++) inv_ls[d] = 1.0 / (ls ? ls[d] : gp->ls[d]);
  if (!ls) {
    variance = gp->variance;
    noise = gp->noise;
  }
  int rc = factor_obs(gp, inv_ls, variance, noise, a, n, err);
  if (rc == 0) {
    double m, s;
    mpt_gp_normalization(gp, &m, &s);
    for (int i = 0; i < n; i++) z[i] = (gp->yo[i] - m) / s;
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, a, n, z, 1);
    double q = cblas_ddot(n, z, 1, z, 1), ld = 0;
    for (int i = 0; i < n; i++) ld += log(a[(size_t)i * n + i]);
    *lml = -0.5 * q - ld - 0.5 * n * log(2 * M_PI);
  }
  free(inv_ls); free(a); free(z);
  return rc;
}

void mpt_gp_set_lml_backend(mpt_gp *gp, mpt_gp_lml_fn fn, void *ctx) {
  gp->lml_fn = fn;
  gp->lml_ctx = ctx;
}

const double *mpt_gp_obs_points(const mpt_gp *gp) { return gp->Xo; }
const double *mpt_gp_obs_outputs(const mpt_gp *gp) { return gp->yo; }
