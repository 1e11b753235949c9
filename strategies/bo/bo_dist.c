/* strategies/bo/bo_dist.c: bo's model on the model ranks (strategies/bo/bo_dist.h). Rank 0's GP keeps the
 * observations only (no candidates); the candidates are sliced over the model ranks (gp/gp_slices.h), which
 * replay every change of rank 0's GP before they are asked anything. A pick is the pool pass on the slices:
 * the best P candidates by EI, merged on rank 0, then the feasibility model applied to the pool there. The
 * pool grows (x8) until it is certain to hold the pick the serial scan (strategies/bo/bo_scan.c, bo_scan and
 * feasible_fallback) makes: the EI arithmetic is the same, so the picks are the same but where two
 * candidates' EI agree to the rounding of the float panels, about 1e-6 relative (tests/test_bo_dist.c). The
 * pool of a batch (bo_dist_pool_build): the slices' pass by log EI (bo_pool_pass's key), merged on rank 0,
 * whose pool takes its members' columns of V from the slices; the rest of the batch is bo_ask.c's, on rank 0.
 * The evaluations pending from earlier asks (bo_dist_plan_pending): their columns of V from the slices that hold
 * them, planned on rank 0's pool, which fantasizes them as without model ranks (bo_pool_add_pending). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_pool.h"
#include "gp/gp_slices.h"
#include "strategies/bo/bo_dist.h"
#include "strategies/bo/bo_dist_hook.h"
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_feasibility.h"
#include "strategies/bo/bo_ws.h"

#define POOL_START 64

/* the slices of every configuration over rank 0 and the model ranks: equal, or rank 0's scaled by model_share0 */
static int create_slices(bo_state *b, mpt_strategy *s, MPI_Comm comm, mpt_error *err) {
  double share0 = mpt_strategy_opt_double(s, "model_share0");
  if (share0 == 1.0) return mpt_gp_slices_create(comm, &b->gcfg, b->D, b->N, bo_encode_rows, b, &b->dist, err);
  int size;
  MPI_Comm_size(comm, &size);
  double *shares = malloc((size_t)size * sizeof *shares);
  if (!shares) return mpt_error_set(err, MPT_ERR_NOMEM, "--model-ranks: out of memory for %d shares", size);
  shares[0] = share0;
  for (int r = 1; r < size; r++) shares[r] = 1.0;
  int rc = mpt_gp_slices_create_shares(comm, &b->gcfg, b->D, b->N, shares, bo_encode_rows, b, &b->dist, err);
  free(shares);
  return rc;
}

int mpt_bo_use_model_ranks(mpt_strategy *s, MPI_Comm comm, mpt_error *err) {
  if (strcmp(s->type->name, "bo") != 0)
    return mpt_error_set(err, MPT_ERR_VALUE, "--model-ranks: strategy %s has no model to serve (only bo has)", s->type->name);
  bo_state *b = s->data;
  if (b->acq != ACQ_EI || b->local_every > 0 || b->stall_variance)
    return mpt_error_set(err, MPT_ERR_VALUE, "--model-ranks: bo's model ranks serve acquisition=ei without local picks "
                                             "(local_every=0) and with stall_action=boost only");
  if (b->n_processed > 0 || b->dist)
    return mpt_error_set(err, MPT_ERR_STATE, "--model-ranks: the model ranks join before the first observation");
  mpt_gp *g0;
  int rc = mpt_gp_create(&b->gcfg, b->D, 0, NULL, &g0, err);
  if (rc == 0 && (rc = create_slices(b, s, comm, err)) != 0) mpt_gp_free(g0);
  if (rc) return rc;
  mpt_gp_free(b->gp);
  b->gp = g0;
  bo_ws_off(b); /* the slices hold every configuration */
  bo_dist_adopt(b);
  return 0;
}

int mpt_bo_model_memory(mpt_strategy *s, int64_t *bytes, int64_t *rss_kib, mpt_error *err) {
  bo_state *b = strcmp(s->type->name, "bo") == 0 ? s->data : NULL;
  if (!b || !b->dist) return mpt_error_set(err, MPT_ERR_STATE, "the strategy has no model ranks");
  return mpt_gp_slices_memory(b->dist, bytes, rss_kib, err);
}

int mpt_bo_model_clock(mpt_strategy *s, double *seconds, mpt_gp_slices_path *path, mpt_error *err) {
  bo_state *b = strcmp(s->type->name, "bo") == 0 ? s->data : NULL;
  if (!b || !b->dist) return mpt_error_set(err, MPT_ERR_STATE, "the strategy has no model ranks");
  *seconds = mpt_gp_slices_path_clock(b->dist);
  if (path) mpt_gp_slices_path_get(b->dist, path);
  return 0;
}

void bo_dist_adopt(bo_state *b) { mpt_gp_set_lml_backend(b->gp, mpt_gp_slices_lml, b->dist); }

int bo_dist_predict(bo_state *b, int64_t c, double *mean, double *sd, mpt_error *err) {
  int rc = mpt_gp_slices_sync(b->dist, b->gp, err);
  return rc ? rc : mpt_gp_slices_predict(b->dist, c, mean, sd, err);
}

int bo_dist_variance_sum(bo_state *b, mpt_strategy *s, double *sum, int64_t *count, mpt_error *err) {
  int rc = mpt_gp_slices_sync(b->dist, b->gp, err);
  return rc ? rc : mpt_gp_slices_variance_sum(b->dist, s->seen, NULL, sum, count, err);
}

/* the best feasible of the pool's items of one tier: EI x p (tier 1) or log EI + log p (tier 0), over ids
 * below id_end; *best and the id (-1: none) */
static int64_t best_feasible(bo_state *b, const mpt_gp_pool_item *pool, int n, int tier, int64_t id_end,
                             double *best) {
  int64_t id = -1;
  *best = -INFINITY;
  for (int i = 0; i < n; i++) {
    const mpt_gp_pool_item *it = &pool[i];
    if (it->tier != tier || it->id >= id_end) continue;
    if (it->key < *best) break; /* sorted: no later one can win (p <= 1) */
    double p = bo_feas_p(b, it->id);
    if (p < b->feas_threshold) continue;
    double v = tier ? it->key * p : it->key + log(p);
    if (v > *best || (v == *best && it->id < id)) { *best = v; id = it->id; }
  }
  return id;
}

/* none feasible: the largest log EI + feasibility_exponent log p over the whole pool (feasible_fallback),
 * or without an exponent the largest EI (the pool's first) */
static int64_t fallback(bo_state *b, mpt_gp_pool_item *pool, int n) {
  if (n == 0) return -1;
  if (!(b->feas_exponent > 0)) return pool[0].id;
  bo_ranked *r = malloc(sizeof *r * (size_t)n);
  if (!r) return pool[0].id;
  for (int i = 0; i < n; i++) r[i] = (bo_ranked){pool[i].log_ei, pool[i].id};
  int64_t m = n, best_id = -1;
  double best = -INFINITY;
  bo_ranked_heapify(r, m);
  while (m > 0 && r[0].key > best) {
    bo_ranked x = bo_ranked_pop(r, &m);
    double v = x.key + b->feas_exponent * log(bo_feas_p(b, x.id));
    if (v > best) { best = v; best_id = x.id; }
  }
  free(r);
  return best_id >= 0 ? best_id : pool[0].id;
}

/* the pick from a sorted pool with the feasibility model; 1 when certain (*id set), 0 when the candidates
 * left out of the pool could change it. complete: the pool holds every free candidate. */
static int pick_feasible(bo_state *b, mpt_gp_pool_item *pool, int n, int complete, int64_t *id) {
  const mpt_gp_pool_item *last = n > 0 ? &pool[n - 1] : NULL;
  double best;
  *id = best_feasible(b, pool, n, 1, INT64_MAX, &best);
  if (*id >= 0) return complete || last->tier == 0 || last->key < best;
  if (!complete && last && last->tier == 1) return 0; /* a feasible one may be among the rest of tier 1 */
  int64_t first_t1 = INT64_MAX; /* the serial scan's log EIs count only before the first tier-1 candidate */
  for (int i = 0; i < n; i++)
    if (pool[i].tier == 1 && pool[i].id < first_t1) first_t1 = pool[i].id;
  *id = best_feasible(b, pool, n, 0, first_t1, &best);
  if (*id >= 0) return complete || last->key < best;
  if (!complete) return 0;
  *id = fallback(b, pool, n);
  return 1;
}

int bo_dist_pick(bo_state *b, mpt_strategy *s, double xi, int use_feas, int64_t *id) {
  mpt_error *err = &s->ask_error;
  int rc = mpt_gp_slices_sync(b->dist, b->gp, err);
  double m, sc;
  mpt_gp_normalization(b->gp, &m, &sc);
  double fb = (b->best_t - m) / sc;
  int P = POOL_START;
  *id = -1;
  while (rc == 0) {
    mpt_gp_pool_item *pool = malloc(sizeof *pool * (size_t)P);
    if (!pool) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for a pool of %d candidates", P);
    int n = 0;
    int64_t n_free = 0;
    rc = mpt_gp_slices_pool(b->dist, s->seen, b->taken, fb, xi, P, pool, &n, &n_free, err);
    int complete = n >= n_free, done = 1;
    if (rc == 0 && !use_feas) *id = n > 0 ? pool[0].id : -1;
    else if (rc == 0) done = pick_feasible(b, pool, n, complete, id);
    free(pool);
    if (rc || done) break;
    P = n_free < (int64_t)P * 8 ? (int)n_free : P * 8;
  }
  return rc;
}

/* the pool's members' points (n x D) and ids into X, ids */
static void member_points(bo_state *b, const mpt_gp_pool_item *pool, int n, double *X, int64_t *ids) {
  for (int j = 0; j < n; j++) {
    ids[j] = pool[j].id;
    memcpy(X + (size_t)j * (size_t)b->D, bo_point(b, ids[j]), sizeof(double) * (size_t)b->D);
  }
}

int bo_dist_pool_build(bo_state *b, const uint8_t *seen, double xi, int64_t P, mpt_error *err) {
  if (P > b->N) P = b->N;
  if (P > INT32_MAX / 8) return mpt_error_set(err, MPT_ERR_VALUE, "bo: a pool of %lld candidates is too large", (long long)P);
  int rc = mpt_gp_slices_sync(b->dist, b->gp, err), n = 0, n0 = mpt_gp_n_obs(b->gp);
  if (rc) return rc;
  if (!b->pool && (rc = mpt_gp_pool_create(&b->pool, err)) != 0) return rc;
  double m, sc;
  mpt_gp_normalization(b->gp, &m, &sc);
  mpt_gp_pool_item *pool = malloc(sizeof *pool * (size_t)(P > 0 ? P : 1));
  int64_t *ids = malloc(sizeof *ids * (size_t)(P > 0 ? P : 1));
  double *X = malloc(sizeof *X * (size_t)(P > 0 ? P : 1) * (size_t)b->D), *abv = malloc(sizeof *abv * 3 * (size_t)(P > 0 ? P : 1));
  float *V = malloc(sizeof *V * (size_t)(P > 0 ? P : 1) * (size_t)(n0 > 0 ? n0 : 1));
  if (!pool || !ids || !X || !abv || !V) rc = mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for a pool of %lld candidates", (long long)P);
  if (rc == 0) rc = mpt_gp_slices_batch_pool(b->dist, seen, b->taken, (b->best_t - m) / sc, xi, (int)P, pool, &n, err);
  if (rc == 0) rc = mpt_gp_slices_columns(b->dist, pool, n, V, abv, err);
  if (rc == 0) {
    member_points(b, pool, n, X, ids);
    rc = mpt_gp_pool_load_columns(b->pool, b->gp, ids, X, V, abv, n, err);
  }
  free(pool); free(ids); free(X); free(abv); free(V);
  return rc;
}

int bo_dist_plan_pending(bo_state *b, const int64_t *ids, int64_t n, mpt_error *err) {
  if (n > INT32_MAX / 8) return mpt_error_set(err, MPT_ERR_VALUE, "bo: %lld pending evaluations are too many", (long long)n);
  int rc = mpt_gp_slices_sync(b->dist, b->gp, err), n0 = mpt_gp_n_obs(b->gp);
  if (rc || n <= 0) return rc;
  float *V = malloc(sizeof *V * (size_t)n * (size_t)(n0 > 0 ? n0 : 1));
  double *abv = malloc(sizeof *abv * 3 * (size_t)n);
  if (!V || !abv) rc = mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for %lld pending evaluations' columns", (long long)n);
  if (rc == 0) rc = mpt_gp_slices_cand_columns(b->dist, ids, (int)n, V, abv, err);
  if (rc == 0) rc = mpt_gp_pool_plan_columns(b->pool, ids, n, V, abv, err);
  free(V);
  free(abv);
  return rc;
}
