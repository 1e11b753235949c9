/* mpi/worker.h: the worker loop of ranks 1..N-1: wait (without spinning) for a config id from the
 * coordinator, evaluate it with the rank's evaluator, send the observation back, until STOP. A signal to
 * the worker alone is told to the coordinator at once (MPT_TAG_SIGNALLED), and the worker takes no more work.
 * Also the in-process evaluation of a one-rank run. */
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

/* The worker's own signals (SIGINT, SIGTERM sent to its process): received() returns the signal's number,
 * 0 while none came; flag (may be NULL) turns non-zero when one comes, to wake an idle wait. */
typedef struct mpt_worker_signals {
  int (*received)(void);
  volatile const int *flag;
} mpt_worker_signals;

/* Serves the coordinator until it sends STOP; returns the status code STOP carried (0: normal end).
 * When the evaluator fails (returns <0) the worker reports it to the coordinator (MPT_TAG_FATAL) and
 * keeps waiting for STOP. When signals says a signal came (checked while idle and, through the watch the
 * worker hands each evaluation, during one) the worker tells the coordinator at once
 * (MPT_TAG_SIGNALLED, once), lets the evaluation in flight finish or be cancelled as the evaluator's own
 * watch decides, and answers any later work with a cancelled observation (evaluated again on --resume)
 * until STOP. signals and stats may be NULL. */
int mpt_worker_run(MPI_Comm comm, int coordinator, mpt_evaluator *ev, const mpt_worker_signals *signals,
                   mpt_worker_stats *stats);
/* The same for a worker serving several jobs (a campaign): evs[j] evaluates the WORK of job j (NULL: a job it
 * does not serve; such work is answered as its evaluator failing would be, FATAL). mpt_worker_run is this with
 * the one evaluator of job 0. */
int mpt_worker_run_jobs(MPI_Comm comm, int coordinator, mpt_evaluator *const *evs, int n_evs,
                        const mpt_worker_signals *signals, mpt_worker_stats *stats);

/* With one rank the coordinator is its own worker: evaluates id in-process with ev, progress (may be
 * NULL) asked in the evaluation's waits before the evaluator's own watch (the coordinator redraws its
 * progress line there), and labels the observation as the worker loop does (id; rank 0). Returns as
 * mpt_evaluator_evaluate. */
int mpt_worker_evaluate_local(mpt_evaluator *ev, int64_t id, const mpt_watch *progress, mpt_obs *obs,
                              mpt_error *err);

#endif
