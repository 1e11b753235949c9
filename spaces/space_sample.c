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

/* the state of one LHS design over a pool of candidates */
typedef struct lhs_run {
  const mpt_space *s;
  mpt_rng *rng;
  int64_t n;
  lhs_param *L;         /* per parameter: its strata */
  int *ibuf;            /* the strata's int tables, then tsel and tg */
  uint8_t *ubuf;        /* the strata's used flags */
  int *tsel, *tg;       /* the strata chosen for this point; a random point of their cell */
  int *cand, *bn;       /* the cell as a box: per parameter bn[p] allowed values, listed in cand */
  const int **bv;
  uint8_t *freev;       /* per parameter and value: lies in an unused stratum */
  idset used;           /* the ids picked */
  const int64_t *pool;  /* the candidates when a cell holds no unused valid configuration */
  const int *pcfg;      /* their value indices */
  int64_t npool;
} lhs_run;

/* parameter p's n strata of its value-index range: lo, hi, the strata a[v]..b[v] holding value v, all
 * unused; cur: its int tables, advanced past them */
static void lhs_strata(lhs_param *P, int64_t V, int64_t n, int **cur) {
  P->lo = *cur; *cur += n;
  P->hi = *cur; *cur += n;
  P->unused = *cur; *cur += n;
  P->where = *cur; *cur += n;
  P->a = *cur; *cur += V;
  P->b = *cur; *cur += V;
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

/* the tables of a design of n points and every parameter's strata; 0 or MPT_ERR_NOMEM (lhs_close
 * either way) */
static int lhs_open(lhs_run *R) {
  const mpt_space *s = R->s;
  int d = s->dims;
  int64_t n = R->n;
  size_t cells = (size_t)n * (size_t)d, vals = 0;
  for (int p = 0; p < d; p++) vals += (size_t)s->nv[p];
  R->L = calloc((size_t)d, sizeof *R->L);
  R->ibuf = malloc(sizeof(int) * (4 * cells + 2 * vals + (size_t)d * 3 + 1));
  R->ubuf = calloc(cells + 1, 1);
  R->freev = malloc(vals + 1);
  R->cand = malloc(sizeof(int) * (vals + 1));
  R->bn = malloc(sizeof(int) * (size_t)d);
  R->bv = malloc(sizeof(int *) * (size_t)d);
  if (!R->L || !R->ibuf || !R->ubuf || !R->freev || !R->cand || !R->bn || !R->bv || set_init(&R->used, n))
    return MPT_ERR_NOMEM;
  int *cur = R->ibuf;
  for (int p = 0; p < d; p++) {
    lhs_strata(&R->L[p], s->nv[p], n, &cur);
    R->L[p].used = R->ubuf + (size_t)p * (size_t)n;
  }
  R->tsel = cur; cur += d;
  R->tg = cur;
  return 0;
}

static void lhs_close(lhs_run *R) {
  free(R->L);
  free(R->ibuf);
  free(R->ubuf);
  free(R->freev);
  free(R->cand);
  free(R->bn);
  free(R->bv);
  free(R->used.slot);
}

/* draws per parameter an unused stratum (tsel) and a point in it (tg), and picks an unused valid
 * configuration in the cell they form (uniform among the first 256 found): *pick, or -1 when the cell
 * holds none. 0 or MPT_ERR_NOMEM */
static int lhs_pick_in_cell(lhs_run *R, int64_t *pick) {
  const mpt_space *s = R->s;
  int *cc = R->cand;
  for (int p = 0; p < s->dims; p++) {
    lhs_param *P = &R->L[p];
    int t = P->unused[mpt_rng_below(R->rng, (uint64_t)P->n_unused)];
    R->tsel[p] = t;
    R->tg[p] = P->lo[t] + (int)mpt_rng_below(R->rng, (uint64_t)(P->hi[t] - P->lo[t] + 1));
    R->bn[p] = 0;
    R->bv[p] = cc;
    for (int v = P->lo[t]; v <= P->hi[t]; v++)
      if (s->pos[p][v] >= 0) cc[R->bn[p]++] = v;
    cc += R->bn[p];
  }
  cell_pick C = {&R->used, R->rng, -1, 0};
  mpt_box bx = {R->bn, R->bv};
  int rc = mpt_space__box(s, &bx, visit_cell, &C, NULL);
  *pick = C.chosen;
  return rc;
}

/* the pool's unused candidate in the most unused strata, then nearest to tg (ties at random): its
 * index in the pool, or -1 */
static int64_t lhs_pick_in_pool(lhs_run *R) {
  const mpt_space *s = R->s;
  int d = s->dims;
  uint8_t *fr = R->freev;
  for (int p = 0; p < d; p++) {
    const lhs_param *P = &R->L[p];
    for (int v = 0; v < s->nv[p]; v++) {
      int f = 0;
      for (int t = P->a[v]; t <= P->b[v] && !f; t++) f = !P->used[t];
      fr[v] = (uint8_t)f;
    }
    fr += s->nv[p];
  }
  int64_t best = -1, bcov = -1, bdist = 0, ties = 0;
  for (int64_t k = 0; k < R->npool; k++) {
    const int *x = R->pcfg + (size_t)k * (size_t)d;
    int64_t cov = 0, dist = 0;
    const uint8_t *f = R->freev;
    for (int p = 0; p < d; p++) {
      cov += f[x[p]];
      f += s->nv[p];
      dist += x[p] > R->tg[p] ? x[p] - R->tg[p] : R->tg[p] - x[p];
    }
    if (cov < bcov || (cov == bcov && dist > bdist)) continue;
    if (set_has(&R->used, R->pool[k])) continue;
    if (cov > bcov || dist < bdist) { best = k; bcov = cov; bdist = dist; ties = 1; }
    else if (mpt_rng_below(R->rng, (uint64_t)++ties) == 0) best = k;
  }
  return best;
}

/* one LHS design over a pool of candidates (pool ids, decoded in pcfg); returns the count or <0 */
static int64_t lhs_once(const mpt_space *s, mpt_rng *rng, int64_t n, int64_t *ids, const int64_t *pool,
                        const int *pcfg, int64_t npool) {
  if (n > s->size) n = s->size;
  if (n <= 0) return 0;
  lhs_run R = {.s = s, .rng = rng, .n = n, .pool = pool, .pcfg = pcfg, .npool = npool};
  int64_t count = 0;
  int rc = lhs_open(&R);
  for (int64_t j = 0; j < n && !rc; j++) {
    int64_t pick;
    if ((rc = lhs_pick_in_cell(&R, &pick))) break;
    if (pick >= 0) {
      for (int p = 0; p < s->dims; p++) lhs_mark(&R.L[p], R.tsel[p]);
    } else {
      int64_t best = lhs_pick_in_pool(&R);
      if (best < 0) break; /* cannot happen: the pool holds more than n configurations or all */
      pick = pool[best];
      const int *x = pcfg + (size_t)best * (size_t)s->dims;
      for (int p = 0; p < s->dims; p++) { /* the first unused stratum holding each of its values */
        lhs_param *P = &R.L[p];
        for (int t = P->a[x[p]]; t <= P->b[x[p]]; t++)
          if (!P->used[t]) { lhs_mark(P, t); break; }
      }
    }
    set_add(&R.used, pick);
    ids[count++] = pick;
  }
  lhs_close(&R);
  return rc ? rc : count;
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
