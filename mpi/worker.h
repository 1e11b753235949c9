/* mpi/worker.h: the worker loop of ranks 1..N-1: wait (without spinning) for a config id from the
 * coordinator, evaluate it with the rank's evaluator, send the observation back, until STOP; and the
 * in-process evaluation of a one-rank run. */
#ifndef MPT_WORKER_H
#define MPT_WORKER_H
#include <mpi.h>
#include <stdint.h>
#include "evaluators/evaluator.h"
#include "spaces/sys/error.h"

typedef struct mpt_worker_stats {
  int64_t evaluations;   /* observations sent */
  double busy_s;         /* wall time inside the evaluator */
  double wait_s;         /* wall time waiting for work */
} mpt_worker_stats;

/* Serves the coordinator until it sends STOP; returns the status code STOP carried (0: normal end).
 * When the evaluator fails (returns <0) the worker reports it to the coordinator (MPT_TAG_FATAL) and
 * keeps waiting for STOP. stats may be NULL. */
int mpt_worker_run(MPI_Comm comm, int coordinator, mpt_evaluator *ev, mpt_worker_stats *stats);

/* With one rank the coordinator is its own worker: evaluates id in-process with ev, progress (may be
 * NULL) asked in the evaluation's waits before the evaluator's own watch (the coordinator redraws its
 * progress line there), and labels the observation as the worker loop does (id; rank 0). Returns as
 * mpt_evaluator_evaluate. */
int mpt_worker_evaluate_local(mpt_evaluator *ev, int64_t id, const mpt_watch *progress, mpt_obs *obs,
                              mpt_error *err);

#endif
