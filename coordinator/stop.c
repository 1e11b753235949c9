/* coordinator/stop.c: why the run stops (coordinator/coordinator_internal.h), and the confirmation of the
 * finalists once it is over by its budget or an exhausted space. */
#include "coordinator/coordinator_internal.h"
#include <string.h>
#include "coordinator/signals.h"

/* why the run stops: a signal; every search finished (a search without workers that is not: "waiting"; one out of
 * its own time budget: "time"); the time budget; NULL while it goes on */
const char *check_stop(const coord_state *s, double now) {
  if (mpt_signals_count() > 0) return "signal";
  int all = 1, waiting = 0, exhausted = 1, timed_out = 0;
  for (int i = 0; i < s->n; i++) {
    const char *why = mpt_search_finished(&s->S[i], mpt_space_size(mpt_search_space(&s->S[i], s->c)), s->run[i].in_flight,
                                          s->run[i].exhausted);
    if (!why && s->S[i].time_budget > 0 && now - s->t0 >= s->S[i].time_budget) why = "time";
    s->finished[i] = !why ? 0 : strcmp(why, "time") == 0 ? SEARCH_OUT_OF_TIME : SEARCH_FINISHED;
    timed_out |= s->finished[i] == SEARCH_OUT_OF_TIME;
    if (!why && s->S[i].n_workers == 0) waiting = 1;
    else if (!why) all = 0;
    else if (strcmp(why, "exhausted") != 0) exhausted = 0;
  }
  if (all && waiting) return "waiting"; /* the bests are not final: no portability evaluations yet */
  if (all && !(s->cross.n && mpt_cross_pending(&s->cross, s->S, s->finished)))
    return exhausted ? "exhausted" : timed_out ? "time" : "budget";
  if (s->c->time_budget > 0 && now - s->t0 >= s->c->time_budget) return "time";
  return NULL;
}

/* --confirm once the run is over by its budget or an exhausted space, for each search's device class on one of its
 * workers, one class after the other: 0 (*why "signal" when a signal cut it short), or <0 with err */
int confirm_finalists(coord_state *s, const char **why, mpt_error *err) {
  if (!*why || (strcmp(*why, "budget") != 0 && strcmp(*why, "exhausted") != 0)) return 0;
  int stopped = 0;
  for (int i = 0; i < s->n && !stopped; i++) {
    if (s->n > 1 && s->S[i].n_workers == 0) continue;
    int worker = s->S[i].n_workers > 0 ? s->S[i].workers[0] : 1;
    int made = mpt_coord_confirm_run(s->c, s->S[i].device_class, worker, &stopped, err);
    if (made < 0) return made;
    s->r->confirmed += made;
  }
  if (stopped) *why = "signal";
  return 0;
}
