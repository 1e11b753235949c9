/* spaces/space_box.c: the box query over the valid set (space_internal.h's mpt_space__box): every valid
 * id whose value indices all lie in a candidate list per parameter, in ascending id order, found by
 * narrowing the sorted rows, by probing the hash index, or by one scan of the rows, whichever is
 * cheapest. Neighbourhoods (space_nb.c) and Latin-hypercube cells (space_sample.c) are boxes. */
#include "spaces/space_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct boxq {
  const mpt_space *s;
  const mpt_box *bx;
  int nf, *fn, *it;      /* free parameters: number of candidate positions, odometer */
  int **fp;              /* their candidate positions in allowed[] (ascending) */
  int (*visit)(void *, int64_t);
  void *ctx;
  int stop;              /* stop the traversal */
  int64_t *count;        /* counting mode: add every match here, keep traversing after visit() said stop */
  int quiet;             /* counting mode: visit() said stop, only count */
  int64_t combos;        /* product of fn[]: matches per matching row */
} boxq;

/* free-part enumeration for one row: visits ids in ascending order */
static void box_emit_row(boxq *Q, int64_t row) {
  const mpt_space *s = Q->s;
  int nf = Q->nf;
  if (Q->count) {
    *Q->count += Q->combos;
    if (Q->quiet) return;
  }
  if (nf == 0) {
    if (Q->visit(Q->ctx, row)) { if (Q->count) Q->quiet = 1; else Q->stop = 1; }
    return;
  }
  memset(Q->it, 0, sizeof(int) * (size_t)nf);
  for (;;) {
    int64_t sfx = 0;
    for (int k = 0; k < nf; k++) sfx += (int64_t)Q->fp[k][Q->it[k]] * s->fstride[s->freep[k]];
    if (Q->visit(Q->ctx, row * s->q + sfx)) {
      if (Q->count) Q->quiet = 1; else Q->stop = 1;
      return;
    }
    int k = nf - 1;
    while (k >= 0 && ++Q->it[k] == Q->fn[k]) Q->it[k--] = 0;
    if (k < 0) break;
  }
}


/* single-word rows are sorted with the first constrained parameter in the highest bits, so the rows that
 * share the values of con[0..k] form a contiguous range: narrow it parameter by parameter */
static void box_rec(boxq *Q, int k, int64_t lo, int64_t hi, uint64_t prefix) {
  const mpt_space *s = Q->s;
  if (k == s->n_con) {
    for (int64_t r = lo; r < hi && !Q->stop; r++) box_emit_row(Q, r);
    return;
  }
  int x = s->con[k], sh = s->fshift[x];
  if (s->fmask[x] == 0) { /* single-valued parameter: no field, nothing to narrow */
    box_rec(Q, k + 1, lo, hi, prefix);
    return;
  }
  const uint64_t *rows = s->rows;
  const int *cv = Q->bx->v[x];
  for (int t = 0; t < Q->bx->n[x] && !Q->stop && lo < hi; t++) {
    uint64_t target = prefix | ((uint64_t)cv[t] << sh);
    uint64_t want = mpt_space__shr(target, sh);
    int64_t a = lo, b = hi;
    while (a < b) { /* first row with prefix >= want */
      int64_t m = a + (b - a) / 2;
      if (mpt_space__shr(rows[m], sh) < want) a = m + 1; else b = m;
    }
    if (a == hi || mpt_space__shr(rows[a], sh) != want) { lo = a; continue; }
    int64_t e = a + 1, f = hi;
    while (e < f) { /* first row with prefix > want */
      int64_t m = e + (f - e) / 2;
      if (mpt_space__shr(rows[m], sh) <= want) e = m + 1; else f = m;
    }
    box_rec(Q, k + 1, a, e, target);
    lo = e; /* candidates ascend: the next range starts after this one */
  }
}

int mpt_space__box(const mpt_space *s, const mpt_box *bx, int (*visit)(void *, int64_t), void *ctx,
                   int64_t *count) {
  if (count) *count = 0;
  if (s->size == 0) return 0;
  int nc = s->n_con, W = s->words, nf = s->n_free, rc = 0;
  boxq Q = {s, bx, nf, NULL, NULL, NULL, visit, ctx, 0, count, 0, 1};
  int total = 0;
  for (int k = 0; k < nf; k++) total += bx->n[s->freep[k]];
  int *mem = malloc(sizeof(int) * (size_t)(2 * nf + total + 1));
  int **fp = malloc(sizeof(int *) * (size_t)(nf + 1));
  if (!mem || !fp) { free(mem); free(fp); return MPT_ERR_NOMEM; }
  Q.fn = mem;
  Q.it = mem + nf;
  Q.fp = fp;
  int *cur = mem + 2 * nf;
  for (int k = 0; k < nf; k++) {
    int x = s->freep[k];
    fp[k] = cur;
    Q.fn[k] = 0;
    for (int t = 0; t < bx->n[x]; t++) {
      int j = s->pos[x][bx->v[x][t]];
      if (j >= 0) cur[Q.fn[k]++] = j;
    }
    cur += Q.fn[k];
    if (!Q.fn[k]) goto out; /* no allowed value of a free parameter: empty */
    Q.combos *= Q.fn[k];    /* <= q, which fits */
  }
  double pc = 1;
  for (int k = 0; k < nc; k++) pc *= bx->n[s->con[k]];
  if (pc == 0) goto out;
  if (W == 1) {
    box_rec(&Q, 0, 0, s->n_rows, 0);
  } else if (pc <= 256 || pc * 16 <= (double)s->n_rows * (nc ? nc : 1)) {
    /* probe every combination of the constrained parameters (key order: rows ascend) */
    int it[nc + 1];
    uint64_t key[W];
    memset(it, 0, sizeof it);
    for (;;) {
      memset(key, 0, sizeof(uint64_t) * (size_t)W);
      for (int k = 0; k < nc; k++) {
        int x = s->con[k];
        key[s->fword[x]] |= (uint64_t)bx->v[x][it[k]] << s->fshift[x];
      }
      int64_t row = nc ? mpt_space__find_row(s, key) : 0;
      if (row >= 0) box_emit_row(&Q, row);
      if (Q.stop) break;
      int k = nc - 1;
      while (k >= 0 && ++it[k] == bx->n[s->con[k]]) it[k--] = 0;
      if (k < 0) break;
    }
  } else { /* scan the rows */
    size_t tot = 0, off[nc + 1];
    for (int k = 0; k < nc; k++) { off[k] = tot; tot += (size_t)s->nv[s->con[k]]; }
    uint8_t *mark = calloc(tot + 1, 1);
    if (!mark) { rc = MPT_ERR_NOMEM; goto out; }
    for (int k = 0; k < nc; k++)
      for (int t = 0; t < bx->n[s->con[k]]; t++) mark[off[k] + (size_t)bx->v[s->con[k]][t]] = 1;
    for (int64_t r = 0; r < s->n_rows && !Q.stop; r++) {
      const uint64_t *row = s->rows + (size_t)r * (size_t)W;
      int ok = 1;
      for (int k = 0; k < nc && ok; k++) {
        int x = s->con[k];
        ok = mark[off[k] + ((row[s->fword[x]] >> s->fshift[x]) & s->fmask[x])];
      }
      if (ok) box_emit_row(&Q, r);
    }
    free(mark);
  }
out:
  free(mem);
  free(fp);
  return rc;
}
