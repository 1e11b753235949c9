/* mpi/worker.c: the worker loop (see mpi/worker.h): each WORK names its job, whose evaluator evaluates it. Waiting uses MPI_Iprobe + nanosleep back-off so an
 * idle worker leaves its core to compilers. */
#include "mpi/worker.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpi/wire.h"
#include "spaces/sys/signame.h"

/* The worker loop's state: the notice of its own signal (sent once), the configurations the coordinator handed it
 * beyond the one it runs (compiled ahead, evaluated in the order sent), and whether the coordinator asked to drop
 * them. It is the context of the watch the worker hands each evaluation. */
typedef struct worker_state {
  MPI_Comm comm;
  int coordinator;
  const mpt_worker_signals *signals;
  mpt_evaluator *const *evs; /* per job (NULL: a job this worker does not serve) */
  int n_evs;
  int sig;             /* the signal told (the send buffer), 0 before */
  MPI_Request req;
  mpt_wire_work *queue; /* held, not started, first sent first */
  int n, cap;
  int drop;            /* DROP came: what is held is answered as cancelled */
  int stop;            /* STOP is waiting to be received: the loop ends without starting anything more */
  int broken;          /* the evaluator failed (FATAL sent): the rest is the coordinator's to cancel */
} worker_state;

/* tells the coordinator of a signal to this worker when one came; returns 1 once it is told */
static int tell_own_signal(worker_state *w) {
  if (w->sig) return 1;
  if (!w->signals || !w->signals->received) return 0;
  int sig = w->signals->received();
  if (!sig) return 0;
  w->sig = sig;
  mpt_wire_send_signalled(w->comm, w->coordinator, &w->sig, &w->req);
  return 1;
}

/* the evaluator of work's job, NULL when this worker has none for it */
static mpt_evaluator *evaluator_of(const worker_state *w, const mpt_wire_work *work) {
  return work->job >= 0 && work->job < w->n_evs ? w->evs[work->job] : NULL;
}

/* a configuration handed to this worker: held, its compile started ahead */
static void hold(worker_state *w, const mpt_wire_work *work) {
  if (w->n == w->cap) {
    int cap = w->cap ? 2 * w->cap : 8;
    mpt_wire_work *q = realloc(w->queue, (size_t)cap * sizeof *q);
    if (!q) return; /* out of memory: the coordinator waits for it in vain; the run's --grace ends that */
    w->queue = q;
    w->cap = cap;
  }
  w->queue[w->n++] = *work;
  if (!w->broken && evaluator_of(w, work)) mpt_evaluator_prepare(evaluator_of(w, work), work->id);
}

/* a held configuration dropped: its compile ahead discarded */
static void discard(worker_state *w, const mpt_wire_work *work) {
  if (evaluator_of(w, work)) mpt_evaluator_discard(evaluator_of(w, work), work->id);
}

/* the message st announces (WORK, DROP or anything else: drained) taken; STOP is left for the loop */
static void take_message(worker_state *w, MPI_Status *st) {
  mpt_wire_work work = {-1, 0, 0};
  if (st->MPI_TAG == MPT_TAG_STOP) w->stop = 1;
  else if (st->MPI_TAG == MPT_TAG_WORK) {
    if (mpt_wire_recv_work(w->comm, st, &work) == 0) hold(w, &work); /* its search is the coordinator's to know */
  } else if (st->MPI_TAG == MPT_TAG_DROP) {
    mpt_wire_recv_drop(w->comm, st);
    w->drop = 1;
  } else {
    char junk[16];
    MPI_Recv(junk, 0, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, w->comm, MPI_STATUS_IGNORE); /* unknown: ignored */
  }
}

/* takes the messages that are there without waiting, up to a STOP (messages from one sender arrive in order) */
static void take_messages(worker_state *w) {
  for (int flag = 1; flag && !w->stop;) {
    MPI_Status st;
    MPI_Iprobe(w->coordinator, MPI_ANY_TAG, w->comm, &flag, &st);
    if (flag) take_message(w, &st);
  }
}

/* the watch of an evaluation (its waits ask it at least every 100 ms): tells a signal at once and takes the
 * configurations that come meanwhile (their compiles start while this one runs); whether the evaluation stops is
 * the evaluator's own watch's word (the run's stop and its --grace) */
static int worker_watch(void *ctx, const char *doing, double done) {
  (void)doing;
  (void)done;
  tell_own_signal(ctx);
  take_messages(ctx);
  return 0;
}

/* a configuration not evaluated, answered as cancelled (evaluated again on --resume): work that came after the
 * worker's own signal, or held when the coordinator dropped it */
static void cancelled_obs(mpt_obs *o, int64_t id, int rank, int sig) {
  mpt_obs_init(o, id);
  o->status = MPT_STATUS_CANCELLED;
  o->rank = rank;
  if (sig)
    snprintf(o->reason, sizeof o->reason, "cancelled: worker rank %d received %s and takes no more work", rank,
             mpt_signal_name(sig));
  else
    snprintf(o->reason, sizeof o->reason, "cancelled: held by worker rank %d, not started when the run stopped", rank);
}

/* sends o (the send buffer) once the previous send completed */
static void send_obs(worker_state *w, mpt_obs *o, MPI_Request *send_req, mpt_backoff *b) {
  mpt_wire_send_obs(w->comm, w->coordinator, o, send_req);
  mpt_wire_wait(send_req, b); /* the buffer is reused at once */
}

/* DROP: every configuration held and not started is answered as cancelled and its compile dropped */
static void drop_held(worker_state *w, int rank, mpt_obs *obs, MPI_Request *send_req, mpt_backoff *b) {
  for (int i = 0; i < w->n; i++) {
    discard(w, &w->queue[i]);
    if (w->broken) continue;
    cancelled_obs(obs, w->queue[i].id, rank, 0);
    send_obs(w, obs, send_req, b);
  }
  w->n = 0;
  w->drop = 0;
}

/* the first configuration held, taken off the queue */
static mpt_wire_work next_held(worker_state *w) {
  mpt_wire_work id = w->queue[0];
  memmove(w->queue, w->queue + 1, (size_t)(w->n - 1) * sizeof *w->queue);
  w->n--;
  return id;
}

/* waits (without spinning) until a message comes or a first signal wakes the wait, and takes it */
static void wait_for_message(worker_state *w, mpt_backoff *b, mpt_worker_stats *stats) {
  MPI_Status st;
  int told = tell_own_signal(w);
  volatile const int *wake = !told && w->signals ? w->signals->flag : NULL; /* a first signal ends an idle wait */
  double t0 = mpt_wire_now();
  int got = mpt_wire_probe_wait(w->comm, w->coordinator, MPI_ANY_TAG, -1, b, wake, &st);
  stats->wait_s += mpt_wire_now() - t0;
  if (got) take_message(w, &st); /* else woken by a signal: told at the top of the loop */
}

/* evaluates id and sends its observation (or, when the evaluator fails, FATAL: the worker then only waits for
 * STOP, the coordinator cancels what it still holds) */
static void evaluate_one(worker_state *w, const mpt_wire_work *work, int rank, mpt_obs *obs, MPI_Request *send_req,
                         mpt_backoff *b, mpt_worker_stats *stats) {
  static mpt_wire_fatal fatal;
  const mpt_watch watch = {worker_watch, w};
  mpt_error err;
  mpt_error_clear(&err);
  double t1 = mpt_wire_now();
  int64_t id = work->id;
  mpt_evaluator *ev = evaluator_of(w, work);
  int rc = ev ? mpt_evaluator_evaluate_watched(ev, id, &watch, obs, &err)
              : mpt_error_set(&err, MPT_ERR_INTERNAL, "worker rank %d has no evaluator for job %d", rank, (int)work->job);
  stats->busy_s += mpt_wire_now() - t1;
  mpt_backoff_hold(b, MPT_BACKOFF_HOLD_S); /* the coordinator answers quickly after a result */
  if (rc < 0) {
    memset(&fatal, 0, sizeof fatal);
    fatal.id = id;
    fatal.code = rc;
    snprintf(fatal.msg, sizeof fatal.msg, "%s", err.msg[0] ? err.msg : "evaluator failed");
    MPI_Isend(&fatal, (int)sizeof fatal, MPI_BYTE, w->coordinator, MPT_TAG_FATAL, w->comm, send_req);
    mpt_wire_wait(send_req, b);
    w->broken = 1;
    for (int i = 0; i < w->n; i++) discard(w, &w->queue[i]);
    return;
  }
  obs->id = id;
  obs->rank = rank;
  send_obs(w, obs, send_req, b);
  stats->evaluations++;
}

int mpt_worker_run(MPI_Comm comm, int coordinator, mpt_evaluator *ev, const mpt_worker_signals *signals,
                   mpt_worker_stats *stats) {
  return mpt_worker_run_jobs(comm, coordinator, &ev, 1, signals, stats);
}

int mpt_worker_run_jobs(MPI_Comm comm, int coordinator, mpt_evaluator *const *evs, int n_evs,
                        const mpt_worker_signals *signals, mpt_worker_stats *stats) {
  mpt_worker_stats local = {0, 0, 0};
  int rank;
  MPI_Comm_rank(comm, &rank);
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  mpt_obs obs; /* send buffer: each send completes before it is reused */
  MPI_Request send_req = MPI_REQUEST_NULL;
  int code = 0;
  worker_state w = {comm, coordinator, signals, evs, n_evs, 0, MPI_REQUEST_NULL, NULL, 0, 0, 0, 0, 0};
  for (;;) {
    tell_own_signal(&w);
    take_messages(&w);
    if (w.drop) drop_held(&w, rank, &obs, &send_req, &b);
    if (w.stop) { /* the coordinator has every configuration sent here accounted for */
      MPI_Status st;
      MPI_Probe(coordinator, MPT_TAG_STOP, comm, &st); /* it is there: announced by take_messages */
      if (mpt_wire_recv_stop(comm, &st, &code) != 0) code = 1;
      break;
    }
    if (w.n == 0) {
      wait_for_message(&w, &b, &local);
      continue;
    }
    mpt_wire_work work = next_held(&w);
    if (w.broken) {
      discard(&w, &work);
      continue;
    }
    if (tell_own_signal(&w)) { /* sent before the coordinator heard of the signal */
      discard(&w, &work);
      cancelled_obs(&obs, work.id, rank, w.sig);
      send_obs(&w, &obs, &send_req, &b);
      continue;
    }
    evaluate_one(&w, &work, rank, &obs, &send_req, &b, &local);
  }
  for (int i = 0; i < w.n; i++) discard(&w, &w.queue[i]);
  free(w.queue);
  if (w.req != MPI_REQUEST_NULL) mpt_wire_wait(&w.req, &b);
  if (stats) *stats = local;
  return code;
}

int mpt_worker_evaluate_local(mpt_evaluator *ev, int64_t id, const mpt_watch *progress, mpt_obs *obs,
                              mpt_error *err) {
  int rc = mpt_evaluator_evaluate_watched(ev, id, progress, obs, err);
  if (rc < 0) return rc;
  obs->id = id;
  obs->rank = 0;
  return 0;
}
