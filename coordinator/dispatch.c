/* coordinator/dispatch.c: handing candidates out to the workers (coordinator/pool_internal.h): each search's
 * strategy asked for as many as its workers have room for, spread so that the workers that wait first get
 * them first, and the portability evaluations due on the finished searches' workers. */
#include "coordinator/pool_internal.h"
#include <stdint.h>

/* search i's worker that takes its work and holds the least (the one that waits first; its lowest rank among
 * equals), -1 when all are full */
static int least_held(const coord_state *s, const worker_pool *p, int i) {
  int best = -1;
  for (int j = 0; j < s->S[i].n_workers; j++) {
    int k = s->S[i].workers[j];
    if (takes_work(s, p, i, k) && p->w[k].n < p->depth && (best < 0 || p->w[k].n < p->w[best].n)) best = k;
  }
  return best;
}

/* hands ids[0..n) of search i out to the workers that take its work: first one to each holding nothing, then one
 * more to each holding one, ... (the workers that wait first). A send changes search i's in-flight count only, so
 * whether a borrowed worker (another home) takes work stays as it was. */
static void hand_out(coord_state *s, worker_pool *p, int i, const int64_t *ids, int n) {
  const mpt_coord_search *S = &s->S[i];
  int at = 0;
  for (int level = 0; level < p->depth && at < n; level++)
    for (int j = 0; j < S->n_workers && at < n; j++) {
      int k = S->workers[j];
      if (takes_work(s, p, i, k) && p->w[k].n == level) send_work(s, p, k, i, ids[at++], 0);
    }
}

/* asks search i's strategy for as many configurations as its workers have room for (within its budget; the
 * default first) and sends them out; 1 when its strategy turned out exhausted just now, else 0 */
static int dispatch_search(coord_state *s, worker_pool *p, int i, mpt_error *err) {
  mpt_coord_search *S = &s->S[i];
  search_run *run = &s->run[i];
  int64_t room = S->budget - S->res.done - run->in_flight, free = search_room(s, p, i);
  int k = (int)(room < free ? room : free);
  if (k <= 0 || run->exhausted || s->finished[i] == SEARCH_OUT_OF_TIME) return 0;
  int nd = mpt_search_take_default(S, run->ids);
  int n = k - nd > 0 ? ask(s, i, k - nd, run->ids + nd) : 0;
  if (n >= 0) n += nd;
  if (n == MPT_ERR_STOPPED) {
    n = nd; /* check_stop says why */
  } else if (n < 0) {
    p->rc = mpt_error_set(err, n, "strategy '%s' failed to propose configurations%s%s: %s", S->strategy->type->name,
                          S->name[0] ? " for device class " : "", S->name, mpt_strategy_ask_error(S->strategy));
    p->stopping = "error";
    n = 0;
  } else if (n == 0) {
    run->exhausted = 1;
    return 1;
  }
  hand_out(s, p, i, run->ids, n);
  return 0;
}

/* the portability evaluations due on search y's workers with room: the best of each other finished search */
static void dispatch_cross(coord_state *s, worker_pool *p, int y) {
  for (int x, k; (k = least_held(s, p, y)) >= 0 && (x = mpt_cross_next(&s->cross, s->S, s->finished, y)) >= 0;)
    send_work(s, p, k, y, s->S[x].res.best_id, x + 1);
}

/* every search with room in its workers gets candidates for them; 1 when a strategy turned out exhausted just now */
int dispatch(coord_state *s, worker_pool *p, mpt_error *err) {
  int exhausted = 0;
  for (int i = 0; i < s->n && !p->stopping; i++) exhausted |= dispatch_search(s, p, i, err);
  for (int y = 0; s->cross.n && y < s->n && !p->stopping; y++)
    if (s->finished[y]) dispatch_cross(s, p, y);
  return exhausted;
}
