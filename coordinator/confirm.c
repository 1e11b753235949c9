/* coordinator/confirm.c: the confirmation of the finalists at the end of a run (see confirm.h). */
#include "coordinator/confirm.h"
#include "coordinator/coordinator.h"
#include "coordinator/signals.h"
#include "mpi/wire.h"
#include <stdlib.h>
#include <string.h>

/* one evaluation of id on worker rank `worker`: 0 (o filled), 1 when a signal (to rank 0 or to the worker) stops the
 * confirmation, <0 with err when the worker's evaluator failed */
static int remote_evaluate(const mpt_coord_config *c, int worker, int64_t id, mpt_obs *o, mpt_error *err) {
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  mpt_wire_work send = {id, 0, 0};
  MPI_Request req;
  mpt_wire_send_work(c->comm, worker, &send, &req);
  MPI_Status st;
  for (;;) {
    if (mpt_wire_probe_wait(c->comm, worker, MPI_ANY_TAG, 1.0, &b, mpt_signals_flag(), &st)) break;
    if (mpt_signals_count() > 0) return 1; /* the worker sees the STOP that follows and cancels */
  }
  mpt_wire_wait(&req, &b);
  if (st.MPI_TAG == MPT_TAG_FATAL) {
    mpt_wire_fatal f;
    mpt_wire_recv_fatal(c->comm, &st, &f);
    return mpt_error_set(err, f.code < 0 ? f.code : MPT_ERR_INTERNAL, "rank %d (confirming config id %lld): %s",
                         worker, (long long)f.id, f.msg);
  }
  if (st.MPI_TAG == MPT_TAG_SIGNALLED) {
    int sig = 0;
    mpt_wire_recv_signalled(c->comm, &st, &sig);
    return 1;
  }
  if (mpt_wire_recv_obs(c->comm, &st, o) != 0 || o->id != id)
    return mpt_error_set(err, MPT_ERR_INTERNAL, "protocol error: unexpected message (tag %d) from rank %d while "
                         "confirming", st.MPI_TAG, worker);
  o->rank = worker;
  return 0;
}

static int evaluate(const mpt_coord_config *c, int size, int worker, int64_t id, mpt_obs *o, mpt_error *err) {
  if (size > 1) return remote_evaluate(c, worker, id, o, err);
  int rc = mpt_worker_evaluate_local(c->local, id, NULL, o, err);
  return rc < 0 ? rc : 0;
}

int mpt_coord_confirm_run(const mpt_coord_config *c, int32_t device_class, int worker, int *stopped, mpt_error *err) {
  mpt_coord_confirm cfc = c->confirm, *cf = &cfc;
  *stopped = 0;
  if (cf->k <= 0 || cf->rounds <= 0 || !cf->finalists) return 0;
  if (cf->for_class && !(cf->ctx = cf->for_class(c->confirm.ctx, device_class))) return 0;
  int size;
  MPI_Comm_size(c->comm, &size);
  int64_t *ids = malloc(sizeof *ids * (size_t)(cf->k + 1));
  if (!ids) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int n = cf->finalists(cf->ctx, ids, cf->k), made = 0, rc = 0;
  int64_t base = cf->baseline ? cf->baseline(cf->ctx) : -1;
  int listed = 0;
  for (int i = 0; i < n; i++) listed |= ids[i] == base;
  if (base >= 0 && !listed) ids[n++] = base; /* in the same rounds, after the finalists */
  for (int round = 1; rc == 0 && round <= cf->rounds; round++)
    for (int i = 0; rc == 0 && i < n; i++) {
      if (cf->logged_rounds && cf->logged_rounds(cf->ctx, ids[i]) >= round) continue;
      if (mpt_signals_count() > 0) rc = 1;
      mpt_obs o;
      if (rc == 0) rc = evaluate(c, size, worker, ids[i], &o, err);
      if (rc == 0 && o.status == MPT_STATUS_CANCELLED) rc = 1; /* stopped: no measurement */
      if (rc != 0) break;
      o.confirm = round;
      o.device_class = device_class;
      o.cross_from = 0;
      if ((rc = cf->record(cf->ctx, &o, err)) == 0) made++;
    }
  free(ids);
  *stopped = rc == 1;
  return rc < 0 ? rc : made;
}
