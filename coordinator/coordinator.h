/* coordinator/coordinator.h: the rank-0 loop of a tuning run over a list of searches (coordinator/search.h: one per
 * (job, device class), each a strategy with its own budget over its own workers): warm-start each search's strategy
 * from its logged observations (the other searches' told as related), ask it for as many candidates as its workers
 * have room for (each holds 1 + lookahead; batched ask), dispatch them without blocking, take results in whatever
 * order workers finish, record each one (log, flushed) BEFORE telling the strategy, and stop on the evaluation budget,
 * the time budget, an exhausted space, SIGINT/SIGTERM or an error. Cancelled and missing observations are logged but
 * are no measurements: neither counts against the budget; a missing one is told to the strategy (as a failure: it
 * never proposes it again). With one rank it evaluates in-process. Once every search is finished, each one's best is
 * measured on the other classes (coordinator/cross.h). The log is reached through a callback so the coordinator does
 * not depend on jobs/. */
#ifndef MPT_COORDINATOR_H
#define MPT_COORDINATOR_H
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include "spaces/sys/obs.h"
#include "spaces/sys/error.h"
#include "strategies/strategy.h"
#include "mpi/worker.h"
#include "coordinator/progress.h"
#include "coordinator/confirm.h"

/* Records one observation durably (e.g. appends it to the run log and flushes); <0 stops the run. */
typedef int (*mpt_coord_record_fn)(void *ctx, const mpt_obs *obs, mpt_error *err);
/* Calls fn(fn_ctx, obs, config) for each logged observation in append order (e.g. mpt_runlog_each); <0 on
 * error, or fn's first negative return. */
typedef int (*mpt_coord_each_fn)(void *src, int (*fn)(void *fn_ctx, const mpt_obs *o, const int32_t *config),
                                 void *fn_ctx, mpt_error *err);

typedef struct mpt_coord_result mpt_coord_result;
#define MPT_COORD_MAX_LOOKAHEAD 32

typedef struct mpt_coord_config {
  MPI_Comm comm;               /* rank 0 (the caller) coordinates; the workers run mpt_worker_run */
  mpt_evaluator *local;        /* with one rank: the in-process evaluator (mpt_worker_evaluate_local) */
  /* the searches (coordinator/search.h: one per (job, device class)); NULL: one search over every rank
   * 1..size-1 (or the one rank) made of strategy, budget, default_id and default_first below */
  struct mpt_coord_search *searches;
  int n_searches;
  const int *workers;          /* the one search's worker ranks (searches NULL): NULL every rank 1..size-1; ranks
                                  not listed (model ranks, workers left out) get no work, only the STOP at the end */
  int n_workers;
  int cross;                   /* with several searches: once they are finished, each one's best configuration is
                                  measured on every other class of its job (coordinator/cross.h) */
  int transfer;                /* each observation of a search is told to the other searches of its job as
                                  related (mpt_strategy_tell_related, source: its device class) */
  mpt_strategy *strategy;
  const mpt_space *space;
  int64_t budget;              /* evaluations in total, logged ones included (> 0) */
  double time_budget;          /* seconds for this session (0: none) */
  double grace_s;              /* after SIGINT/SIGTERM, or once the time budget is spent: wait this long
                                  for in-flight evaluations, then record them as cancelled (a second
                                  signal cancels at once) */
  mpt_coord_each_fn resume_each; /* resume: the observations already in the log, read from resume_src in */
  void *resume_src;              /* blocks (memory independent of its length); NULL: none */
  int64_t default_id;          /* the problem's default configuration (-1: none); its result is reported */
  int default_first;           /* evaluate default_id before anything else when it is not logged yet */
  mpt_coord_record_fn record;
  void *record_ctx;
  mpt_progress_mode progress;
  FILE *progress_out;          /* stderr normally */
  mpt_coord_confirm confirm;   /* --confirm: the finalists measured again once the budget or the space is spent
                                  (coordinator/confirm.h); k 0: none */
  int lookahead;               /* configurations a worker holds beyond the one it evaluates (compiled ahead while it
                                  evaluates; 0..MPT_COORD_MAX_LOOKAHEAD); a stop makes the workers answer those not
                                  started as cancelled (evaluated again on --resume) */
} mpt_coord_config;

struct mpt_coord_result {
  const char *reason;          /* "budget", "time", "exhausted", "signal", "error", or "waiting" (every search
                                  with workers finished, one without workers has not) */
  int signal;                  /* the signal that stopped the run (rank 0's, else the one a worker told of),
                                  0 if none */
  int stopped_rank;            /* reason "signal" without one to rank 0: the worker rank a signal of its own
                                  stopped (it told of it, or cancelled its evaluation); 0 otherwise */
  int64_t done;                /* evaluations counted against the budget (logged + new, not cancelled, not
                                  missing) */
  int64_t new_evals;           /* evaluations recorded in this session */
  int64_t valid, failed;       /* among done */
  int64_t cancelled;           /* recorded as cancelled in this session */
  int64_t missing;             /* recorded as missing (a replayed file lacks them: no measurement, not counted
                                  against the budget, told to the strategy as failed), logged + new */
  int64_t best_id;             /* -1 when no valid observation */
  double best;                 /* its objective (NAN when none) */
  double wall_s;               /* this session's loop, wall time */
  double wait_s;               /* of which waiting for results (sleeping) */
  double busy_s;               /* coordinator's own time: wall_s - wait_s (ask, dispatch, log, tell) */
  double cpu_s;                /* CPU time of the coordinator process during the loop (getrusage) */
  double eval_s;               /* sum over this session's observations of t_end - t_start (worker time) */
  double device_s;             /* sum over this session's observations of benchmark_ms: the devices' work (module
                                  load to the end of the timed runs) */
  int n_workers;
  int default_seen;            /* default_id was evaluated (this session or logged) */
  int default_logged;          /* the default_objective is a logged one (an earlier session's), not this one's */
  int default_missing;         /* default_id is missing from the replayed file (logged as missing) */
  double default_objective;    /* its objective (NAN when it failed) */
  int64_t asks;                /* the strategy asked in this session (results that arrived together are all taken
                                  before one ask for every worker with room) */
  int64_t confirmed;           /* re-measurements of the finalists made in this session (--confirm) */
  char ask_stopped[160];       /* what the strategy's last ask was doing when the run's stop made it give up
                                  (MPT_ERR_STOPPED: "bo: stopped taking in logged observations (80 of 300)"),
                                  "" when no ask was cut short */
};

#include "coordinator/search.h"

/* Runs the loop on rank 0. Always ends by sending STOP to every worker (status 0, or 1 on error).
 * Returns 0 (result filled, reason says why it stopped) or <0 with err filled (reason "error"). */
int mpt_coord_run(const mpt_coord_config *c, mpt_coord_result *r, mpt_error *err);

#endif
