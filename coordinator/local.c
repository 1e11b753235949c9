/* coordinator/local.c: the one-rank loop (coordinator/coordinator_internal.h): it evaluates its one search's
 * candidates in-process, up to 1 + lookahead held (compiled ahead), what is held answered before the
 * confirmation runs. */
#include "coordinator/coordinator_internal.h"
#include <string.h>
#include "mpi/wire.h"

/* one rank: the progress line goes on while an evaluation runs (its waits ask this watch at least every
 * 100 ms), so that a long evaluation does not freeze it */
static int local_tick(void *ctx, const char *doing, double done) {
  (void)doing, (void)done;
  draw(ctx, mpt_wire_now(), 0);
  return 0;
}

/* one rank: the configurations held, the first evaluated next, the others compiling meanwhile (lookahead) */
typedef struct local_queue {
  int64_t ids[MPT_COORD_MAX_LOOKAHEAD + 1];
  int n;
} local_queue;

/* fills the queue of the one search up to 1 + lookahead (within its budget; the default first), each new one's
 * compile started */
static int local_fill(coord_state *s, local_queue *q, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  mpt_coord_search *S = &s->S[0];
  int64_t room = S->budget - S->res.done - q->n;
  int k = 1 + clamp_lookahead(c->lookahead) - q->n;
  if (room < k) k = (int)room;
  if (k <= 0 || s->run[0].exhausted) return 0;
  int64_t *at = q->ids + q->n;
  int nd = mpt_search_take_default(S, at);
  int n = k - nd > 0 ? ask(s, 0, k - nd, at + nd) : 0;
  if (n == MPT_ERR_STOPPED) n = 0; /* check_stop says why */
  else if (n < 0)
    return mpt_error_set(err, n, "strategy '%s' failed to propose a configuration: %s", S->strategy->type->name,
                         mpt_strategy_ask_error(S->strategy));
  else if (n == 0 && k - nd > 0)
    s->run[0].exhausted = 1;
  for (int i = 0; i < n + nd; i++) mpt_evaluator_prepare(c->local, at[i]);
  q->n += n + nd;
  return 0;
}

/* the run stops: what is held and not started is logged as cancelled (evaluated again on --resume) */
static int local_drop(coord_state *s, local_queue *q, mpt_error *err) {
  for (int i = 0; i < q->n; i++) {
    mpt_evaluator_discard(s->c->local, q->ids[i]);
    mpt_obs o;
    cancelled_obs(&o, q->ids[i], 0, "cancelled: held by worker rank 0, not started when the run stopped");
    int rc = take(s, 0, &o, err);
    if (rc < 0) return rc;
  }
  q->n = 0;
  s->run[0].in_flight = 0;
  return 0;
}

/* one rank: id evaluated in-process and taken; <0 when the run must stop */
static int local_evaluate(coord_state *s, int64_t id, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  const mpt_watch tick = {local_tick, s};
  mpt_obs o;
  double te = mpt_wire_now();
  s->prog.running_since = te;
  int rc = mpt_worker_evaluate_local(c->local, id, &tick, &o, err);
  s->prog.running_since = 0;
  s->r->wait_s += mpt_wire_now() - te; /* evaluation time is not coordinator time */
  if (rc < 0) {
    char cfg[512];
    mpt_space_format(c->space, id, cfg, sizeof cfg);
    mpt_error_prefix(err, "evaluating %s", cfg);
    return rc;
  }
  if ((rc = take(s, 0, &o, err)) < 0) return rc;
  draw(s, mpt_wire_now(), 0);
  return 0;
}

/* one rank: evaluate in-process (its one search), up to 1 + lookahead held (compiled ahead); what is held is
 * answered before the confirmation runs */
int run_local(coord_state *s, mpt_error *err) {
  local_queue q = {{0}, 0};
  for (;;) {
    s->run[0].in_flight = q.n;
    const char *why = check_stop(s, mpt_wire_now());
    if (why) {
      int rc = local_drop(s, &q, err);
      if (rc == 0) rc = confirm_finalists(s, &why, err);
      s->r->reason = why;
      return rc;
    }
    int rc = local_fill(s, &q, err);
    if (rc < 0) return rc;
    if (q.n == 0) continue; /* exhausted, or the ask stopped: check_stop says why */
    int64_t id = q.ids[0];
    memmove(q.ids, q.ids + 1, (size_t)(--q.n) * sizeof *q.ids);
    if ((rc = local_evaluate(s, id, err)) < 0) {
      for (int i = 0; i < q.n; i++) mpt_evaluator_discard(s->c->local, q.ids[i]); /* not logged: the run ends here */
      return rc;
    }
  }
}
