/* strategies/bo/bo_ask.c: the ask of `bo`: the model brought up to date, the initial sample (failed ones
 * replaced by random unseen configurations), and the model-based picks of a batch: the exploration margin and
 * the stall rule, the pending evaluations fantasized (into the GP, or on the pool of a batch with pending_pool),
 * a pick (strategies/bo/bo_pick.c), the pool entered after the first pick (batch_pool), the fantasies dropped
 * afterwards; and the pending evaluations the ask adds. The state is strategies/bo/bo_state.h. */
#include <math.h>
#include <stdlib.h>
#include "strategies/bo/bo_dist_hook.h"
#include "strategies/bo/bo_internal.h"
#include "strategies/bo/bo_model.h"
#include "strategies/bo/bo_pool.h"
#include "strategies/bo/bo_transfer.h"
#include "strategies/bo/bo_ws.h"
#include "gp/gp_pool.h"

static int add_pending(bo_state *b, int64_t id, int af) {
  if (b->n_pend == b->cap_pend) {
    int64_t nc = b->cap_pend ? b->cap_pend * 2 : 64;
    bo_pending *p = realloc(b->pend, sizeof *p * (size_t)nc);
    if (!p) return MPT_ERR_NOMEM;
    b->pend = p;
    b->cap_pend = nc;
  }
  b->pend[b->n_pend].id = id;
  b->pend[b->n_pend].af = af;
  b->n_pend++;
  return 0;
}

/* contextual variance (Willemsen et al.): mean posterior variance over the free candidates divided by
 * the magnitude of the best standardized observation (the GP keeps the sum over all candidates) */
static double exploration(bo_state *b, mpt_strategy *s) {
  if (b->explore_factor == 0) return 0;
  if (!b->explore_cv) return b->explore_factor;
  double m, sc;
  int64_t cnt = 0;
  mpt_gp_normalization(b->gp, &m, &sc);
  double sum = 0;
  if (!b->dist) sum = mpt_gp_variance_sum(b->gp, b->ws_id ? bo_ws_seen(b, s) : s->seen, &cnt);
  else if (bo_dist_variance_sum(b, s, &sum, &cnt, &s->ask_error) != 0) return 0; /* model ranks (the pick reports it) */
  if (cnt == 0) return 0;
  double fb = fabs((b->best_t - m) / sc);
  if (fb < 0.1) fb = 0.1;
  return b->explore_factor * (sum / (double)cnt) / fb;
}

/* a uniformly random configuration neither seen nor taken in this ask, or -1 after 64 draws (an ask
 * that gives nothing is then topped up by the base layer's scan, strategy.c). The generator is seeded
 * from the run's seed and the number of observations told and pending (as the elite's children,
 * strategies/bo/bo_local.c), so a resumed run draws what the uninterrupted run drew at that point. */
static int64_t random_unseen(bo_state *b, mpt_strategy *s) {
  mpt_rng r;
  mpt_rng_seed(&r, s->seed * 0xD1B54A32D192ED03ull + (uint64_t)(b->n_obs + b->n_pend) * 0x94D049BB133111EBull + 2);
  return mpt_strategy_random_free(&r, b->N, s->seen, b->taken, 64, 0);
}

/* The initial sample until n_init valid observations (failed ones replaced by uniform random unseen ones),
 * into ids[*k, n); 0 or an error */
static int ask_initial(bo_state *b, mpt_strategy *s, int n, int64_t *ids, int *k) {
  while (*k < n && b->n_ok + b->n_pend < b->n_init && (b->init_asked < 3 * (int64_t)b->n_init || b->n_ok < 2)) {
    int64_t id = -1;
    while (b->init_pos < b->n_init_ids && id < 0) {
      int64_t c = b->init_ids[b->init_pos++];
      if (!mpt_strategy_is_seen(s, c) && !b->taken[c]) id = c;
    }
    if (id < 0 && (id = random_unseen(b, s)) < 0) break; /* replacements: uniform random unseen */
    b->taken[id] = 1;
    ids[(*k)++] = id;
    if (add_pending(b, id, -1))
      return mpt_error_set(&s->ask_error, MPT_ERR_NOMEM, "bo: out of memory for pending evaluations");
    b->init_asked++;
  }
  return 0;
}

/* No valid observation yet: no model to ask. A first ask(n) with n > initial_samples gets the initial
 * sample only (filling the round with random configurations scores 0.02 less at ask(16):
 * docs/PERFORMANCE.md, "flags closer"). But when the whole sample is in flight and nothing else is left
 * to give (*k == 0: an asynchronous caller with more workers than initial samples whose first result was a
 * failure), answering 0 would leave all but one of the idle workers waiting (the base layer tops an empty
 * ask up with a single random configuration): each gets a random unseen one. 0 or an error */
static int ask_without_model(bo_state *b, mpt_strategy *s, int n, int64_t *ids, int *k) {
  int64_t id;
  int fill = *k == 0;
  while (fill && *k < n && (id = random_unseen(b, s)) >= 0) {
    b->taken[id] = 1;
    ids[(*k)++] = id;
    if (add_pending(b, id, -1))
      return mpt_error_set(&s->ask_error, MPT_ERR_NOMEM, "bo: out of memory for pending evaluations");
  }
  return 0;
}

/* After an ask's first pick with `left` more to come (batch_pool > 0), or before it with `pending` evaluations
 * pending (pending_pool): the pool of the best candidates by EI from one pass over every candidate (the picks
 * so far and the pending ones left out; with model ranks the pass runs on their slices); the later picks come
 * from it (b->in_pool), and the fantasies of the pending evaluations and of the picks condition it alone. 0 or an
 * error */
static int enter_pool(bo_state *b, mpt_strategy *s, double xi, int left, int64_t pending) {
  int64_t P = 4 * (int64_t)left + 2 * pending;
  if (P < b->batch_pool) P = b->batch_pool;
  int rc = b->dist ? bo_dist_pool_build(b, s->seen, xi, P, &s->ask_error) : bo_pool_build(b, s->seen, xi, P, &s->ask_error);
  if (rc) return mpt_error_prefix(&s->ask_error, "bo: cannot build the pool of a batch");
  mpt_gp_pool_fix_normalization(b->pool, b->batch_fixed_norm);
  b->in_pool = 1;
  return 0;
}

/* 1 when this ask (k picks so far, from the initial sample) fantasizes the pending evaluations on a pool: at
 * least pending_pool of them from earlier asks */
static int pending_on_pool(const bo_state *b, int k) {
  return b->pending_pool > 0 && b->batch_pool > 0 && b->n_pend - k >= b->pending_pool;
}

/* Model-based picks into ids[*k, n): fantasize the pending evaluations, pick, repeat; the fantasies leave
 * the GP afterwards. With batch_pool > 0 the picks after the first come from a pool (enter_pool) whose
 * posterior alone takes the fantasies of this ask's picks; with pending_pool the pending evaluations of
 * earlier asks go on the pool too, and the first pick comes from it. 0 or an error */
static int ask_from_model(bo_state *b, mpt_strategy *s, int n, int64_t *ids, int *k) {
  mpt_error *err = &s->ask_error;
  int base = mpt_gp_n_obs(b->gp);
  double worst = bo_fantasy_worst(b);
  int64_t n_fant_from = 0;
  double xi = exploration(b, s);
  int stalled = bo_model_stalled(b);
  if (stalled && !b->stall_variance) xi = (xi > 0 ? xi : 0.01) * b->stall_boost;
  double d = (double)b->D, t = (double)(b->n_ok + 1);
  double kappa_s = sqrt(2.0 * log(d * t * t * M_PI * M_PI / (6.0 * 0.1)) / 5.0);
  int rc = 0;
  if (pending_on_pool(b, *k) && (rc = enter_pool(b, s, xi, n - *k, b->n_pend)) == 0) {
    rc = bo_pool_add_pending(b, 0, b->n_pend, worst, err);
    n_fant_from = b->n_pend;
  }
  while (*k < n && rc == 0) {
    if (!b->in_pool) rc = bo_add_fantasies(b, &n_fant_from, worst, err);
    for (; b->in_pool && n_fant_from < b->n_pend && rc == 0; n_fant_from++) /* this ask's picks */
      rc = bo_fantasy_on_pool(b, b->pend[n_fant_from].id, worst, err);
    if (rc) break;
    int af = -1;
    int64_t id = -1;
    if ((rc = bo_pick_one(b, s, xi, kappa_s, stalled, *k, &af, &id)) != 0) break;
    if (id < 0) break; /* nothing left */
    b->taken[id] = 1;
    ids[(*k)++] = id;
    b->iter++;
    if (add_pending(b, id, af)) { rc = mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for pending evaluations"); break; }
    if (!b->in_pool && b->batch_pool > 0 && *k < n) {
      rc = enter_pool(b, s, xi, n - *k, 0);
    }
  }
  b->in_pool = 0;
  mpt_error terr;
  mpt_gp_truncate(b->gp, base, &terr);
  return rc;
}

int bo_ask(mpt_strategy *s, int n, int64_t *ids) {
  bo_state *b = s->data;
  mpt_error *err = &s->ask_error;
  int k = 0;
  int rc = bo_transfer_before(b, s, err);
  if (rc == 0) rc = bo_process_queue(b, s, err);
  if (rc == 0) rc = bo_transfer_after(b, err);
  if (rc == 0) rc = bo_ws_update(b, s, err);
  if (rc) return err->code ? err->code : mpt_error_set(err, rc, "bo: cannot update the model (error %d)", rc);
  if ((rc = ask_initial(b, s, n, ids, &k)) != 0) return rc;
  if (k < n) {
    rc = b->n_ok < 1 ? ask_without_model(b, s, n, ids, &k) : ask_from_model(b, s, n, ids, &k);
    if (rc) return rc;
  }
  for (int i = 0; i < k; i++) b->taken[ids[i]] = 0;
  return k;
}
