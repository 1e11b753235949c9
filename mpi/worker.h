/* mpi/worker.h: the worker loop of ranks 1..N-1: wait (without spinning) for a config id from the
 * coordinator, evaluate it with the rank's evaluator, send the observation back, until STOP. */
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

#endif
