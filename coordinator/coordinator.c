/* coordinator/coordinator.c: the rank-0 loop (see coordinator/coordinator.h). Each worker has a home search (the
 * first search that lists it) and serves the other searches that list it (its class in other jobs of a campaign)
 * while its home search has no work left for it (finished, exhausted, or its budget all handed out); it holds up
 * to 1 + lookahead configurations (a FIFO, answered in the order sent; the ones beyond the first compile
 * ahead on the worker); a stop sends DROP so that every held one is answered before the loop ends (and before the
 * confirmation). Waiting for results uses MPI_Iprobe + nanosleep back-off (mpi/wire.h), so the coordinator leaves
 * its core to compilers. */
#include "coordinator/coordinator.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "coordinator/cross.h"
#include "coordinator/signals.h"
#include "mpi/wire.h"

/* one configuration a worker holds: the WORK sent (id, search, job) and whose best it is */
typedef struct held_work {
  mpt_wire_work work;
  int cross_from;      /* 0 its search's candidate, x + 1 search x's best (a portability evaluation) */
} held_work;

/* what one worker holds: the configuration it evaluates and up to `lookahead` more (sent ahead, compiled while it
 * evaluates), in the order sent, which is the order their observations come back in */
typedef struct worker_slot {
  int home;            /* the search it serves first (-1: none, e.g. a worker without a usable device); each
                          configuration it holds names its own search (held[].work.search) */
  int n;               /* held */
  held_work held[MPT_COORD_MAX_LOOKAHEAD + 1];
  mpt_wire_work send[MPT_COORD_MAX_LOOKAHEAD + 1]; /* send buffers of the WORK messages, used in turn */
  MPI_Request req[MPT_COORD_MAX_LOOKAHEAD + 1];
  int next;            /* the send buffer used next */
  int out;             /* its evaluator failed: it gets no more work */
  int dropped;         /* DROP sent (the run is stopping) */
} worker_slot;

/* a search's side of the run: its workers' room, what it has in flight, whether its strategy is exhausted */
typedef struct search_run {
  int64_t in_flight;
  int exhausted;
  int64_t *ids;        /* what its strategy proposed for them */
  int64_t done0;       /* its evaluations when the session started (the progress line's rate) */
  mpt_obs *warm;       /* resume: the block of logged observations being told (WARM_BLOCK) */
  int n_warm;
} search_run;

typedef struct coord_state {
  const mpt_coord_config *c;
  mpt_coord_result *r;   /* the run's totals (mpt_search_totals) */
  mpt_coord_search *S;   /* the searches: c->searches, or the one made of c's strategy and budget */
  int n;
  search_run *run;
  mpt_coord_search one;
  int *one_workers;
  mpt_cross cross;       /* the portability evaluations (c->cross with several searches; cross.n == 0: none) */
  unsigned char *finished; /* per search: finished (set by check_stop) */
  int32_t warm_job;        /* the job whose log the warm start reads now */
  char classes[1536];      /* the classes' parts of the progress line */
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
                                s->one_workers, n, {0}, NULL, NULL, NULL, NULL, NULL};
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

/* warm start from the log (mpt_coord_config.resume_each): each search's runs of tellable observations are
 * told in blocks of WARM_BLOCK, to it and (transfer) to the other searches of its job */
enum { WARM_BLOCK = 512 };

static void warm_flush(coord_state *s, int i) {
  mpt_search_tell(s->S, s->n, i, s->run[i].warm, s->run[i].n_warm, s->c->transfer);
  s->run[i].n_warm = 0;
}

static int warm_one(void *ctx, const mpt_obs *o, const int32_t *config) {
  (void)config;
  coord_state *s = ctx;
  if (o->cross_from > 0) { /* a portability evaluation: no search's measurement */
    if (s->cross.n) mpt_cross_logged(&s->cross, s->S, s->warm_job, o);
    return 0;
  }
  int i = mpt_search_find(s->S, s->n, s->warm_job, s->S == &s->one ? 0 : o->device_class);
  if (i < 0 || o->status == MPT_STATUS_CANCELLED || o->id < 0 || o->id >= mpt_space_size(mpt_search_space(&s->S[i], s->c))) {
    for (int k = 0; k < s->n; k++) warm_flush(s, k);
    return 0;
  }
  search_run *w = &s->run[i];
  if (!w->warm && !(w->warm = malloc(sizeof(mpt_obs) * WARM_BLOCK))) return MPT_ERR_NOMEM;
  mpt_search_count(&s->S[i].res, s->S[i].default_id, o);
  if (o->id == s->S[i].default_id && o->status != MPT_STATUS_MISSING) s->S[i].res.default_logged = 1;
  w->warm[w->n_warm++] = *o;
  if (w->n_warm == WARM_BLOCK) warm_flush(s, i);
  return 0;
}

static int warm_read(coord_state *s, int32_t job, mpt_coord_each_fn each, void *src, mpt_error *err) {
  s->warm_job = job;
  int rc = each(src, warm_one, s, err);
  if (rc == MPT_ERR_NOMEM && !err->msg[0]) mpt_error_set(err, rc, "out of memory");
  for (int i = 0; rc == 0 && i < s->n; i++) warm_flush(s, i);
  return rc;
}

/* the run's one log (mpt_coord_config.resume_each), or each job's own (its first search's resume_each; none: a
 * fresh run) */
static int warm_start(coord_state *s, mpt_error *err) {
  if (s->c->resume_each) return warm_read(s, 0, s->c->resume_each, s->c->resume_src, err);
  for (int i = 0; i < s->n; i++) {
    const mpt_coord_search *S = &s->S[i];
    int first = 1; /* the job's first search reads its log */
    for (int k = 0; k < i; k++) first &= s->S[k].job != S->job;
    int rc = first && S->resume_each ? warm_read(s, S->job, S->resume_each, S->resume_src, err) : 0;
    if (rc < 0) return rc;
  }
  return 0;
}

/* search i's record callback: its job's, else the run's */
static int record(coord_state *s, int i, const mpt_obs *o, mpt_error *err) {
  mpt_coord_record_fn fn = s->S[i].record ? s->S[i].record : s->c->record;
  return fn ? fn(s->S[i].record ? s->S[i].record_ctx : s->c->record_ctx, o, err) : 0;
}

/* log (flushed) first, then tell search i's strategy (and, as related, the other searches') */
static int take(coord_state *s, int i, mpt_obs *o, mpt_error *err) {
  mpt_coord_result *r = &s->S[i].res;
  o->device_class = s->S[i].device_class;
  int rc = record(s, i, o, err);
  if (rc < 0) return rc;
  if (o->status == MPT_STATUS_CANCELLED) {
    r->cancelled++;
    return 0;
  }
  mpt_search_tell(s->S, s->n, i, o, 1, s->c->transfer);
  mpt_search_count(r, s->S[i].default_id, o);
  if (o->status == MPT_STATUS_MISSING) return 0;
  r->new_evals++;
  if (o->t_end > o->t_start) r->eval_s += o->t_end - o->t_start;
  if (isfinite(o->benchmark_ms) && o->benchmark_ms > 0) r->device_s += o->benchmark_ms * 1e-3;
  return 0;
}

/* a portability evaluation of search x's best on search y's class: logged (flushed), noted; no search hears of it */
static int take_cross(coord_state *s, int y, int x, mpt_obs *o, mpt_error *err) {
  o->device_class = s->S[y].device_class;
  o->cross_from = s->S[x].device_class + 1;
  s->cross.busy[x * s->n + y] = 0;
  int rc = record(s, y, o, err);
  if (rc < 0) return rc;
  if (o->status != MPT_STATUS_CANCELLED) s->cross.done[x * s->n + y] = o->id;
  return 0;
}

/* every class's own part of the progress line (several searches) */
static void classes_text(coord_state *s, double now) {
  int at = 0;
  for (int i = 0; s->n > 1 && i < s->n && at < (int)sizeof s->classes - 1; i++)
    at += mpt_search_progress(&s->S[i], s->run[i].done0, now - s->t0, s->classes + at, (int)sizeof s->classes - at);
  s->prog.classes = s->n > 1 ? s->classes : NULL;
}

static void draw(coord_state *s, double now, int force) {
  mpt_search_totals(s->S, s->n, s->r);
  s->prog.missing = s->r->missing;
  if (force || mpt_progress_due(&s->prog, now, s->r->done)) classes_text(s, now); /* formatted only when drawn */
  mpt_progress_update(&s->prog, now, s->r->done, s->r->valid, s->r->failed, s->r->best, force);
}

/* why the run stops: a signal; every search finished (a search without workers that is not: "waiting");
 * the time budget; NULL while it goes on */
static const char *check_stop(const coord_state *s, double now) {
  if (mpt_signals_count() > 0) return "signal";
  int all = 1, waiting = 0, exhausted = 1;
  for (int i = 0; i < s->n; i++) {
    const char *why = mpt_search_finished(&s->S[i], mpt_space_size(mpt_search_space(&s->S[i], s->c)), s->run[i].in_flight,
                                          s->run[i].exhausted);
    s->finished[i] = why != NULL;
    if (!why && s->S[i].n_workers == 0) waiting = 1;
    else if (!why) all = 0;
    else if (strcmp(why, "exhausted") != 0) exhausted = 0;
  }
  if (all && waiting) return "waiting"; /* the bests are not final: no portability evaluations yet */
  if (all && !(s->cross.n && mpt_cross_pending(&s->cross, s->S, s->finished))) return exhausted ? "exhausted" : "budget";
  if (s->c->time_budget > 0 && now - s->t0 >= s->c->time_budget) return "time";
  return NULL;
}

static void cancelled_obs(mpt_obs *o, int64_t id, int rank, const char *why) {
  mpt_obs_init(o, id);
  o->status = MPT_STATUS_CANCELLED;
  o->rank = rank;
  snprintf(o->reason, sizeof o->reason, "%s", why);
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

static int ask(coord_state *s, int i, int n, int64_t *ids) {
  s->ask_since = mpt_wire_now();
  mpt_strategy *st = s->S[i].strategy;
  int got = mpt_strategy_ask(st, n, ids);
  if (got == MPT_ERR_STOPPED) /* for the summary: a resume with as little time would stop there again */
    snprintf(s->S[i].res.ask_stopped, sizeof s->S[i].res.ask_stopped, "%s", mpt_strategy_ask_error(st));
  return got;
}

/* one rank: the progress line goes on while an evaluation runs (its waits ask this watch at least every
 * 100 ms), so that a long evaluation does not freeze it */
static int local_tick(void *ctx, const char *doing, double done) {
  (void)doing, (void)done;
  draw(ctx, mpt_wire_now(), 0);
  return 0;
}

/* --confirm once the run is over by its budget or an exhausted space: 0 (*why "signal" when a signal cut it
 * short), or <0 with err */
static int confirm_finalists(coord_state *s, const char **why, mpt_error *err) {
  if (!*why || (strcmp(*why, "budget") != 0 && strcmp(*why, "exhausted") != 0)) return 0;
  if (s->n != 1) return 0; /* several device classes: the portability table measures their bests again */
  int stopped = 0;
  int worker = s->S[0].n_workers > 0 ? s->S[0].workers[0] : 1;
  int made = mpt_coord_confirm_run(s->c, worker, &stopped, err);
  if (made < 0) return made;
  s->r->confirmed = made;
  if (stopped) *why = "signal";
  return 0;
}

/* one rank: the configurations held, the first evaluated next, the others compiling meanwhile (lookahead) */
typedef struct local_queue {
  int64_t ids[MPT_COORD_MAX_LOOKAHEAD + 1];
  int n;
} local_queue;

static int clamp_lookahead(int l) { return l < 0 ? 0 : l > MPT_COORD_MAX_LOOKAHEAD ? MPT_COORD_MAX_LOOKAHEAD : l; }

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
static int run_local(coord_state *s, mpt_error *err) {
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

/* ---- several ranks: rank 0 dispatches each search's candidates to its own workers ---- */

/* the workers' side of the run: who serves which search, what is in flight, whether and why the run stops */
typedef struct worker_pool {
  int size;              /* ranks */
  worker_slot *w;        /* per rank */
  int depth;             /* configurations a worker may hold: 1 + the lookahead */
  int64_t in_flight;
  const char *stopping;  /* why the run stops (NULL: it goes on) */
  double t_stop;         /* since when */
  int rc;                /* the first error (err holds it), 0 none */
  mpt_backoff b;
} worker_pool;

/* search i's ask buffer, and its workers checked: each a worker rank, in one search per job at most */
static int search_workers_open(coord_state *s, worker_pool *p, int i, mpt_error *err) {
  const mpt_coord_search *S = &s->S[i];
  search_run *run = &s->run[i];
  run->ids = malloc(sizeof *run->ids * ((size_t)S->n_workers * (size_t)p->depth + 1));
  if (!run->ids) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory for %d workers", S->n_workers);
  for (int k = 0; k < S->n_workers; k++) {
    int rank = S->workers[k], twice = 0;
    for (int h = 0; h < i && !twice; h++) twice = s->S[h].job == S->job && mpt_search_worker_place(&s->S[h], rank) >= 0;
    if (rank <= 0 || rank >= p->size || twice)
      return mpt_error_set(err, MPT_ERR_VALUE, "coordinator: rank %d of search '%s' is no worker or serves two searches "
                           "of one job", rank, S->name);
  }
  return 0;
}

/* search h has no work left to hand out: finished, its strategy exhausted, or its whole budget handed out */
static int no_work_left(const coord_state *s, int h) {
  return s->finished[h] || s->run[h].exhausted || s->S[h].budget - s->S[h].res.done - s->run[h].in_flight <= 0;
}

/* worker k takes search i's work now: it is at home there, or its home search has no work left */
static int takes_work(const coord_state *s, const worker_pool *p, int i, int k) {
  const worker_slot *w = &p->w[k];
  return !w->out && w->home >= 0 && (w->home == i || no_work_left(s, w->home));
}

/* the room search i's workers that take its work have (each holds up to 1 + the lookahead) */
static int64_t search_room(const coord_state *s, const worker_pool *p, int i) {
  int64_t room = 0;
  for (int j = 0; j < s->S[i].n_workers; j++) {
    int k = s->S[i].workers[j];
    if (takes_work(s, p, i, k)) room += p->depth - p->w[k].n;
  }
  return room;
}

static int pool_open(coord_state *s, worker_pool *p, int size, mpt_error *err) {
  memset(p, 0, sizeof *p);
  p->size = size;
  p->depth = 1 + clamp_lookahead(s->c->lookahead);
  p->w = calloc((size_t)size, sizeof *p->w);
  if (!p->w) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory for %d workers", size - 1);
  for (int k = 0; k < size; k++) {
    for (int j = 0; j <= MPT_COORD_MAX_LOOKAHEAD; j++) p->w[k].req[j] = MPI_REQUEST_NULL;
    p->w[k].home = -1;
  }
  mpt_backoff_init(&p->b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  for (int i = 0; i < s->n; i++) {
    int rc = search_workers_open(s, p, i, err);
    if (rc < 0) return rc;
  }
  int *home = malloc(sizeof *home * (size_t)size);
  if (!home) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory for %d workers", size - 1);
  mpt_search_homes(s->S, s->n, size, home);
  for (int k = 1; k < size; k++) p->w[k].home = home[k];
  free(home);
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
  for (int k = 1; p->w && k < p->size; k++) slot_sends_done(p, k);
  mpt_wire_stop_all(s->c->comm, p->rc < 0 ? 1 : 0);
  free(p->w);
}

/* sends config id of search i (cross_from: 0, or x + 1 for search x's best) to worker k, which holds it after what
 * it holds already */
static void send_work(coord_state *s, worker_pool *p, int k, int i, int64_t id, int cross_from) {
  worker_slot *w = &p->w[k];
  int j = w->next;
  w->next = (j + 1) % p->depth;
  if (w->req[j] != MPI_REQUEST_NULL) mpt_wire_wait(&w->req[j], &p->b); /* long done: its result came back */
  if (cross_from) s->cross.busy[(cross_from - 1) * s->n + i] = 1;
  w->send[j] = (mpt_wire_work){id, i, s->S[i].job};
  w->held[w->n++] = (held_work){w->send[j], cross_from};
  mpt_wire_send_work(s->c->comm, k, &w->send[j], &w->req[j]);
  s->run[i].in_flight++;
  p->in_flight++;
}

/* worker k's first held configuration is answered (or given up): taken off what it holds */
static void slot_pop(coord_state *s, worker_pool *p, int k) {
  worker_slot *w = &p->w[k];
  s->run[w->held[0].work.search].in_flight--;
  memmove(w->held, w->held + 1, (size_t)(w->n - 1) * sizeof *w->held);
  w->n--;
  p->in_flight--;
}

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
  if (k <= 0 || run->exhausted) return 0;
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
static int dispatch(coord_state *s, worker_pool *p, mpt_error *err) {
  int exhausted = 0;
  for (int i = 0; i < s->n && !p->stopping; i++) exhausted |= dispatch_search(s, p, i, err);
  for (int y = 0; s->cross.n && y < s->n && !p->stopping; y++)
    if (s->finished[y]) dispatch_cross(s, p, y);
  return exhausted;
}

/* the run stops: each worker that holds configurations beyond the one it evaluates is asked to give them back
 * (each answered as cancelled, in order; evaluated again on --resume), so that nothing is held when the
 * confirmation (which sends WORK to one worker after the loop) runs */
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
      cancelled_obs(&o, p->w[k].held[0].work.id, k, why);
      int i = p->w[k].held[0].work.search, x = p->w[k].held[0].cross_from - 1;
      p->rc = x >= 0 ? take_cross(s, i, x, &o, err) : take(s, i, &o, err);
      slot_pop(s, p, k);
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
  if (src > 0 && src < p->size && p->w[src].home >= 0 && !p->w[src].out) {
    worker_slot *w = &p->w[src];
    w->out = 1; /* no more work for it */
    /* the configuration it failed on, and what it held beyond, never started (that worker drops it): not logged
     * (the run ends with this error; a resume proposes them again), as nothing of a broken evaluator is */
    while (w->n > 0) {
      if (w->held[0].cross_from) s->cross.busy[(w->held[0].cross_from - 1) * s->n + w->held[0].work.search] = 0;
      slot_pop(s, p, src);
    }
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
      o.id != p->w[src].held[0].work.id) {
    p->rc = mpt_error_set(err, MPT_ERR_INTERNAL, "protocol error: unexpected message (tag %d) from rank %d", st->MPI_TAG, src);
    p->stopping = "error";
    return p->rc;
  }
  o.rank = src;
  int i = p->w[src].held[0].work.search, x = p->w[src].held[0].cross_from - 1;
  slot_pop(s, p, src);
  mpt_error terr;
  mpt_error_clear(&terr);
  int trc = x >= 0 ? take_cross(s, i, x, &o, &terr) : take(s, i, &o, &terr);
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
  int rc = pool_open(s, &p, size, err);
  if (rc < 0) {
    p.rc = rc;
    pool_close(s, &p);
    return rc;
  }
  for (;;) {
    double now = mpt_wire_now();
    if (!p.stopping) {
      p.stopping = check_stop(s, now);
      if (p.stopping) p.t_stop = now;
    }
    if (!p.stopping && dispatch(s, &p, err))
      continue; /* re-check: exhausted with nothing in flight ends that search */
    if (p.stopping) drop_held(&p, c->comm);
    if (p.in_flight == 0 && p.stopping) break;
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
  if (p.rc == 0 && (p.rc = confirm_finalists(s, &p.stopping, err)) < 0) p.stopping = "error";
  pool_close(s, &p);
  return p.rc;
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
