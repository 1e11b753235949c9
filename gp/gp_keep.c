/* gp/gp_keep.c: a GP's candidates narrowed to a subset (gp/gp.h mpt_gp_keep_candidates): the kept candidates'
 * columns of V, their A, B, var and their stored points moved down in place to slots 0..k-1 in their order, the
 * rest dropped and their memory given back. No refactorization: O(k n_obs) copies; every kept candidate's
 * posterior is bit for bit what it was. */
#include "gp/gp.h"
#include "gp/gp_impl.h"
#include <stdlib.h>
#include <string.h>

/* candidate keep[j] of n stored by dimension or group (rows of length n) moved to j (rows of length k), row by
 * row in order: a destination never lies after its source, so nothing is overwritten before it is read */
static void compact_rows(void *base, size_t elem, int rows, int64_t n, int64_t k, const int64_t *keep) {
  char *p = base;
  for (int r = 0; r < rows; r++)
    for (int64_t j = 0; j < k; j++)
      memmove(p + ((size_t)r * (size_t)k + (size_t)j) * elem, p + ((size_t)r * (size_t)n + (size_t)keep[j]) * elem, elem);
}

/* the stored points of the kept candidates (gp/gp_cand.h: codes by group, or doubles by dimension) */
static void keep_points(mpt_gp_cands *cs, int64_t k, const int64_t *keep) {
  if (cs->Xc) {
    compact_rows(cs->Xc, 1, cs->ng, cs->n, k, keep);
    uint8_t *p = realloc(cs->Xc, (size_t)(k > 0 ? k : 1) * (size_t)cs->ng);
    if (p) cs->Xc = p;
  } else if (cs->X) {
    compact_rows(cs->X, sizeof(double), cs->dim, cs->n, k, keep);
    double *p = realloc(cs->X, sizeof(double) * (size_t)(k > 0 ? k : 1) * (size_t)cs->dim);
    if (p) cs->X = p;
  }
  cs->n = k;
}

/* a per-candidate array of doubles shrunk to np entries (kept as it is when the system refuses) */
static double *shrink_doubles(double *p, int64_t np) {
  double *q = realloc(p, sizeof(double) * (size_t)(np > 0 ? np : 1));
  return q ? q : p;
}

int mpt_gp_keep_candidates(mpt_gp *gp, int64_t k, const int64_t *keep, mpt_error *err) {
  for (int64_t j = 0; j < k; j++)
    if (keep[j] < 0 || keep[j] >= gp->n_cand || (j > 0 && keep[j] <= keep[j - 1]))
      return mpt_error_set(err, MPT_ERR_VALUE,
                           "gp: candidates to keep must ascend within 0..%lld (entry %lld is %lld)",
                           (long long)gp->n_cand - 1, (long long)j, (long long)keep[j]);
  if (k < 0) return mpt_error_set(err, MPT_ERR_VALUE, "gp: negative number of candidates to keep");
  if (k == gp->n_cand) return 0; /* ascending and k of k: every one, in place */
  const size_t ps = (size_t)gp->cap * GP_VB; /* floats from one panel to the next */
  int n = gp->n;
  for (int64_t j = 0; j < k; j++) { /* column keep[j] to column j: at or before its source, in order */
    int64_t c = keep[j];
    if (c == j) continue;
    float *dst = gp->V + (size_t)(j / GP_VB) * ps + (size_t)(j % GP_VB);
    const float *src = gp->V + (size_t)(c / GP_VB) * ps + (size_t)(c % GP_VB);
    for (int i = 0; i < n; i++) dst[(size_t)i * GP_VB] = src[(size_t)i * GP_VB];
    gp->A[j] = gp->A[c];
    gp->B[j] = gp->B[c];
    gp->var[j] = gp->var[c];
  }
  int64_t np = (k + GP_VB - 1) / GP_VB * GP_VB;
  for (int64_t j = k; j < np; j++) { /* the padding of the last panel: V = 0, the prior */
    float *col = gp->V + (size_t)(j / GP_VB) * ps + (size_t)(j % GP_VB);
    for (int i = 0; i < n; i++) col[(size_t)i * GP_VB] = 0.0f;
    gp->A[j] = 0.0;
    gp->B[j] = 0.0;
    gp->var[j] = gp->variance;
  }
  keep_points(&gp->cs, k, keep);
  gp->n_cand = k;
  gp->n_pad = np;
  gp->A = shrink_doubles(gp->A, np);
  gp->B = shrink_doubles(gp->B, np);
  gp->var = shrink_doubles(gp->var, np);
  if (gp->V && gp->cap > 0) {
    float *V = realloc(gp->V, sizeof(float) * ps * (size_t)(np > 0 ? np / GP_VB : 1));
    if (V) gp->V = V;
  }
  gp->var_sum = gp_var_total(gp);
  return 0;
}
