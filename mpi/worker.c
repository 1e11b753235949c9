/* mpi/worker.c: the worker loop (see mpi/worker.h). Waiting uses MPI_Iprobe + nanosleep back-off so an
 * idle worker leaves its core to compilers. */
#include "mpi/worker.h"
#include <stdio.h>
#include <string.h>
#include "mpi/wire.h"
#include "spaces/sys/signame.h"

/* The notice of the worker's own signal, sent once: the worker loop's state, the context of the watch it
 * hands each evaluation. */
typedef struct own_signal {
  MPI_Comm comm;
  int coordinator;
  const mpt_worker_signals *signals;
  int sig;             /* the signal told (the send buffer), 0 before */
  MPI_Request req;
} own_signal;

/* tells the coordinator of a signal to this worker when one came; returns 1 once it is told */
static int tell_own_signal(own_signal *own) {
  if (own->sig) return 1;
  if (!own->signals || !own->signals->received) return 0;
  int sig = own->signals->received();
  if (!sig) return 0;
  own->sig = sig;
  mpt_wire_send_signalled(own->comm, own->coordinator, &own->sig, &own->req);
  return 1;
}

/* the watch of an evaluation (its waits ask it at least every 100 ms): tells a signal at once; whether the
 * evaluation stops is the evaluator's own watch's word (the run's stop and its --grace) */
static int own_signal_watch(void *ctx, const char *doing, double done) {
  (void)doing;
  (void)done;
  tell_own_signal(ctx);
  return 0;
}

/* work that came after the worker's own signal: given back, cancelled (evaluated again on --resume) */
static void refused_obs(mpt_obs *o, int64_t id, int rank, int sig) {
  mpt_obs_init(o, id);
  o->status = MPT_STATUS_CANCELLED;
  o->rank = rank;
  snprintf(o->reason, sizeof o->reason, "cancelled: worker rank %d received %s and takes no more work", rank,
           mpt_signal_name(sig));
}

int mpt_worker_run(MPI_Comm comm, int coordinator, mpt_evaluator *ev, const mpt_worker_signals *signals,
                   mpt_worker_stats *stats) {
  mpt_worker_stats local = {0, 0, 0};
  int rank;
  MPI_Comm_rank(comm, &rank);
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  mpt_obs obs;            /* send buffer: reused only after its send completed */
  mpt_wire_fatal fatal;
  MPI_Request send_req = MPI_REQUEST_NULL;
  int code = 0;
  own_signal own = {comm, coordinator, signals, 0, MPI_REQUEST_NULL};
  const mpt_watch watch = {own_signal_watch, &own};
  for (;;) {
    MPI_Status st;
    int told = tell_own_signal(&own);
    volatile const int *wake = !told && signals ? signals->flag : NULL; /* a first signal ends an idle wait */
    double t0 = mpt_wire_now();
    int got = mpt_wire_probe_wait(comm, coordinator, MPI_ANY_TAG, -1, &b, wake, &st);
    local.wait_s += mpt_wire_now() - t0;
    if (!got) continue; /* woken by a signal: told at the top */
    if (st.MPI_TAG == MPT_TAG_STOP) {
      if (mpt_wire_recv_stop(comm, &st, &code) != 0) code = 1;
      break;
    }
    mpt_wire_work work = {-1, 0, 0};
    if (mpt_wire_recv_work(comm, &st, &work) != 0) continue; /* unknown message: drained, ignored */
    int64_t id = work.id;
    if (send_req != MPI_REQUEST_NULL) mpt_wire_wait(&send_req, &b);
    if (tell_own_signal(&own)) { /* sent before the coordinator heard of the signal */
      refused_obs(&obs, id, rank, own.sig);
      mpt_wire_send_obs(comm, coordinator, &obs, &send_req);
      continue;
    }
    mpt_error err;
    mpt_error_clear(&err);
    double t1 = mpt_wire_now();
    int rc = mpt_evaluator_evaluate_watched(ev, id, &watch, &obs, &err);
    local.busy_s += mpt_wire_now() - t1;
    mpt_backoff_hold(&b, MPT_BACKOFF_HOLD_S); /* the coordinator answers quickly after a result */
    if (rc < 0) {
      memset(&fatal, 0, sizeof fatal);
      fatal.id = id;
      fatal.code = rc;
      snprintf(fatal.msg, sizeof fatal.msg, "%s", err.msg[0] ? err.msg : "evaluator failed");
      MPI_Isend(&fatal, (int)sizeof fatal, MPI_BYTE, coordinator, MPT_TAG_FATAL, comm, &send_req);
      continue;
    }
    obs.id = id;
    obs.rank = rank;
    mpt_wire_send_obs(comm, coordinator, &obs, &send_req);
    local.evaluations++;
  }
  if (send_req != MPI_REQUEST_NULL) mpt_wire_wait(&send_req, &b);
  if (own.req != MPI_REQUEST_NULL) mpt_wire_wait(&own.req, &b);
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
