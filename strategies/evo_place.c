/* strategies/evo_place.c: positions of the evo strategies (see evo_common.h): rounding continuous positions to
 * value indices, neighbours, the constraint-aware repair chain (strictly-adjacent, adjacent, Hamming,
 * index-distance) and the placement of proposals on configurations not proposed before, random Hamming moves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/evo_common.h"

int64_t evo_lookup(evo *e, const int *idx) {
  for (int d = 0; d < e->dims; d++)
    if (idx[d] < 0 || idx[d] >= e->nv[d]) return -1;
  return mpt_space_lookup(e->sp, idx);
}

void evo_round_index(const evo *e, const double *x, int *idx) {
  for (int d = 0; d < e->dims; d++) {
    double v = floor(x[d] + 0.5);
    if (!(v >= 0)) v = 0;
    if (v > e->nv[d] - 1) v = e->nv[d] - 1;
    idx[d] = (int)v;
  }
}

void evo_round_unit(const evo *e, const double *x, int *idx) {
  for (int d = 0; d < e->dims; d++) {
    double v = floor(x[d] * (e->nv[d] - 1) + 0.5);
    if (!(v >= 0)) v = 0;
    if (v > e->nv[d] - 1) v = e->nv[d] - 1;
    idx[d] = (int)v;
  }
}

void evo_to_unit(const evo *e, const int *idx, double *x) {
  for (int d = 0; d < e->dims; d++) x[d] = e->nv[d] > 1 ? (double)idx[d] / (e->nv[d] - 1) : 0.0;
}

int64_t evo_neighbors(evo *e, const int *idx, mpt_neighbor_kind kind) {
  return mpt_space_neighbors_grow(e->sp, idx, kind, &e->nb, &e->nb_cap);
}

/* sum of absolute value-index differences between configuration id and idx */
static int64_t index_distance(const evo *e, int64_t id, const int *idx) {
  int64_t dist = 0;
  for (int d = 0; d < e->dims; d++) {
    int v = mpt_space_value_index(e->sp, id, d);
    dist += v > idx[d] ? v - idx[d] : idx[d] - v;
  }
  return dist;
}

/* of e->nb[0..c), the ids nearest to idx by index distance (skipping this search's own proposals when
 * fresh), one of them uniformly at random; -1 when none is left */
static int64_t pick_nearest(evo *e, const int *idx, int64_t c, int fresh) {
  int64_t best = INT64_MAX, n = 0;
  for (int64_t j = 0; j < c; j++) {
    int64_t id = e->nb[j];
    if (fresh && e->mine[id]) continue;
    int64_t dist = index_distance(e, id, idx);
    if (dist < best) { best = dist; n = 0; }
    if (dist == best) e->nb[n++] = id; /* n <= j: compacts in place */
  }
  return n > 0 ? e->nb[mpt_rng_below(&e->s->rng, (uint64_t)n)] : -1;
}

static const mpt_neighbor_kind repair_chain[] = {MPT_NB_STRICTLY_ADJACENT, MPT_NB_ADJACENT, MPT_NB_HAMMING,
                                                 MPT_NB_INDEX_DISTANCE};

int64_t evo_repair_nearest(evo *e, const int *idx) {
  int64_t id = evo_lookup(e, idx);
  if (id >= 0) return id;
  for (int i = 0; i < 4; i++) {
    int64_t c = evo_neighbors(e, idx, repair_chain[i]);
    if (c < 0) return -1;
    if (c > 0) return pick_nearest(e, idx, c, 0);
  }
  return -1;
}

int64_t evo_fresh(evo *e, const int *idx, int index_distance_only) {
  static const mpt_neighbor_kind de_chain[] = {MPT_NB_INDEX_DISTANCE, MPT_NB_STRICTLY_ADJACENT, MPT_NB_ADJACENT,
                                               MPT_NB_HAMMING};
  for (int i = 0; i < 4; i++) {
    int64_t c = evo_neighbors(e, idx, index_distance_only ? de_chain[i] : repair_chain[i]);
    if (c < 0) return -1;
    int64_t id = c > 0 ? pick_nearest(e, idx, c, 1) : -1;
    if (id >= 0) return id;
  }
  return -1;
}

/* constraint-aware placement of a proposal at idx that evo_repair put on id: with e->fresh, an id this search
 * proposed before moves to the nearest one it has not (evo_fresh). Two members of one generation may still
 * land on the same new configuration (one evaluation): firefly scores higher so than with them spread
 * (docs/PERFORMANCE.md). */
static int64_t place_fresh(evo *e, const int *idx, int64_t id, int index_distance_only) {
  if (id >= 0 && e->fresh && e->mine[id]) {
    int64_t f = evo_fresh(e, idx, index_distance_only);
    if (f >= 0) id = f;
  }
  return id;
}

int64_t evo_repair(evo *e, const int *idx, int index_distance_only) {
  int64_t id = evo_lookup(e, idx);
  if (id >= 0) return id;
  static const mpt_neighbor_kind chain[] = {MPT_NB_STRICTLY_ADJACENT, MPT_NB_ADJACENT, MPT_NB_HAMMING,
                                            MPT_NB_INDEX_DISTANCE};
  for (int i = index_distance_only ? 3 : 0; i < 4; i++) {
    int64_t c = evo_neighbors(e, idx, chain[i]);
    if (c > 0) return e->nb[mpt_rng_below(&e->s->rng, (uint64_t)c)];
  }
  return -1;
}

int64_t evo_place(evo *e, int *idx, int aware, int index_distance_only) {
  if (!aware) return evo_lookup(e, idx);
  int64_t id = place_fresh(e, idx, evo_repair(e, idx, index_distance_only), index_distance_only);
  if (id >= 0) mpt_space_config(e->sp, id, idx);
  return id;
}

int64_t evo_place_unit(evo *e, double *x, int aware) {
  int *idx = e->idx_tmp;
  evo_round_unit(e, x, idx);
  if (!aware) return evo_lookup(e, idx);
  int64_t id = place_fresh(e, idx, evo_repair(e, idx, 0), 0);
  if (id >= 0) {
    mpt_space_config(e->sp, id, idx);
    evo_to_unit(e, idx, x);
  }
  return id;
}

int64_t evo_random_hamming(evo *e, const int *idx) {
  int64_t c = evo_neighbors(e, idx, MPT_NB_HAMMING);
  if (c <= 0) return -1;
  return e->nb[mpt_rng_below(&e->s->rng, (uint64_t)c)];
}

int64_t evo_random_hamming_gene(evo *e, const int *idx) {
  int64_t c = evo_neighbors(e, idx, MPT_NB_HAMMING);
  if (c <= 0) return -1;
  /* the parameter each neighbour changes (exactly one): mark them, pick one of the marked uniformly */
  int np = 0;
  for (int64_t j = 0; j < c; j++) {
    int d = 0;
    while (d < e->dims - 1 && mpt_space_value_index(e->sp, e->nb[j], d) == idx[d]) d++;
    if (!e->dim_mark[d]) { e->dim_mark[d] = 1; np++; }
  }
  int r = (int)mpt_rng_below(&e->s->rng, (uint64_t)np), pick = -1;
  for (int d = 0; d < e->dims; d++) {
    if (e->dim_mark[d] && r-- == 0) pick = d;
    e->dim_mark[d] = 0;
  }
  int64_t n = 0;
  for (int64_t j = 0; j < c; j++)
    if (mpt_space_value_index(e->sp, e->nb[j], pick) != idx[pick]) e->nb[n++] = e->nb[j];
  return e->nb[mpt_rng_below(&e->s->rng, (uint64_t)n)];
}
