/* coordinator/workers.c: the several-rank loop (coordinator/pool_internal.h): rank 0 dispatches, waits for
 * a message (MPI_Iprobe with back-off), takes a worker's result, fatal error or signal, and stops: DROP for
 * what is held beyond what is evaluated, --grace for what is in flight, then the confirmation. */
#include "coordinator/pool_internal.h"
#include <string.h>
#include "coordinator/signals.h"
#include "mpi/wire.h"

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

/* whether a message is already waiting: results that arrived together are all taken before the next dispatch,
 * so the strategy is asked once for every worker they freed (one ask of k instead of k asks of 1) */
static int message_waiting(MPI_Comm comm) {
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
  return flag;
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

int run_workers(coord_state *s, int size, mpt_error *err) {
  const mpt_coord_config *c = s->c;
  worker_pool p;
  int rc = pool_open(s, &p, size, err);
  if (rc < 0) {
    p.rc = rc;
    pool_close(s, &p);
    return rc;
  }
  for (int more = 0;; more = !p.stopping && message_waiting(c->comm)) {
    double now = mpt_wire_now();
    if (!p.stopping) {
      p.stopping = check_stop(s, now);
      if (p.stopping) p.t_stop = now;
    }
    if (!p.stopping && !more && dispatch(s, &p, err))
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
