/* coordinator/virtual.c: the virtual-clock projection of a run (see coordinator/virtual.h): simulated workers,
 * a min-heap of their completion times, the coordinator's real work timed and added to the clock. */
#include "coordinator/virtual.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "coordinator/signals.h"
#include "mpi/wire.h"
#include "spaces/sys/clock.h"

typedef struct vworker {
  double t_done;   /* virtual completion time of its evaluation */
  mpt_obs obs;     /* its result, known at dispatch, taken at t_done */
} vworker;

typedef struct vstate {
  const mpt_coord_config *c;
  const mpt_virtual_config *v;
  mpt_coord_result *r;
  mpt_virtual_result *vr;
  vworker *w;      /* 1..n_workers */
  int *heap;       /* busy workers, earliest t_done on top */
  int n_heap;
  int *idle;       /* idle workers, a stack (worker 1 on top at first) */
  int n_idle;
  int64_t *ids;
  double now;      /* the virtual clock (s) */
  int exhausted;
  const char *stopping;
  mpt_progress prog;
  double next_draw; /* real time */
  int model_path;   /* the CPU-time clock is the model ranks' critical path */
  char line[160];
} vstate;

/* rank 0's clock for its own work: wall time, or its CPU time (mpt_virtual_config.cpu_time): with model ranks the
 * critical path of rank 0 and the model ranks */
static double coord_clock(const vstate *s) {
  double t;
  if (s->model_path && mpt_strategy_clock(s->c->strategy, &t) == 0) return t;
  return s->v->cpu_time ? mpt_clock_process_cpu_s() : mpt_wire_now();
}

/* which clock rank 0's work is on (once, before the loop: the model ranks join at the strategy's creation) */
static void choose_clock(vstate *s) {
  double t;
  s->model_path = s->v->cpu_time && mpt_strategy_clock(s->c->strategy, &t) == 0;
  s->vr->clock = s->model_path ? "critical path" : s->v->cpu_time ? "CPU" : "wall";
}

/* ---- the heap of completion times ---- */

static int earlier(const vstate *s, int a, int b) {
  return s->w[a].t_done < s->w[b].t_done || (s->w[a].t_done == s->w[b].t_done && a < b);
}

static void heap_swap(int *h, int i, int j) {
  int t = h[i];
  h[i] = h[j];
  h[j] = t;
}

static void heap_push(vstate *s, int k) {
  int i = s->n_heap++;
  s->heap[i] = k;
  while (i > 0 && earlier(s, s->heap[i], s->heap[(i - 1) / 2])) {
    heap_swap(s->heap, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}

static int heap_pop(vstate *s) {
  int top = s->heap[0];
  s->heap[0] = s->heap[--s->n_heap];
  for (int i = 0;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < s->n_heap && earlier(s, s->heap[l], s->heap[m])) m = l;
    if (r < s->n_heap && earlier(s, s->heap[r], s->heap[m])) m = r;
    if (m == i) break;
    heap_swap(s->heap, i, m);
    i = m;
  }
  return top;
}

/* ---- bookkeeping, as the coordinator keeps it ---- */

static void count(vstate *s, const mpt_obs *o) {
  mpt_coord_result *r = s->r;
  if (o->status == MPT_STATUS_MISSING) {
    r->missing++;
    r->default_missing |= o->id == s->c->default_id;
    return;
  }
  r->done++;
  r->new_evals++;
  if (o->id == s->c->default_id) {
    r->default_seen = 1;
    r->default_objective = mpt_obs_valid(o) ? o->objective : NAN;
  }
  if (!mpt_obs_valid(o)) {
    r->failed++;
    return;
  }
  r->valid++;
  if (!isfinite(r->best) || o->objective < r->best) {
    r->best = o->objective;
    r->best_id = o->id;
  }
}

/* the evaluation's virtual duration (s): F times its recorded compile + benchmark time */
static double duration_s(const vstate *s, const mpt_obs *o) {
  double ms = (isfinite(o->compile_ms) ? o->compile_ms : 0) + (isfinite(o->benchmark_ms) ? o->benchmark_ms : 0);
  return o->status == MPT_STATUS_MISSING ? 0 : s->v->delay_scale * (ms > 0 ? ms : 0) / 1000.0;
}

/* ---- progress ---- */

int mpt_virtual_format(const mpt_virtual_result *vr, int n_workers, char *buf, int cap) {
  const char *clock = !vr->clock || strcmp(vr->clock, "wall") == 0 ? "wall time"
                      : strcmp(vr->clock, "CPU") == 0 ? "rank 0's CPU time"
                                                       : "critical path of rank 0 and the model ranks (CPU time)";
  return snprintf(buf, (size_t)cap, "projected: %d workers, makespan %.3f s, utilization %.1f %%, %.2f evaluations/s, "
                  "rank 0 busy %.3f s (asks %.3f s in %lld calls); clock: %s", n_workers, vr->makespan_s,
                  100.0 * vr->utilization, vr->evals_per_s, vr->coord_s, vr->ask_s, (long long)vr->asks, clock);
}

static void settle(vstate *s) {
  mpt_virtual_result *vr = s->vr;
  vr->makespan_s = s->now;
  vr->utilization = s->now > 0 ? vr->busy_s / ((double)s->v->n_workers * s->now) : 0;
  vr->evals_per_s = s->now > 0 ? (double)(s->r->done + s->r->missing) / s->now : 0;
}

/* what the progress line adds: the projection so far */
static void describe(vstate *s) {
  settle(s);
  snprintf(s->line, sizeof s->line, "virtual: utilization %.1f %%, asks %.1f s", 100.0 * s->vr->utilization,
           s->vr->ask_s);
  s->prog.doing = s->line;
  s->prog.missing = s->r->missing;
}

/* the progress line, in virtual time, redrawn at most once a real second (lines: every 5 s) */
static void draw(vstate *s, int force) {
  double real = mpt_wire_now();
  if (!force && real < s->next_draw) return;
  s->next_draw = real + (s->prog.tty ? 1.0 : 5.0);
  describe(s);
  mpt_progress_update(&s->prog, s->now, s->r->done, s->r->valid, s->r->failed, s->r->best, 1);
}

/* ---- the loop ---- */

static const char *check_stop(const vstate *s) {
  const mpt_coord_config *c = s->c;
  if (mpt_signals_count() > 0) return "signal";
  if (s->r->done + s->r->missing >= mpt_space_size(c->space)) return "exhausted";
  if (s->r->done >= c->budget) return "budget";
  if (c->time_budget > 0 && s->now >= c->time_budget) return "time";
  if (s->exhausted && s->n_heap == 0) return "exhausted";
  return NULL;
}

/* asks the strategy for k candidates (the default first in a fresh run), its real time added to the clock */
static int ask(vstate *s, int k, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  int nd = c->default_first && c->default_id >= 0 && mpt_strategy_reserve(c->strategy, c->default_id) == 0;
  if (nd) s->ids[0] = c->default_id;
  int n = 0;
  if (k - nd > 0) {
    double t = coord_clock(s);
    n = mpt_strategy_ask(c->strategy, k - nd, s->ids + nd);
    double dt = coord_clock(s) - t;
    s->vr->ask_s += dt;
    s->vr->coord_s += dt;
    s->now += dt;
    s->vr->asks++;
  }
  if (n == MPT_ERR_STOPPED) return nd;
  if (n < 0)
    return mpt_error_set(err, n, "strategy '%s' failed to propose configurations: %s", c->strategy->type->name,
                         mpt_strategy_ask_error(c->strategy));
  return n + nd;
}

/* evaluates id at once (the replayed record) for the idle worker on top; it finishes at now + its duration */
static int dispatch_one(vstate *s, int64_t id, mpt_error *err) {
  int k = s->idle[--s->n_idle];
  vworker *w = &s->w[k];
  int rc = mpt_worker_evaluate_local(s->c->local, id, NULL, &w->obs, err);
  if (rc < 0) {
    char cfg[512];
    mpt_space_format(s->c->space, id, cfg, sizeof cfg);
    mpt_error_prefix(err, "evaluating %s", cfg);
    return rc;
  }
  double d = duration_s(s, &w->obs);
  w->obs.rank = k;
  w->obs.t_start = s->v->epoch + s->now;
  w->obs.t_end = s->v->epoch + s->now + d;
  w->t_done = s->now + d;
  heap_push(s, k);
  return 0;
}

/* every idle worker given work, within the budget */
static int dispatch(vstate *s, mpt_error *err) {
  int64_t room = s->c->budget - s->r->done - s->n_heap;
  int k = (int)(room < s->n_idle ? room : s->n_idle);
  if (k <= 0) return 0;
  int n = ask(s, k, err);
  if (n < 0) return n;
  if (n == 0 && mpt_signals_count() == 0 && !(s->c->time_budget > 0 && s->now >= s->c->time_budget))
    s->exhausted = 1;
  for (int i = 0; i < n; i++) {
    int rc = dispatch_one(s, s->ids[i], err);
    if (rc < 0) return rc;
  }
  return 0;
}

/* the earliest result: the clock moves to it (unless rank 0 is still busy past it), then it is logged and
 * told, that work timed and added to the clock */
static int take_next(vstate *s, mpt_error *err) {
  int k = heap_pop(s);
  vworker *w = &s->w[k];
  if (w->t_done > s->now) s->now = w->t_done;
  double t = coord_clock(s);
  if (s->c->record) {
    int rc = s->c->record(s->c->record_ctx, &w->obs, err);
    if (rc < 0) return rc;
  }
  mpt_strategy_tell(s->c->strategy, &w->obs, 1);
  double dt = coord_clock(s) - t;
  s->vr->coord_s += dt;
  s->now += dt;
  count(s, &w->obs);
  s->vr->busy_s += w->t_done - (w->obs.t_start - s->v->epoch);
  s->idle[s->n_idle++] = k;
  return 0;
}

static int loop(vstate *s, mpt_error *err) {
  for (;;) {
    if (!s->stopping) s->stopping = check_stop(s);
    if (!s->stopping && !s->exhausted && s->n_idle > 0) {
      int rc = dispatch(s, err);
      if (rc < 0) return rc;
    }
    if (s->n_heap == 0) {
      if (s->stopping) return 0;
      continue; /* check_stop says why: nothing in flight and nothing proposed */
    }
    /* the earliest result, then every one that arrived while rank 0 was busy: all taken before one ask for
     * every worker they freed, as the real loop does (coordinator/workers.c) */
    do {
      int rc = take_next(s, err);
      if (rc < 0) return rc;
    } while (s->n_heap > 0 && s->w[s->heap[0]].t_done <= s->now);
    draw(s, 0);
  }
}

/* a long ask gives up on a signal (the run stops as a real one does) */
static int ask_tick(void *ctx, const char *doing) {
  (void)ctx, (void)doing;
  return mpt_signals_count() > 0;
}

static int open_state(vstate *s, const mpt_coord_config *c, const mpt_virtual_config *v, mpt_error *err) {
  size_t n = (size_t)v->n_workers + 1;
  s->w = calloc(n, sizeof *s->w);
  s->heap = malloc(n * sizeof *s->heap);
  s->idle = malloc(n * sizeof *s->idle);
  s->ids = malloc(n * sizeof *s->ids);
  if (!s->w || !s->heap || !s->idle || !s->ids)
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory for %d virtual workers", v->n_workers);
  for (int k = v->n_workers; k >= 1; k--) s->idle[s->n_idle++] = k;
  int64_t most = mpt_space_size(c->space);
  mpt_progress_init(&s->prog, c->progress_out, c->progress, c->budget < most ? c->budget : most, c->time_budget, 0, 0);
  return 0;
}

static int check_config(const mpt_coord_config *c, const mpt_virtual_config *v, mpt_error *err) {
  if (c->budget <= 0 || !c->strategy || !c->local)
    return mpt_error_set(err, MPT_ERR_VALUE, "virtual clock: %s",
                         c->budget <= 0 ? "the budget must be positive" : "no strategy or evaluator");
  if (v->n_workers < 1 || !(v->delay_scale >= 0) || !isfinite(v->delay_scale))
    return mpt_error_set(err, MPT_ERR_VALUE, "virtual clock: needs at least one worker and a delay scale >= 0");
  if (c->resume_each) return mpt_error_set(err, MPT_ERR_VALUE, "virtual clock: a projection starts afresh (no --resume)");
  return 0;
}

int mpt_coord_run_virtual(const mpt_coord_config *c, const mpt_virtual_config *v, mpt_coord_result *r,
                          mpt_virtual_result *vr, mpt_error *err) {
  memset(r, 0, sizeof *r);
  memset(vr, 0, sizeof *vr);
  r->best = NAN;
  r->best_id = -1;
  r->default_objective = NAN;
  r->reason = "error";
  r->n_workers = v->n_workers;
  int rc = check_config(c, v, err);
  if (rc < 0) return rc;
  vstate s;
  memset(&s, 0, sizeof s);
  s.c = c, s.v = v, s.r = r, s.vr = vr;
  double t0 = mpt_wire_now();
  rc = open_state(&s, c, v, err);
  choose_clock(&s);
  mpt_strategy_set_tick(c->strategy, ask_tick, NULL);
  if (rc == 0) rc = loop(&s, err);
  mpt_strategy_set_tick(c->strategy, NULL, NULL);
  vr->real_s = mpt_wire_now() - t0;
  describe(&s);
  r->reason = rc < 0 ? "error" : s.stopping;
  if (rc == 0 && strcmp(r->reason, "signal") == 0) r->signal = mpt_signals_last();
  r->wall_s = s.now;
  r->eval_s = vr->busy_s;
  r->busy_s = vr->coord_s;
  r->cpu_s = vr->coord_s;
  if (rc == 0) mpt_progress_finish(&s.prog, s.now, r->done, r->valid, r->failed, r->best);
  free(s.w), free(s.heap), free(s.idle), free(s.ids);
  return rc;
}
