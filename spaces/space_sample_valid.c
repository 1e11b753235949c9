/* spaces/space_sample_valid.c: Latin-hypercube samples that follow the value shares of the VALID
 * configurations (mpt_space_sample_lhs_valid, mpt_space_sample_lhs_conditional), where
 * space_sample.c's index-range LHS gives every value the same share, a value the constraints mostly
 * exclude as often as a free one. Used by bo's initial design (docs/PERFORMANCE.md, "bo: initial
 * design with the valid marginals"). mpt_space_sample_pairs refines an lhs_valid design towards more
 * covered value pairs (bo's sampling=pairs, pairs-strata, pairs-swap; section "bo: pairwise-coverage
 * initial designs"). The nearest-configuration searches and value counts are in space_nearest.c. */
#include "spaces/space_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* n stratum positions in [0, 1) for one parameter: a random permutation of the strata, uniform within */
static void strata(mpt_rng *rng, int64_t n, int64_t *perm, double *u, size_t stride) {
  for (int64_t j = 0; j < n; j++) perm[j] = j;
  mpt_rng_shuffle(rng, perm, n);
  for (int64_t j = 0; j < n; j++) u[(size_t)j * stride] = ((double)perm[j] + mpt_rng_uniform(rng)) / (double)n;
}

int64_t mpt_space_sample_lhs_valid(const mpt_space *sp, const int *params, int np, mpt_rng *rng, int64_t n,
                                   int64_t *ids) {
  int64_t N = mpt_space_size(sp);
  int A = np > 0 ? np : 1, tot = 0;
  int *off = malloc(sizeof(int) * (size_t)A);
  for (int d = 0; d < np && off; d++) {
    off[d] = tot;
    tot += mpt_space_n_values(sp, params[d]);
  }
  int64_t *cnt = calloc((size_t)(tot > 0 ? tot : 1), sizeof(int64_t));
  int64_t *perm = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  double *u = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  int *tgt = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1) * (size_t)A);
  uint8_t *used = calloc((size_t)(N > 0 ? N : 1), 1);
  mpt_nearest *nb = NULL;
  int64_t m = 0;
  if (!off || !cnt || !perm || !u || !tgt || !used) {
    m = MPT_ERR_NOMEM;
    goto out;
  }
  /* cumulative counts: cnt[off + v] = valid configurations with value index <= v */
  mpt_space__value_counts(sp, params, np, off, cnt);
  for (int d = 0; d < np; d++) {
    int nv = mpt_space_n_values(sp, params[d]);
    for (int v = 1; v < nv; v++) cnt[off[d] + v] += cnt[off[d] + v - 1];
    strata(rng, n, perm, u, 1);
    for (int64_t j = 0; j < n; j++) {
      double q = u[j] * (double)N; /* the quantile's position among the valid configurations */
      int v = 0;
      while (v < nv - 1 && (double)cnt[off[d] + v] <= q) v++;
      tgt[(size_t)j * A + d] = v;
    }
  }
  /* each point the nearest unused configuration: one pass over the valid set for all of them */
  if (mpt_space__nearest_batch(sp, params, np, tgt, A, n, &nb)) {
    m = MPT_ERR_NOMEM;
    goto out;
  }
  for (int64_t j = 0; j < n; j++) {
    int64_t pick = mpt_space__nearest_pick(nb, j, used, rng);
    if (pick < 0) break;
    used[pick] = 1;
    ids[m++] = pick;
  }
out:
  mpt_space__nearest_free(nb);
  free(off);
  free(cnt);
  free(perm);
  free(u);
  free(tgt);
  free(used);
  return m;
}

int64_t mpt_space_sample_lhs_conditional(const mpt_space *sp, const int *params, int np, mpt_rng *rng,
                                         int64_t n, int64_t *ids) {
  int64_t N = mpt_space_size(sp);
  int A = np > 0 ? np : 1, maxv = 1;
  for (int d = 0; d < np; d++)
    if (mpt_space_n_values(sp, params[d]) > maxv) maxv = mpt_space_n_values(sp, params[d]);
  int64_t *cnt = malloc(sizeof(int64_t) * (size_t)maxv), *perm = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  int64_t *set = malloc(sizeof(int64_t) * (size_t)(N > 0 ? N : 1));
  /* the configurations bucketed by the value of the first parameter (increasing ids within a bucket), so
   * each point narrows from its bucket, not from all N: the same sets in the same order as filtering all */
  int64_t *byv = malloc(sizeof(int64_t) * (size_t)(N > 0 ? N : 1)), *off = calloc((size_t)maxv + 1, sizeof(int64_t));
  double *u = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * (size_t)A);
  int *tgt = malloc(sizeof(int) * (size_t)A);
  uint8_t *used = calloc((size_t)(N > 0 ? N : 1), 1);
  int64_t m = 0;
  if (!cnt || !perm || !set || !byv || !off || !u || !tgt || !used) {
    m = MPT_ERR_NOMEM;
    goto out;
  }
  if (np > 0) {
    int nv0 = mpt_space_n_values(sp, params[0]);
    for (int64_t c = 0; c < N; c++) off[mpt_space_value_index(sp, c, params[0]) + 1]++;
    for (int v = 0; v < nv0; v++) off[v + 1] += off[v];
    for (int v = 0; v < nv0; v++) cnt[v] = off[v]; /* next free slot of each bucket */
    for (int64_t c = 0; c < N; c++) byv[cnt[mpt_space_value_index(sp, c, params[0])]++] = c;
  }
  for (int d = 0; d < np; d++) strata(rng, n, perm, u + d, (size_t)A);
  for (int64_t j = 0; j < n && N > 0; j++) {
    /* narrow the valid set parameter by parameter to the value at this point's conditional quantile */
    int64_t ns = N;
    for (int d = 0; d < np; d++) {
      int nv = mpt_space_n_values(sp, params[d]);
      double target = u[(size_t)j * A + d] * (double)ns;
      int v = 0;
      if (d == 0) {
        for (int64_t cum = off[1] - off[0]; v < nv - 1 && (double)cum <= target; ++v, cum += off[v + 1] - off[v]) {}
        ns = off[v + 1] - off[v];
        memcpy(set, byv + off[v], sizeof(int64_t) * (size_t)ns);
      } else {
        memset(cnt, 0, sizeof(int64_t) * (size_t)nv);
        for (int64_t q = 0; q < ns; q++) cnt[mpt_space_value_index(sp, set[q], params[d])]++;
        for (int64_t cum = cnt[0]; v < nv - 1 && (double)cum <= target; cum += cnt[++v]) {}
        int64_t w = 0;
        for (int64_t q = 0; q < ns; q++)
          if (mpt_space_value_index(sp, set[q], params[d]) == v) set[w++] = set[q];
        ns = w;
      }
      tgt[d] = v;
    }
    /* no parameter to narrow by: any configuration */
    int64_t pick = np == 0 ? (int64_t)mpt_rng_below(rng, (uint64_t)N) : ns > 0 ? set[mpt_rng_below(rng, (uint64_t)ns)] : -1;
    if (pick < 0 || used[pick]) pick = mpt_space__nearest_unused(sp, params, np, tgt, used, rng); /* taken already */
    if (pick < 0) break;
    used[pick] = 1;
    ids[m++] = pick;
  }
out:
  free(cnt);
  free(perm);
  free(set);
  free(byv);
  free(off);
  free(u);
  free(tgt);
  free(used);
  return m;
}

/* Pairwise coverage (mpt_space_sample_pairs): the weight of each cell (value a of p, value b of q) is
 * its count among the valid configurations raised to `power`, normalized so each parameter pair sums
 * to 1; the design's score is the summed weight of the cells it covers. */
typedef struct pair_tab {
  int np, P;        /* parameters, parameter pairs */
  int *nv;          /* values per parameter */
  int64_t *poff;    /* first cell of each pair (cells are 64-bit: two parameters of 65536 values each) */
  double *w;        /* cell weights */
  int *cov;         /* design points covering each cell */
} pair_tab;

static void pair_cells(const pair_tab *t, const int *v, int64_t *cell) {
  for (int p = 0, k = 0; p < t->np; p++)
    for (int q = p + 1; q < t->np; q++, k++) cell[k] = t->poff[k] + (int64_t)v[p] * t->nv[q] + v[q];
}

/* the most cells the pair table may have (12 bytes each: 768 MiB); a larger one is not built and the
 * design stays the LHS with the valid marginals it starts from */
#define PAIR_CELLS_MAX ((int64_t)1 << 26)

static void row_values(const mpt_space *sp, const int *params, int np, int64_t c, int *v) {
  for (int d = 0; d < np; d++) v[d] = mpt_space_value_index(sp, c, params[d]);
}

/* out-of-band count of one value: below floor(share n) or above ceil(share n) */
static int band_dev(int cnt, int lo, int hi) { return cnt > hi ? cnt - hi : cnt < lo ? lo - cnt : 0; }

/* the state of a pairwise-coverage design */
typedef struct pairs_design {
  const mpt_space *sp;
  const int *params;
  int np;
  int64_t N, m;     /* valid configurations, design points */
  int64_t *ids;     /* the design */
  pair_tab t;
  int *voff, vtot;  /* per parameter: its first value's slot in vcnt, lo and hi; the slots */
  int *vals;        /* m + 1 rows of np value indices: the design points', then a candidate's */
  int64_t *cells;   /* m rows of t.P cells: the cells each design point covers */
  int64_t *ccell;   /* the candidate's cells */
  int *vcnt;        /* per value: the design points taking it */
  int *lo, *hi;     /* per value: its band [floor(f m), ceil(f m)] (f its valid share) */
  uint8_t *used;    /* per id: in the design */
} pairs_design;

static int *candidate_values(const pairs_design *D) { return D->vals + (size_t)D->np * (size_t)D->m; }

/* the value slots and the cells of every parameter pair: nv, voff, poff; *tot the cells. 0 or
 * MPT_ERR_NOMEM */
static int pairs_lay_out(pairs_design *D, int64_t *tot) {
  int np = D->np;
  pair_tab *t = &D->t;
  t->nv = malloc(sizeof(int) * (size_t)np);
  t->poff = malloc(sizeof(int64_t) * (size_t)t->P);
  D->voff = malloc(sizeof(int) * (size_t)np);
  if (!t->nv || !t->poff || !D->voff) return MPT_ERR_NOMEM;
  for (int d = 0; d < np; d++) {
    t->nv[d] = mpt_space_n_values(D->sp, D->params[d]);
    D->voff[d] = D->vtot;
    D->vtot += t->nv[d];
  }
  *tot = 0;
  for (int p = 0, k = 0; p < np; p++)
    for (int q = p + 1; q < np; q++, k++) {
      t->poff[k] = *tot;
      *tot += (int64_t)t->nv[p] * t->nv[q];
    }
  return 0;
}

/* the tables of tot cells, of the design's values and cells, of the value counts; 0 or MPT_ERR_NOMEM */
static int pairs_alloc(pairs_design *D, int64_t tot) {
  int np = D->np, P = D->t.P;
  int64_t m = D->m;
  D->t.w = calloc((size_t)tot, sizeof(double));
  D->t.cov = calloc((size_t)tot, sizeof(int));
  D->vals = malloc(sizeof(int) * (size_t)np * (size_t)(m + 1));
  D->cells = malloc(sizeof(int64_t) * (size_t)P * (size_t)m);
  D->ccell = malloc(sizeof(int64_t) * (size_t)P);
  D->vcnt = calloc((size_t)D->vtot, sizeof(int));
  D->lo = malloc(sizeof(int) * (size_t)D->vtot);
  D->hi = malloc(sizeof(int) * (size_t)D->vtot);
  D->used = calloc((size_t)D->N, 1);
  if (!D->t.w || !D->t.cov || !D->vals || !D->cells || !D->ccell || !D->vcnt || !D->lo || !D->hi || !D->used)
    return MPT_ERR_NOMEM;
  return 0;
}

static void pairs_free(pairs_design *D) {
  free(D->t.w); free(D->t.cov); free(D->vals); free(D->cells); free(D->ccell); free(D->vcnt); free(D->lo);
  free(D->hi); free(D->used); free(D->t.nv); free(D->t.poff); free(D->voff);
}

/* the cell weights (each cell's count among the valid configurations ^ power, normalized so each
 * parameter pair sums to 1) and each value's band from its valid count; 0 or MPT_ERR_NOMEM */
static int pairs_weigh(pairs_design *D, double power) {
  pair_tab *t = &D->t;
  int np = D->np, *cv = candidate_values(D);
  int64_t N = D->N, m = D->m;
  double *vsh = calloc((size_t)D->vtot, sizeof(double)), *psum = calloc((size_t)t->P, sizeof(double));
  if (!vsh || !psum) { free(vsh); free(psum); return MPT_ERR_NOMEM; }
  for (int64_t c = 0; c < N; c++) {
    row_values(D->sp, D->params, np, c, cv);
    pair_cells(t, cv, D->ccell);
    for (int k = 0; k < t->P; k++) t->w[D->ccell[k]] += 1.0;
    for (int d = 0; d < np; d++) vsh[D->voff[d] + cv[d]] += 1.0; /* valid count of each value */
  }
  for (int p = 0, k = 0; p < np; p++)
    for (int q = p + 1; q < np; q++, k++) {
      int64_t nk = (int64_t)t->nv[p] * t->nv[q];
      for (int64_t i = 0; i < nk; i++) {
        double *w = &t->w[t->poff[k] + i];
        *w = *w > 0 ? pow(*w, power) : 0.0;
        psum[k] += *w;
      }
      for (int64_t i = 0; i < nk; i++)
        if (psum[k] > 0) t->w[t->poff[k] + i] /= psum[k];
    }
  for (int i = 0; i < D->vtot; i++) {
    int64_t cm = (int64_t)vsh[i] * m;
    D->lo[i] = (int)(cm / N);
    D->hi[i] = (int)((cm + N - 1) / N);
  }
  free(vsh);
  free(psum);
  return 0;
}

/* the lhs_valid design as the start: used, each point's values and cells, the cells' and values' counts */
static void pairs_cover(pairs_design *D) {
  int np = D->np, P = D->t.P;
  for (int64_t j = 0; j < D->m; j++) {
    D->used[D->ids[j]] = 1;
    row_values(D->sp, D->params, np, D->ids[j], D->vals + (size_t)j * np);
    pair_cells(&D->t, D->vals + (size_t)j * np, D->cells + (size_t)j * P);
    for (int k = 0; k < P; k++) D->t.cov[D->cells[(size_t)j * P + k]]++;
    for (int d = 0; d < np; d++) D->vcnt[D->voff[d] + D->vals[(size_t)j * np + d]]++;
  }
}

/* scratch of the value exchanges: both configurations, their new values and cells */
typedef struct swap_scratch {
  int *ca, *cb, *na, *nb;
  int64_t *nca, *ncb;
} swap_scratch;

/* exchanges the values of parameters d and e (d == e: d alone) between design points i and j when both
 * results are valid and new and the covered weight rises; 1 when done */
static int try_swap(pairs_design *D, swap_scratch *x, int64_t i, int64_t j, int d, int e) {
  int np = D->np, P = D->t.P;
  pair_tab *t = &D->t;
  int *va = D->vals + (size_t)i * np, *vb = D->vals + (size_t)j * np;
  if (va[d] == vb[d] && (e == d || va[e] == vb[e])) return 0;
  memcpy(x->na, va, sizeof(int) * (size_t)np);
  memcpy(x->nb, vb, sizeof(int) * (size_t)np);
  x->na[d] = vb[d]; x->nb[d] = va[d];
  x->na[e] = vb[e]; x->nb[e] = va[e];
  mpt_space_config(D->sp, D->ids[i], x->ca);
  mpt_space_config(D->sp, D->ids[j], x->cb);
  x->ca[D->params[d]] = x->na[d]; x->cb[D->params[d]] = x->nb[d];
  x->ca[D->params[e]] = x->na[e]; x->cb[D->params[e]] = x->nb[e];
  int64_t ia = mpt_space_lookup(D->sp, x->ca), ib = mpt_space_lookup(D->sp, x->cb);
  if (ia < 0 || ib < 0 || ia == D->ids[j] || D->used[ia] || D->used[ib]) return 0;
  pair_cells(t, x->na, x->nca);
  pair_cells(t, x->nb, x->ncb);
  int64_t *ci = D->cells + (size_t)i * P, *cj = D->cells + (size_t)j * P;
  double g = 0;
  for (int k = 0; k < P; k++) {
    if (--t->cov[ci[k]] == 0) g -= t->w[ci[k]];
    if (--t->cov[cj[k]] == 0) g -= t->w[cj[k]];
    if (t->cov[x->nca[k]]++ == 0) g += t->w[x->nca[k]];
    if (t->cov[x->ncb[k]]++ == 0) g += t->w[x->ncb[k]];
  }
  if (!(g > 1e-12)) { /* undo */
    for (int k = 0; k < P; k++) {
      t->cov[x->nca[k]]--; t->cov[x->ncb[k]]--;
      t->cov[ci[k]]++; t->cov[cj[k]]++;
    }
    return 0;
  }
  memcpy(ci, x->nca, sizeof(int64_t) * (size_t)P);
  memcpy(cj, x->ncb, sizeof(int64_t) * (size_t)P);
  memcpy(va, x->na, sizeof(int) * (size_t)np);
  memcpy(vb, x->nb, sizeof(int) * (size_t)np);
  D->used[D->ids[i]] = D->used[D->ids[j]] = 0;
  D->used[ia] = D->used[ib] = 1;
  D->ids[i] = ia;
  D->ids[j] = ib;
  return 1;
}

/* keep_strata 2: sweeps (at most 8, until one improves nothing) of exchanges of one or two parameters'
 * values between two design points: every value's count stays lhs_valid's. 0 or MPT_ERR_NOMEM */
static int pairs_swap_sweeps(pairs_design *D) {
  int np = D->np, dims = mpt_space_dims(D->sp);
  swap_scratch x = {malloc(sizeof(int) * (size_t)dims), malloc(sizeof(int) * (size_t)dims),
                    malloc(sizeof(int) * (size_t)np * 2), NULL, malloc(sizeof(int64_t) * (size_t)D->t.P * 2), NULL};
  int rc = 0;
  if (!x.ca || !x.cb || !x.na || !x.nca) rc = MPT_ERR_NOMEM;
  else {
    x.nb = x.na + np;
    x.ncb = x.nca + D->t.P;
  }
  for (int sweep = 0; sweep < 8 && !rc; sweep++) {
    int improved = 0;
    for (int64_t i = 0; i < D->m; i++)
      for (int64_t j = i + 1; j < D->m; j++)
        for (int d = 0; d < np; d++)
          for (int e = d; e < np; e++) improved |= try_swap(D, &x, i, j, d, e);
    if (!improved) break;
  }
  free(x.ca); free(x.cb); free(x.na); free(x.nca);
  return rc;
}

/* 1 when putting values cv in the place of design point values jv moves some value's count further
 * outside its band */
static int leaves_strata(const pairs_design *D, const int *jv, const int *cv) {
  int dd = 0;
  for (int d = 0; d < D->np; d++) {
    if (jv[d] == cv[d]) continue;
    int a = D->voff[d] + jv[d], b = D->voff[d] + cv[d];
    dd += band_dev(D->vcnt[a] - 1, D->lo[a], D->hi[a]) - band_dev(D->vcnt[a], D->lo[a], D->hi[a]);
    dd += band_dev(D->vcnt[b] + 1, D->lo[b], D->hi[b]) - band_dev(D->vcnt[b], D->lo[b], D->hi[b]);
  }
  return dd > 0;
}

/* the design point whose exchange for the candidate (its values and cells: candidate_values, ccell)
 * raises the covered weight most, strictly (under keep_strata: among those that keep the strata), or -1 */
static int64_t best_exchange(const pairs_design *D, int keep_strata) {
  const pair_tab *t = &D->t;
  const int *cv = candidate_values(D);
  const int64_t *ccell = D->ccell;
  int64_t bj = -1;
  double best = 1e-12;
  for (int64_t j = 0; j < D->m; j++) {
    const int64_t *jc = D->cells + (size_t)j * t->P;
    if (keep_strata && leaves_strata(D, D->vals + (size_t)j * D->np, cv)) continue;
    double g = 0;
    for (int k = 0; k < t->P; k++) {
      if (jc[k] == ccell[k]) continue;
      if (t->cov[ccell[k]] == 0) g += t->w[ccell[k]];
      if (t->cov[jc[k]] == 1) g -= t->w[jc[k]];
    }
    if (g > best) {
      best = g;
      bj = j;
    }
  }
  return bj;
}

/* design point bj becomes candidate c (its values and cells: candidate_values, ccell) */
static void exchange_point(pairs_design *D, int64_t bj, int64_t c) {
  int64_t *jc = D->cells + (size_t)bj * D->t.P;
  int *jv = D->vals + (size_t)bj * D->np;
  const int *cv = candidate_values(D);
  for (int k = 0; k < D->t.P; k++) {
    D->t.cov[jc[k]]--;
    D->t.cov[D->ccell[k]]++;
    jc[k] = D->ccell[k];
  }
  for (int d = 0; d < D->np; d++) {
    D->vcnt[D->voff[d] + jv[d]]--;
    D->vcnt[D->voff[d] + cv[d]]++;
    jv[d] = cv[d];
  }
  D->used[D->ids[bj]] = 0;
  D->used[c] = 1;
  D->ids[bj] = c;
}

/* first-improvement sweeps (at most 8, until one improves nothing) over the candidates: every valid
 * configuration in a random order, or max_candidates drawn at random; each replaces the design point
 * whose exchange for it raises the covered weight most (best_exchange). 0 or MPT_ERR_NOMEM */
static int pairs_exchange_sweeps(pairs_design *D, mpt_rng *rng, int keep_strata, int64_t max_candidates) {
  int64_t N = D->N, nc = max_candidates > 0 && max_candidates < N ? max_candidates : N;
  int64_t *cand = malloc(sizeof(int64_t) * (size_t)nc);
  if (!cand) return MPT_ERR_NOMEM;
  for (int sweep = 0; sweep < 8; sweep++) {
    if (nc == N)
      for (int64_t c = 0; c < N; c++) cand[c] = c;
    else
      for (int64_t c = 0; c < nc; c++) cand[c] = (int64_t)mpt_rng_below(rng, (uint64_t)N);
    mpt_rng_shuffle(rng, cand, nc);
    int improved = 0;
    for (int64_t ci = 0; ci < nc; ci++) {
      int64_t c = cand[ci];
      if (D->used[c]) continue;
      row_values(D->sp, D->params, D->np, c, candidate_values(D));
      pair_cells(&D->t, candidate_values(D), D->ccell);
      int64_t bj = best_exchange(D, keep_strata);
      if (bj < 0) continue;
      exchange_point(D, bj, c);
      improved = 1;
    }
    if (!improved) break;
  }
  free(cand);
  return 0;
}

int64_t mpt_space_sample_pairs(const mpt_space *sp, const int *params, int np, mpt_rng *rng, int64_t n,
                               double power, int keep_strata, int64_t max_candidates, int64_t *ids) {
  int64_t m = mpt_space_sample_lhs_valid(sp, params, np, rng, n, ids);
  if (m < 2 || np < 2) return m;
  pairs_design D = {.sp = sp, .params = params, .np = np, .N = mpt_space_size(sp), .m = m, .ids = ids};
  D.t = (pair_tab){.np = np, .P = np * (np - 1) / 2};
  int64_t tot = 0;
  int rc = pairs_lay_out(&D, &tot);
  if (!rc && tot <= PAIR_CELLS_MAX) { /* else the design stays lhs_valid's */
    rc = pairs_alloc(&D, tot);
    if (!rc) rc = pairs_weigh(&D, power);
    if (!rc) {
      pairs_cover(&D);
      rc = keep_strata == 2 ? pairs_swap_sweeps(&D) : pairs_exchange_sweeps(&D, rng, keep_strata, max_candidates);
    }
  }
  pairs_free(&D);
  return rc ? rc : m;
}
