/* strategies/evo_common.c: shared machinery of ga, de, pso, firefly, sa and mls (see evo_common.h): their
 * state and options, the fitness cache, the generation driver behind batched asks, stall counting. Positions and
 * repair are in evo_place.c, populations and selection in evo_sample.c. */
#include "strategies/evo_common.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
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
