/* strategies/bo/bo_local.c: the candidate sets of bo's local picks (option local_every; strategies/bo/bo.c): the
 * box around the incumbent, the Hamming (adjacent, strictly-adjacent) neighbourhoods of the best
 * observations, the elite subspace of their recombinations, or crossover children of the elite. */
#include <stdlib.h>
#include "strategies/bo/bo_local.h"

/* 1 when candidate c lies within the local neighbourhood of the incumbent */
int bo_in_local(const bo_state *b, const mpt_space *sp, int64_t c) {
  for (int d = 0; d < b->n_act; d++) {
    int p = b->act[d];
    int diff = mpt_space_value_index(sp, c, p) - b->inc_idx[p];
    if (diff > b->local_radius || diff < -b->local_radius) return 0;
  }
  return 1;
}

/* observations by objective (the told values, passed as by), ties by index */
static int cmp_obs(const void *x, const void *z, void *by) {
  int64_t a = *(const int64_t *)x, c = *(const int64_t *)z;
  const double *y = by;
  double ya = y[a], yc = y[c];
  return ya < yc ? -1 : ya > yc ? 1 : (a > c) - (a < c);
}

static int nb_push(bo_state *b, int64_t id) {
  if (b->n_nb == b->cap_nb) {
    int64_t nc = b->cap_nb ? b->cap_nb * 2 : 256;
    int64_t *l = realloc(b->nblist, sizeof(int64_t) * (size_t)nc);
    if (!l) return -1;
    b->nblist = l;
    b->cap_nb = nc;
  }
  b->nblist[b->n_nb++] = id;
  b->nbmark[id] = 1;
  return 0;
}

/* The candidate set of a local pick. local_kind=box: the incumbent (best valid observation) is
 * stored for bo_in_local (returns 1). Otherwise marks the free neighbours (nbmark/nblist) of the best
 * local_top valid observations that still have free neighbours, best first (returns 2, or 0 when no
 * observation has a free neighbour); -1 when out of memory. */
int bo_mark_local(bo_state *b, mpt_strategy *s) {
  int64_t n_ok_obs = 0;
  int64_t *ord = malloc(sizeof(int64_t) * (size_t)(b->n_processed > 0 ? b->n_processed : 1));
  if (!ord) return -1;
  for (int64_t i = 0; i < b->n_processed; i++)
    if (b->obs_ok[i]) ord[n_ok_obs++] = i;
  if (n_ok_obs == 0) { free(ord); return 0; }
  qsort_r(ord, (size_t)n_ok_obs, sizeof(int64_t), cmp_obs, b->obs_y);
  if (b->local_kind < 0) {
    mpt_space_config(s->space, b->obs_id[ord[0]], b->inc_idx);
    free(ord);
    return 1;
  }
  if (!b->nbmark && !(b->nbmark = calloc((size_t)b->N, 1))) { free(ord); return -1; }
  int kind = b->local_kind;
  if (kind == LOCAL_ALTERNATE) kind = (b->iter / b->local_every) % 2 ? LOCAL_ELITE : MPT_NB_HAMMING;
  if (kind == LOCAL_ALT_CROSS) kind = (b->iter / b->local_every) % 2 ? LOCAL_CROSS : MPT_NB_HAMMING;
  if (kind == LOCAL_CROSS) {
    /* crossover children of the elite (uniform crossover of two distinct parents among the best
     * elite_size valid observations), offered to the acquisition. The generator is seeded from the
     * run's seed and the number of observations told and pending, so a resumed run draws the same. */
    int dims = mpt_space_dims(s->space);
    int64_t ne = n_ok_obs < b->elite_size ? n_ok_obs : b->elite_size;
    int *pa = malloc(sizeof(int) * (size_t)dims * 2);
    if (!pa) { free(ord); return -1; }
    int *pb = pa + dims;
    mpt_rng r;
    mpt_rng_seed(&r, s->seed * 0x9E3779B97F4A7C15ull + (uint64_t)(b->n_obs + b->n_pend) * 0xBF58476D1CE4E5B9ull + 1);
    int rc = 0;
    for (int t = 0; t < 4 * b->local_children && b->n_nb < b->local_children && ne >= 2 && rc == 0; t++) {
      int64_t i = (int64_t)mpt_rng_below(&r, (uint64_t)ne), j = (int64_t)mpt_rng_below(&r, (uint64_t)ne - 1);
      if (j >= i) j++;
      mpt_space_config(s->space, b->obs_id[ord[i]], pa);
      mpt_space_config(s->space, b->obs_id[ord[j]], pb);
      for (int p = 0; p < dims; p++)
        if (mpt_rng_below(&r, 2)) pa[p] = pb[p];
      int64_t c = mpt_space_lookup(s->space, pa);
      if (c < 0 || b->nbmark[c] || b->taken[c] || mpt_strategy_is_seen(s, c)) continue;
      rc = nb_push(b, c);
    }
    free(pa); free(ord);
    return rc ? -1 : b->n_nb > 0 ? 2 : 0;
  }
  if (kind == LOCAL_ELITE) {
    /* the elite subspace: configurations whose every parameter takes a value seen among the best
     * local_top valid observations (the recombinations of the elite, as a crossover would form) */
    int dims = mpt_space_dims(s->space), tot = 0;
    for (int p = 0; p < dims; p++) tot += mpt_space_n_values(s->space, p);
    uint8_t *allowed = calloc((size_t)tot, 1);
    int *off = malloc(sizeof(int) * (size_t)dims);
    if (!allowed || !off) { free(allowed); free(off); free(ord); return -1; }
    for (int p = 0, o = 0; p < dims; p++) { off[p] = o; o += mpt_space_n_values(s->space, p); }
    for (int64_t r = 0; r < n_ok_obs && r < b->local_top; r++) {
      mpt_space_config(s->space, b->obs_id[ord[r]], b->inc_idx);
      for (int p = 0; p < dims; p++) allowed[off[p] + b->inc_idx[p]] = 1;
    }
    int rc = 0;
    for (int64_t c = 0; c < b->N && rc == 0; c++) {
      if (b->taken[c] || mpt_strategy_is_seen(s, c)) continue;
      int ok = 1;
      for (int d = 0; d < b->n_act && ok; d++) {
        int p = b->act[d];
        ok = allowed[off[p] + mpt_space_value_index(s->space, c, p)];
      }
      if (ok) rc = nb_push(b, c);
    }
    free(allowed); free(off); free(ord);
    return rc ? -1 : b->n_nb > 0 ? 2 : 0;
  }
  int64_t cap = 0, *buf = NULL;
  int used = 0;
  for (int64_t r = 0; r < n_ok_obs && used < b->local_top; r++) {
    mpt_space_config(s->space, b->obs_id[ord[r]], b->inc_idx);
    int64_t cnt = mpt_space_neighbors_grow(s->space, b->inc_idx, (mpt_neighbor_kind)kind, &buf, &cap);
    if (cnt < 0) { free(buf); free(ord); return -1; }
    int64_t before = b->n_nb;
    for (int64_t q = 0; q < cnt; q++) {
      int64_t c = buf[q];
      if (b->nbmark[c] || b->taken[c] || mpt_strategy_is_seen(s, c)) continue;
      if (nb_push(b, c)) { free(buf); free(ord); return -1; }
    }
    if (b->n_nb > before) used++;
  }
  free(buf);
  free(ord);
  return b->n_nb > 0 ? 2 : 0;
}

