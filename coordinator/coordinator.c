/* coordinator/coordinator.c: the rank-0 loop (see coordinator/coordinator.h): sets its searches up, runs the
 * one-rank loop (local.c) or the several-rank one (workers.c), and ends the run (its totals, reason, timings).
 * Each worker has a home search (the first search that lists it) and serves the other searches that list it (its
 * class in other jobs of a campaign) while its home search has no work left for it (finished, exhausted, or its
 * budget all handed out); it holds up to 1 + lookahead configurations (a FIFO, answered in the order sent; the
 * ones beyond the first compile ahead on the worker); a stop sends DROP so that every held one is answered before
 * the loop ends (and before the confirmation). Waiting for results uses MPI_Iprobe + nanosleep back-off
 * (mpi/wire.h), so the coordinator leaves its core to compilers. The loop's other parts: the warm start
 * (warm.c), taking an observation (take.c), the progress line (draw.c), asking a strategy (ask.c), why the run
 * stops (stop.c), the worker pool (pool.c) and the dispatch to it (dispatch.c). */
#include "coordinator/coordinator_internal.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "coordinator/signals.h"
#include "mpi/wire.h"

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
         1e-6 * (double)ru.ru_stime.tv_usec;
}

/* ---- the searches ---- */

/* c->searches, or one search of c's strategy, budget and default over every worker (or the one rank) */
static int searches_open(coord_state *s, int size, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  if (c->searches && c->n_searches > 0) {
    s->S = c->searches, s->n = c->n_searches;
  } else {
    s->one_workers = malloc(sizeof *s->one_workers * (size_t)(size > 1 ? size : 1));
    if (!s->one_workers) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    int n = 0;
    for (int k = 1; k < size; k++) s->one_workers[n++] = k;
    if (size == 1) s->one_workers[n++] = 0; /* one rank: its own worker */
    if (c->workers && size > 1) /* an explicit set */
      for (n = 0; n < c->n_workers && n < size; n++) s->one_workers[n] = c->workers[n];
    s->one = (mpt_coord_search){"", 0, 0, c->strategy, c->budget, c->default_id, c->default_first,
                                s->one_workers, n, {0}, NULL, NULL, NULL, NULL, NULL, 0};
    s->S = &s->one, s->n = 1;
  }
  s->run = calloc((size_t)s->n, sizeof *s->run);
  s->finished = calloc((size_t)s->n, 1);
  if (!s->run || !s->finished || (c->cross && s->n > 1 && mpt_cross_open(&s->cross, s->n) < 0))
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < s->n; i++) {
    mpt_coord_result *r = &s->S[i].res;
    memset(r, 0, sizeof *r);
    r->best = r->default_objective = NAN;
    r->best_id = -1;
    if (s->S[i].budget <= 0 || !s->S[i].strategy)
      return mpt_error_set(err, MPT_ERR_VALUE, "coordinator: %s", s->S[i].budget <= 0 ? "the budget must be positive" : "no strategy");
  }
  return 0;
}

static void searches_close(coord_state *s) {
  for (int i = 0; s->run && i < s->n; i++) {
    free(s->run[i].ids);
    free(s->run[i].warm);
  }
  free(s->run);
  free(s->one_workers);
  free(s->finished);
  mpt_cross_close(&s->cross);
}

/* the run's end: its totals, reason and timings, the progress line's last */
static void finish(coord_state *s, int rc, double cpu0) {
  mpt_coord_result *r = s->r;
  double t1 = mpt_wire_now();
  mpt_search_totals(s->S, s->n, r);
  if (rc < 0) r->reason = "error";
  if (r->reason && strcmp(r->reason, "signal") == 0 && mpt_signals_count() > 0) { /* rank 0's own: the run's */
    r->signal = mpt_signals_last();
    r->stopped_rank = 0;
  }
  for (int i = 0; i < s->n; i++) { /* each search's own end: finished, or the run's stop */
    const char *why = mpt_search_finished(&s->S[i], mpt_space_size(mpt_search_space(&s->S[i], s->c)), 0, s->run[i].exhausted);
    if (!why && s->finished[i] == SEARCH_OUT_OF_TIME) why = "time";
    s->S[i].res.reason = rc == 0 && why ? why : r->reason;
  }
  r->wall_s = t1 - s->t0;
  r->busy_s = r->wall_s - r->wait_s;
  r->cpu_s = cpu_seconds() - cpu0;
  s->prog.missing = r->missing;
  classes_text(s, t1); /* the last line's */
  mpt_progress_finish(&s->prog, t1, r->done, r->valid, r->failed, r->best);
  for (int i = 0; i < s->n; i++) mpt_strategy_set_tick(s->S[i].strategy, NULL, NULL);
}

/* the progress line's whole: every search's budget, each at most the space's size */
static int64_t progress_total(const coord_state *s) {
  int64_t total = 0;
  for (int i = 0; i < s->n; i++) {
    int64_t most = mpt_space_size(mpt_search_space(&s->S[i], s->c));
    total += s->S[i].budget < most ? s->S[i].budget : most;
  }
  return total;
}

/* the distinct worker ranks of the searches (a campaign's searches share them) */
static int count_workers(const coord_state *s, int size) {
  if (size == 1) return 1;
  int n = 0;
  for (int i = 0; i < s->n; i++)
    for (int j = 0; j < s->S[i].n_workers; j++) {
      int seen = 0;
      for (int a = 0; a < i && !seen; a++)
        for (int b = 0; b < s->S[a].n_workers && !seen; b++) seen = s->S[a].workers[b] == s->S[i].workers[j];
      n += !seen;
    }
  return n;
}

int mpt_coord_run(const mpt_coord_config *c, mpt_coord_result *r, mpt_error *err) {
  memset(r, 0, sizeof *r);
  r->best = NAN;
  r->best_id = -1;
  r->default_objective = NAN;
  r->reason = "error";
  int size;
  MPI_Comm_size(c->comm, &size);
  coord_state s;
  memset(&s, 0, sizeof s);
  s.c = c, s.r = r;
  int rc = size == 1 && !c->local ? mpt_error_set(err, MPT_ERR_VALUE, "coordinator: no evaluator") : searches_open(&s, size, err);
  /* warm start: every logged observation goes to its search's strategy; cancelled ones are not measurements
   * and records of ids outside the space are skipped */
  if (rc == 0) rc = warm_start(&s, err);
  if (rc < 0) {
    if (size > 1) mpt_wire_stop_all(c->comm, 1);
    searches_close(&s);
    return rc;
  }
  r->n_workers = count_workers(&s, size);
  double cpu0 = cpu_seconds();
  s.t0 = mpt_wire_now();
  for (int i = 0; i < s.n; i++) mpt_strategy_set_tick(s.S[i].strategy, ask_tick, &s);
  mpt_search_totals(s.S, s.n, r);
  for (int i = 0; i < s.n; i++) s.run[i].done0 = s.S[i].res.done;
  mpt_progress_init(&s.prog, c->progress_out, c->progress, progress_total(&s), c->time_budget, r->done, s.t0);
  rc = size == 1 ? run_local(&s, err) : run_workers(&s, size, err);
  finish(&s, rc, cpu0);
  searches_close(&s);
  return rc;
}
