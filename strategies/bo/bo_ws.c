/* strategies/bo/bo_ws.c: bo's working set of candidates (strategies/bo/bo_ws.h). On a space of more valid
 * configurations than the option working_set, the GP's cost per observation (a row of V over every candidate)
 * and its memory grow with the space; the GP then holds working_set slots only. The set starts as every value
 * of every active parameter (so the GP's value codes, gp/gp_cand.h, know every value a later configuration can
 * bring) and uniform random configurations; at an ask it is refreshed when the best objective improved or
 * working_set_refresh observations came: the slots of the smallest EI give way to the Hamming neighbours of the
 * best observations and to random configurations; once the observations times the slots exceed working_set_bound,
 * a refresh also shrinks the set to bound / observations slots. The pending evaluations always have slots (their
 * fantasies read their columns of V). Observations may be any configuration: the GP's inputs are points. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_ei_pool.h"
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_feasibility.h"
#include "strategies/bo/bo_ws.h"

/* neighbourhoods of this many best valid observations feed a refresh */
#define WS_TOP 4

void bo_encode_slots(void *ctx, int64_t first, int64_t n, double *rows) {
  bo_state *b = ctx;
  for (int64_t i = 0; i < n; i++) bo_encode(b, bo_slot_id(b, first + i), rows + (size_t)i * (size_t)b->D);
}

static int cmp_i64(const void *x, const void *y) {
  int64_t a = *(const int64_t *)x, c = *(const int64_t *)y;
  return (a > c) - (a < c);
}

/* adds configuration id to the set being drawn (n so far) */
static void ws_take(bo_state *b, int64_t id, int64_t *n) {
  b->ws_slot[id] = (int32_t)*n;
  b->ws_id[(*n)++] = id;
}

/* one configuration outside the set whose parameter p has value index v (random probes, then a scan from a
 * random start), or -1 */
static int64_t find_value(bo_state *b, mpt_rng *r, int p, int v) {
  for (int t = 0; t < 64; t++) {
    int64_t c = (int64_t)mpt_rng_below(r, (uint64_t)b->N);
    if (b->ws_slot[c] < 0 && mpt_space_value_index(b->sp, c, p) == v) return c;
  }
  int64_t c0 = (int64_t)mpt_rng_below(r, (uint64_t)b->N);
  for (int64_t k = 0; k < b->N; k++) {
    int64_t c = (c0 + k) % b->N;
    if (b->ws_slot[c] < 0 && mpt_space_value_index(b->sp, c, p) == v) return c;
  }
  return -1;
}

int bo_ws_init(bo_state *b, mpt_strategy *s, mpt_error *err) {
  b->n_slots = b->N;
  if (b->ws_size <= 0 || b->N <= b->ws_size) return 0;
  int64_t S = b->ws_size, n = 0;
  b->ws_slot = malloc(sizeof(int32_t) * (size_t)b->N);
  b->ws_id = malloc(sizeof(int64_t) * (size_t)S);
  b->ws_mask = malloc((size_t)S);
  if (!b->ws_slot || !b->ws_id || !b->ws_mask)
    return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for a working set of %lld", (long long)S);
  for (int64_t c = 0; c < b->N; c++) b->ws_slot[c] = -1;
  mpt_rng r;
  mpt_rng_seed(&r, s->seed * 0x2545F4914F6CDD1Dull + 7);
  for (int d = 0; d < b->n_act && n < S; d++) { /* every value of every active parameter */
    int p = b->act[d], nv = mpt_space_n_values(b->sp, p);
    for (int v = 0; v < nv && n < S; v++) {
      int have = 0;
      for (int64_t j = 0; j < n && !have; j++) have = mpt_space_value_index(b->sp, b->ws_id[j], p) == v;
      int64_t c = have ? -1 : find_value(b, &r, p, v);
      if (c >= 0) ws_take(b, c, &n);
    }
  }
  while (n < S) { /* uniform random configurations */
    int64_t c = (int64_t)mpt_rng_below(&r, (uint64_t)b->N);
    if (b->ws_slot[c] < 0) ws_take(b, c, &n);
  }
  qsort(b->ws_id, (size_t)S, sizeof(int64_t), cmp_i64); /* slots in id order: a full scan's ties go as without */
  for (int64_t j = 0; j < S; j++) b->ws_slot[b->ws_id[j]] = (int32_t)j;
  b->n_slots = S;
  b->ws_best = INFINITY;
  return 0;
}

void bo_ws_off(bo_state *b) {
  free(b->ws_id); free(b->ws_slot); free(b->ws_mask);
  b->ws_id = NULL;
  b->ws_slot = NULL;
  b->ws_mask = NULL;
  b->n_slots = b->N;
}

const uint8_t *bo_ws_seen(bo_state *b, const mpt_strategy *s) {
  if (!b->ws_id) return NULL;
  for (int64_t c = 0; c < b->n_slots; c++) b->ws_mask[c] = s->seen[b->ws_id[c]];
  return b->ws_mask;
}

/* the configurations an update brings in */
typedef struct ws_in {
  int64_t n, cap;
  int64_t *id;
  double *x;             /* cap x D: their inputs */
} ws_in;

/* id joins the incoming ones when it is outside the set, not already coming, and its values fit the GP's codes
 * (marked -2 in ws_slot while it comes) */
static void in_push(bo_state *b, ws_in *in, int64_t id) {
  if (in->n >= in->cap || b->ws_slot[id] != -1) return;
  double *x = in->x + (size_t)in->n * (size_t)b->D;
  bo_encode(b, id, x);
  if (!mpt_gp_candidate_fits(b->gp, x)) return;
  b->ws_slot[id] = -2;
  in->id[in->n++] = id;
}

/* the Hamming neighbours of the best WS_TOP valid observations (best first), unseen ones, into in up to `upto`;
 * those already in the working set kept there (b->ws_mask) */
static int in_neighbours(bo_state *b, mpt_strategy *s, ws_in *in, int64_t upto) {
  int64_t *buf = NULL, cap = 0, chosen[WS_TOP];
  int rc = 0;
  for (int t = 0; t < WS_TOP && in->n < upto && rc == 0; t++) {
    int64_t best = -1;
    for (int64_t i = 0; i < b->n_obs; i++) {
      int dup = 0;
      for (int q = 0; q < t && !dup; q++) dup = chosen[q] == i;
      if (b->obs_ok[i] && !dup && (best < 0 || b->obs_y[i] < b->obs_y[best])) best = i;
    }
    if (best < 0) break;
    chosen[t] = best;
    mpt_space_config(b->sp, b->obs_id[best], b->inc_idx);
    int64_t cnt = mpt_space_neighbors_grow(b->sp, b->inc_idx, MPT_NB_HAMMING, &buf, &cap);
    if (cnt < 0) rc = MPT_ERR_NOMEM;
    for (int64_t q = 0; q < cnt && in->n < upto; q++) {
      if (s->seen[buf[q]]) continue;
      if (b->ws_slot[buf[q]] >= 0) b->ws_mask[b->ws_slot[buf[q]]] = 1; /* one already in stays */
      else in_push(b, in, buf[q]);
    }
  }
  free(buf);
  return rc;
}

/* the slots outside b->ws_mask with their log EI (seen configurations -inf) into r; returns how many */
static int64_t slot_keys(bo_state *b, mpt_strategy *s, bo_ranked *r) {
  double mean[BO_BLOCK], var[BO_BLOCK], gm, sc;
  mpt_gp_normalization(b->gp, &gm, &sc);
  double fb = (b->best_t - gm) / sc;
  int64_t n = 0;
  for (int64_t b0 = 0; b0 < b->n_slots; b0 += BO_BLOCK) {
    int64_t b1 = b->n_slots - b0 < BO_BLOCK ? b->n_slots : b0 + BO_BLOCK;
    mpt_gp_predict_block_var(b->gp, b0, b1, mean, var);
    for (int64_t c = b0; c < b1; c++) {
      if (b->ws_mask[c]) continue;
      int64_t id = b->ws_id[c];
      double mu = mean[c - b0] + (b->xfer_pz ? b->xfer_beta * b->xfer_pz[id] : 0.0);
      r[n++] = (bo_ranked){s->seen[id] ? -INFINITY : mpt_gp_log_ei(fb - (mu - gm) / sc, var[c - b0]), c};
    }
  }
  return n;
}

/* the slots that give way, the pending ones and the kept neighbours (b->ws_mask) never: by log EI (seen ones first), smallest first,
 * into out (room for m); returns how many */
static int64_t worst_slots(bo_state *b, mpt_strategy *s, int64_t m, int64_t *out, bo_ranked *r) {
  int64_t n = slot_keys(b, s, r);
  if (m > n) m = n;
  bo_ranked_heapify(r, n); /* largest key at the root: pop the n - m best, the m worst stay */
  int64_t left = n;
  while (left > m) bo_ranked_pop(r, &left);
  for (int64_t j = 0; j < m; j++) out[j] = r[j].id;
  return m;
}

/* the incoming configurations swapped into the slots of the smallest EI; 0 or an error */
static int swap_in(bo_state *b, mpt_strategy *s, ws_in *in, mpt_error *err) {
  int64_t *slots = malloc(sizeof(int64_t) * (size_t)(in->n > 0 ? in->n : 1));
  bo_ranked *r = malloc(sizeof(bo_ranked) * (size_t)b->n_slots);
  if (!slots || !r) { free(slots); free(r); return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory refreshing the working set"); }
  int64_t m = worst_slots(b, s, in->n, slots, r);
  for (int64_t j = m; j < in->n; j++) b->ws_slot[in->id[j]] = -1; /* no slot left for them */
  int rc = mpt_gp_replace_candidates(b->gp, m, slots, in->x, err);
  for (int64_t j = 0; j < m; j++) {
    if (rc) { b->ws_slot[in->id[j]] = -1; continue; }
    b->ws_slot[b->ws_id[slots[j]]] = -1;
    b->ws_id[slots[j]] = in->id[j];
    b->ws_slot[in->id[j]] = (int32_t)slots[j];
  }
  free(slots);
  free(r);
  return rc ? mpt_error_prefix(err, "bo: cannot refresh the working set") : 0;
}

/* the slots of the largest log EI outside b->ws_mask, up to `want`, marked in b->ws_mask */
static void mark_best(bo_state *b, mpt_strategy *s, int64_t want, bo_ranked *r) {
  int64_t n = slot_keys(b, s, r);
  bo_ranked_heapify(r, n); /* largest key at the root */
  for (int64_t t = 0; t < want && n > 0; t++) b->ws_mask[bo_ranked_pop(r, &n).id] = 1;
}

/* At a refresh, when the observations times the slots exceed working_set_bound: the set shrinks to bound /
 * observations slots (working_set_min at least). Kept: the slots marked in b->ws_mask (the pending evaluations,
 * the incumbents' neighbours already there), the configurations this refresh brought in, then the slots of the
 * largest log EI; the GP drops the rest (mpt_gp_keep_candidates, the kept slots in their order). 0 or an error. */
static int ws_shrink(bo_state *b, mpt_strategy *s, const ws_in *in, mpt_error *err) {
  int64_t n_obs = mpt_gp_n_obs(b->gp);
  if (b->ws_bound <= 0 || n_obs * b->n_slots <= b->ws_bound) return 0;
  int64_t target = b->ws_bound / n_obs;
  if (target < b->ws_min) target = b->ws_min;
  if (b->n_slots <= target) return 0;
  for (int64_t j = 0; j < in->n; j++)
    if (b->ws_slot[in->id[j]] >= 0) b->ws_mask[b->ws_slot[in->id[j]]] = 1;
  int64_t marked = 0;
  for (int64_t c = 0; c < b->n_slots; c++) marked += b->ws_mask[c];
  bo_ranked *r = malloc(sizeof(bo_ranked) * (size_t)b->n_slots);
  int64_t *keep = malloc(sizeof(int64_t) * (size_t)b->n_slots);
  if (!r || !keep) { free(r); free(keep); return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory shrinking the working set"); }
  if (marked < target) mark_best(b, s, target - marked, r);
  int64_t k = 0;
  for (int64_t c = 0; c < b->n_slots; c++)
    if (b->ws_mask[c]) keep[k++] = c;
  int rc = mpt_gp_keep_candidates(b->gp, k, keep, err);
  if (rc == 0) {
    for (int64_t c = 0, j = 0; c < b->n_slots; c++) {
      int64_t id = b->ws_id[c];
      if (j < k && keep[j] == c) {
        b->ws_id[j] = id;
        b->ws_slot[id] = (int32_t)j++;
      } else {
        b->ws_slot[id] = -1;
      }
    }
    b->n_slots = k;
  }
  free(r);
  free(keep);
  return rc ? mpt_error_prefix(err, "bo: cannot shrink the working set") : 0;
}

int bo_ws_update(bo_state *b, mpt_strategy *s, mpt_error *err) {
  if (!b->ws_id || mpt_gp_n_obs(b->gp) == 0) return 0;
  double best = INFINITY;
  for (int64_t i = 0; i < b->n_obs; i++)
    if (b->obs_ok[i] && b->obs_y[i] < best) best = b->obs_y[i];
  int refresh = best < b->ws_best || b->n_obs - b->ws_at >= b->ws_refresh;
  int64_t missing = 0;
  memset(b->ws_mask, 0, (size_t)b->n_slots);
  for (int64_t k = 0; k < b->n_pend; k++) {
    int64_t c = b->ws_slot[b->pend[k].id];
    if (c >= 0) b->ws_mask[c] = 1;
    else missing++;
  }
  if (!refresh && missing == 0) return 0;
  int64_t cap = missing + (refresh ? b->ws_swap : 0);
  if (cap > b->n_slots / 2) cap = b->n_slots / 2;
  ws_in in = {0, cap, malloc(sizeof(int64_t) * (size_t)(cap > 0 ? cap : 1)),
              malloc(sizeof(double) * (size_t)(cap > 0 ? cap : 1) * (size_t)b->D)};
  if (!in.id || !in.x) { free(in.id); free(in.x); return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory refreshing the working set"); }
  for (int64_t k = 0; k < b->n_pend; k++) in_push(b, &in, b->pend[k].id);
  int rc = 0;
  if (refresh) {
    rc = in_neighbours(b, s, &in, in.n + (cap - in.n) / 2);
    mpt_rng r; /* seeded by the told count: a resumed run draws the same */
    mpt_rng_seed(&r, s->seed * 0x9E3779B97F4A7C15ull + (uint64_t)b->n_obs * 0xD6E8FEB86659FD93ull + 3);
    for (int t = 0; t < 4 * cap && in.n < cap && rc == 0; t++) {
      int64_t id = (int64_t)mpt_rng_below(&r, (uint64_t)b->N);
      if (!s->seen[id]) in_push(b, &in, id);
    }
    b->ws_best = best;
    b->ws_at = b->n_obs;
  }
  if (rc == 0) {
    rc = swap_in(b, s, &in, err);
    if (rc == 0 && refresh) rc = ws_shrink(b, s, &in, err);
  } else {
    for (int64_t j = 0; j < in.n; j++) b->ws_slot[in.id[j]] = -1;
    mpt_error_set(err, rc, "bo: out of memory for the neighbours of the working set");
  }
  free(in.id);
  free(in.x);
  return rc;
}
