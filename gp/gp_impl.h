/* gp/gp_impl.h: the state of a GP (struct mpt_gp, gp/gp.h) and the helpers its files share, private to
 * gp/gp*.c: the files that work on the factor and on V directly (the serial GP's gp/gp.c, gp_kernel.c,
 * gp_add_row.c, gp_add.c, gp_batch.c, gp_predict.c, gp_factor.c; the candidate pool of fantasies gp/gp_pool.c). */
#ifndef MPT_GP_IMPL_H
#define MPT_GP_IMPL_H
#include <math.h>
#include <stdint.h>
#include "gp/gp.h"
#include "gp/gp_cand.h"

/* V is kept in panels of GP_VB candidates: panel q holds rows 0..cap-1 of candidates q*GP_VB .. q*GP_VB+31
 * (GP_VB floats per row, 128 bytes), so the pass over V when an observation is added streams through
 * contiguous memory (the rows of one panel follow each other) instead of n strided rows */
#define GP_VB 32

struct mpt_gp {
  mpt_gp_config cfg;
  int dim;
  int64_t n_cand;
  mpt_gp_cands cs;      /* the candidates (gp/gp_cand.h) */
  int64_t n_pad;        /* n_cand rounded up to a multiple of GP_VB (the per-candidate arrays and V
                         * have n_pad columns; the padding candidates have V = 0) */
  double *ls, *inv_ls;  /* dim */
  double variance, noise;
  int n, cap;
  double *Xo;           /* cap x dim observed points */
  double *XoT;          /* dim x cap: the same by dimension (distances to all observations vectorize) */
  double *yo;           /* cap outputs (raw units) */
  double *L;            /* cap x cap, row-major lower factor */
  double *wy, *w1;      /* L^-1 y, L^-1 1 */
  float *V;             /* n_pad / GP_VB panels of cap rows of GP_VB: V[(q * cap + i) * GP_VB + r] is
                         * row i (observation) of candidate q * GP_VB + r */
  double *A, *B, *var;  /* n_pad: V^T wy, V^T w1, variance - sum V^2 */
  double var_sum;       /* sum over the n_cand candidates of max(var, 0) (panel_var_sum order) */
  double *kbuf;         /* GP_BLOCK scratch: kernel row of a block of candidates */
  double *tmpd;         /* cap scratch */
  float *lf, *wf;       /* cap scratch */
  uint64_t l_gen;       /* changes whenever rows of L already there change (refactor, truncate): rows solved
                         * ahead over them (gp/gp_ahead.c) hold only while it is the same */
  mpt_gp_lml_fn lml_fn; /* the log marginal likelihood elsewhere (mpt_gp_set_lml_backend), or NULL */
  void *lml_ctx;
};

/* the effective noise variance on the factor's diagonal (the noise plus a jitter relative to the signal) */
#define GP_JITTER MPT_GP_JITTER
static inline double mpt_gp_noise_eff(double noise, double variance) { return noise + GP_JITTER * variance; }

#define GP_BLOCK 4096
/* An observation whose new row of the factor is this many times smaller than the prior sd (the earlier
 * observations predict it well: kernels smooth for their lengthscale, small noise) has its row of V
 * computed with double sums (add_panels_exact), since 1 / L_nn amplifies every rounding of the float
 * sums, and the rows after it inherit the error. With bo's defaults on paper_dedispersion about half of
 * the observations take it (the ask after 220 observations +10 %, paper_hotspot's +4 %); every one would
 * cost +19 % / +33 % for a further factor of 4 in accuracy (docs/PERFORMANCE.md, "GP accuracy over long
 * runs") */
#define GP_EXACT_GAIN 3.0

/* sum of max(var[r], 0) over the first nr (<= GP_VB) candidates of a panel, in 4 interleaved partial
 * sums: the one order every pass that changes var uses, so var_sum is a function of var alone */
static inline double gp_panel_var_sum(const double *var, int64_t nr) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t r = 0;
  for (; r + 4 <= nr; r += 4) {
    s0 += var[r] > 0 ? var[r] : 0.0;
    s1 += var[r + 1] > 0 ? var[r + 1] : 0.0;
    s2 += var[r + 2] > 0 ? var[r + 2] : 0.0;
    s3 += var[r + 3] > 0 ? var[r + 3] : 0.0;
  }
  for (; r < nr; r++) s0 += var[r] > 0 ? var[r] : 0.0;
  return (s0 + s1) + (s2 + s3);
}

/* one new observation's row of the factor, ready for the pass over the candidates (gp_add_prepare) */
typedef struct gp_row {
  const double *l;       /* its row of L: n values, then L_nn */
  int n;                 /* observations before it */
  double inv_lnn, wyn, w1n;
  int exact;             /* V's new row from double sums of l (and wy) */
  const float *lf, *wf;  /* float copies of l and (all outputs replaced) of wy for the float pass; wf NULL otherwise */
  const double *wy;      /* all outputs replaced: wy (n values, the exact pass's), else NULL */
} gp_row;

int gp_add_prepare(mpt_gp *gp, const double *x, double y, const double *y_all, float *lf, float *wf, gp_row *r,
                   mpt_error *err);
/* gp_add_prepare with the first `pre` entries of the new row of L already solved (gp_presolve) and, with
 * y_all, the first `pre` entries of wy (ypre) */
int gp_add_prepare_from(mpt_gp *gp, const double *x, double y, const double *y_all, int pre, const double *ypre,
                        float *lf, float *wf, gp_row *r, mpt_error *err);
/* right-hand sides solved at once by gp_presolve */
#define GP_MAX_RHS 66
/* The rows of L of k new points (X, room made) solved over the n_obs observations at once (and, with y_all,
 * its first n_obs values into ywork): what gp_add_prepare_from then continues; 0, or -1 when k + 1 is over
 * GP_MAX_RHS or there is no room */
int gp_presolve(mpt_gp *gp, int k, const double *X, const double *y_all, double *ywork);
/* x[r] = L^-1 x[r] for m <= GP_MAX_RHS right-hand sides of n values (L lower, n rows, stride ld) in one pass
 * over L: blocks of 32 rows, their products with the part solved before as a small GEMM with FMAs
 * (gp/gp_batch.c; not solve_lower2's order) */
void gp_solve_many(int n, const double *L, size_t ld, int m, double *const *x);
/* gp_solve_many for rows [from, n) of the right-hand sides, their entries before `from` already solved by it:
 * the same values as gp_solve_many over all n (an entry depends only on the rows of L and the entries before it) */
void gp_solve_many_from(int from, int n, const double *L, size_t ld, int m, double *const *x);
/* 1 when the next k points solved ahead (a, may be NULL) are X for gp (then taken: a moves past them), else 0
 * (and a is dropped); with 1 and k > 1, the new rows of L (n_obs + j, room made) and, with y_all, ywork are
 * solved over the n_obs observations as gp_presolve solves them, the same bits (gp/gp_ahead.c) */
int gp_ahead_presolve(mpt_gp_ahead *a, mpt_gp *gp, int k, const double *X, const double *y_all, double *ywork);
/* room for n observations; 0 or an error (out of memory, over config.max_bytes) */
int gp_reserve(mpt_gp *gp, int n, mpt_error *err);
/* k[j] = variance * k(x, X_{b+j}) for j < bc (bc <= GP_BLOCK) */
void gp_kernel_row(const mpt_gp *gp, const double *x, int64_t b, int64_t bc, double *k);

/* the kernel's value at squared scaled distance r2 with libm's exp: the kernel values of gp/gp.h, those to the
 * observations (gp/gp_kernel.c) and the factor from scratch (gp/gp_factor.c) */
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

/* kx[i] = variance * k(x, Xo_i), i < n (gp/gp_kernel.c) */
void gp_kernel_obs(const mpt_gp *gp, const double *x, const double *inv_ls, double variance, double *kx);
/* gp_kernel_obs for the observations from `from` on: kx[i], from <= i < n (the same values) */
void gp_kernel_obs_from(const mpt_gp *gp, const double *x, int from, double *kx);
/* room for twice the observations (64 at first): V's panels moved up in place (gp/gp.c); 0 or an error */
int gp_grow(mpt_gp *gp, mpt_error *err);
/* var_sum from var: the panels' sums in order (gp/gp.c) */
double gp_var_total(const mpt_gp *gp);

#endif
