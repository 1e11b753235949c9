/* gp/gp_add.c: observations in and out of the candidates' posterior (gp/gp.h): the fused pass over V's
 * panels that adds one observation's row (float sums, or double where the observation is nearly predicted:
 * GP_EXACT_GAIN) and updates A, B, var and their sum; truncation back to fewer observations; all outputs
 * replaced (A = V^T wy). The new row of the factor first: gp/gp_add_row.c. */
#include "gp/gp.h"
#include "gp/gp_impl.h"
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gp/gp_hot.h"

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
  gp->l_gen++; /* rows of L go: rows solved ahead over them no longer hold */
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
