/* strategies/evo_common.c: shared machinery of ga, de, pso, firefly, sa and mls (see evo_common.h):
 * fitness cache, the generation driver behind batched asks, stall counting, rounding, repair. */
#include "strategies/evo_common.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/evo_transfer.h"
#include "strategies/related.h"

/* bytes per valid configuration of a strategy on evo: fit and mine here, seen in the base layer */
#define EVO_BYTES_PER_CONFIG (sizeof(double) + 1 + 1)

int evo_init(evo *e, mpt_strategy *s, mpt_error *err) {
  memset(e, 0, sizeof *e);
  e->s = s;
  e->sp = s->space;
  e->dims = mpt_space_dims(s->space);
  e->size = mpt_space_size(s->space);
  e->best_id = -1;
  e->best = INFINITY;
  size_t sz = e->size > 0 ? (size_t)e->size : 1;
  if (!mpt_strategy_table_fits(e->size, EVO_BYTES_PER_CONFIG)) /* refused before anything is touched */
    return mpt_strategy_table_refused(s->type->name, e->size, EVO_BYTES_PER_CONFIG, err);
  e->nv = malloc((size_t)(e->dims > 0 ? e->dims : 1) * sizeof *e->nv);
  e->idx_tmp = malloc((size_t)(e->dims > 0 ? e->dims : 1) * sizeof *e->idx_tmp);
  e->dim_mark = calloc((size_t)(e->dims > 0 ? e->dims : 1), 1);
  e->fit = malloc(sz * sizeof *e->fit);
  e->mine = calloc(sz, 1);
  e->nb_cap = 256;
  e->nb = malloc((size_t)e->nb_cap * sizeof *e->nb);
  e->cap_need = 64;
  e->need = malloc((size_t)e->cap_need * sizeof *e->need);
  if (!e->nv || !e->idx_tmp || !e->dim_mark || !e->fit || !e->mine || !e->nb || !e->need) {
    int rc = !e->fit || !e->mine ? mpt_strategy_table_refused(s->type->name, e->size, EVO_BYTES_PER_CONFIG, err)
                                 : mpt_error_set(err, MPT_ERR_NOMEM, "strategy '%s': out of memory", s->type->name);
    evo_free(e);
    return rc;
  }
  for (int64_t i = 0; i < e->size; i++) e->fit[i] = NAN;
  for (int d = 0; d < e->dims; d++) {
    e->nv[d] = mpt_space_n_values(e->sp, d);
    if (e->nv[d] > 1) e->free_dims++;
  }
  if (e->free_dims == 0) e->free_dims = 1;
  return 0;
}

int evo_state_new(mpt_strategy *s, size_t size, const char *name, evo_step_fn step, mpt_error *err) {
  evo *e = calloc(1, size);
  if (!e) return mpt_error_set(err, MPT_ERR_NOMEM, "%s: out of memory", name);
  s->data = e;
  int rc = evo_init(e, s, err);
  if (rc) { free(e); s->data = NULL; return rc; }
  e->step = step;
  return 0;
}

void evo_state_free(mpt_strategy *s) {
  if (!s->data) return;
  evo_free(s->data);
  free(s->data);
  s->data = NULL;
}

int evo_strategy_ask(mpt_strategy *s, int n, int64_t *ids) {
  evo *e = s->data;
  return evo_ask(e, n, ids, e->step);
}

void evo_strategy_tell(mpt_strategy *s, const mpt_obs *obs, int n) { evo_tell(s->data, obs, n); }

int evo_read_aware(evo *e) {
  int aware = mpt_strategy_opt_bool(e->s, "constraint_aware");
  e->burn_invalid = !aware && mpt_strategy_opt_bool(e->s, "invalid_costs");
  const char *init = mpt_strategy_opt_str(e->s, "init");
  e->init_kind = strcmp(init, "random") == 0 ? EVO_INIT_RANDOM
                 : strcmp(init, "lhs-conditional") == 0 ? EVO_INIT_CONDITIONAL : EVO_INIT_LHS;
  return aware;
}

void evo_read_fresh(evo *e, int aware) { e->fresh = aware && mpt_strategy_opt_bool(e->s, "fresh"); }

mpt_neighbor_kind evo_read_neighbor(const mpt_strategy *s) {
  const char *nb = mpt_strategy_opt_str(s, "neighbor");
  return strcmp(nb, "adjacent") == 0 ? MPT_NB_ADJACENT
         : strcmp(nb, "strictly-adjacent") == 0 ? MPT_NB_STRICTLY_ADJACENT : MPT_NB_HAMMING;
}

void evo_free(evo *e) {
  mpt_related_free(e->rel);
  free(e->nv);
  free(e->idx_tmp);
  free(e->dim_mark);
  free(e->fit);
  free(e->mine);
  free(e->nb);
  free(e->need);
  memset(e, 0, sizeof *e);
}

void evo_tell(evo *e, const mpt_obs *obs, int n) {
  for (int i = 0; i < n; i++) {
    int64_t id = obs[i].id;
    if (id < 0 || id >= e->size) continue;
    double f = mpt_obs_valid(&obs[i]) ? obs[i].objective : EVO_PENALTY;
    if (!(f < EVO_PENALTY)) f = EVO_PENALTY;
    e->fit[id] = f;
    if (f < e->best) { e->best = f; e->best_id = id; }
  }
}

double evo_fitness(const evo *e, int64_t id) {
  if (id < 0 || id >= e->size) return EVO_PENALTY;
  return e->fit[id];
}

void evo_gen_begin(evo *e) {
  e->n_need = 0;
  e->gen_new = 0;
}

int evo_gen_add(evo *e, int64_t id) {
  if (id < 0 && e->burn_invalid) id = evo_random_unseen(e);
  if (id < 0 || id >= e->size) return 0;
  for (int i = 0; i < e->n_need; i++)
    if (e->need[i] == id) return 0;
  if (e->n_need == e->cap_need) {
    int nc = e->cap_need * 2;
    int64_t *nn = realloc(e->need, (size_t)nc * sizeof *nn);
    if (!nn) return MPT_ERR_NOMEM;
    e->need = nn;
    e->cap_need = nc;
  }
  e->need[e->n_need++] = id;
  if (!e->mine[id]) { e->mine[id] = 1; e->gen_new++; }
  return 0;
}

void evo_gen_end(evo *e) {
  if (e->gen_new == 0) e->free_gens++;
  else e->free_gens = 0;
  e->generations++;
}

int evo_submit(evo *e, const int64_t *ids, int n) {
  evo_gen_begin(e);
  for (int i = 0; i < n; i++)
    if (evo_gen_add(e, ids[i])) return MPT_ERR_NOMEM;
  evo_gen_end(e);
  return 0;
}

/* while the current generation waits for evaluations in flight: unseen Hamming neighbours of the best
 * configuration (useful work for idle workers instead of random ids) */
static int explore(evo *e, int n, int64_t *ids, int k0) {
  int k = k0;
  if (e->best_id < 0 || k >= n) return k;
  mpt_space_config(e->sp, e->best_id, e->idx_tmp);
  int64_t c = evo_neighbors(e, e->idx_tmp, MPT_NB_HAMMING);
  for (int64_t i = 0; i < c && k < n; i++) {
    int64_t id = e->nb[i];
    if (mpt_strategy_is_seen(e->s, id) || !isnan(e->fit[id])) continue;
    int dup = 0;
    for (int j = 0; j < k; j++) dup |= ids[j] == id;
    if (dup) continue;
    e->mine[id] = 1;
    ids[k++] = id;
  }
  return k;
}

int evo_ask(evo *e, int n, int64_t *ids, evo_step_fn step) {
  int k = 0;
  for (int guard = 0; guard < 20000; guard++) { /* then the base layer's fallback */
    int waiting = 0;
    for (int i = 0; i < e->n_need; i++) {
      int64_t id = e->need[i];
      if (!isnan(e->fit[id])) continue;
      if (mpt_strategy_is_seen(e->s, id)) { waiting++; continue; }
      int dup = 0;
      for (int j = 0; j < k; j++) dup |= ids[j] == id;
      if (dup) { waiting++; continue; }
      if (k < n) ids[k++] = id;
      waiting++;
    }
    if (k >= n) return k;
    if (waiting > 0) return explore(e, n, ids, k);
    e->want = n - k;
    int64_t gens = e->generations;
    int rc = step(e->s, e);
    if (rc < 0) return rc;
    if (e->generations == gens) return k; /* nothing left to propose */
  }
  return k;
}

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

/* Latin hypercube over the valid set's own marginals: per parameter, the valid configurations are cut
 * into n strata of equal count by that parameter's value index (quantiles of its marginal in the
 * valid set) and each stratum is used once, in an independent random order per parameter; the
 * resulting configuration is repaired to the nearest valid neighbour when invalid (evo_repair_nearest:
 * the repair chain, then the smallest index distance within the first non-empty neighbourhood, ties at
 * random, so the point keeps as many of its strata as the constraints allow) and redrawn when a
 * duplicate.
 * (mpt_space_sample_lhs stratifies the value-index range uniformly instead, which over-samples the
 * rare corners that constraints leave valid; that measured 0.1-0.4 of score worse here.) */
int64_t evo_sample_lhs(evo *e, int64_t n, int64_t *ids) {
  if (n > e->size) n = e->size;
  if (n <= 0) return 0;
  int dims = e->dims;
  int64_t tot = 0;
  for (int d = 0; d < dims; d++) tot += e->nv[d];
  int64_t *cum = calloc((size_t)tot + 1, sizeof *cum);
  int64_t *perm = malloc((size_t)n * (size_t)(dims > 0 ? dims : 1) * sizeof *perm);
  int *idx = malloc((size_t)(dims > 0 ? dims : 1) * sizeof *idx);
  if (!cum || !perm || !idx) { free(cum); free(perm); free(idx); return MPT_ERR_NOMEM; }
  /* counts per value index, then cumulative per parameter */
  for (int64_t id = 0; id < e->size; id++) {
    int64_t o = 0;
    for (int d = 0; d < dims; d++) {
      cum[o + mpt_space_value_index(e->sp, id, d)]++;
      o += e->nv[d];
    }
  }
  for (int d = 0, o = 0; d < dims; o += e->nv[d], d++)
    for (int v = 1; v < e->nv[d]; v++) cum[o + v] += cum[o + v - 1];
  for (int d = 0; d < dims; d++) {
    int64_t *p = perm + (size_t)d * (size_t)n;
    for (int64_t t = 0; t < n; t++) p[t] = t;
    mpt_rng_shuffle(&e->s->rng, p, n);
  }
  int64_t k = 0;
  for (int64_t t = 0; t < n; t++) {
    int64_t o = 0;
    for (int d = 0; d < dims; d++) {
      int64_t st = perm[(size_t)d * (size_t)n + (size_t)t];
      double u = ((double)st + mpt_rng_uniform(&e->s->rng)) / (double)n * (double)e->size;
      int v = 0;
      while (v < e->nv[d] - 1 && (double)cum[o + v] <= u) v++;
      idx[d] = v;
      o += e->nv[d];
    }
    int64_t id = evo_repair_nearest(e, idx);
    int dup = id < 0;
    for (int64_t j = 0; j < k && !dup; j++) dup = ids[j] == id;
    if (dup) id = -1;
    for (int tries = 0; id < 0 && tries < 64; tries++) {
      int64_t c = (int64_t)mpt_rng_below(&e->s->rng, (uint64_t)e->size);
      int dd = 0;
      for (int64_t j = 0; j < k && !dd; j++) dd = ids[j] == c;
      if (!dd) id = c;
    }
    if (id >= 0) ids[k++] = id;
  }
  free(cum);
  free(perm);
  free(idx);
  return k;
}

int64_t evo_random_unseen(evo *e) {
  /* only the strategy's own proposals are excluded (not ids told from a log): a fresh instance told a
   * run's observations then retraces that run exactly (resume) */
  return mpt_strategy_random_free(&e->s->rng, e->size, e->mine, NULL, 64, 1);
}

int64_t evo_best_of(const evo *e, const int64_t *ids, int n) {
  int64_t best = -1;
  double fb = INFINITY;
  for (int i = 0; i < n; i++) {
    if (ids[i] < 0 || ids[i] >= e->size) continue;
    double f = e->fit[ids[i]];
    if (f < fb) { fb = f; best = ids[i]; }
  }
  return best;
}

/* the initial or restart population without related observations (evo_sample_init) */
static int64_t sample_init(evo *e, int aware, int64_t n, int64_t *ids) {
  if (e->generations > 0) { /* a restart: configurations this search has not tried yet */
    int64_t k = 0;
    while (k < n) {
      int64_t id = evo_random_unseen(e);
      if (id < 0) break;
      e->mine[id] = 1; /* reserved; evo_gen_add counts it as new all the same */
      ids[k++] = id;
    }
    for (int64_t i = 0; i < k; i++) e->mine[ids[i]] = 0;
    return k;
  }
  if (n > e->size) n = e->size;
  if (n <= 0) return 0;
  if (aware && e->init_kind == EVO_INIT_LHS) return evo_sample_lhs(e, n, ids);
  if (aware && e->init_kind == EVO_INIT_CONDITIONAL) {
    int *params = e->idx_tmp, np = 0; /* the parameters with more than one value */
    for (int d = 0; d < e->dims; d++)
      if (e->nv[d] > 1) params[np++] = d;
    return mpt_space_sample_lhs_conditional(e->sp, params, np, &e->s->rng, n, ids);
  }
  return mpt_space_sample_random(e->sp, &e->s->rng, n, ids);
}

int64_t evo_sample_init(evo *e, int aware, int64_t n, int64_t *ids) {
  int64_t c = sample_init(e, aware, n, ids);
  if (c > 0) evo_transfer_seed(e, ids, c);
  return c;
}

int evo_unit_population(evo *e, int aware, int P, int64_t *pid, double *x) {
  int dims = e->dims;
  int *idx = e->idx_tmp;
  int64_t keep = e->generations > 0 ? evo_best_of(e, pid, P) : -1; /* a restart keeps the best member */
  int64_t *ids = malloc((size_t)P * sizeof *ids);
  if (!ids) return MPT_ERR_NOMEM;
  int64_t c = evo_sample_init(e, aware, P, ids);
  if (c == 0 && e->generations > 0) { free(ids); e->free_gens = 0; return 1; } /* nothing untried: keep */
  if (c <= 0) { free(ids); return c < 0 ? (int)c : MPT_ERR_INTERNAL; }
  for (int i = 0; i < P; i++) {
    pid[i] = ids[i % c];
    mpt_space_config(e->sp, pid[i], idx);
    evo_to_unit(e, idx, x + (size_t)i * dims);
  }
  if (keep >= 0) {
    pid[0] = keep;
    mpt_space_config(e->sp, keep, idx);
    evo_to_unit(e, idx, x);
  }
  free(ids);
  e->free_gens = 0;
  return 0;
}

int evo_shuffled_neighbors(evo *e, int64_t id, mpt_neighbor_kind kind, int64_t **list, int64_t *cap, int64_t *n) {
  mpt_space_config(e->sp, id, e->idx_tmp);
  int64_t c = evo_neighbors(e, e->idx_tmp, kind);
  if (c < 0) return (int)c;
  if (c > *cap) {
    int64_t *nl = realloc(*list, (size_t)c * sizeof *nl);
    if (!nl) return MPT_ERR_NOMEM;
    *list = nl;
    *cap = c;
  }
  if (c > 0) memcpy(*list, e->nb, (size_t)c * sizeof **list); /* none: *list may still be NULL */
  mpt_rng_shuffle(&e->s->rng, *list, c);
  *n = c;
  return 0;
}

int64_t evo_first_improvement(const evo *e, int64_t cur, const int64_t *prop, int n) {
  int64_t best = -1;
  double fb = evo_fitness(e, cur);
  for (int i = 0; i < n; i++)
    if (evo_fitness(e, prop[i]) < fb) { fb = evo_fitness(e, prop[i]); best = prop[i]; }
  return best;
}

double evo_beta1(mpt_rng *r, double b) {
  /* Beta(1, b): inverse CDF 1 - (1-u)^(1/b); for small b, (1-u)^(1/b) underflows below 2^-53 often
   * enough (b = 0.1: u > 0.975) that the result rounds to 1.0: kept below 1 */
  double u = mpt_rng_uniform(r);
  double x = 1.0 - pow(1.0 - u, 1.0 / b);
  return x < 1.0 ? x : nextafter(1.0, 0.0);
}

int evo_beta1_index(mpt_rng *r, double b, int n) {
  int i = (int)(evo_beta1(r, b) * n); /* x * n may still round up to n */
  return i < n ? i : n - 1;
}
