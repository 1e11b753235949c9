/* gp/gp_batch.c: several observations added to a GP in one pass over V (mpt_gp_add_many, gp/gp.h). The
 * factor grows row by row as for single adds (gp_add_prepare); then each panel of candidates is read
 * from memory once: the sums of the new rows over the old rows of V are taken eight (double sums: four)
 * observations at a time from cache, and each new row is finished in order over the rows added before it. Every candidate
 * sees the same operations in the same order as in k single adds, so the results are the same bit for
 * bit (tests/test_gp.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_hot.h"
#include "gp/gp_impl.h"


typedef float gp_v16f __attribute__((vector_size(64)));

/* t_j[r] = sum over rows i < n of p[i][r] * c[j][i] for 8 coefficient vectors (float, row order: the sums
 * of add_panels, lane by lane; 16-float vectors: one AVX-512 register each in the x86-64-v4 clone),
 * written to out + j * GP_VB */
GP_HOT static void sums8(int n, const float *restrict p, const float *const *c, float *restrict out) {
  gp_v16f t[8][2] = {{{0}}};
  for (int i = 0; i < n; i++) {
    gp_v16f r[2];
    memcpy(r, p + (size_t)i * GP_VB, sizeof r);
    for (int j = 0; j < 8; j++) {
      float cj = c[j][i];
      t[j][0] += r[0] * cj;
      t[j][1] += r[1] * cj;
    }
  }
  memcpy(out, t, sizeof t);
}

typedef float gp_v8f_u __attribute__((vector_size(32)));
typedef double gp_v8d __attribute__((vector_size(64)));

/* the same in double from double coefficients (the sums of add_panels_exact), 4 sums at once (c[j] for
 * j < 4; unused ones point at zeros), each row converted once (8-double vectors: one AVX-512 register
 * each in the x86-64-v4 clone): out + j * GP_VB */
GP_HOT static void sums_exact(int n, const float *restrict p, const double *const *c, double *restrict out) {
  gp_v8d t[4][4] = {{{0}}};
  for (int i = 0; i < n; i++) {
    gp_v8d r[4];
    for (int v = 0; v < 4; v++) {
      gp_v8f_u f;
      memcpy(&f, p + (size_t)i * GP_VB + 8 * v, sizeof f);
      r[v] = __builtin_convertvector(f, gp_v8d);
    }
    for (int j = 0; j < 4; j++) {
      double cj = c[j][i];
      for (int v = 0; v < 4; v++) t[j][v] += r[v] * cj;
    }
  }
  for (int j = 0; j < 4; j++) memcpy(out + j * GP_VB, t[j], sizeof t[j]);
}

/* one running sum of one new observation: over rows [0, rows) with float or double coefficients */
typedef struct gp_sum {
  const float *cf;
  const double *cd;      /* exact: double coefficients and sums */
  float tf[GP_VB];
  double td[GP_VB];
} gp_sum;

/* continues sum s over rows [from, to) of panel p */
static void sum_more(gp_sum *s, const float *p, int from, int to) {
  for (int i = from; i < to; i++) {
    const float *row = p + (size_t)i * GP_VB;
    if (s->cd)
      for (int r = 0; r < GP_VB; r++) s->td[r] += (double)row[r] * s->cd[i];
    else
      for (int r = 0; r < GP_VB; r++) s->tf[r] += row[r] * s->cf[i];
  }
}

/* the new row of observation j in one panel from its sums (t; a with all outputs replaced), and the
 * posterior state updated exactly as add_panels / add_panels_exact do */
static void finish_row(const gp_row *rw, gp_sum *t, gp_sum *a, const double *kq, float *vrow, double *A, double *B,
                       double *var) {
  for (int r = 0; r < GP_VB; r++) {
    double tr = rw->exact ? t->td[r] : (double)t->tf[r];
    float v = (float)((kq[r] - tr) * rw->inv_lnn);
    vrow[r] = v;
    if (a) A[r] = (rw->exact ? a->td[r] : (double)a->tf[r]) + (double)v * rw->wyn;
    else A[r] += (double)v * rw->wyn;
    B[r] += (double)v * rw->w1n;
    var[r] -= (double)v * (double)v;
  }
}

/* one panel (P) for k new rows rw[0..k) over n0 old rows; sums: k + 1 scratch sums (the t of each, then
 * the a of the last when outputs are replaced); zero, zero_d: n0 zeros (the coefficients of unused sums) */
static void batch_panel(int n0, int k, const gp_row *rw, float *P, const double *kq, size_t kstride, double *A,
                        double *B, double *var, gp_sum *sums, const float *zero, const double *zero_d) {
  int ns = k + (rw[k - 1].wf || rw[k - 1].wy ? 1 : 0);
  for (int s = 0; s < ns; s++) {
    const gp_row *r = &rw[s < k ? s : k - 1];
    int is_a = s >= k;
    sums[s].cd = r->exact ? (is_a ? r->wy : r->l) : NULL;
    sums[s].cf = r->exact ? NULL : (is_a ? r->wf : r->lf);
  }
  int fl[8], nf = 0, ex[4], ne = 0; /* float sums by eight, double sums by four over the old rows */
  for (int s = 0; s < ns; s++) {
    if (sums[s].cd) ex[ne++] = s;
    else fl[nf++] = s;
    if (ne == 4 || (s == ns - 1 && ne > 0)) {
      double out[4 * GP_VB];
      const double *c[4];
      for (int j = 0; j < 4; j++) c[j] = j < ne ? sums[ex[j]].cd : zero_d;
      sums_exact(n0, P, c, out);
      for (int j = 0; j < ne; j++) memcpy(sums[ex[j]].td, out + j * GP_VB, sizeof sums[0].td);
      ne = 0;
    }
    if (nf == 8 || (s == ns - 1 && nf > 0)) {
      float out[8 * GP_VB];
      const float *c[8];
      for (int j = 0; j < 8; j++) c[j] = j < nf ? sums[fl[j]].cf : zero;
      sums8(n0, P, c, out);
      for (int j = 0; j < nf; j++) memcpy(sums[fl[j]].tf, out + j * GP_VB, sizeof sums[0].tf);
      nf = 0;
    }
  }
  for (int j = 0; j < k; j++) {
    gp_sum *a = j == k - 1 && ns > k ? &sums[k] : NULL;
    sum_more(&sums[j], P, n0, n0 + j);
    if (a) sum_more(a, P, n0, n0 + j);
    finish_row(&rw[j], &sums[j], a, kq + (size_t)j * kstride, P + (size_t)(n0 + j) * GP_VB, A, B, var);
  }
}

/* the pass over every candidate for the k prepared rows; returns the new sum of the variances */
static double batch_pass(mpt_gp *gp, int k, const double *X, const gp_row *rw, double *kb, gp_sum *sums,
                         const float *zero, const double *zero_d) {
  double vs = 0;
  int n0 = rw[0].n;
  const size_t ps = (size_t)gp->cap * GP_VB;
  for (int64_t b = 0; b < gp->n_pad; b += GP_BLOCK) {
    int64_t bp = gp->n_pad - b < GP_BLOCK ? gp->n_pad - b : GP_BLOCK;
    int64_t bc = gp->n_cand - b < bp ? gp->n_cand - b : bp;
    for (int j = 0; j < k; j++) {
      double *kj = kb + (size_t)j * GP_BLOCK;
      gp_kernel_row(gp, X + (size_t)j * gp->dim, b, bc, kj);
      for (int64_t c = bc; c < bp; c++) kj[c] = 0.0; /* padding: V stays 0 */
    }
    double bvs = 0; /* summed by block, then the blocks (add_impl's order) */
    for (int64_t q = 0; q < bp; q += GP_VB) {
      int64_t c0 = b + q;
      batch_panel(n0, k, rw, gp->V + (size_t)(c0 / GP_VB) * ps, kb + q, GP_BLOCK, gp->A + c0, gp->B + c0,
                  gp->var + c0, sums, zero, zero_d);
      int64_t nr = gp->n_cand - c0;
      if (nr > 0) bvs += gp_panel_var_sum(gp->var + c0, nr < GP_VB ? nr : GP_VB);
    }
    vs += bvs;
  }
  return vs;
}

/* 0 when the inputs are finite, else an error naming the first that is not */
static int check_inputs(const mpt_gp *gp, int k, const double *X, const double *y, const double *y_all, mpt_error *err) {
  for (int j = 0; j < k; j++) {
    if (!isfinite(y[j]) && !(y_all && j == k - 1))
      return mpt_error_set(err, MPT_ERR_VALUE, "gp: observation %d of %d is not finite", j + 1, k);
    for (int d = 0; d < gp->dim; d++)
      if (!isfinite(X[(size_t)j * gp->dim + d]))
        return mpt_error_set(err, MPT_ERR_VALUE, "gp: input coordinate %d of observation %d of %d is not finite", d, j + 1, k);
  }
  for (int i = 0; y_all && i < gp->n + k; i++)
    if (!isfinite(y_all[i])) return mpt_error_set(err, MPT_ERR_VALUE, "gp: output %d is not finite", i);
  return 0;
}

int mpt_gp_add_many(mpt_gp *gp, int k, const double *X, const double *y, const double *y_all, mpt_error *err) {
  if (k <= 0) return 0;
  if (k == 1) return y_all ? mpt_gp_add_outputs(gp, X, y_all, err) : mpt_gp_add(gp, X, y[0], err);
  if (k > 64) { /* bounded scratch: in runs of 64 (the outputs are replaced with the last run) */
    int rc = mpt_gp_add_many(gp, 64, X, y, NULL, err);
    return rc ? rc : mpt_gp_add_many(gp, k - 64, X + (size_t)64 * gp->dim, y + 64, y_all, err);
  }
  int n_end = gp->n + k, rc = check_inputs(gp, k, X, y, y_all, err);
  /* room first: growing moves the factor that the prepared rows point into */
  if (rc == 0) rc = gp_reserve(gp, n_end, err);
  if (rc) return rc;
  gp_row rw[64];
  float *fbuf = malloc(sizeof(float) * (size_t)(k + 1) * (size_t)n_end);
  double *kb = malloc(sizeof(double) * (size_t)k * GP_BLOCK);
  gp_sum *sums = malloc(sizeof(gp_sum) * (size_t)(k + 1));
  float *zero = calloc((size_t)n_end, sizeof(float));
  double *zero_d = calloc((size_t)n_end, sizeof(double)), *ywork = malloc(sizeof(double) * (size_t)n_end);
  if (!fbuf || !kb || !sums || !zero || !zero_d || !ywork) {
    free(fbuf); free(kb); free(sums); free(zero); free(zero_d); free(ywork);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory adding %d observations", k);
  }
  /* cannot fail now (inputs checked, room made); the new rows of L first over the old observations at once */
  int n0 = gp->n, pre = gp_presolve(gp, k, X, y_all, ywork) == 0 ? n0 : 0;
  for (int j = 0; j < k && rc == 0; j++) {
    int last = j == k - 1;
    rc = gp_add_prepare_from(gp, X + (size_t)j * gp->dim, last && y_all ? y_all[gp->n] : y[j], last ? y_all : NULL,
                             pre, ywork, fbuf + (size_t)j * n_end, fbuf + (size_t)k * n_end, &rw[j], err);
  }
  if (rc == 0) gp->var_sum = batch_pass(gp, k, X, rw, kb, sums, zero, zero_d);
  free(fbuf); free(kb); free(sums); free(zero); free(zero_d); free(ywork);
  return rc;
}
