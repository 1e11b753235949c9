/* coordinator/search.c: the bookkeeping of one search (coordinator/search.h): its counts, whether it is
 * finished, its default first, telling its observations (to itself, and to the other searches of its job as
 * related knowledge), the run's totals, and each worker's home search. */
#include "coordinator/search.h"
#include <math.h>
#include <string.h>

void mpt_search_count(mpt_coord_result *r, int64_t default_id, const mpt_obs *o) {
  if (o->status == MPT_STATUS_CANCELLED) return;
  if (o->status == MPT_STATUS_MISSING) { /* no measurement: not against the budget */
    r->missing++;
    r->default_missing |= o->id == default_id;
    return;
  }
  r->done++;
  if (o->id == default_id) {
    r->default_seen = 1;
    r->default_logged = 0; /* measured now; a warm start marks one read from the log */
    r->default_objective = mpt_obs_valid(o) ? o->objective : NAN;
  }
  if (mpt_obs_valid(o)) {
    r->valid++;
    if (!isfinite(r->best) || o->objective < r->best) {
      r->best = o->objective;
      r->best_id = o->id;
    }
  } else {
    r->failed++;
  }
}

const char *mpt_search_finished(const mpt_coord_search *s, int64_t space_size, int64_t in_flight, int exhausted) {
  if (s->res.done + s->res.missing >= space_size) return "exhausted"; /* every configuration evaluated */
  if (s->res.done >= s->budget) return "budget";
  if (exhausted && in_flight == 0) return "exhausted";
  return NULL;
}

const mpt_space *mpt_search_space(const mpt_coord_search *s, const mpt_coord_config *c) {
  return s->space ? s->space : c->space;
}

int mpt_search_take_default(mpt_coord_search *s, int64_t *id) {
  if (!s->default_first || s->default_id < 0) return 0;
  if (mpt_strategy_reserve(s->strategy, s->default_id) != 0) return 0; /* logged or already taken */
  *id = s->default_id;
  return 1;
}

/* o[0..n) told to search i as related knowledge of from's class; a missing configuration (a replayed file
 * lacks it) says nothing of another device, so it is left out */
static void tell_related(mpt_coord_search *all, int i, int from, const mpt_obs *o, int n) {
  int start = 0;
  for (int k = 0; k <= n; k++) {
    if (k < n && o[k].status != MPT_STATUS_MISSING) continue;
    if (k > start) mpt_strategy_tell_related(all[i].strategy, all[from].device_class, o + start, k - start);
    start = k + 1;
  }
}

void mpt_search_tell(mpt_coord_search *all, int n_searches, int from, const mpt_obs *o, int n, int transfer) {
  if (n <= 0) return;
  mpt_strategy_tell(all[from].strategy, o, n);
  if (!transfer) return;
  for (int i = 0; i < n_searches; i++)
    if (i != from && all[i].job == all[from].job) tell_related(all, i, from, o, n);
}

int mpt_search_progress(const mpt_coord_search *s, int64_t done0, double elapsed, char *buf, int cap) {
  const mpt_coord_result *r = &s->res;
  double rate = elapsed > 0 ? (double)(r->done - done0) / elapsed : 0;
  char best[32] = "-", eta[32];
  if (isfinite(r->best)) snprintf(best, sizeof best, "%.4g ms", r->best);
  mpt_progress_duration(r->done >= s->budget ? 0 : rate > 0 ? (double)(s->budget - r->done) / rate : NAN, eta, sizeof eta);
  int n = snprintf(buf, (size_t)cap, " | %s %lld/%lld best %s %.2f/s ETA %s", s->name, (long long)r->done,
                   (long long)s->budget, best, rate, eta);
  return n < 0 ? 0 : n >= cap ? cap - 1 : n;
}

int mpt_search_find(const mpt_coord_search *all, int n_searches, int32_t job, int32_t device_class) {
  for (int i = 0; i < n_searches; i++)
    if (all[i].job == job && all[i].device_class == device_class) return i;
  return -1;
}

void mpt_search_totals(const mpt_coord_search *all, int n_searches, mpt_coord_result *t) {
  t->done = t->new_evals = t->valid = t->failed = t->cancelled = t->missing = 0;
  t->eval_s = t->device_s = 0;
  t->asks = 0;
  t->best = NAN;
  t->best_id = -1;
  for (int i = 0; i < n_searches; i++) {
    const mpt_coord_result *r = &all[i].res;
    t->done += r->done, t->new_evals += r->new_evals, t->valid += r->valid, t->failed += r->failed;
    t->cancelled += r->cancelled, t->missing += r->missing, t->eval_s += r->eval_s;
    t->device_s += r->device_s, t->asks += r->asks;
    if (r->best_id >= 0 && (t->best_id < 0 || r->best < t->best)) t->best = r->best, t->best_id = r->best_id;
    if (i == 0 || (!t->default_seen && r->default_seen)) {
      t->default_seen = r->default_seen, t->default_logged = r->default_logged;
      t->default_missing = r->default_missing, t->default_objective = r->default_objective;
    }
    if (!t->ask_stopped[0] && r->ask_stopped[0]) memcpy(t->ask_stopped, r->ask_stopped, sizeof t->ask_stopped);
  }
}

int mpt_search_worker_place(const mpt_coord_search *s, int rank) {
  for (int j = 0; j < s->n_workers; j++)
    if (s->workers[j] == rank) return j;
  return -1;
}

void mpt_search_homes(const mpt_coord_search *all, int n_searches, int size, int *home) {
  for (int rank = 0; rank < size; rank++) {
    int m = 0, place = -1;
    home[rank] = -1;
    for (int i = 0; i < n_searches; i++)
      if (mpt_search_worker_place(&all[i], rank) >= 0 && m++ == 0) place = mpt_search_worker_place(&all[i], rank);
    for (int i = 0, at = 0; m > 0 && i < n_searches; i++)
      if (mpt_search_worker_place(&all[i], rank) >= 0 && at++ == place % m) home[rank] = i;
  }
}
