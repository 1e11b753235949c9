/* jobs/job.h: a job, what a user submits (`tune`, `collect`), from its parsed options to its summary, on
 * every rank of MPI_COMM_WORLD. Open: every rank reads the T1 file and builds the same space (a fresh tune run
 * takes the strategy and budget the command line does not give from its Search and Budget blocks:
 * jobs/job_t1.h); rank 0 checks
 * the run (that no output replaces an input, the kernel's files included, and that every output's directory
 * is writable; the log to resume or to create) and creates the strategy; the workers (or the one rank) open
 * their evaluator bound to their node-local device; a go/no-go makes every rank fail together. Run: the
 * device table, rank 0 starts the log and runs the coordinator loop while the workers serve it. Report:
 * rank 0 finishes the log and prints the summary and the T4 export. Rank 0 owns the run log: one flushed
 * record per evaluation.
 * Test hook: with MPT_TRACE_APPENDS=FILE the coordinator appends "id status" to FILE after each record is
 * flushed to the log (the SIGKILL test checks that every traced record survives). */
#ifndef MPT_JOB_H
#define MPT_JOB_H
#include <mpi.h>
#include <stdint.h>
#include "coordinator/progress.h"
#include "evaluators/evaluator.h"
#include "spaces/sys/error.h"
#include "jobs/job_classes.h"

#define MPT_JOB_MAX_OPTS 64
/* the run log's evaluator setting of a projection on a virtual clock (never resumed) */
#define MPT_JOB_VIRTUAL_EVALUATOR "sim-virtual"

/* What the user asked for (jobs/cli/cmd_tune.c parses it). Strings are borrowed: they must outlive the job. */
typedef struct mpt_job_options {
  int collect;             /* 1: collect (brute force over the whole valid set), 0: tune */
  const char *problem;     /* the T1 file */
  const char *strategy;    /* its name (collect: brute_force) */
  int strategy_given;      /* --strategy was given (a resume otherwise goes on with the logged one) */
  int64_t budget;          /* evaluations; -1: not given */
  double time_budget;      /* seconds; 0: none */
  uint64_t seed;
  int seed_given;
  const char *log;         /* the run log */
  const char *t4;          /* the T4 export (NULL: none) */
  int resume, force;
  int reopen;              /* resume: a log finished by its budget or time budget is reopened even when budget does
                              not exceed its fullest class (a campaign found a class below its own budget) */
  const char *simulate;    /* the replayed file (NULL: real evaluations; with simulated classes the first's) */
  char sim_class[MPT_JOB_MAX_CLASSES][64]; /* --simulate CLASS=FILE: the simulated classes (jobs/job_classes.h) */
  const char *sim_file[MPT_JOB_MAX_CLASSES];
  int n_sim;
  const char *class_ranks[MPT_JOB_MAX_CLASSES]; /* --class-ranks CLASS=R1,R2,...: ranks given a class */
  int n_class_ranks;
  int no_cross;            /* --no-cross: no portability table (each class's best measured on the others) */
  int no_transfer;         /* --no-transfer: a class's observations are not told to the other classes' searches */
  double simulate_delay;
  int virtual_workers;     /* --virtual-workers N: rank 0 alone projects the run onto N simulated workers on a
                              virtual clock (coordinator/virtual.h), each evaluation simulate_delay times its
                              recorded time; 0: a real run */
  int virtual_cpu_time;    /* --virtual-time cpu: rank 0's work counts its CPU time on the virtual clock */
  int simulate_skip_missing; /* --simulate-missing skip: a configuration the file lacks is logged as missing */
  const char *evaluator;    /* its name; "auto" (the default without --simulate): picked per worker */
  const char *objective;   /* --objective (evaluators/objective.h); NULL: time */
  int confirm_k;           /* --confirm K: the K best measured again at the end (jobs/job_confirm.h); 0: none */
  const char *opts[MPT_JOB_MAX_OPTS]; /* the strategy's key=value options */
  int n_opts;
  const char *eval_opts[MPT_JOB_MAX_OPTS]; /* the evaluator's key=value options (--evaluator-option) */
  int n_eval_opts;
  double timeout_s;        /* per evaluation (0: derived) */
  int iterations;          /* timed runs per evaluation (0: the problem's) */
  const char *workdir;
  double grace_s;          /* for in-flight evaluations after SIGINT/SIGTERM or the time budget */
  int compile_jobs;        /* --compile-jobs: compiles at once per worker (0: from the node's cores per worker) */
  int lookahead;           /* --lookahead: configurations a worker holds beyond the one it runs (-1: default) */
  int node_workers;        /* completed by the job: the most workers on one node (0: unknown) */
  mpt_progress_mode progress;
  const char *priors[32];  /* --prior files (jobs/prior.h), told to the strategy before its first ask */
  int n_priors;
  int argc;                /* the command line, logged */
  char **argv;
  int no_device_table;     /* the device table is not printed (a campaign prints it with its first job only) */
  const mpt_device_info *device; /* a worker of several jobs: its device as another job's evaluator described it
                              (mpt_job_device); given, the worker opens no evaluator for this job (a campaign's
                              job its class does not run) and the device table shows this one. NULL: it opens one */
  int model_ranks;         /* --model-ranks K (> 0): the job runs on comm (rank 0 and the workers) and bo's model
                              on model_comm (rank 0 and the K model ranks, which serve it: gp/gp_slices.h) */
  MPI_Comm comm, model_comm;
} mpt_job_options;

typedef struct mpt_job mpt_job;

/* An error naming the output when the run log or the T4 export of o would replace the input path (what:
 * how to name it); 0 otherwise. */
int mpt_job_refuse_input(const mpt_job_options *o, const char *what, const char *path, mpt_error *err);

/* The evaluator a job's worker opens: o's evaluator with o's settings (the replayed file and its delay, the
 * timeout, the iterations, the scratch directory), bound to the device of node-local rank local_rank and
 * watched by watch ({NULL}: none). `mptune devices FILE.json` opens it so too, as a run would. */
int mpt_job_open_evaluator(const mpt_job_options *o, const mpt_problem *p, const mpt_space *s, int rank,
                           int local_rank, mpt_watch watch, mpt_evaluator **out, mpt_error *err);

/* Opens the job on every rank (collective; the caller has installed coordinator/signals.h's handlers).
 * Returns 0 with *out set, or, when any rank failed, <0 on every rank (this rank's own code when it failed
 * itself: MPT_ERR_STOPPED when a signal stopped the space's build) with the message on rank 0 in err;
 * nothing was written then. */
int mpt_job_open(const mpt_job_options *o, mpt_job **out, mpt_error *err);
/* Runs the job (collective): the device table, then rank 0 starts the log and coordinates while the other
 * ranks serve as workers. <0 on rank 0 when the log could not be started or the run failed (err says why;
 * the workers were stopped); a worker returns 0 (its exit status says how it ended). */
int mpt_job_run(mpt_job *job, mpt_error *err);
/* The parts of mpt_job_run, for a run of several jobs in one coordinator loop (a campaign, jobs/campaign/):
 * mpt_job_start: the device table and, on rank 0, the log's session (collective; on its failure the workers are
 * stopped). mpt_job_coord_config (rank 0, more than one rank): the coordinator settings of this job alone, its
 * searches (one per device class, job index 0) carrying the job's space, record callback and resumed log; <0 with
 * err (nothing stopped). mpt_job_keep_searches: the job runs its first n searches only (the caller moved the
 * ones it keeps there). mpt_job_serve (workers): serves the coordinator with each job's evaluator (jobs[j]'s
 * for the WORK of job j) until STOP, each job's exit status set. mpt_job_take_result (rank 0): the job's part of
 * the run's result (its searches' totals; finished when they all are, else the run's reason), for
 * mpt_job_report. */
int mpt_job_start(mpt_job *job, mpt_error *err);
/* A worker's device as the job's evaluator describes it (or as o.device gives it), with the class the command
 * line gives the rank (device_class filled). */
void mpt_job_device(const mpt_job *job, mpt_device_info *out);
int mpt_job_coord_config(mpt_job *job, struct mpt_coord_config *cc, mpt_error *err);
void mpt_job_keep_searches(mpt_job *job, int n);
void mpt_job_serve(mpt_job *const *jobs, int n);
void mpt_job_take_result(mpt_job *job, int rc, const struct mpt_coord_result *all);
/* 1 when this rank opened an evaluator for the job (a worker with a usable device, not told o.device) */
int mpt_job_evaluator_open(const mpt_job *job);
/* Rank 0: what the run came to. After a failed run, how far it got and that --resume continues it (the
 * error itself is the caller's to say, first); after a run, the log finished, the summary and the T4
 * export, <0 with err when the log or the export fails. Other ranks: nothing. */
int mpt_job_report(mpt_job *job, mpt_error *err);
/* The process exit status: 0; 130 or 143 (128 + the signal) when a signal stopped the run, 1 when a signal
 * to one worker alone did or anything failed. */
int mpt_job_exit_status(const mpt_job *job);
void mpt_job_close(mpt_job *job);

#endif
