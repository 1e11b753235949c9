/* spaces/space_sample.c: sampling of valid configurations (uniform without replacement by Floyd's
 * algorithm, Latin hypercube with repair to the nearest unused valid configuration, maximin LHS). */
#include "spaces/space_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small open-addressing set of ids ---- */
typedef struct idset {
  int64_t *slot;
  uint64_t mask;
} idset;

static int set_init(idset *st, int64_t n) {
  uint64_t cap = 16;
  while (cap < 2 * (uint64_t)n + 2) cap *= 2;
  st->slot = malloc(sizeof(int64_t) * cap);
  if (!st->slot) return MPT_ERR_NOMEM;
  memset(st->slot, 0xff, sizeof(int64_t) * cap); /* -1 = empty */
  st->mask = cap - 1;
  return 0;
}
static inline uint64_t hmix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static int set_has(const idset *st, int64_t id) {
  uint64_t h = hmix((uint64_t)id) & st->mask;
  while (st->slot[h] != -1) {
    if (st->slot[h] == id) return 1;
    h = (h + 1) & st->mask;
  }
  return 0;
}
/* 1 when inserted, 0 when present */
static int set_add(idset *st, int64_t id) {
  uint64_t h = hmix((uint64_t)id) & st->mask;
  while (st->slot[h] != -1) {
    if (st->slot[h] == id) return 0;
    h = (h + 1) & st->mask;
  }
  st->slot[h] = id;
  return 1;
}

int64_t mpt_space_sample_random(const mpt_space *s, mpt_rng *rng, int64_t n, int64_t *ids) {
  int64_t N = s->size;
  if (n < 0 || n > N) return MPT_ERR_VALUE;
  if (n == 0) return 0;
  idset st;
  if (set_init(&st, n)) return MPT_ERR_NOMEM;
  int64_t k = 0;
  for (int64_t j = N - n; j < N; j++) { /* Floyd */
    int64_t t = (int64_t)mpt_rng_below(rng, (uint64_t)j + 1);
    if (set_add(&st, t)) ids[k++] = t;
    else { set_add(&st, j); ids[k++] = j; }
  }
  free(st.slot);
  mpt_rng_shuffle(rng, ids, n);
  return n;
}

/* ---- Latin hypercube ----
 * Per parameter the value-index range is cut into n strata (stratum t holds the indices
 * [t*nv/n, (t+1)*nv/n - 1], or the single index t*nv/n when nv < n). Point j takes, per parameter, a
 * random still unused stratum; the cell they form is searched for an unused valid configuration (box
 * query on the index, uniform among the first 256 found). When the cell holds none, the point is the
 * candidate of a pool of random valid configurations (the whole valid set when it is small) that lies in
 * the most still unused strata, then nearest to a random point of the cell. Each stratum so serves once
 * where the valid set allows; an unconstrained space gets an exact LHS. */

typedef struct lhs_param {
  int *lo, *hi;      /* index range of each stratum */
  int *a, *b;        /* strata [a[v], b[v]] that contain value index v */
  uint8_t *used;     /* per stratum */
  int *unused, n_unused, *where; /* unused strata, swap-remove */
} lhs_param;

typedef struct cell_pick {
  const idset *used;
  mpt_rng *rng;
  int64_t chosen, seen;
} cell_pick;

static int visit_cell(void *ctx, int64_t id) {
  cell_pick *C = ctx;
  if (set_has(C->used, id)) return 0;
  C->seen++;
  if (mpt_rng_below(C->rng, (uint64_t)C->seen) == 0) C->chosen = id;
  return C->seen >= 256;
}

static void lhs_mark(lhs_param *L, int t) {
  if (L->used[t]) return;
  L->used[t] = 1;
  int w = L->where[t], last = L->unused[--L->n_unused];
  L->unused[w] = last;
  L->where[last] = w;
}

/* one LHS design over a pool of candidates (pool ids, decoded in pcfg); returns the count or <0 */
static int64_t lhs_once(const mpt_space *s, mpt_rng *rng, int64_t n, int64_t *ids, const int64_t *pool,
                        const int *pcfg, int64_t npool) {
  int d = s->dims;
  int64_t rc = 0;
  if (n > s->size) n = s->size;
  if (n <= 0) return 0;
  size_t cells = 0, vals = 0;
  for (int p = 0; p < d; p++) vals += (size_t)s->nv[p];
  cells = (size_t)n * (size_t)d;
  lhs_param *L = calloc((size_t)d, sizeof *L);
  int *ibuf = malloc(sizeof(int) * (4 * cells + 2 * vals + (size_t)d * 3 + 1));
  uint8_t *ubuf = calloc(cells + 1, 1), *freev = malloc(vals + 1);
  int *cand = malloc(sizeof(int) * (vals + 1)), *bn = malloc(sizeof(int) * (size_t)d);
  const int **bv = malloc(sizeof(int *) * (size_t)d);
  idset used = {0};
  if (!L || !ibuf || !ubuf || !freev || !cand || !bn || !bv || set_init(&used, n)) { rc = MPT_ERR_NOMEM; goto out; }
  int *cur = ibuf;
  for (int p = 0; p < d; p++) {
    lhs_param *P = &L[p];
    int64_t V = s->nv[p];
    P->lo = cur; cur += n;
    P->hi = cur; cur += n;
    P->unused = cur; cur += n;
    P->where = cur; cur += n;
    P->a = cur; cur += V;
    P->b = cur; cur += V;
    P->used = ubuf + (size_t)p * (size_t)n;
    for (int64_t v = 0; v < V; v++) { P->a[v] = INT32_MAX; P->b[v] = -1; }
    for (int64_t t = 0; t < n; t++) {
      int64_t lo = t * V / n, hi = (t + 1) * V / n - 1;
      if (hi < lo) hi = lo;
      P->lo[t] = (int)lo;
      P->hi[t] = (int)hi;
      for (int64_t v = lo; v <= hi; v++) {
        if (t < P->a[v]) P->a[v] = (int)t;
        if (t > P->b[v]) P->b[v] = (int)t;
      }
      P->unused[t] = (int)t;
      P->where[t] = (int)t;
    }
    P->n_unused = (int)n;
  }
  int *tsel = cur; cur += d; /* the strata chosen for this point */
  int *tg = cur; cur += d;   /* a random point of the cell */
  for (int64_t j = 0; j < n; j++) {
    int *cc = cand;
    for (int p = 0; p < d; p++) {
      lhs_param *P = &L[p];
      int t = P->unused[mpt_rng_below(rng, (uint64_t)P->n_unused)];
      tsel[p] = t;
      tg[p] = P->lo[t] + (int)mpt_rng_below(rng, (uint64_t)(P->hi[t] - P->lo[t] + 1));
      bn[p] = 0;
      bv[p] = cc;
      for (int v = P->lo[t]; v <= P->hi[t]; v++)
        if (s->pos[p][v] >= 0) cc[bn[p]++] = v;
      cc += bn[p];
    }
    cell_pick C = {&used, rng, -1, 0};
    mpt_box bx = {bn, bv};
    int r = mpt_space__box(s, &bx, visit_cell, &C, NULL);
    if (r) { rc = r; goto out; }
    int64_t pick = C.chosen;
    if (pick >= 0) {
      for (int p = 0; p < d; p++) lhs_mark(&L[p], tsel[p]);
    } else { /* best of the pool: most unused strata, then nearest to tg */
      uint8_t *fr = freev; /* per parameter and value: lies in an unused stratum */
      for (int p = 0; p < d; p++) {
        const lhs_param *P = &L[p];
        for (int v = 0; v < s->nv[p]; v++) {
          int f = 0;
          for (int t = P->a[v]; t <= P->b[v] && !f; t++) f = !P->used[t];
          fr[v] = (uint8_t)f;
        }
        fr += s->nv[p];
      }
      int64_t best = -1, bcov = -1, bdist = 0, ties = 0;
      for (int64_t k = 0; k < npool; k++) {
        const int *x = pcfg + (size_t)k * (size_t)d;
        int64_t cov = 0, dist = 0;
        const uint8_t *f = freev;
        for (int p = 0; p < d; p++) {
          cov += f[x[p]];
          f += s->nv[p];
          dist += x[p] > tg[p] ? x[p] - tg[p] : tg[p] - x[p];
        }
        if (cov < bcov || (cov == bcov && dist > bdist)) continue;
        if (set_has(&used, pool[k])) continue;
        if (cov > bcov || dist < bdist) { best = k; bcov = cov; bdist = dist; ties = 1; }
        else if (mpt_rng_below(rng, (uint64_t)++ties) == 0) best = k;
      }
      if (best < 0) break; /* cannot happen: the pool holds more than n configurations or all */
      pick = pool[best];
      const int *x = pcfg + (size_t)best * (size_t)d;
      for (int p = 0; p < d; p++) {
        lhs_param *P = &L[p];
        for (int t = P->a[x[p]]; t <= P->b[x[p]]; t++)
          if (!P->used[t]) { lhs_mark(P, t); break; }
      }
    }
    set_add(&used, pick);
    ids[rc++] = pick;
  }
out:
  free(L);
  free(ibuf);
  free(ubuf);
  free(freev);
  free(cand);
  free(bn);
  free(bv);
  free(used.slot);
  return rc;
}

/* a pool of max(4096, 4n) distinct random valid ids (all of them when fewer), decoded */
static int make_pool(const mpt_space *s, mpt_rng *rng, int64_t n, int64_t **pool, int **pcfg, int64_t *npool) {
  int64_t k = 4 * n > 4096 ? 4 * n : 4096;
  if (k > s->size) k = s->size;
  *pool = malloc(sizeof(int64_t) * (size_t)(k + 1));
  *pcfg = malloc(sizeof(int) * (size_t)(k + 1) * (size_t)s->dims);
  if (!*pool || !*pcfg) return MPT_ERR_NOMEM;
  if (k == s->size) {
    for (int64_t i = 0; i < k; i++) (*pool)[i] = i;
  } else if (mpt_space_sample_random(s, rng, k, *pool) != k) {
    return MPT_ERR_NOMEM;
  }
  for (int64_t i = 0; i < k; i++) mpt_space_config(s, (*pool)[i], *pcfg + (size_t)i * (size_t)s->dims);
  *npool = k;
  return 0;
}

int64_t mpt_space_sample_lhs(const mpt_space *s, mpt_rng *rng, int64_t n, int64_t *ids) {
  if (n < 0) return MPT_ERR_VALUE;
  if (n > s->size) n = s->size;
  if (n == 0) return 0;
  int64_t *pool = NULL, npool = 0;
  int *pcfg = NULL;
  int64_t rc = make_pool(s, rng, n, &pool, &pcfg, &npool);
  if (rc == 0) rc = lhs_once(s, rng, n, ids, pool, pcfg, npool);
  free(pool);
  free(pcfg);
  return rc;
}

static double min_pair_dist(const mpt_space *s, const int64_t *ids, int64_t n, double *x) {
  int d = s->dims;
  for (int64_t i = 0; i < n; i++) mpt_space_encode(s, ids[i], MPT_ENC_INDEX, x + (size_t)i * (size_t)d);
  double best = INFINITY;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) {
      double t = 0;
      const double *a = x + (size_t)i * (size_t)d, *b = x + (size_t)j * (size_t)d;
      for (int k = 0; k < d; k++) t += (a[k] - b[k]) * (a[k] - b[k]);
      if (t < best) best = t;
    }
  return best;
}

int64_t mpt_space_sample_maximin(const mpt_space *s, mpt_rng *rng, int64_t n, int tries, int64_t *ids) {
  if (n < 0) return MPT_ERR_VALUE;
  if (tries < 1) tries = 1;
  if (n > s->size) n = s->size;
  if (n == 0) return 0;
  int64_t *cand = malloc(sizeof(int64_t) * (size_t)n);
  double *x = malloc(sizeof(double) * (size_t)n * (size_t)s->dims);
  if (!cand || !x) { free(cand); free(x); return MPT_ERR_NOMEM; }
  double best = -1;
  int64_t best_n = 0;
  int64_t *pool = NULL, npool = 0;
  int *pcfg = NULL;
  if (make_pool(s, rng, n, &pool, &pcfg, &npool)) {
    free(cand); free(x); free(pool); free(pcfg);
    return MPT_ERR_NOMEM;
  }
  for (int t = 0; t < tries; t++) {
    int64_t m = lhs_once(s, rng, n, cand, pool, pcfg, npool);
    if (m < 0) { best_n = m; break; }
    double dmin = m > 1 ? min_pair_dist(s, cand, m, x) : 0;
    if (m > best_n || (m == best_n && dmin > best)) {
      best = dmin;
      best_n = m;
      memcpy(ids, cand, sizeof(int64_t) * (size_t)m);
    }
  }
  free(cand);
  free(x);
  free(pool);
  free(pcfg);
  return best_n;
}
