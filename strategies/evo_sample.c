/* strategies/evo_sample.c: populations and selection of the evo strategies (see evo_common.h): the Latin
 * hypercube over the valid marginals, initial and restart populations (seeded from related observations),
 * unproposed configurations, the best of a population, shuffled neighbourhoods, first improvement, Beta(1, b)
 * rank selection. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/evo_common.h"
#include "strategies/evo_transfer.h"

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
