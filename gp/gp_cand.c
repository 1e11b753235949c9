/* gp/gp_cand.c: the GP's candidates (gp/gp_cand.h): kept by dimension as one-byte codes into tables of
 * distinct values, dimensions grouped where one's code determines another's (one-hot columns), or as
 * doubles; and the squared scaled distances of a point to a block of them. */
#include "gp/gp_cand.h"
#include "gp/gp_hot.h"
#include <stdlib.h>
#include <string.h>

/* 1 when the codes b[c] are a function of the codes a[c] over n candidates; then map[k] is the b code
 * of the candidates with a code k. A strided sample first: an unrelated column shows it there. */
static int codes_functional(int64_t n, const uint8_t *a, const uint8_t *b, uint8_t *map) {
  int16_t m[256];
  for (int k = 0; k < 256; k++) m[k] = -1;
  for (int pass = 0; pass < 2; pass++)
    for (int64_t c = 0; c < n; c += pass ? 1 : 61) {
      int k = a[c];
      if (m[k] < 0) m[k] = b[c];
      else if (m[k] != b[c]) return 0;
    }
  for (int k = 0; k < 256; k++) map[k] = (uint8_t)(m[k] < 0 ? 0 : m[k]);
  return 1;
}

/* Groups the coded dimensions: each dimension joins the first group whose code determines its own
 * (a one-hot column joins its parameter's index column), else founds a group. The squared distance of
 * a new point to a candidate is then one table lookup per group (the group's terms summed per code)
 * instead of one per dimension. Xc is compacted to the groups' codes. Returns 0 or -1 (no memory). */
static int group_codes(mpt_gp_cands *cs) {
  int64_t n = cs->n;
  int dim = cs->dim;
  int *gof = malloc(sizeof(int) * (size_t)dim); /* group of each dimension */
  int *found = malloc(sizeof(int) * (size_t)dim); /* founding dimension of each group */
  uint8_t *map = malloc((size_t)dim * 256); /* per dimension: its code per group code */
  cs->gfirst = malloc(sizeof(int) * (size_t)(dim + 1));
  cs->gdim = malloc(sizeof(int) * (size_t)dim);
  cs->gtup = malloc((size_t)dim * 256);
  if (!gof || !found || !map || !cs->gfirst || !cs->gdim || !cs->gtup) {
    free(gof); free(found); free(map);
    return -1;
  }
  int ng = 0;
  for (int d = 0; d < dim; d++) {
    gof[d] = -1;
    for (int g = 0; g < ng && gof[d] < 0; g++)
      if (codes_functional(n, cs->Xc + (size_t)found[g] * (size_t)n, cs->Xc + (size_t)d * (size_t)n,
                           map + (size_t)d * 256))
        gof[d] = g;
    if (gof[d] < 0) {
      found[ng] = d;
      gof[d] = ng++;
      for (int k = 0; k < 256; k++) map[(size_t)d * 256 + k] = (uint8_t)k;
    }
  }
  int m = 0;
  for (int g = 0; g < ng; g++) {
    cs->gfirst[g] = m;
    for (int d = 0; d < dim; d++)
      if (gof[d] == g) {
        cs->gdim[m] = d;
        memcpy(cs->gtup + (size_t)m * 256, map + (size_t)d * 256, 256);
        m++;
      }
  }
  cs->gfirst[ng] = m;
  for (int g = 0; g < ng; g++) /* founders ascend, found[g] >= g: moving rows down in order is safe */
    if (found[g] != g) memmove(cs->Xc + (size_t)g * (size_t)n, cs->Xc + (size_t)found[g] * (size_t)n, (size_t)n);
  uint8_t *xc = realloc(cs->Xc, (size_t)n * (size_t)ng);
  if (xc) cs->Xc = xc;
  cs->ng = ng;
  free(gof); free(found); free(map);
  return 0;
}

/* rows fetched from the caller at a time (a block of CAND_ROWS x dim doubles) */
#define CAND_ROWS 1024

/* Keeps the candidates (fetched by fill, CAND_ROWS rows at a time, in ascending order) by dimension: as
 * one-byte codes into per-dimension tables of distinct values when every dimension has at most 256
 * (encodings of tuning parameters have a few values per parameter; one-hot codes two), else as doubles
 * (a second pass over fill). The codes give the same doubles back, so distances are the same; they are
 * 8x less to read per new observation. Returns 0 or -1 (out of memory). */
int mpt_gp_cands_store(mpt_gp_cands *cs, int64_t n, int dim, mpt_gp_cand_fn fill, void *ctx) {
  memset(cs, 0, sizeof *cs);
  cs->n = n;
  cs->dim = dim;
  double *blk = malloc(sizeof(double) * CAND_ROWS * (size_t)dim);
  if (!blk) return -1;
  if (n > 256) {
    cs->Xc = malloc((size_t)n * (size_t)dim);
    cs->Xv = malloc(sizeof(double) * 256 * (size_t)dim);
    cs->nv = calloc((size_t)dim, sizeof(int));
    int16_t *slot = malloc(sizeof(int16_t) * 512 * (size_t)dim); /* per dimension: hash of value bits */
    int ok = cs->Xc && cs->Xv && cs->nv && slot;
    if (ok) memset(slot, 0xff, sizeof(int16_t) * 512 * (size_t)dim);
    for (int64_t c0 = 0; ok && c0 < n; c0 += CAND_ROWS) {
      int64_t nb = n - c0 < CAND_ROWS ? n - c0 : CAND_ROWS;
      fill(ctx, c0, nb, blk);
      for (int64_t c = c0; ok && c < c0 + nb; c++)
        for (int d = 0; d < dim && ok; d++) {
          double v = blk[(size_t)(c - c0) * (size_t)dim + d];
          uint64_t bits;
          memcpy(&bits, &v, sizeof bits);
          int16_t *sl = slot + 512 * (size_t)d;
          double *vals = cs->Xv + 256 * (size_t)d;
          unsigned h = (unsigned)((bits * 0x9e3779b97f4a7c15ULL) >> 55);
          int code = -1;
          while (sl[h] >= 0) {
            uint64_t b2;
            memcpy(&b2, &vals[sl[h]], sizeof b2);
            if (b2 == bits) { code = sl[h]; break; }
            h = (h + 1) & 511;
          }
          if (code < 0) {
            if (cs->nv[d] == 256) { ok = 0; break; } /* too many distinct values: doubles */
            code = cs->nv[d]++;
            vals[code] = v;
            sl[h] = (int16_t)code;
          }
          cs->Xc[(size_t)d * (size_t)n + (size_t)c] = (uint8_t)code;
        }
    }
    free(slot);
    if (ok && group_codes(cs) == 0) { free(blk); return 0; }
    free(cs->Xc); free(cs->Xv); free(cs->nv); free(cs->gfirst); free(cs->gdim); free(cs->gtup);
    cs->Xc = NULL; cs->Xv = NULL; cs->nv = NULL; cs->gfirst = NULL; cs->gdim = NULL; cs->gtup = NULL;
  }
  cs->X = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * (size_t)dim);
  if (!cs->X) { free(blk); return -1; }
  for (int64_t c0 = 0; c0 < n; c0 += CAND_ROWS) {
    int64_t nb = n - c0 < CAND_ROWS ? n - c0 : CAND_ROWS;
    fill(ctx, c0, nb, blk);
    for (int64_t c = c0; c < c0 + nb; c++)
      for (int d = 0; d < dim; d++) cs->X[(size_t)d * (size_t)n + (size_t)c] = blk[(size_t)(c - c0) * (size_t)dim + d];
  }
  free(blk);
  return 0;
}

/* r2[j] = dist2(x, candidate j) for j < n, the candidates by dimension (X[d * ld + j]): the same sums
 * in the same order as dist2, vectorized across candidates */
GP_HOT void mpt_gp_dist2_row(int64_t n, int dim, const double *restrict x, const double *restrict X,
                             size_t ld, const double *restrict inv_ls, double *restrict r2) {
  for (int64_t j = 0; j < n; j++) r2[j] = 0.0;
  for (int d = 0; d < dim; d++) {
    double xd = x[d], il = inv_ls[d];
    const double *restrict Xd = X + (size_t)d * ld;
    for (int64_t j = 0; j < n; j++) {
      double q = (xd - Xd[j]) * il;
      r2[j] += q * q;
    }
  }
}

/* r2[j] += q2[code[j]]: a dimension with two distinct values (one-hot codes) by a select, else by a
 * table lookup */
GP_HOT static void add_coded(int64_t n, int nv, const uint8_t *restrict cd, const double *restrict q2,
                             double *restrict r2) {
  if (nv <= 2) {
    double a = q2[0], b = q2[nv > 1 ? 1 : 0];
    for (int64_t j = 0; j < n; j++) r2[j] += cd[j] ? b : a;
  } else {
    for (int64_t j = 0; j < n; j++) r2[j] += q2[cd[j]];
  }
}

/* r2[j] = dist2(x, candidate b + j) for j < n from the group codes: per group and code the sum of its
 * dimensions' squared scaled differences (in ascending dimension order), then one lookup per group and
 * candidate. With one dimension per group these are dist2's sums; a group of several sums its terms
 * first (the same values up to rounding). */
static void dist2_codes(const mpt_gp_cands *cs, const double *x, const double *inv_ls, int64_t b, int64_t n,
                        double *r2) {
  for (int64_t j = 0; j < n; j++) r2[j] = 0.0;
  for (int g = 0; g < cs->ng; g++) {
    double q2[256];
    int nk = cs->nv[cs->gdim[cs->gfirst[g]]];
    for (int k = 0; k < nk; k++) q2[k] = 0.0;
    for (int m = cs->gfirst[g]; m < cs->gfirst[g + 1]; m++) {
      int d = cs->gdim[m];
      const uint8_t *tup = cs->gtup + (size_t)m * 256;
      const double *vals = cs->Xv + 256 * (size_t)d;
      double xd = x[d], il = inv_ls[d];
      for (int k = 0; k < nk; k++) {
        double q = (xd - vals[tup[k]]) * il;
        q2[k] += q * q;
      }
    }
    add_coded(n, nk, cs->Xc + (size_t)g * (size_t)cs->n + b, q2, r2);
  }
}

void mpt_gp_cands_dist2(const mpt_gp_cands *cs, const double *x, const double *inv_ls, int64_t b, int64_t n,
                        double *r2) {
  if (cs->Xc)
    dist2_codes(cs, x, inv_ls, b, n, r2);
  else
    mpt_gp_dist2_row(n, cs->dim, x, cs->X + b, (size_t)cs->n, inv_ls, r2);
}

/* the code of value v in dimension d's table (the same bits), or -1 */
static int value_code(const mpt_gp_cands *cs, int d, double v) {
  const double *vals = cs->Xv + 256 * (size_t)d;
  for (int k = 0; k < cs->nv[d]; k++)
    if (memcmp(&vals[k], &v, sizeof v) == 0) return k;
  return -1;
}

/* the group code of x in group g, or -1 when x's values there are not the ones a code stands for */
static int group_code(const mpt_gp_cands *cs, int g, const double *x) {
  int k = value_code(cs, cs->gdim[cs->gfirst[g]], x[cs->gdim[cs->gfirst[g]]]);
  for (int m = cs->gfirst[g] + 1; k >= 0 && m < cs->gfirst[g + 1]; m++) {
    int d = cs->gdim[m];
    double v = cs->Xv[256 * (size_t)d + cs->gtup[(size_t)m * 256 + (size_t)k]];
    if (memcmp(&v, &x[d], sizeof v) != 0) return -1;
  }
  return k;
}

int mpt_gp_cands_fits(const mpt_gp_cands *cs, const double *x) {
  if (!cs->Xc) return 1;
  for (int g = 0; g < cs->ng; g++)
    if (group_code(cs, g, x) < 0) return 0;
  return 1;
}

int mpt_gp_cands_set(mpt_gp_cands *cs, int64_t c, const double *x) {
  if (!cs->Xc) {
    for (int d = 0; d < cs->dim; d++) cs->X[(size_t)d * (size_t)cs->n + (size_t)c] = x[d];
    return 0;
  }
  if (!mpt_gp_cands_fits(cs, x)) return -1;
  for (int g = 0; g < cs->ng; g++) cs->Xc[(size_t)g * (size_t)cs->n + (size_t)c] = (uint8_t)group_code(cs, g, x);
  return 0;
}

void mpt_gp_cands_free(mpt_gp_cands *cs) {
  free(cs->X); free(cs->Xc); free(cs->Xv); free(cs->nv); free(cs->gfirst); free(cs->gdim); free(cs->gtup);
  memset(cs, 0, sizeof *cs);
}

int64_t mpt_gp_cands_bytes(const mpt_gp_cands *cs) {
  int64_t n = cs->n, d = cs->dim;
  return cs->Xc ? n * cs->ng + d * 256 * (8 + 1) + (d + cs->ng) * 8 : n * d * 8;
}
