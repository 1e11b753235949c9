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

/* what one worker holds: the configuration it evaluates and up to `lookahead` more (sent ahead, compiled while it
 * evaluates), in the order sent, which is the order their observations come back in */
typedef struct worker_slot {
  int n;                               /* held */
  int64_t held[MPT_COORD_MAX_LOOKAHEAD + 1];
  int64_t send_id[MPT_COORD_MAX_LOOKAHEAD + 1]; /* send buffers of the WORK messages, used in turn */
  MPI_Request req[MPT_COORD_MAX_LOOKAHEAD + 1];
  int next;                            /* the send buffer used next */
  int out;                             /* its evaluator failed: it gets no more work */
  int dropped;                         /* DROP sent (the run is stopping) */
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
  if (o->id == w->c->default_id && o->status != MPT_STATUS_MISSING) w->r->default_logged = 1;
  w->buf[w->n++] = *o;
  if (w->n == WARM_BLOCK) warm_flush(w);
  return 0;
}

static void count_obs(const mpt_coord_config *c, mpt_coord_result *r, const mpt_obs *o) {
  if (o->status == MPT_STATUS_CANCELLED) return;
  if (o->status == MPT_STATUS_MISSING) { /* no measurement: not against the budget */
    r->missing++;
    r->default_missing |= o->id == c->default_id;
    return;
  }
  r->done++;
  if (o->id == c->default_id) {
    r->default_seen = 1;
    r->default_logged = 0; /* measured now; warm_one marks one read from the log */
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
  if (o->status == MPT_STATUS_MISSING) return 0;
  s->r->new_evals++;
  if (o->t_end > o->t_start) s->r->eval_s += o->t_end - o->t_start;
  if (isfinite(o->benchmark_ms) && o->benchmark_ms > 0) s->r->device_s += o->benchmark_ms * 1e-3;
  return 0;
}

static void draw(coord_state *s, double now, int force) {
  s->prog.missing = s->r->missing;
  mpt_progress_update(&s->prog, now, s->r->done, s->r->valid, s->r->failed, s->r->best, force);
}

static const char *check_stop(const mpt_coord_config *c, const mpt_coord_result *r, double now, double t0,
                              int64_t in_flight, int exhausted) {
  if (mpt_signals_count() > 0) return "signal";
  if (r->done + r->missing >= mpt_space_size(c->space)) return "exhausted"; /* every configuration evaluated */
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

/* one rank: the configurations held, the first evaluated next, the others compiling meanwhile (lookahead) */
typedef struct local_queue {
  int64_t ids[MPT_COORD_MAX_LOOKAHEAD + 1];
  int n;
  int exhausted;         /* the strategy has nothing left to propose */
} local_queue;

static int clamp_lookahead(int l) { return l < 0 ? 0 : l > MPT_COORD_MAX_LOOKAHEAD ? MPT_COORD_MAX_LOOKAHEAD : l; }

/* fills the queue up to 1 + lookahead (within the budget; the default first), each new one's compile started */
static int local_fill(coord_state *s, local_queue *q, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  int64_t room = c->budget - s->r->done - q->n;
  int k = 1 + clamp_lookahead(c->lookahead) - q->n;
  if (room < k) k = (int)room;
  if (k <= 0 || q->exhausted) return 0;
  int64_t *at = q->ids + q->n;
  int nd = take_default(c, at);
  int n = k - nd > 0 ? ask(s, k - nd, at + nd) : 0;
  if (n == MPT_ERR_STOPPED) n = 0; /* check_stop says why */
  else if (n < 0)
    return mpt_error_set(err, n, "strategy '%s' failed to propose a configuration: %s", c->strategy->type->name,
                         mpt_strategy_ask_error(c->strategy));
  else if (n == 0 && k - nd > 0)
    q->exhausted = 1;
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
    int rc = take(s, &o, err);
    if (rc < 0) return rc;
  }
  q->n = 0;
  return 0;
}

/* one rank: evaluate in-process */
static int run_local(coord_state *s, double t0, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  mpt_coord_result *r = s->r;
  const mpt_watch tick = {local_tick, s};
  local_queue q = {{0}, 0, 0};
  for (;;) {
    double now = mpt_wire_now();
    const char *why = check_stop(c, r, now, t0, q.n, q.exhausted);
    if (why) {
      r->reason = why;
      return local_drop(s, &q, err);
    }
    int rc = local_fill(s, &q, err);
    if (rc < 0) return rc;
    if (q.n == 0) continue; /* exhausted, or the ask stopped: check_stop says why */
    int64_t id = q.ids[0];
    memmove(q.ids, q.ids + 1, (size_t)(--q.n) * sizeof *q.ids);
    mpt_obs o;
    double te = mpt_wire_now();
    s->prog.running_since = te;
    rc = mpt_worker_evaluate_local(c->local, id, &tick, &o, err);
    s->prog.running_since = 0;
    r->wait_s += mpt_wire_now() - te; /* evaluation time is not coordinator time */
    if (rc < 0) {
      char cfg[512];
      mpt_space_format(c->space, id, cfg, sizeof cfg);
      mpt_error_prefix(err, "evaluating %s", cfg);
      for (int i = 0; i < q.n; i++) mpt_evaluator_discard(c->local, q.ids[i]); /* not logged: the run ends here */
      return rc;
    }
    if ((rc = take(s, &o, err)) < 0) return rc;
    draw(s, mpt_wire_now(), 0);
  }
}

/* ---- several ranks: rank 0 dispatches to workers 1..size-1 ---- */

/* the workers' side of the run: who is idle, what is in flight, whether and why the run is stopping */
typedef struct worker_pool {
  int size;              /* ranks; the workers are 1..size-1 */
  worker_slot *w;        /* per rank */
  int depth;             /* configurations a worker may hold: 1 + the lookahead */
  int n_free;            /* room left in the workers that take work */
  int64_t *ids;          /* what the strategy proposed for them */
  int64_t in_flight;
  int exhausted;         /* the strategy has nothing left to propose */
  const char *stopping;  /* why the run stops (NULL: it goes on) */
  double t_stop;         /* since when */
  int rc;                /* the first error (err holds it), 0 none */
  mpt_backoff b;
} worker_pool;

static int pool_open(worker_pool *p, int size, int lookahead, mpt_error *err) {
  memset(p, 0, sizeof *p);
  p->size = size;
  p->depth = 1 + (lookahead < 0 ? 0 : lookahead > MPT_COORD_MAX_LOOKAHEAD ? MPT_COORD_MAX_LOOKAHEAD : lookahead);
  p->w = calloc((size_t)size, sizeof *p->w);
  p->ids = malloc(sizeof *p->ids * (size_t)size * (size_t)p->depth);
  if (!p->w || !p->ids) {
    free(p->w); free(p->ids);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory for %d workers", size - 1);
  }
  for (int k = 1; k < size; k++)
    for (int j = 0; j < p->depth; j++) p->w[k].req[j] = MPI_REQUEST_NULL;
  p->n_free = (size - 1) * p->depth;
  mpt_backoff_init(&p->b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  return 0;
}

/* completes every WORK send to worker k (long done: the worker answered) */
static void slot_sends_done(worker_pool *p, int k) {
  for (int j = 0; j < p->depth; j++)
    if (p->w[k].req[j] != MPI_REQUEST_NULL) mpt_wire_wait(&p->w[k].req[j], &p->b);
}

/* the run ends: its reason, the last sends completed, STOP to every worker (1 after an error) */
static void pool_close(coord_state *s, worker_pool *p) {
  s->r->reason = p->rc < 0 ? "error" : p->stopping;
  for (int k = 1; k < p->size; k++) slot_sends_done(p, k);
  mpt_wire_stop_all(s->c->comm, p->rc < 0 ? 1 : 0);
  free(p->w);
  free(p->ids);
}

/* sends config id to worker k, which holds it after what it holds already */
static void send_work(coord_state *s, worker_pool *p, int k, int64_t id) {
  worker_slot *w = &p->w[k];
  int j = w->next;
  w->next = (j + 1) % p->depth;
  if (w->req[j] != MPI_REQUEST_NULL) mpt_wire_wait(&w->req[j], &p->b);
  w->held[w->n++] = id;
  w->send_id[j] = id;
  mpt_wire_send_work(s->c->comm, k, &w->send_id[j], &w->req[j]);
  p->in_flight++;
  p->n_free--;
}

/* worker k's first held configuration is answered (or given up): taken off what it holds */
static void slot_pop(worker_pool *p, int k) {
  worker_slot *w = &p->w[k];
  memmove(w->held, w->held + 1, (size_t)(w->n - 1) * sizeof *w->held);
  w->n--;
  p->in_flight--;
  if (!w->out) p->n_free++;
}

/* hands ids[0..n) out: first one to each worker holding nothing, then one more to each holding one, ... (the
 * workers that wait first) */
static void hand_out(coord_state *s, worker_pool *p, const int64_t *ids, int n) {
  int i = 0;
  for (int level = 0; level < p->depth && i < n; level++)
    for (int k = 1; k < p->size && i < n; k++)
      if (!p->w[k].out && p->w[k].n == level) send_work(s, p, k, ids[i++]);
}

/* asks the strategy for as many configurations as the workers have room for (within the budget; the default
 * first) and sends them out; 1 when the strategy turned out exhausted just now, else 0 */
static int dispatch(coord_state *s, worker_pool *p, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  int64_t room = c->budget - s->r->done - p->in_flight;
  int k = (int)(room < p->n_free ? room : p->n_free);
  if (k <= 0) return 0;
  int nd = take_default(c, p->ids);
  int n = k - nd > 0 ? ask(s, k - nd, p->ids + nd) : 0;
  if (n >= 0) n += nd;
  if (n == MPT_ERR_STOPPED) {
    n = nd; /* check_stop says why */
  } else if (n < 0) {
    p->rc = mpt_error_set(err, n, "strategy '%s' failed to propose configurations: %s", c->strategy->type->name,
                          mpt_strategy_ask_error(c->strategy));
    p->stopping = "error";
    n = 0;
  } else if (n == 0) {
    p->exhausted = 1;
    return 1;
  }
  hand_out(s, p, p->ids, n);
  return 0;
}

/* the run stops: each worker that holds configurations beyond the one it evaluates is asked to give them back
 * (each answered as cancelled, in order; evaluated again on --resume) */
static void drop_held(worker_pool *p, MPI_Comm comm) {
  for (int k = 1; k < p->size; k++) {
    worker_slot *w = &p->w[k];
    if (w->dropped || w->out || w->n <= 1) continue;
    mpt_wire_drop_one(comm, k);
    w->dropped = 1;
  }
}

/* a signal while the run waits for what is in flight (after the time budget, an exhausted space, a worker's
 * error): from then on the signal's stop */
static void signal_takes_over(worker_pool *p, int n_sig, double now) {
  if (p->stopping && n_sig > 0 && p->rc == 0 && strcmp(p->stopping, "signal") != 0) {
    p->stopping = "signal";
    p->t_stop = now;
  }
}

/* gives up on what is in flight (after a second signal, or --grace after a signal or the time budget): each
 * one recorded as cancelled (resumable, not counted) */
static void cancel_in_flight(coord_state *s, worker_pool *p, int n_sig, int signalled, mpt_error *err) {
  const char *why = n_sig >= 2 ? "cancelled: second signal"
                    : signalled ? "cancelled: grace period after signal expired"
                                : "cancelled: still running --grace seconds after the time budget";
  for (int k = 1; k < p->size && p->rc == 0; k++) {
    while (p->w[k].n > 0 && p->rc == 0) {
      mpt_obs o;
      cancelled_obs(&o, p->w[k].held[0], k, why);
      p->rc = take(s, &o, err);
      slot_pop(p, k);
    }
  }
}

/* how long to wait for a result: a second at most (progress), and no longer than the time budget or, when
 * the wait is bounded, the grace period leaves */
static double wait_timeout(const coord_state *s, const worker_pool *p, double now, int bounded) {
  const mpt_coord_config *c = s->c;
  double timeout = 1.0;
  if (!p->stopping && c->time_budget > 0) {
    double left = c->time_budget - (now - s->t0);
    if (left < timeout) timeout = left > 0 ? left : 0;
  }
  if (bounded) {
    double left = c->grace_s - (now - p->t_stop);
    if (left < timeout) timeout = left > 0 ? left : 0;
  }
  return timeout;
}

/* the worker's evaluator cannot go on: stop dispatching, collect (and log) what else is in flight, then
 * end with this error; the run stays resumable */
static void take_fatal(coord_state *s, worker_pool *p, MPI_Status *st, mpt_error *err) {
  int src = st->MPI_SOURCE;
  mpt_wire_fatal f;
  mpt_wire_recv_fatal(s->c->comm, st, &f);
  if (p->rc == 0)
    p->rc = mpt_error_set(err, f.code < 0 ? f.code : MPT_ERR_INTERNAL, "rank %d (config id %lld): %s", src,
                          (long long)f.id, f.msg);
  if (src > 0 && src < p->size && !p->w[src].out) {
    worker_slot *w = &p->w[src];
    p->n_free -= p->depth - w->n; /* no more work for it */
    w->out = 1;
    /* the configuration it failed on, and what it held beyond, never started (that worker drops it): not logged
     * (the run ends with this error; a resume proposes them again), as nothing of a broken evaluator is */
    while (w->n > 0) slot_pop(p, src);
    slot_sends_done(p, src);
  }
  p->stopping = "error";
}

/* a signal to that worker alone (one to rank 0 is the run's own): the run stops as if rank 0 had received
 * it, --grace for what is in flight, resumable, with that signal's exit status */
static void take_worker_signal(coord_state *s, worker_pool *p, MPI_Status *st, int n_sig) {
  int sig = 0;
  mpt_wire_recv_signalled(s->c->comm, st, &sig);
  if (n_sig == 0 && s->r->stopped_rank == 0 && p->rc == 0) {
    s->r->stopped_rank = st->MPI_SOURCE;
    s->r->signal = sig;
    p->stopping = "signal";
    p->t_stop = mpt_wire_now();
  }
}

/* one worker's observation: logged, told, the worker idle again; <0 when the run must stop at once (a
 * protocol error, the log failed) */
static int take_result(coord_state *s, worker_pool *p, MPI_Status *st, mpt_error *err) {
  int src = st->MPI_SOURCE;
  mpt_obs o;
  if (mpt_wire_recv_obs(s->c->comm, st, &o) != 0 || src <= 0 || src >= p->size || p->w[src].n == 0 ||
      o.id != p->w[src].held[0]) {
    p->rc = mpt_error_set(err, MPT_ERR_INTERNAL, "protocol error: unexpected message (tag %d) from rank %d", st->MPI_TAG, src);
    p->stopping = "error";
    return p->rc;
  }
  o.rank = src;
  slot_pop(p, src);
  mpt_error terr;
  mpt_error_clear(&terr);
  int trc = take(s, &o, &terr);
  if (trc < 0) {
    if (p->rc == 0) {
      p->rc = trc;
      if (err) *err = terr;
    }
    p->stopping = "error";
    return trc;
  }
  /* a worker cancels an evaluation only when it is told to stop or was signalled itself: a signal to
   * that rank alone (the run is not stopping) stops the run, resumable, before it gives away (and
   * logs as cancelled) every configuration left */
  if (o.status == MPT_STATUS_CANCELLED && !p->stopping) {
    p->stopping = "signal";
    p->t_stop = mpt_wire_now();
    s->r->stopped_rank = src;
  }
  return 0;
}

static int run_workers(coord_state *s, int size, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  worker_pool p;
  int rc = pool_open(&p, size, c->lookahead, err);
  if (rc < 0) return rc;
  for (;;) {
    double now = mpt_wire_now();
    if (!p.stopping) {
      p.stopping = check_stop(c, s->r, now, s->t0, p.in_flight, p.exhausted);
      if (p.stopping) p.t_stop = now;
    }
    if (!p.stopping && !p.exhausted && p.n_free > 0 && dispatch(s, &p, err))
      continue; /* re-check: exhausted with nothing in flight ends the run */
    if (p.stopping) drop_held(&p, c->comm);
    if (p.in_flight == 0) {
      if (p.stopping) break;
      if (p.exhausted) continue; /* check_stop reports "exhausted" */
    }
    int n_sig = mpt_signals_count();
    signal_takes_over(&p, n_sig, now);
    /* the wait is bounded by --grace after a signal (to rank 0 or to one worker) or the time budget */
    int signalled = n_sig > 0 || s->r->stopped_rank > 0;
    int bounded = p.stopping && (signalled || strcmp(p.stopping, "time") == 0);
    if (bounded && (n_sig >= 2 || now - p.t_stop >= c->grace_s)) {
      cancel_in_flight(s, &p, n_sig, signalled, err);
      break;
    }
    /* wait for a result: wake up for progress, the time budget and signals */
    double timeout = wait_timeout(s, &p, now, bounded);
    volatile const int *flag = n_sig > 0 ? NULL : mpt_signals_flag(); /* wake on a first signal */
    MPI_Status st;
    double tw = mpt_wire_now();
    int got = mpt_wire_probe_wait(c->comm, MPI_ANY_SOURCE, MPI_ANY_TAG, timeout, &p.b, flag, &st);
    s->r->wait_s += mpt_wire_now() - tw;
    if (!got) {
      draw(s, mpt_wire_now(), 0);
      continue;
    }
    if (st.MPI_TAG == MPT_TAG_FATAL) {
      take_fatal(s, &p, &st, err);
      continue;
    }
    if (st.MPI_TAG == MPT_TAG_SIGNALLED) {
      take_worker_signal(s, &p, &st, n_sig);
      continue;
    }
    if (take_result(s, &p, &st, err) < 0) break;
    draw(s, mpt_wire_now(), 0);
  }
  pool_close(s, &p);
  return p.rc;
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
  int rc = size == 1 ? run_local(&s, t0, err) : run_workers(&s, size, err);
  double t1 = mpt_wire_now();
  if (rc < 0) r->reason = "error";
  if (r->reason && strcmp(r->reason, "signal") == 0 && mpt_signals_count() > 0) { /* rank 0's own: the run's */
    r->signal = mpt_signals_last();
    r->stopped_rank = 0;
  }
  r->wall_s = t1 - t0;
  r->busy_s = r->wall_s - r->wait_s;
  r->cpu_s = cpu_seconds() - cpu0;
  s.prog.missing = r->missing;
  mpt_progress_finish(&s.prog, t1, r->done, r->valid, r->failed, r->best);
  mpt_strategy_set_tick(c->strategy, NULL, NULL);
  return rc;
}
