/* spaces/space_sample.c: sampling of valid configurations (uniform without replacement by Floyd's
 * algorithm, Latin hypercube with repair to the nearest unused valid configuration, maximin LHS) and the
 * numeric encodings of configurations for models. */
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

/* ---- Latin hypercube ---- */

typedef struct lhs_pick {
  const mpt_space *s;
  const idset *used;
  const int *target;   /* target value index per parameter */
  const int *slo, *shi;/* the target stratum's index range per parameter */
  mpt_rng *rng;
  int *cfg;
  int64_t best, best_viol, best_dist, ties;
} lhs_pick;

static int64_t violations(const lhs_pick *P, const int *cfg) {
  int64_t v = 0;
  for (int i = 0; i < P->s->dims; i++) v += cfg[i] < P->slo[i] || cfg[i] > P->shi[i];
  return v;
}

static void consider(lhs_pick *P, int64_t id, int64_t dist) {
  mpt_space_config(P->s, id, P->cfg);
  int64_t v = violations(P, P->cfg);
  if (P->best < 0 || v < P->best_viol || (v == P->best_viol && dist < P->best_dist)) {
    P->best = id;
    P->best_viol = v;
    P->best_dist = dist;
    P->ties = 1;
  } else if (v == P->best_viol && dist == P->best_dist) {
    P->ties++;
    if (mpt_rng_below(P->rng, (uint64_t)P->ties) == 0) P->best = id;
  }
}

static int visit_pick(void *ctx, int64_t id) {
  lhs_pick *P = ctx;
  if (set_has(P->used, id)) return 0;
  consider(P, id, 0); /* all candidates of one ring share the distance */
  return 1;
}

/* one LHS design; returns count or <0 */
static int64_t lhs_once(const mpt_space *s, mpt_rng *rng, int64_t n, int64_t *ids) {
  int d = s->dims;
  int64_t rc = 0;
  if (n > s->size) n = s->size;
  if (n <= 0) return 0;
  int64_t *perm = malloc(sizeof(int64_t) * (size_t)n * (size_t)d);
  uint16_t *mat = NULL;
  int *tg = malloc(sizeof(int) * (size_t)d * 4);
  idset used = {0};
  if (!perm || !tg || set_init(&used, n)) { rc = MPT_ERR_NOMEM; goto out; }
  int *slo = tg + d, *shi = tg + 2 * d, *cfg = tg + 3 * d;
  /* small enough: decode the valid set once and scan it per point */
  int small = (double)s->size * (double)d * (double)n <= 4e8;
  for (int p = 0; p < d && small; p++)
    if (s->nv[p] > 65535) small = 0;
  if (small) {
    mat = malloc(sizeof(uint16_t) * (size_t)s->size * (size_t)d);
    if (mat)
      for (int64_t id = 0; id < s->size; id++) {
        mpt_space_config(s, id, cfg);
        for (int p = 0; p < d; p++) mat[(size_t)id * (size_t)d + (size_t)p] = (uint16_t)cfg[p];
      }
  }
  for (int p = 0; p < d; p++) {
    int64_t *pp = perm + (size_t)p * (size_t)n;
    for (int64_t j = 0; j < n; j++) pp[j] = j;
    mpt_rng_shuffle(rng, pp, n);
  }
  for (int64_t j = 0; j < n; j++) {
    for (int p = 0; p < d; p++) {
      int64_t st = perm[(size_t)p * (size_t)n + (size_t)j];
      int64_t V = s->nv[p];
      int64_t lo = st * V / n, hi = (st + 1) * V / n - 1;
      if (hi < lo) hi = lo;
      slo[p] = (int)lo;
      shi[p] = (int)hi;
      tg[p] = (int)(lo + (int64_t)mpt_rng_below(rng, (uint64_t)(hi - lo + 1)));
    }
    lhs_pick P = {s, &used, tg, slo, shi, rng, cfg, -1, 0, 0, 0};
    if (mat) { /* scan the decoded valid set: fewest stratum violations, then nearest */
      int64_t size = s->size;
      for (int64_t id = 0; id < size; id++) {
        const uint16_t *m = mat + (size_t)id * (size_t)d;
        int64_t v = 0, dist = 0;
        for (int p = 0; p < d; p++) {
          int x = m[p];
          v += x < slo[p] || x > shi[p];
          dist += x > tg[p] ? x - tg[p] : tg[p] - x;
        }
        if (P.best >= 0 && (v > P.best_viol || (v == P.best_viol && dist > P.best_dist))) continue;
        if (set_has(&used, id)) continue;
        if (P.best < 0 || v < P.best_viol || dist < P.best_dist) {
          P.best = id; P.best_viol = v; P.best_dist = dist; P.ties = 1;
        } else if (mpt_rng_below(rng, (uint64_t)++P.ties) == 0) {
          P.best = id;
        }
      }
      if (P.best < 0) break;
      set_add(&used, P.best);
      ids[rc++] = P.best;
      continue;
    }
    int radius = 0;
    int r = mpt_space__rings(s, tg, 0, s->size / 2 + 256, visit_pick, &P, &radius);
    if (r == MPT_ERR_NOMEM) { rc = r; goto out; }
    if (r < 0) { /* scan */
      P.best = -1;
      int tmp[d];
      for (int64_t id = 0; id < s->size; id++) {
        if (set_has(&used, id)) continue;
        mpt_space_config(s, id, tmp);
        int64_t dist = 0;
        for (int p = 0; p < d; p++) dist += tmp[p] > tg[p] ? tmp[p] - tg[p] : tg[p] - tmp[p];
        consider(&P, id, dist);
      }
    }
    if (P.best < 0) break; /* no unused valid configuration left */
    set_add(&used, P.best);
    ids[rc++] = P.best;
  }
out:
  free(mat);
  free(perm);
  free(tg);
  free(used.slot);
  return rc;
}

int64_t mpt_space_sample_lhs(const mpt_space *s, mpt_rng *rng, int64_t n, int64_t *ids) {
  if (n < 0) return MPT_ERR_VALUE;
  return lhs_once(s, rng, n, ids);
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
  for (int t = 0; t < tries; t++) {
    int64_t m = lhs_once(s, rng, n, cand);
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
  return best_n;
}

/* ---- encodings ---- */

int mpt_space__prepare_encoding(mpt_space *s) {
  int d = s->dims;
  s->emin = malloc(sizeof(double) * (size_t)d);
  s->emax = malloc(sizeof(double) * (size_t)d);
  s->lmin = malloc(sizeof(double) * (size_t)d);
  s->lmax = malloc(sizeof(double) * (size_t)d);
  s->logok = malloc((size_t)d);
  if (!s->emin || !s->emax || !s->lmin || !s->lmax || !s->logok) return MPT_ERR_NOMEM;
  for (int p = 0; p < d; p++) {
    const double *num = s->prob->params[p].numeric;
    double lo = INFINITY, hi = -INFINITY;
    int ok = 1;
    for (int v = 0; v < s->nv[p]; v++) {
      if (num[v] < lo) lo = num[v];
      if (num[v] > hi) hi = num[v];
      if (!(num[v] > 0) || s->prob->params[p].type == MPT_P_STRING) ok = 0;
    }
    s->emin[p] = lo;
    s->emax[p] = hi;
    s->logok[p] = (uint8_t)ok;
    s->lmin[p] = ok ? log2(lo) : 0;
    s->lmax[p] = ok ? log2(hi) : 0;
  }
  return 0;
}

void mpt_space_encode_idx(const mpt_space *s, const int *idx, mpt_encoding enc, double *x) {
  for (int p = 0; p < s->dims; p++) {
    int v = idx[p];
    if (v < 0) v = 0;
    if (v >= s->nv[p]) v = s->nv[p] - 1;
    if (enc == MPT_ENC_INDEX) {
      x[p] = s->nv[p] > 1 ? (double)v / (double)(s->nv[p] - 1) : 0.0;
      continue;
    }
    double num = s->prob->params[p].numeric[v];
    if (enc == MPT_ENC_LOG2 && s->logok[p]) {
      double r = s->lmax[p] - s->lmin[p];
      x[p] = r > 0 ? (log2(num) - s->lmin[p]) / r : 0.0;
    } else {
      double r = s->emax[p] - s->emin[p];
      x[p] = r > 0 ? (num - s->emin[p]) / r : 0.0;
    }
  }
}

void mpt_space_encode(const mpt_space *s, int64_t id, mpt_encoding enc, double *x) {
  int d = s->dims;
  int cfg[d];
  mpt_space_config(s, id, cfg);
  mpt_space_encode_idx(s, cfg, enc, x);
}
