/* mpi/worker.c: the worker loop (see mpi/worker.h). Waiting uses MPI_Iprobe + nanosleep back-off so an
 * idle worker leaves its core to compilers. */
#include "mpi/worker.h"
#include <stdio.h>
#include <string.h>
#include "mpi/wire.h"

int mpt_worker_run(MPI_Comm comm, int coordinator, mpt_evaluator *ev, mpt_worker_stats *stats) {
  mpt_worker_stats local = {0, 0, 0};
  int rank;
  MPI_Comm_rank(comm, &rank);
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  mpt_obs obs;            /* send buffer: reused only after its send completed */
  mpt_wire_fatal fatal;
  MPI_Request send_req = MPI_REQUEST_NULL;
  int code = 0;
  for (;;) {
    MPI_Status st;
    double t0 = mpt_wire_now();
    mpt_wire_probe_wait(comm, coordinator, MPI_ANY_TAG, -1, &b, NULL, &st);
    local.wait_s += mpt_wire_now() - t0;
    if (st.MPI_TAG == MPT_TAG_STOP) {
      if (mpt_wire_recv_stop(comm, &st, &code) != 0) code = 1;
      break;
    }
    int64_t id = -1;
    if (mpt_wire_recv_work(comm, &st, &id) != 0) continue; /* unknown message: drained, ignored */
    if (send_req != MPI_REQUEST_NULL) mpt_wire_wait(&send_req, &b);
    mpt_error err;
    mpt_error_clear(&err);
    double t1 = mpt_wire_now();
    int rc = mpt_evaluator_evaluate(ev, id, &obs, &err);
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
