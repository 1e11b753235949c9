/* coordinator/coordinator.c: the rank-0 loop (see coordinator/coordinator.h). Waiting for results uses
 * MPI_Iprobe + nanosleep back-off (mpi/wire.h), so the coordinator leaves its core to compilers. */
#include "coordinator/coordinator.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "coordinator/signals.h"
#include "mpi/wire.h"

typedef struct worker_slot {
  int busy;
  int64_t id;          /* config being evaluated */
  int64_t send_id;     /* send buffer of the WORK message */
  MPI_Request req;
} worker_slot;

typedef struct coord_state {
  const mpt_coord_config *c;
  mpt_coord_result *r;
  mpt_progress prog;
  double t0;       /* start of this session's run */
  double ask_since; /* start of the ask running now */
} coord_state;

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
         1e-6 * (double)ru.ru_stime.tv_usec;
}

static void count_obs(const mpt_coord_config *c, mpt_coord_result *r, const mpt_obs *o);

/* warm start from the log (mpt_coord_config.resume_each): runs of tellable observations are told in
 * blocks of WARM_BLOCK */
enum { WARM_BLOCK = 512 };
typedef struct warm_ctx {
  const mpt_coord_config *c;
  mpt_coord_result *r;
  int64_t size_space;
  mpt_obs *buf; /* WARM_BLOCK of them */
  int n;
} warm_ctx;

static void warm_flush(warm_ctx *w) {
  if (w->n) mpt_strategy_tell(w->c->strategy, w->buf, w->n);
  w->n = 0;
}

static int warm_one(void *ctx, const mpt_obs *o, const int32_t *config) {
  (void)config;
  warm_ctx *w = ctx;
  if (o->status == MPT_STATUS_CANCELLED || o->id < 0 || o->id >= w->size_space) { warm_flush(w); return 0; }
  count_obs(w->c, w->r, o);
  w->buf[w->n++] = *o;
  if (w->n == WARM_BLOCK) warm_flush(w);
  return 0;
}

static void count_obs(const mpt_coord_config *c, mpt_coord_result *r, const mpt_obs *o) {
  if (o->status == MPT_STATUS_CANCELLED) return;
  r->done++;
  if (o->id == c->default_id) {
    r->default_seen = 1;
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

/* log (flushed) first, then tell the strategy */
static int take(coord_state *s, const mpt_obs *o, mpt_error *err) {
  if (s->c->record) {
    int rc = s->c->record(s->c->record_ctx, o, err);
    if (rc < 0) return rc;
  }
  if (o->status == MPT_STATUS_CANCELLED) {
    s->r->cancelled++;
    return 0;
  }
  mpt_strategy_tell(s->c->strategy, o, 1);
  count_obs(s->c, s->r, o);
  s->r->new_evals++;
  if (o->t_end > o->t_start) s->r->eval_s += o->t_end - o->t_start;
  return 0;
}

static void draw(coord_state *s, double now, int force) {
  mpt_progress_update(&s->prog, now, s->r->done, s->r->valid, s->r->failed, s->r->best, force);
}

static const char *check_stop(const mpt_coord_config *c, const mpt_coord_result *r, double now, double t0,
                              int64_t in_flight, int exhausted) {
  if (mpt_signals_count() > 0) return "signal";
  if (r->done >= mpt_space_size(c->space)) return "exhausted"; /* every configuration evaluated */
  if (r->done >= c->budget) return "budget";
  if (c->time_budget > 0 && now - t0 >= c->time_budget) return "time";
  if (exhausted && in_flight == 0) return "exhausted";
  return NULL;
}

static void cancelled_obs(mpt_obs *o, int64_t id, int rank, const char *why) {
  mpt_obs_init(o, id);
  o->status = MPT_STATUS_CANCELLED;
  o->rank = rank;
  snprintf(o->reason, sizeof o->reason, "%s", why);
}

/* the default configuration goes first in a fresh run (so the speed-up over it can be reported);
 * returns 1 and writes its id when it is to be dispatched now */
static int take_default(const mpt_coord_config *c, int64_t *id) {
  if (!c->default_first || c->default_id < 0) return 0;
  if (mpt_strategy_reserve(c->strategy, c->default_id) != 0) return 0; /* logged or already taken */
  *id = c->default_id;
  return 1;
}

/* A long ask (bo taking in a resumed run's logged observations) shows what it does on the progress line once
 * it has run a second, and gives up when a signal or the time budget stops the run */
static int ask_tick(void *ctx, const char *doing) {
  coord_state *s = ctx;
  double now = mpt_wire_now();
  if (now - s->ask_since >= 1.0) {
    s->prog.doing = doing;
    draw(s, now, 0);
    s->prog.doing = NULL;
  }
  return mpt_signals_count() > 0 || (s->c->time_budget > 0 && now - s->t0 >= s->c->time_budget);
}

static int ask(coord_state *s, int n, int64_t *ids) {
  s->ask_since = mpt_wire_now();
  int got = mpt_strategy_ask(s->c->strategy, n, ids);
  if (got == MPT_ERR_STOPPED) /* for the summary: a resume with as little time would stop there again */
    snprintf(s->r->ask_stopped, sizeof s->r->ask_stopped, "%s", mpt_strategy_ask_error(s->c->strategy));
  return got;
}

/* one rank: the progress line goes on while an evaluation runs (its waits ask this watch at least every
 * 100 ms), so that a long evaluation does not freeze it */
static int local_tick(void *ctx, const char *doing, double done) {
  (void)doing, (void)done;
  draw(ctx, mpt_wire_now(), 0);
  return 0;
}

/* one rank: evaluate in-process */
static int run_local(coord_state *s, double t0, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  mpt_coord_result *r = s->r;
  const mpt_watch tick = {local_tick, s};
  int exhausted = 0;
  for (;;) {
    double now = mpt_wire_now();
    const char *why = check_stop(c, r, now, t0, 0, exhausted);
    if (why) {
      r->reason = why;
      return 0;
    }
    int64_t id;
    int n = take_default(c, &id) ? 1 : ask(s, 1, &id);
    if (n == MPT_ERR_STOPPED) continue; /* check_stop says why */
    if (n < 0) return mpt_error_set(err, n, "strategy '%s' failed to propose a configuration: %s", c->strategy->type->name,
                                     mpt_strategy_ask_error(c->strategy));
    if (n == 0) {
      exhausted = 1;
      continue;
    }
    mpt_obs o;
    double te = mpt_wire_now();
    s->prog.running_since = te;
    int rc = mpt_worker_evaluate_local(c->local, id, &tick, &o, err);
    s->prog.running_since = 0;
    r->wait_s += mpt_wire_now() - te; /* evaluation time is not coordinator time */
    if (rc < 0) {
      char cfg[512];
      mpt_space_format(c->space, id, cfg, sizeof cfg);
      mpt_error_prefix(err, "evaluating %s", cfg);
      return rc;
    }
    if ((rc = take(s, &o, err)) < 0) return rc;
    draw(s, mpt_wire_now(), 0);
  }
}

static int run_workers(coord_state *s, int size, double t0, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  mpt_coord_result *r = s->r;
  int nw = size - 1;
  worker_slot *w = calloc((size_t)size, sizeof *w);
  int *idle = malloc(sizeof *idle * (size_t)size);
  int64_t *ids = malloc(sizeof *ids * (size_t)size);
  if (!w || !idle || !ids) {
    free(w); free(idle); free(ids);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory for %d workers", nw);
  }
  int n_idle = 0;
  for (int k = size - 1; k >= 1; k--) { /* stack: rank 1 on top */
    w[k].req = MPI_REQUEST_NULL;
    idle[n_idle++] = k;
  }
  int64_t in_flight = 0;
  int exhausted = 0, rc = 0, hard_error = 0; /* hard: the log or the protocol failed, stop at once */
  const char *stopping = NULL;
  double t_stop = 0;
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  for (;;) {
    double now = mpt_wire_now();
    if (!stopping) {
      stopping = check_stop(c, r, now, t0, in_flight, exhausted);
      if (stopping) t_stop = now;
    }
    if (!stopping && !exhausted && n_idle > 0) {
      int64_t room = c->budget - r->done - in_flight;
      int k = (int)(room < n_idle ? room : n_idle);
      if (k > 0) {
        int nd = take_default(c, ids);
        int n = k - nd > 0 ? ask(s, k - nd, ids + nd) : 0;
        if (n >= 0) n += nd;
        if (n == MPT_ERR_STOPPED) {
          n = nd; /* check_stop says why */
        } else if (n < 0) {
          rc = mpt_error_set(err, n, "strategy '%s' failed to propose configurations: %s", c->strategy->type->name,
                           mpt_strategy_ask_error(c->strategy));
          stopping = "error";
          n = 0;
        } else if (n == 0) {
          exhausted = 1;
          continue; /* re-check: exhausted with nothing in flight ends the run */
        }
        for (int i = 0; i < n; i++) {
          int k2 = idle[--n_idle];
          if (w[k2].req != MPI_REQUEST_NULL) mpt_wire_wait(&w[k2].req, &b); /* long done: result came back */
          w[k2].busy = 1;
          w[k2].id = ids[i];
          w[k2].send_id = ids[i];
          mpt_wire_send_work(c->comm, k2, &w[k2].send_id, &w[k2].req);
          in_flight++;
        }
      }
    }
    if (in_flight == 0) {
      if (stopping) break;
      if (exhausted) continue; /* check_stop reports "exhausted" */
    }
    /* a signal while waiting for what is in flight (after the time budget, an exhausted space, a
     * worker's error): from then on the signal's stop */
    int n_sig = mpt_signals_count();
    if (stopping && n_sig > 0 && rc == 0 && strcmp(stopping, "signal") != 0) {
      stopping = "signal";
      t_stop = now;
    }
    /* the wait is bounded by --grace after a signal or the time budget */
    int bounded = stopping && (n_sig > 0 || strcmp(stopping, "time") == 0);
    if (bounded && (n_sig >= 2 || now - t_stop >= c->grace_s)) {
      /* give up on what is in flight: record it as cancelled (resumable, not counted) */
      const char *why = n_sig >= 2 ? "cancelled: second signal"
                        : n_sig > 0 ? "cancelled: grace period after signal expired"
                                    : "cancelled: still running --grace seconds after the time budget";
      for (int k = 1; k < size && rc == 0; k++) {
        if (!w[k].busy) continue;
        mpt_obs o;
        cancelled_obs(&o, w[k].id, k, why);
        rc = take(s, &o, err);
        w[k].busy = 0;
        in_flight--;
      }
      break;
    }
    if (hard_error) break;
    /* wait for a result: wake up for progress, the time budget and signals */
    double timeout = 1.0;
    if (!stopping && c->time_budget > 0) {
      double left = c->time_budget - (now - t0);
      if (left < timeout) timeout = left > 0 ? left : 0;
    }
    if (bounded) {
      double left = c->grace_s - (now - t_stop);
      if (left < timeout) timeout = left > 0 ? left : 0;
    }
    volatile const int *flag = n_sig > 0 ? NULL : mpt_signals_flag(); /* wake on a first signal */
    MPI_Status st;
    double tw = mpt_wire_now();
    int got = mpt_wire_probe_wait(c->comm, MPI_ANY_SOURCE, MPI_ANY_TAG, timeout, &b, flag, &st);
    r->wait_s += mpt_wire_now() - tw;
    if (!got) {
      draw(s, mpt_wire_now(), 0);
      continue;
    }
    int src = st.MPI_SOURCE;
    if (st.MPI_TAG == MPT_TAG_FATAL) {
      /* the worker's evaluator cannot go on: stop dispatching, collect (and log) what else is in
       * flight, then end with this error; the run stays resumable */
      mpt_wire_fatal f;
      mpt_wire_recv_fatal(c->comm, &st, &f);
      if (rc == 0)
        rc = mpt_error_set(err, f.code < 0 ? f.code : MPT_ERR_INTERNAL, "rank %d (config id %lld): %s", src,
                           (long long)f.id, f.msg);
      if (src > 0 && src < size && w[src].busy) {
        w[src].busy = 0;
        in_flight--;
        if (w[src].req != MPI_REQUEST_NULL) mpt_wire_wait(&w[src].req, &b);
      }
      stopping = "error";
      continue;
    }
    mpt_obs o;
    if (mpt_wire_recv_obs(c->comm, &st, &o) != 0 || src <= 0 || src >= size || !w[src].busy ||
        o.id != w[src].id) {
      rc = mpt_error_set(err, MPT_ERR_INTERNAL, "protocol error: unexpected message (tag %d) from rank %d", st.MPI_TAG, src);
      stopping = "error";
      hard_error = 1;
      break;
    }
    o.rank = src;
    w[src].busy = 0;
    in_flight--;
    if (w[src].req != MPI_REQUEST_NULL) mpt_wire_wait(&w[src].req, &b);
    idle[n_idle++] = src;
    mpt_error terr;
    mpt_error_clear(&terr);
    int trc = take(s, &o, &terr);
    if (trc < 0) {
      if (rc == 0) {
        rc = trc;
        if (err) *err = terr;
      }
      stopping = "error";
      hard_error = 1;
      break;
    }
    /* a worker cancels an evaluation only when it is told to stop or was signalled itself: a signal to
     * that rank alone (the run is not stopping) stops the run, resumable, before it gives away (and
     * logs as cancelled) every configuration left */
    if (o.status == MPT_STATUS_CANCELLED && !stopping) {
      stopping = "signal";
      t_stop = mpt_wire_now();
      r->stopped_rank = src;
    }
    draw(s, mpt_wire_now(), 0);
  }
  r->reason = rc < 0 ? "error" : stopping;
  for (int k = 1; k < size; k++)
    if (w[k].req != MPI_REQUEST_NULL) mpt_wire_wait(&w[k].req, &b);
  mpt_wire_stop_all(c->comm, rc < 0 ? 1 : 0);
  free(w);
  free(idle);
  free(ids);
  return rc;
}

int mpt_coord_run(const mpt_coord_config *c, mpt_coord_result *r, mpt_error *err) {
  memset(r, 0, sizeof *r);
  r->best = NAN;
  r->best_id = -1;
  r->default_objective = NAN;
  r->reason = "error";
  int size;
  MPI_Comm_size(c->comm, &size);
  r->n_workers = size > 1 ? size - 1 : 1;
  if (c->budget <= 0 || !c->strategy || (size == 1 && !c->local)) {
    if (size > 1) mpt_wire_stop_all(c->comm, 1);
    return mpt_error_set(err, MPT_ERR_VALUE, "coordinator: %s", c->budget <= 0 ? "the budget must be positive" : "no strategy or evaluator");
  }
  /* warm start: every logged observation goes to the strategy, in runs told WARM_BLOCK at a time;
   * cancelled ones are not measurements and records of ids outside the space are skipped */
  if (c->resume_each) {
    warm_ctx w = {c, r, mpt_space_size(c->space), malloc(sizeof(mpt_obs) * WARM_BLOCK), 0};
    int wrc = w.buf ? c->resume_each(c->resume_src, warm_one, &w, err) : mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    if (wrc == 0) warm_flush(&w);
    free(w.buf);
    if (wrc < 0) {
      if (size > 1) mpt_wire_stop_all(c->comm, 1);
      return wrc;
    }
  }
  coord_state s = {c, r, {0}, 0, 0};
  double t0 = mpt_wire_now(), cpu0 = cpu_seconds();
  s.t0 = t0;
  mpt_strategy_set_tick(c->strategy, ask_tick, &s);
  int64_t most = mpt_space_size(c->space); /* the run ends there too: the progress line's whole */
  mpt_progress_init(&s.prog, c->progress_out, c->progress, c->budget > 0 && c->budget < most ? c->budget : most,
                    c->time_budget, r->done, t0);
  int rc = size == 1 ? run_local(&s, t0, err) : run_workers(&s, size, t0, err);
  double t1 = mpt_wire_now();
  if (rc < 0) r->reason = "error";
  if (r->reason && strcmp(r->reason, "signal") == 0) r->signal = mpt_signals_last();
  r->wall_s = t1 - t0;
  r->busy_s = r->wall_s - r->wait_s;
  r->cpu_s = cpu_seconds() - cpu0;
  mpt_progress_finish(&s.prog, t1, r->done, r->valid, r->failed, r->best);
  mpt_strategy_set_tick(c->strategy, NULL, NULL);
  return rc;
}
