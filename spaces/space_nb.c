/* spaces/space_nb.c: neighbourhoods of any configuration (Kernel Tuner's strictly-adjacent, adjacent and
 * Hamming definitions, plus index distance) as valid ids, by probing the hash index when the candidate
 * set is small and by scanning the packed rows otherwise: (strictly) adjacent neighbourhoods are boxes
 * (space_box.c), index distance a ring search (nearest valid configurations by L1 index distance), then
 * a branch and bound over the rows. */
#include "spaces/space_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *mpt_neighbor_kind_name(mpt_neighbor_kind k) {
  switch (k) {
    case MPT_NB_STRICTLY_ADJACENT: return "strictly-adjacent";
    case MPT_NB_ADJACENT: return "adjacent";
    case MPT_NB_HAMMING: return "Hamming";
    case MPT_NB_INDEX_DISTANCE: return "index-distance";
  }
  return "?";
}

int mpt_neighbor_kind_parse(const char *name) {
  if (!name) return -1;
  if (!strcasecmp(name, "strictly-adjacent") || !strcasecmp(name, "strictly_adjacent"))
    return MPT_NB_STRICTLY_ADJACENT;
  if (!strcasecmp(name, "adjacent")) return MPT_NB_ADJACENT;
  if (!strcasecmp(name, "hamming")) return MPT_NB_HAMMING;
  if (!strcasecmp(name, "index-distance") || !strcasecmp(name, "index_distance") || !strcasecmp(name, "index"))
    return MPT_NB_INDEX_DISTANCE;
  return -1;
}

/* result collector: ids, possibly unsorted, into a growable buffer */
typedef struct idbuf {
  int64_t *a;
  int64_t n, cap;
  int64_t stack[256];
  int oom;
} idbuf;

static void ib_init(idbuf *b) {
  b->a = b->stack;
  b->n = 0;
  b->cap = 256;
  b->oom = 0;
}
static void ib_push(idbuf *b, int64_t id) {
  if (b->n == b->cap) {
    int64_t nc = b->cap * 2;
    int64_t *na = malloc(sizeof(int64_t) * (size_t)nc);
    if (!na) { b->oom = 1; return; }
    memcpy(na, b->a, sizeof(int64_t) * (size_t)b->n);
    if (b->a != b->stack) free(b->a);
    b->a = na;
    b->cap = nc;
  }
  b->a[b->n++] = id;
}
static void ib_free(idbuf *b) {
  if (b->a != b->stack) free(b->a);
}
static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return a < b ? -1 : a > b;
}
/* sorts, removes duplicates, copies up to cap; returns the count */
static int64_t ib_finish(idbuf *b, int64_t *ids, int64_t cap, int sorted) {
  if (b->oom) { ib_free(b); return MPT_ERR_NOMEM; }
  if (!sorted && b->n > 1) qsort(b->a, (size_t)b->n, sizeof(int64_t), cmp_i64);
  int64_t m = 0;
  for (int64_t i = 0; i < b->n; i++)
    if (m == 0 || b->a[i] != b->a[m - 1]) b->a[m++] = b->a[i];
  for (int64_t i = 0; i < m && i < cap; i++) ids[i] = b->a[i];
  ib_free(b);
  return m;
}

static int centre_ok(const mpt_space *s, const int *c) {
  for (int i = 0; i < s->dims; i++)
    if (c[i] < 0 || c[i] >= s->nv[i]) return 0;
  return 1;
}

typedef struct collect_ctx {
  idbuf *out;
  int64_t skip, cap;
} collect_ctx;

static int visit_box_none(void *ctx, int64_t id) {
  (void)ctx;
  (void)id;
  return 1;
}

/* keeps the first cap ids (they arrive in ascending order), then only counting goes on */
static int visit_box_collect(void *ctx, int64_t id) {
  collect_ctx *c = ctx;
  if (id != c->skip) ib_push(c->out, id);
  return c->out->n >= c->cap;
}

/* ---- ring search: valid configurations at L1 index distance exactly r ---- */

typedef struct ring_ctx {
  const mpt_space *s;
  const int *c;
  int *cur;
  const int *reach; /* reach[p]: the largest |d| parameters p.. can still absorb (suffix sum) */
  int64_t budget;   /* probes left */
  int (*visit)(void *, int64_t);
  void *vctx;
  int64_t found;
} ring_ctx;

static int ring_rec(ring_ctx *R, int p, int rem) {
  const mpt_space *s = R->s;
  if (p == s->dims) {
    if (rem) return 0;
    if (--R->budget < 0) return -1;
    int64_t id = mpt_space_lookup(s, R->cur);
    if (id >= 0 && R->visit(R->vctx, id)) R->found++;
    return 0;
  }
  if (rem > R->reach[p]) return 0;
  int c = R->c[p], nv = s->nv[p];
  int rest = p + 1 < s->dims ? R->reach[p + 1] : 0;
  int dmin = rem - rest; /* this parameter must take at least dmin */
  if (dmin < 0) dmin = 0;
  for (int d = dmin; d <= rem; d++) {
    for (int sg = (d ? -1 : 1); sg <= 1; sg += 2) {
      int v = c + sg * d;
      if (v < 0 || v >= nv || s->pos[p][v] < 0) continue;
      R->cur[p] = v;
      if (ring_rec(R, p + 1, rem - d) < 0) return -1;
    }
  }
  R->cur[p] = c;
  return 0;
}

/* Ring search around c (any in-range configuration): visits the valid ids at L1 index distance r for
 * r = rmin, rmin+1, ... and stops after the first ring where visit() accepted one (returns 0, *radius = r),
 * when no ring is left (1), or when more than `budget` probes were needed (-1). */
static int ring_search(const mpt_space *s, const int *c, int rmin, int64_t budget, int (*visit)(void *, int64_t),
                       void *vctx, int *radius) {
  int d = s->dims;
  int *cur = malloc(sizeof(int) * (size_t)d * 2);
  if (!cur) return MPT_ERR_NOMEM;
  int *reach = cur + d;
  int acc = 0;
  for (int p = d - 1; p >= 0; p--) {
    int up = s->nv[p] - 1 - c[p], dn = c[p];
    acc += up > dn ? up : dn;
    reach[p] = acc;
  }
  memcpy(cur, c, sizeof(int) * (size_t)d);
  ring_ctx R = {s, c, cur, reach, budget, visit, vctx, 0};
  int rc = 1;
  for (int r = rmin; r <= reach[0]; r++) {
    if (ring_rec(&R, 0, r) < 0) { rc = -1; break; }
    if (R.found) { *radius = r; rc = 0; break; }
  }
  free(cur);
  return rc; /* 0 found at *radius, 1 nothing at any radius, -1 budget exhausted */
}


static int visit_collect(void *ctx, int64_t id) {
  ib_push((idbuf *)ctx, id);
  return 1;
}

/* free parameters at a fixed remaining distance: ids of one row in ascending order */
typedef struct fdist {
  const mpt_space *s;
  const int *c;
  const int64_t *minrest; /* minrest[k]: smallest distance free params k.. can contribute */
  idbuf *out;
} fdist;

static void free_at(const fdist *F, int k, int64_t base, int64_t rem) {
  const mpt_space *s = F->s;
  if (k == s->n_free) {
    if (rem == 0) ib_push(F->out, base);
    return;
  }
  int x = s->freep[k];
  for (int j = 0; j < s->n_allowed[x]; j++) {
    int v = s->allowed[x][j];
    int64_t dd = v > F->c[x] ? v - F->c[x] : F->c[x] - v;
    if (dd + F->minrest[k + 1] > rem) continue;
    free_at(F, k + 1, base + (int64_t)j * s->fstride[x], rem - dd);
  }
}

/* branch and bound over the sorted single-word rows: runs of equal values of con[k] within a prefix range,
 * nearest first, pruned when the distance so far plus the free parameters' least contribution exceeds the
 * best found */
typedef struct idscan {
  const mpt_space *s;
  const int *c;
  int64_t best, best_f, second_gap;
  const int64_t *minrest;
  idbuf *out;
} idscan;

typedef struct run { int64_t a, e, dd; } run;
static int cmp_run(const void *x, const void *y) {
  const run *p = x, *q = y;
  return p->dd < q->dd ? -1 : p->dd > q->dd;
}

static void id_rec(idscan *S, int k, int64_t lo, int64_t hi, int64_t acc) {
  const mpt_space *s = S->s;
  if (acc + S->best_f > S->best) return;
  if (k == s->n_con) {
    for (int64_t r = lo; r < hi; r++) {
      int64_t t = acc + S->best_f;
      if (t == 0) t = S->second_gap;
      if (t == INT64_MAX || t > S->best) continue;
      if (t < S->best) { S->best = t; S->out->n = 0; }
      fdist F = {s, S->c, S->minrest, S->out};
      free_at(&F, 0, r * s->q, S->best - acc);
    }
    return;
  }
  int x = s->con[k], sh = s->fshift[x];
  if (s->fmask[x] == 0) { id_rec(S, k + 1, lo, hi, acc); return; }
  const uint64_t *rows = s->rows;
  run stack_runs[64], *runs = stack_runs;
  int cap = 64, n = 0;
  for (int64_t r = lo; r < hi;) {
    uint64_t want = mpt_space__shr(rows[r], sh);
    int64_t step = 1, a = r + 1, e;
    while (a < hi && mpt_space__shr(rows[a], sh) == want) { a = r + step; step *= 2; if (a >= hi) a = hi; }
    /* the run ends in (previous probe, a]: binary search for the first row with a larger prefix */
    int64_t b0 = r + 1, b1 = a;
    while (b0 < b1) {
      int64_t m = b0 + (b1 - b0) / 2;
      if (mpt_space__shr(rows[m], sh) <= want) b0 = m + 1; else b1 = m;
    }
    e = b0;
    if (n == cap) {
      run *nr = malloc(sizeof(run) * (size_t)cap * 2);
      if (!nr) { S->out->oom = 1; break; }
      memcpy(nr, runs, sizeof(run) * (size_t)n);
      if (runs != stack_runs) free(runs);
      runs = nr;
      cap *= 2;
    }
    int v = (int)(want & s->fmask[x]);
    runs[n].a = r;
    runs[n].e = e;
    runs[n].dd = v > S->c[x] ? v - S->c[x] : S->c[x] - v;
    n++;
    r = e;
  }
  qsort(runs, (size_t)n, sizeof(run), cmp_run);
  for (int i = 0; i < n; i++) id_rec(S, k + 1, runs[i].a, runs[i].e, acc + runs[i].dd);
  if (runs != stack_runs) free(runs);
}

/* index distance by one pass over the packed rows: the distance of a row's constrained fields plus the
 * best the (independent) free parameters can add */
static int index_distance_scan(const mpt_space *s, const int *c, idbuf *out) {
  int nf = s->n_free, W = s->words;
  int64_t minrest[nf + 1], best_f = 0, second_gap = INT64_MAX;
  minrest[nf] = 0;
  for (int k = nf - 1; k >= 0; k--) {
    int x = s->freep[k];
    int64_t m1 = INT64_MAX, m2 = INT64_MAX;
    for (int j = 0; j < s->n_allowed[x]; j++) {
      int v = s->allowed[x][j];
      int64_t dd = v > c[x] ? v - c[x] : c[x] - v;
      if (dd < m1) { m2 = m1; m1 = dd; } else if (dd < m2) m2 = dd;
    }
    minrest[k] = minrest[k + 1] + m1;
    if (m2 != INT64_MAX && m2 - m1 < second_gap) second_gap = m2 - m1;
  }
  best_f = minrest[0]; /* the free parameters' smallest contribution; next one: best_f + second_gap */
  if (W == 1) {
    idscan S = {s, c, INT64_MAX, best_f, second_gap, minrest, out};
    id_rec(&S, 0, 0, s->n_rows, 0);
    return out->oom ? MPT_ERR_NOMEM : 0;
  }
  int64_t best = INT64_MAX;
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t r = 0; r < s->n_rows; r++) {
      const uint64_t *row = s->rows + (size_t)r * (size_t)W;
      int64_t dc = 0;
      for (int k = 0; k < s->n_con; k++) {
        int x = s->con[k];
        int v = (int)((row[s->fword[x]] >> s->fshift[x]) & s->fmask[x]);
        dc += v > c[x] ? v - c[x] : c[x] - v;
      }
      if (pass == 0) {
        int64_t t = dc + best_f;
        if (t == 0) t = second_gap == INT64_MAX ? INT64_MAX : second_gap;
        if (t < best) best = t;
      } else if (dc <= best) {
        fdist F = {s, c, minrest, out};
        free_at(&F, 0, r * s->q, best - dc);
      }
    }
    if (best == INT64_MAX) break; /* no other valid configuration */
  }
  return out->oom ? MPT_ERR_NOMEM : 0;
}

int64_t mpt_space_neighbors(const mpt_space *s, const int *idx, mpt_neighbor_kind kind, int64_t *ids,
                            int64_t cap) {
  if (!centre_ok(s, idx)) return MPT_ERR_VALUE;
  if (s->size == 0) return 0;
  int d = s->dims;
  idbuf out;
  ib_init(&out);
  int64_t self = mpt_space_lookup(s, idx);
  switch (kind) {
    case MPT_NB_STRICTLY_ADJACENT:
    case MPT_NB_ADJACENT: {
      int bn[d], bv[d][3];
      const int *bp[d];
      mpt_box bx = {bn, bp};
      for (int p = 0; p < d; p++) bp[p] = bv[p];
      for (int p = 0; p < d; p++) {
        int c = idx[p], n = 0;
        int lo = -1, hi = -1;
        if (kind == MPT_NB_STRICTLY_ADJACENT) {
          if (c > 0) lo = c - 1;
          if (c + 1 < s->nv[p]) hi = c + 1;
        } else {
          for (int v = c - 1; v >= 0; v--) if (s->present[p][v]) { lo = v; break; }
          for (int v = c + 1; v < s->nv[p]; v++) if (s->present[p][v]) { hi = v; break; }
        }
        if (lo >= 0) bv[p][n++] = lo;
        bv[p][n++] = c;
        if (hi >= 0) bv[p][n++] = hi;
        bx.n[p] = n;
      }
      collect_ctx cc = {&out, self, cap};
      int64_t total = 0;
      int rc = cap > 0 ? mpt_space__box(s, &bx, visit_box_collect, &cc, &total)
                       : mpt_space__box(s, &bx, visit_box_none, NULL, &total);
      if (rc) { ib_free(&out); return rc; }
      if (self >= 0) total--; /* the centre lies in its own box */
      if (ib_finish(&out, ids, cap, 1) < 0) return MPT_ERR_NOMEM;
      return total;
    }
    case MPT_NB_HAMMING: {
      int ib[64];
      int *cur = d <= 64 ? ib : malloc(sizeof(int) * (size_t)d);
      if (!cur) return MPT_ERR_NOMEM;
      memcpy(cur, idx, sizeof(int) * (size_t)d);
      for (int p = 0; p < d; p++) {
        for (int j = 0; j < s->n_allowed[p]; j++) {
          int v = s->allowed[p][j];
          if (v == idx[p]) continue;
          cur[p] = v;
          int64_t id = mpt_space_lookup(s, cur);
          if (id >= 0) ib_push(&out, id);
        }
        cur[p] = idx[p];
      }
      if (cur != ib) free(cur);
      return ib_finish(&out, ids, cap, 0);
    }
    case MPT_NB_INDEX_DISTANCE: {
      int radius = 0;
      /* rings of radius 1 (and part of 2) by probing the hash index, then branch and bound on the rows */
      int64_t budget = 64 + 8 * (int64_t)d;
      int rc = ring_search(s, idx, 1, budget, visit_collect, &out, &radius);
      if (rc == MPT_ERR_NOMEM) { ib_free(&out); return rc; }
      if (rc < 0) { /* scan the rows */
        out.n = 0;
        rc = index_distance_scan(s, idx, &out);
        if (rc) { ib_free(&out); return rc; }
        return ib_finish(&out, ids, cap, 0);
      }
      return ib_finish(&out, ids, cap, 0);
    }
  }
  ib_free(&out);
  return MPT_ERR_VALUE;
}

int64_t mpt_space_neighbors_grow(const mpt_space *s, const int *idx, mpt_neighbor_kind kind, int64_t **ids,
                                 int64_t *cap) {
  for (;;) {
    int64_t c = mpt_space_neighbors(s, idx, kind, *ids, *cap);
    if (c < 0 || c <= *cap) return c;
    int64_t nc = c + 64;
    int64_t *nn = realloc(*ids, (size_t)nc * sizeof *nn);
    if (!nn) return MPT_ERR_NOMEM;
    *ids = nn;
    *cap = nc;
  }
}
