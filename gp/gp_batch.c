/* gp/gp_batch.c: several observations added to a GP in one pass over V (mpt_gp_add_many, gp/gp.h). The
 * new rows of the factor are solved over the old observations for all of them at once (gp_solve_many),
 * then each panel of candidates is read from memory once, in chunks of 128 rows that stay in L1: the
 * products of the new observations' rows of L with the old rows of V are a register-blocked GEMM (8, 4,
 * 2 or 1 observations x 32 candidates, FMAs; in double, each row widened as it is read, for observations
 * that the earlier ones nearly predict, GP_EXACT_GAIN), then each new row is finished in order over the
 * rows added before it. The same arithmetic as single adds up to the FMAs' rounding: equal to rounding,
 * not bit for bit (tests/test_gp.c test_add_many). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_hot.h"
#include "gp/gp_impl.h"


typedef float gp_v16f __attribute__((vector_size(64)));
typedef double gp_v8d __attribute__((vector_size(64)));
/* the same, loaded from and stored to plain float / double arrays (no alignment beyond the element's) */
typedef float gp_v16f_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef double gp_v8d_u __attribute__((vector_size(64), aligned(8), may_alias));

/* rows of a panel taken per chunk: 16 KB of floats, 32 KB as doubles, so that every sum of the batch
 * reads the chunk from L1 */
#define GP_KC 128

/* The batch's product with the old rows of V, a register-blocked GEMM over one chunk of a panel: for NJ
 * sums, acc[j][r] += sum over rows i < n of p[i][r] * c[j][i], in row order, with FMAs (GP_HOT_FMA). Float:
 * the 32 candidates of a row in two 16-float vectors; double (GP_GEMM_D below): one half of the row (16
 * candidates) per call. NJ = 8 keeps 16 vector sums in registers
 * (loaded and stored through the unaligned types: a memcpy made GCC keep them on the stack). */
#define GP_GEMM(NAME, NJ, T, V, VU)                                                                       \
  GP_HOT_FMA static void NAME(int n, const T *restrict p, const T *const *c, T *const *acc, const float *pf) { \
    V t[NJ][2];                                                                                           \
    for (int j = 0; j < NJ; j++) {                                                                        \
      t[j][0] = *(const VU *)acc[j];                                                                      \
      t[j][1] = *(const VU *)(acc[j] + 64 / sizeof(T));                                                   \
    }                                                                                                     \
    for (int i = 0; i < n; i++) {                                                                         \
      if (pf) { /* the next chunk's row i, from memory while this chunk is summed in cache */             \
        __builtin_prefetch(pf + (size_t)i * GP_VB);                                                       \
        __builtin_prefetch(pf + (size_t)i * GP_VB + 16);                                                  \
      }                                                                                                   \
      V r0 = *(const VU *)(p + (size_t)i * GP_VB), r1 = *(const VU *)(p + (size_t)i * GP_VB + 64 / sizeof(T)); \
      for (int j = 0; j < NJ; j++) {                                                                      \
        T cj = c[j][i];                                                                                   \
        t[j][0] += r0 * cj;                                                                               \
        t[j][1] += r1 * cj;                                                                               \
      }                                                                                                   \
    }                                                                                                     \
    for (int j = 0; j < NJ; j++) {                                                                        \
      *(VU *)acc[j] = t[j][0];                                                                            \
      *(VU *)(acc[j] + 64 / sizeof(T)) = t[j][1];                                                         \
    }                                                                                                     \
  }
#define GP_GEMM_F(NAME, NJ) GP_GEMM(NAME, NJ, float, gp_v16f, gp_v16f_u)

/* The double sums of GP_GEMM over one half of a chunk's rows (16 candidates), each row's 16 floats widened to
 * double as they are read (exact: the same products and sums as from the chunk converted to double first) */
typedef float gp_v8f_u __attribute__((vector_size(32), aligned(4), may_alias));
#define GP_GEMM_D(NAME, NJ)                                                                               \
  GP_HOT_FMA static void NAME(int n, const float *restrict p, const double *const *c, double *const *acc,  \
                              const float *pf) {                                                         \
    gp_v8d t[NJ][2];                                                                                      \
    for (int j = 0; j < NJ; j++) {                                                                        \
      t[j][0] = *(const gp_v8d_u *)acc[j];                                                                \
      t[j][1] = *(const gp_v8d_u *)(acc[j] + 8);                                                          \
    }                                                                                                     \
    for (int i = 0; i < n; i++) {                                                                         \
      if (pf) {                                                                                           \
        __builtin_prefetch(pf + (size_t)i * GP_VB);                                                       \
        __builtin_prefetch(pf + (size_t)i * GP_VB + 16);                                                  \
      }                                                                                                   \
      gp_v8d r0 = __builtin_convertvector(*(const gp_v8f_u *)(p + (size_t)i * GP_VB), gp_v8d);             \
      gp_v8d r1 = __builtin_convertvector(*(const gp_v8f_u *)(p + (size_t)i * GP_VB + 8), gp_v8d);         \
      for (int j = 0; j < NJ; j++) {                                                                      \
        double cj = c[j][i];                                                                              \
        t[j][0] += r0 * cj;                                                                               \
        t[j][1] += r1 * cj;                                                                               \
      }                                                                                                   \
    }                                                                                                     \
    for (int j = 0; j < NJ; j++) {                                                                        \
      *(gp_v8d_u *)acc[j] = t[j][0];                                                                      \
      *(gp_v8d_u *)(acc[j] + 8) = t[j][1];                                                                \
    }                                                                                                     \
  }
GP_GEMM_F(gemm_f8, 8)
GP_GEMM_F(gemm_f4, 4)
GP_GEMM_F(gemm_f2, 2)
GP_GEMM_F(gemm_f1, 1)
GP_GEMM_D(gemm_d8, 8)
GP_GEMM_D(gemm_d4, 4)
GP_GEMM_D(gemm_d2, 2)
GP_GEMM_D(gemm_d1, 1)

typedef void gemm_f_fn(int, const float *, const float *const *, float *const *, const float *);
typedef void gemm_d_fn(int, const float *, const double *const *, double *const *, const float *);
static gemm_f_fn *const gemm_f[] = {NULL, gemm_f1, gemm_f2, NULL, gemm_f4, NULL, NULL, NULL, gemm_f8};
static gemm_d_fn *const gemm_d[] = {NULL, gemm_d1, gemm_d2, NULL, gemm_d4, NULL, NULL, NULL, gemm_d8};

/* out[a][b] = sum over j < n of li[a][j] * x[b][j], 4 x 4 dot products in 16 vector sums of 8 (FMAs) */
GP_HOT_FMA static void dots4x4(int n, const double *const *li, const double *const *x, double out[4][4]) {
  gp_v8d s[4][4];
  memset(s, 0, sizeof s);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    gp_v8d l[4], v[4];
    for (int a = 0; a < 4; a++) l[a] = *(const gp_v8d_u *)(li[a] + j);
    for (int b = 0; b < 4; b++) v[b] = *(const gp_v8d_u *)(x[b] + j);
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 4; b++) s[a][b] += l[a] * v[b];
  }
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      double t = 0;
      for (int e = 0; e < 8; e++) t += s[a][b][e];
      for (int jj = j; jj < n; jj++) t += li[a][jj] * x[b][jj];
      out[a][b] = t;
    }
}

void gp_solve_many(int n, const double *L, size_t ld, int m, double *const *x) { gp_solve_many_from(0, n, L, ld, m, x); }

void gp_solve_many_from(int from, int n, const double *L, size_t ld, int m, double *const *x) {
  enum { BS = 32 };
  double p[BS][GP_MAX_RHS];
  for (int i0 = from / BS * BS; i0 < n; i0 += BS) {
    int i1 = i0 + BS < n ? i0 + BS : n, ia = i0 > from ? i0 : from; /* rows before `from` are solved */
    for (int a0 = ia; a0 < i1 && i0 > 0; a0 += 4) /* the block's rows against the part solved before it */
      for (int b0 = 0; b0 < m; b0 += 4) {
        const double *li[4], *xb[4];
        for (int a = 0; a < 4; a++) li[a] = L + (size_t)(a0 + a < i1 ? a0 + a : a0) * ld;
        for (int b = 0; b < 4; b++) xb[b] = x[b0 + b < m ? b0 + b : b0];
        double out[4][4];
        dots4x4(i0, li, xb, out);
        for (int a = 0; a < 4 && a0 + a < i1; a++)
          for (int b = 0; b < 4 && b0 + b < m; b++) p[a0 + a - i0][b0 + b] = out[a][b];
      }
    for (int i = ia; i < i1; i++) { /* then the block's triangle, row by row */
      const double *Li = L + (size_t)i * ld;
      for (int r = 0; r < m; r++) {
        double d = i0 > 0 ? p[i - i0][r] : 0.0, *xr = x[r];
        for (int j = i0; j < i; j++) d += Li[j] * xr[j];
        xr[i] = (xr[i] - d) / Li[i];
      }
    }
  }
}

/* one running sum of one new observation: over rows [0, rows) with float or double coefficients */
typedef struct gp_sum {
  const float *cf;
  const double *cd;      /* exact: double coefficients and sums */
  float tf[GP_VB];
  double td[GP_VB];
} gp_sum;

/* the largest block of sums a kernel takes (8, 4, 2, 1) for m left */
static int block_of(int m) { return m >= 8 ? 8 : m >= 4 ? 4 : m >= 2 ? 2 : 1; }

/* the float sums fl[0..nf) and the double sums ex[0..ne) over rows [i0, i0 + n) of panel P; the first kernel
 * prefetches the next chunk's n rows (pf) */
static void chunk_sums(gp_sum *sums, const int *fl, int nf, const int *ex, int ne, const float *P, int i0, int n,
                       const float *pf) {
  for (int s = 0; s < nf;) {
    int g = block_of(nf - s);
    const float *c[8];
    float *acc[8];
    for (int j = 0; j < g; j++) {
      c[j] = sums[fl[s + j]].cf + i0;
      acc[j] = sums[fl[s + j]].tf;
    }
    gemm_f[g](n, P + (size_t)i0 * GP_VB, c, acc, s == 0 ? pf : NULL);
    s += g;
  }
  for (int s = 0; s < ne;) {
    int g = block_of(ne - s);
    const double *c[8];
    for (int j = 0; j < g; j++) c[j] = sums[ex[s + j]].cd + i0;
    for (int h = 0; h < GP_VB; h += 16) {
      double *acc[8];
      for (int j = 0; j < g; j++) acc[j] = sums[ex[s + j]].td + h;
      gemm_d[g](n, P + (size_t)i0 * GP_VB + h, c, acc, s == 0 && h == 0 && nf == 0 ? pf : NULL);
    }
    s += g;
  }
}

/* continues sum s over rows [from, to) of panel p */
GP_HOT_FMA static void sum_more(gp_sum *s, const float *p, int from, int to) {
  for (int i = from; i < to; i++) {
    const float *row = p + (size_t)i * GP_VB;
    if (s->cd)
      for (int r = 0; r < GP_VB; r++) s->td[r] += (double)row[r] * s->cd[i];
    else
      for (int r = 0; r < GP_VB; r++) s->tf[r] += row[r] * s->cf[i];
  }
}

/* the new row of observation j in one panel from its sums (t; a with all outputs replaced), and the
 * posterior state updated as add_panels / add_panels_exact do */
GP_HOT_FMA static void finish_row(const gp_row *rw, gp_sum *t, gp_sum *a, const double *kq, float *vrow, double *A,
                                  double *B, double *var) {
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

/* one panel (P; the next ps floats on, 0 for the last panel) for k new rows rw[0..k) over n0 old rows;
 * sums: k + 1 scratch sums (the t of each, then the a of the last when outputs are replaced) */
static void batch_panel(int n0, int k, const gp_row *rw, float *P, size_t ps, const double *kq, size_t kstride,
                        double *A, double *B, double *var, gp_sum *sums) {
  int ns = k + (rw[k - 1].wf || rw[k - 1].wy ? 1 : 0);
  int fl[GP_MAX_RHS], nf = 0, ex[GP_MAX_RHS], ne = 0; /* the float and the double sums */
  for (int s = 0; s < ns; s++) {
    const gp_row *r = &rw[s < k ? s : k - 1];
    int is_a = s >= k;
    sums[s].cd = r->exact ? (is_a ? r->wy : r->l) : NULL;
    sums[s].cf = r->exact ? NULL : (is_a ? r->wf : r->lf);
    memset(sums[s].tf, 0, sizeof sums[s].tf);
    memset(sums[s].td, 0, sizeof sums[s].td);
    if (sums[s].cd) ex[ne++] = s;
    else fl[nf++] = s;
  }
  for (int i0 = 0; i0 < n0; i0 += GP_KC) { /* the next chunk: of this panel, else the next panel's first */
    const float *next = i0 + GP_KC < n0 ? P + (size_t)(i0 + GP_KC) * GP_VB : ps ? P + ps : NULL;
    chunk_sums(sums, fl, nf, ex, ne, P, i0, n0 - i0 < GP_KC ? n0 - i0 : GP_KC, next);
  }
  for (int j = 0; j < k; j++) {
    gp_sum *a = j == k - 1 && ns > k ? &sums[k] : NULL;
    sum_more(&sums[j], P, n0, n0 + j);
    if (a) sum_more(a, P, n0, n0 + j);
    finish_row(&rw[j], &sums[j], a, kq + (size_t)j * kstride, P + (size_t)(n0 + j) * GP_VB, A, B, var);
  }
}

/* the pass over every candidate for the k prepared rows; returns the new sum of the variances */
static double batch_pass(mpt_gp *gp, int k, const double *X, const gp_row *rw, double *kb, gp_sum *sums) {
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
      batch_panel(n0, k, rw, gp->V + (size_t)(c0 / GP_VB) * ps, c0 + GP_VB < gp->n_pad ? ps : 0, kb + q, GP_BLOCK, gp->A + c0, gp->B + c0,
                  gp->var + c0, sums);
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
  return mpt_gp_add_many_ahead(gp, NULL, k, X, y, y_all, err);
}

int mpt_gp_add_many_ahead(mpt_gp *gp, mpt_gp_ahead *ahead, int k, const double *X, const double *y, const double *y_all,
                          mpt_error *err) {
  if (k <= 0) return 0;
  if (k == 1) {
    gp_ahead_presolve(ahead, gp, 1, X, NULL, NULL); /* moves past it (single adds solve their own row) */
    return y_all ? mpt_gp_add_outputs(gp, X, y_all, err) : mpt_gp_add(gp, X, y[0], err);
  }
  if (k > 64) { /* bounded scratch: in runs of 64 (the outputs are replaced with the last run) */
    int rc = mpt_gp_add_many_ahead(gp, ahead, 64, X, y, NULL, err);
    return rc ? rc : mpt_gp_add_many_ahead(gp, ahead, k - 64, X + (size_t)64 * gp->dim, y + 64, y_all, err);
  }
  int n_end = gp->n + k, rc = check_inputs(gp, k, X, y, y_all, err);
  /* room first: growing moves the factor that the prepared rows point into */
  if (rc == 0) rc = gp_reserve(gp, n_end, err);
  if (rc) return rc;
  gp_row rw[64];
  float *fbuf = malloc(sizeof(float) * (size_t)(k + 1) * (size_t)n_end);
  double *kb = malloc(sizeof(double) * (size_t)k * GP_BLOCK);
  gp_sum *sums = malloc(sizeof(gp_sum) * (size_t)(k + 1));
  double *ywork = malloc(sizeof(double) * (size_t)n_end);
  if (!fbuf || !kb || !sums || !ywork) {
    free(fbuf); free(kb); free(sums); free(ywork);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory adding %d observations", k);
  }
  /* cannot fail now (inputs checked, room made); the new rows of L first over the old observations at once */
  int n0 = gp->n, pre = gp_ahead_presolve(ahead, gp, k, X, y_all, ywork) || gp_presolve(gp, k, X, y_all, ywork) == 0 ? n0 : 0;
  for (int j = 0; j < k && rc == 0; j++) {
    int last = j == k - 1;
    rc = gp_add_prepare_from(gp, X + (size_t)j * gp->dim, last && y_all ? y_all[gp->n] : y[j], last ? y_all : NULL,
                             pre, ywork, fbuf + (size_t)j * n_end, fbuf + (size_t)k * n_end, &rw[j], err);
  }
  if (rc == 0) gp->var_sum = batch_pass(gp, k, X, rw, kb, sums);
  free(fbuf); free(kb); free(sums); free(ywork);
  return rc;
}
