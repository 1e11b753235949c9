/* strategies/bo/bo_pool.c: the pool of a batch (strategies/bo/bo_pool.h): the pass that keeps the best P
 * candidates by log EI (a bounded heap: a candidate whose EI bound cannot beat the pool's worst costs no
 * logarithm), the merge of two pools, the pool of bo's current ask loaded into gp/gp_pool.h, and the
 * fantasies of the evaluations pending from earlier asks put on that pool. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_ei_pool.h"
#include "gp/gp_pool.h"
#include "strategies/bo/bo_dist_hook.h"
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_pool.h"
#include "strategies/bo/bo_transfer.h"

/* x ranks before y: larger key, or the same key and the smaller id */
static inline int better(bo_ranked x, bo_ranked y) { return x.key > y.key || (x.key == y.key && x.id < y.id); }

/* min-heap by rank (the worst at the root) */
static void sift_down(bo_ranked *h, int64_t n, int64_t i) {
  for (;;) {
    int64_t l = 2 * i + 1, r = l + 1, w = i;
    if (l < n && better(h[w], h[l])) w = l;
    if (r < n && better(h[w], h[r])) w = r;
    if (w == i) return;
    bo_ranked t = h[i]; h[i] = h[w]; h[w] = t;
    i = w;
  }
}

static void push_bounded(bo_ranked *h, int64_t *n, int64_t P, bo_ranked x) {
  if (*n < P) {
    int64_t i = (*n)++;
    h[i] = x;
    while (i > 0 && better(h[(i - 1) / 2], h[i])) {
      bo_ranked t = h[i]; h[i] = h[(i - 1) / 2]; h[(i - 1) / 2] = t;
      i = (i - 1) / 2;
    }
  } else if (better(x, h[0])) {
    h[0] = x;
    sift_down(h, *n, 0);
  }
}

static int cmp_rank(const void *x, const void *y) {
  bo_ranked a = *(const bo_ranked *)x, c = *(const bo_ranked *)y;
  return better(a, c) ? -1 : better(c, a) ? 1 : 0;
}

int64_t bo_pool_pass(const mpt_gp *gp, int64_t begin, int64_t end, int64_t first_id, const bo_pass_args *a,
                     int64_t P, bo_ranked *top) {
  enum { BLK = 1024 };
  double mean[BLK], var[BLK], bound = -1; /* bound: exp of the pool's worst key once full */
  int64_t n = 0;
  if (P <= 0) return 0;
  for (int64_t b0 = begin; b0 < end; b0 += BLK) {
    int64_t b1 = end - b0 < BLK ? end : b0 + BLK;
    mpt_gp_predict_block_var(gp, b0, b1, mean, var);
    for (int64_t c = b0; c < b1; c++) {
      int64_t id = a->slot_id ? a->slot_id[c] : first_id + c;
      if ((a->skip_a && a->skip_a[id]) || (a->skip_b && a->skip_b[id])) continue;
      double mu = mean[c - b0] + (a->prior ? a->prior_scale * a->prior[id] : 0.0);
      double u = a->fb - a->xi - (mu - a->m) / a->sc, v = var[c - b0];
      /* EI <= sd (max(z, 0) + phi(0)) = max(u, 0) + phi(0) sd: when that is under the worst key, skip */
      if (bound >= 0 && (u > 0 ? u : 0.0) + 0.3989422804014328 * sqrt(v > 1e-24 ? v : 1e-24) < bound * (1 - 1e-9)) continue;
      push_bounded(top, &n, P, (bo_ranked){mpt_gp_log_ei(u, v), id});
      if (n == P) bound = exp(top[0].key);
    }
  }
  qsort(top, (size_t)n, sizeof *top, cmp_rank);
  return n;
}

int64_t bo_pool_merge(const bo_ranked *x, int64_t nx, const bo_ranked *y, int64_t ny, int64_t P, bo_ranked *out) {
  int64_t i = 0, j = 0, n = 0;
  while (n < P && (i < nx || j < ny)) out[n++] = (j >= ny || (i < nx && better(x[i], y[j]))) ? x[i++] : y[j++];
  return n;
}

int bo_pool_build(bo_state *b, const uint8_t *seen, double xi, int64_t P, mpt_error *err) {
  if (P > b->n_slots) P = b->n_slots;
  if (P > b->cap_pool) {
    bo_ranked *t = realloc(b->pool_top, sizeof *t * (size_t)P);
    if (t) b->pool_top = t;
    int64_t *ids = realloc(b->pool_ids, sizeof *ids * (size_t)P);
    if (ids) b->pool_ids = ids;
    double *X = realloc(b->pool_x, sizeof *X * (size_t)P * (size_t)b->D);
    if (X) b->pool_x = X;
    if (!t || !ids || !X) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for a pool of %lld candidates", (long long)P);
    b->cap_pool = P;
  }
  if (!b->pool && mpt_gp_pool_create(&b->pool, err)) return err->code;
  bo_pass_args a = {.xi = xi, .skip_a = seen, .skip_b = b->taken, .prior = b->xfer_pz, .prior_scale = b->xfer_beta,
                    .slot_id = b->ws_id};
  mpt_gp_normalization(b->gp, &a.m, &a.sc);
  a.fb = (b->best_t - a.m) / a.sc;
  int64_t n = bo_pool_pass(b->gp, 0, b->n_slots, 0, &a, P, b->pool_top);
  for (int64_t j = 0; j < n; j++) {
    b->pool_ids[j] = bo_id_slot(b, b->pool_top[j].id);
    memcpy(b->pool_x + (size_t)j * (size_t)b->D, bo_point(b, b->pool_top[j].id), sizeof(double) * (size_t)b->D);
  }
  return mpt_gp_pool_load(b->pool, b->gp, b->pool_ids, b->pool_x, n, err);
}

int bo_pool_add_pending(bo_state *b, int64_t from, int64_t to, double worst, mpt_error *err) {
  int64_t *ids = calloc((size_t)(to > from ? to - from : 1), sizeof(int64_t));
  if (!ids) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for %lld pending evaluations", (long long)(to - from));
  int64_t np = 0; /* their slots (every pending evaluation has one, strategies/bo/bo_ws.h, unless its values did
                    * not fit the GP's codes: then the GP's posterior at its point, without the earlier ones; with
                    * model ranks there is no working set and the slot is the id) */
  for (int64_t q = from; q < to; q++)
    if (bo_id_slot(b, b->pend[q].id) >= 0) ids[np++] = bo_id_slot(b, b->pend[q].id);
  int rc = b->dist ? bo_dist_plan_pending(b, ids, np, err) /* model ranks: columns from the slices */
                   : mpt_gp_pool_plan_candidates(b->pool, ids, np, err);
  free(ids);
  if (rc) return rc;
  for (int64_t q = from; q < to; q++) {
    int64_t id = b->pend[q].id, c = bo_id_slot(b, id);
    const double *x = bo_point(b, id);
    double mu, sdq;
    if (c >= 0) rc = mpt_gp_pool_predict_candidate(b->pool, c, x, &mu, &sdq, err);
    else mpt_gp_predict_point(b->gp, x, &mu, &sdq);
    if (b->batch_quantile != 0) mu += b->batch_quantile * sdq; /* batch=quantile */
    double y = b->batch_liar ? worst - bo_transfer_offset(b, id) : mu;
    if (rc == 0) rc = c >= 0 ? mpt_gp_pool_add_candidate(b->pool, c, x, y, err) : mpt_gp_pool_add(b->pool, x, y, err);
    if (rc) return mpt_error_prefix(err, "bo: cannot fantasize pending evaluation %lld of %lld on the pool",
                                    (long long)(q - from + 1), (long long)(to - from));
  }
  return 0;
}
