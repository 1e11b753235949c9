/* jobs/job/job_internal.h: private to the job (jobs/job.c and jobs/job/), included by nothing else: the job's
 * state (struct mpt_job), the watch of its evaluations, the record callback's context, and the functions one
 * part of the job calls in another. */
#ifndef MPT_JOBS_JOB_INTERNAL_H
#define MPT_JOBS_JOB_INTERNAL_H
#include <mpi.h>
#include <stdint.h>
#include "coordinator/coordinator.h"
#include "coordinator/virtual.h"
#include "jobs/job.h"
#include "jobs/job_classes.h"
#include "jobs/job_confirm.h"
#include "jobs/job_objective.h"
#include "jobs/runlog/runlog.h"
#include "strategies/strategy.h"

/* The watch of the job's evaluations (mpt_eval_settings.watch): an evaluation in progress is cancelled
 * (its child or compiler killed, logged as cancelled, evaluated again on --resume) on a second signal, once
 * the --grace period after the first has expired, with one rank once the --grace period after the time
 * budget has, and on a worker once the coordinator has sent STOP (it gave up waiting). So --grace bounds
 * the evaluations on every rank, not only the coordinator's wait for them. */
typedef struct evaluation_stop {
  double grace_s;
  double deadline_s;   /* one rank with a time budget, while it coordinates: the cancel time (0: none) */
  MPI_Comm stop_comm;  /* a worker's: where the coordinator's STOP comes from (MPI_COMM_NULL: one rank) */
} evaluation_stop;

/* record callback: append + flush, then (for the kill test) note the id in MPT_TRACE_APPENDS */
typedef struct record_ctx {
  mpt_runlog *log;
  int trace_fd;
  mpt_job_objective *objective; /* sees every observation logged */
  mpt_job_confirm *confirm;     /* and the finalists */
} record_ctx;

struct mpt_job {
  mpt_job_options o;       /* as given, completed: the budget, seed, strategy and options the run goes on with */
  const char *cmd;         /* "tune" or "collect" */
  MPI_Comm comm;
  int rank, size, is_worker, local_rank;
  int budget_given;
  mpt_problem *prob;
  mpt_space *space;
  mpt_strategy *strat;     /* rank 0 */
  mpt_evaluator *ev;       /* workers, or the one rank */
  evaluation_stop stop;    /* the context of ev's watch */
  mpt_runlog *log;         /* rank 0 */
  int64_t n_resumed;       /* observations in the resumed log */
  const char *t4_shown;    /* --t4 as given (o.t4 becomes /dev/fd/N for standard output) */
  char t4_fd_name[32];
  char *t4_logged;         /* --resume: the T4 path the log records (NULL: none) */
  int t4_from_log;
  int32_t default_session; /* --resume: the session of the default's last logged measurement, -1: none */
  mpt_runlog_session_info default_when; /* and its row of /sessions (read before the log is closed) */         /* --resume without --t4: the export goes to t4_logged */
  int t4_fd;               /* standard output set aside for the T4 document, -1: none */
  record_ctx rctx;
  char *cmdline, *optstr, *logged_opts;
  char *eval_optstr;       /* rank 0: the evaluator options the run measures with, one a line, as the log keeps them */
  char *eval_opts_buf;     /* the evaluator options taken from the log (rank 0) or from rank 0 (workers), split */
  char rank_class[64];     /* a worker: the class the command line gives it ("" none: its device's key) */
  unsigned char *absent;   /* rank 0: per rank, 1 for a worker left out (no usable device) */
  mpt_job_classes classes; /* rank 0: the run's class table */
  mpt_strategy *class_strat[MPT_JOB_MAX_CLASSES]; /* rank 0: each class's strategy but the first's (strat) */
  mpt_coord_search searches[MPT_JOB_MAX_CLASSES];
  int n_searches;          /* rank 0: the searches run (classes.n; a campaign's job keeps those of its classes) */
  char priors_desc[4096];  /* the --prior files told, for the log's "priors" attribute */
  int ran;                 /* rank 0: the coordinator ran (res is filled) */
  int run_rc;              /* and what it returned */
  mpt_coord_result res;
  mpt_virtual_result vres; /* --virtual-workers: the projection */
  int64_t default_id;
  int exit_status;
  char from_problem[1536]; /* what the problem's Search and Budget blocks gave (jobs/job_t1.h), "" nothing */
  mpt_job_objective objective; /* rank 0: --objective, the best observation, the Pareto front */
  char objective_text[256];    /* and as the log records it */
  mpt_job_confirm confirm;     /* rank 0: --confirm */
};

/* job_outputs.c: rank 0, before anything runs: what would be replaced, or cannot be written; --t4 - set aside */
int mpt_job_check_outputs(mpt_job *job, mpt_error *err);
int mpt_job_set_t4_aside(mpt_job *job, mpt_error *err);
/* job_resume.c: rank 0: the log to resume (read, checked, its settings taken), or the place of a new one */
int mpt_job_open_log(mpt_job *job, mpt_error *err);
/* job_evaluator.c: this worker's evaluator, watched by the job; the evaluator the workers run (`auto` resolved) */
int mpt_job_open_rank_evaluator(mpt_job *job, mpt_error *err);
const char *mpt_job_workers_evaluator(const mpt_job *job);
/* job_evaluator.c: the --evaluator-option list as one text, one a line (malloc'd; NULL: out of memory); the
 * options taken from such a text (job->o.eval_opts, split in job->eval_opts_buf); and (collective, after the
 * go/no-go) every worker given rank 0's options, which a --resume may have taken from the log */
char *mpt_job_evaluator_options_text(const mpt_job_options *o);
int mpt_job_take_evaluator_options(mpt_job *job, const char *text, mpt_error *err);
int mpt_job_share_evaluator_options(mpt_job *job, mpt_error *err);

#endif
