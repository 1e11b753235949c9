/* jobs/job.c: the job object (jobs/job.h) opened and closed: its set-up on every rank, phase by phase (place,
 * problem and space, budget, outputs, log, strategy, objective, confirmation, priors) and the go/no-go, and its
 * close. Its other parts are in jobs/job/ (jobs/README.md): outputs checked, the log resumed, the evaluator,
 * the run's start, the coordinator and workers, the report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "jobs/job/job_internal.h"
#include "coordinator/signals.h"
#include "jobs/cli/commands.h"
#include "jobs/job_t1.h"
#include "jobs/prior.h"
#include "mpi/device.h"
#include "mpi/wire.h"
#include "spaces/space.h"
#include "spaces/t1.h"
#include "strategies/bo/bo_dist.h"

/* ---- open: the phases ---- */

/* this rank's place: coordinator and/or worker, and its node-local rank among the workers (collective) */
static int take_place(mpt_job *job, mpt_error *err) {
  job->comm = job->o.model_ranks > 0 ? job->o.comm : MPI_COMM_WORLD; /* without the model ranks */
  MPI_Comm_rank(job->comm, &job->rank);
  MPI_Comm_size(job->comm, &job->size);
  job->is_worker = job->size == 1 || job->rank > 0;
  job->local_rank = -1;
  int local_count = 0;
  if (mpt_device_local_rank(job->comm, job->is_worker, &job->local_rank, &local_count) != 0)
    return mpt_error_set(err, MPT_ERR_INTERNAL, "cannot determine the node-local rank");
  /* the most workers on one node: the compile jobs and the lookahead follow from the cores each one has */
  MPI_Allreduce(&local_count, &job->o.node_workers, 1, MPI_INT, MPI_MAX, job->comm);
  return 0;
}

/* the problem and its space, with the problem's warnings as mptune space gives them (a condition that fails
 * to evaluate, a Default not among the values), once; an empty space is an error that says its cause */
static int load_space(mpt_job *job, mpt_error *err) {
  const char *cmd = job->cmd, *problem = job->o.problem;
  int rc = mpt_cmd_load_problem(problem, &job->prob, err);
  if (rc) return rc;
  if (!job->o.collect && !job->o.resume && !mpt_job_t1_has_budget(&job->o, job->prob)) /* resume: the logged one */
    return mpt_error_set(err, MPT_ERR_VALUE, "give an evaluation budget (--budget N) and/or a time budget (--time "
                         "SECONDS), or a Budget block in %s", problem);
  rc = mpt_cmd_build_space(cmd, job->rank == 0, job->prob, &job->space, err);
  if (rc < 0 && strncmp(err->msg, problem, strlen(problem)) != 0) mpt_error_prefix(err, "%s", problem);
  if (rc < 0 && mpt_signals_count() > 0) err->code = rc = MPT_ERR_STOPPED; /* stopped by a signal */
  for (int i = 0; job->rank == 0 && i < job->prob->n_warnings; i++)
    fprintf(stderr, "mptune %s: warning: %s\n", cmd, job->prob->warnings[i]);
  const char *ew = rc == 0 ? mpt_space_eval_warning(job->space) : NULL;
  if (job->rank == 0 && ew && mpt_space_size(job->space) > 0) fprintf(stderr, "mptune %s: warning: %s\n", cmd, ew);
  int first_line = ew ? (int)strcspn(ew, "\n") : 0; /* the cause is said there, before the expression and caret */
  if (rc == 0 && mpt_space_size(job->space) == 0)
    rc = ew ? mpt_error_set(err, MPT_ERR_VALUE, "%.*s; so the search space has no valid configuration%s", first_line,
                            ew, ew + first_line)
            : mpt_error_set(err, MPT_ERR_VALUE, "%s: the search space has no valid configuration", problem);
  return rc;
}

/* a fresh tune run: the strategy and budget of the problem's Search and Budget blocks where the command line
 * gives none (a resume goes on with the logged ones, a collection evaluates everything) */
static int apply_problem_blocks(mpt_job *job, mpt_error *err) {
  if (job->o.collect || job->o.resume) return 0;
  char search[768], budget[768];
  int rc = mpt_job_t1_search(&job->o, job->prob, search, sizeof search, err);
  if (rc) return rc;
  mpt_job_t1_budget(&job->o, job->prob, mpt_space_size(job->space), budget, sizeof budget);
  snprintf(job->from_problem, sizeof job->from_problem, "%s%s%s", search, search[0] && budget[0] ? "\n" : "", budget);
  return 0;
}

/* collect: every configuration; tune with --time only (or a resume, which reads the log's): all of them */
static void settle_budget(mpt_job *job) {
  if (job->o.collect) job->o.budget = mpt_space_size(job->space);
  job->budget_given = job->o.budget > 0;
  if (job->o.budget < 0) job->o.budget = mpt_space_size(job->space);
}

/* rank 0: the strategy, seeded by --seed, the log's seed or the clock */
static int create_strategy(mpt_job *job, mpt_error *err) {
  mpt_job_options *o = &job->o;
  if (!o->seed_given) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    o->seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec;
    o->seed %= 1000000000000ull;
  }
  int rc = mpt_strategy_create(o->strategy, job->space, o->opts, o->n_opts, o->seed, o->budget, &job->strat, err);
  if (rc == 0 && o->model_ranks > 0) rc = mpt_bo_use_model_ranks(job->strat, o->model_comm, err);
  return rc;
}

/* rank 0: --objective, the one a resumed log was tuned for (the workers score with the one given: no other) */
static int open_objective(mpt_job *job, mpt_error *err) {
  int rc = mpt_job_objective_open(&job->objective, job->o.objective, job->prob, job->space, err);
  if (rc == 0) rc = mpt_job_objective_check_evaluator(&job->objective, job->o.evaluator, mpt_job_workers_evaluator(job),
                                                      job->o.problem, err);
  if (rc) return rc;
  mpt_objective_describe(&job->objective.obj, job->objective_text, sizeof job->objective_text);
  const char *logged = job->o.resume ? mpt_runlog_meta(job->log, "objective") : NULL;
  if (job->o.resume && (!logged || !logged[0]) && mpt_runlog_recovered(job->log)) return 0; /* lost: as given */
  if (!logged || !logged[0]) logged = "time"; /* a log of format 3 or older */
  if (job->o.resume && strcmp(logged, job->objective_text) != 0)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s was tuned for --objective %s: resume it with that objective (its "
                         "logged objectives are in that unit), not %s", job->o.log, logged, job->objective_text);
  return 0;
}

/* rank 0: --confirm, with the confirmations a resumed log holds */
static int open_confirm(mpt_job *job, mpt_error *err) {
  mpt_job_confirm_init(&job->confirm, job->o.collect ? 0 : job->o.confirm_k);
  if (!job->o.resume || job->confirm.k == 0) return 0;
  return mpt_runlog_confirmations(job->log, &job->confirm.logged, &job->confirm.n_logged, err);
}

/* this rank's part of the set-up, phase by phase until one fails */
static int set_up(mpt_job *job, mpt_error *err) {
  int rc = take_place(job, err);
  if (rc == 0) rc = load_space(job, err);
  if (rc == 0) rc = apply_problem_blocks(job, err);
  if (rc == 0) settle_budget(job);
  if (rc == 0 && job->rank == 0) rc = mpt_job_check_outputs(job, err);
  if (rc == 0 && job->rank == 0) rc = mpt_job_set_t4_aside(job, err);
  if (rc == 0 && job->rank == 0) rc = mpt_job_open_log(job, err);
  if (rc == 0 && job->rank == 0) rc = create_strategy(job, err);
  if (rc == 0 && job->rank == 0) rc = open_objective(job, err);
  if (rc == 0 && job->rank == 0) rc = open_confirm(job, err);
  if (rc == 0) rc = mpt_job_class_ranks_check(&job->o, job->size, err);
  if (rc == 0 && job->rank == 0 && job->o.n_priors > 0)
    rc = mpt_prior_tell(job->o.priors, job->o.n_priors, job->space, job->strat, job->priors_desc, sizeof job->priors_desc, err);
  return rc;
}

/* ours where Kernel Tuner's name of a strategy was given (bayes_opt: bo): the log keeps ours, a resume
 * compares ours; an unknown name is left for the strategy's creation to refuse */
static void canonical_strategy(mpt_job_options *o) {
  const mpt_strategy_type *t = o->strategy ? mpt_strategy_find(o->strategy) : NULL;
  if (t) o->strategy = t->name;
}

int mpt_job_open(const mpt_job_options *o, mpt_job **out, mpt_error *err) {
  *out = NULL;
  mpt_job *job = calloc(1, sizeof *job);
  if (!job) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  job->o = *o;
  canonical_strategy(&job->o);
  job->cmd = o->collect ? "collect" : "tune";
  job->t4_shown = o->t4;
  job->t4_fd = -1;
  job->default_session = -1;
  job->rctx.trace_fd = -1;
  job->exit_status = 1;
  int rc = set_up(job, err);
  /* go/no-go: any rank's error stops every rank now */
  int all = mpt_wire_gonogo(job->comm, rc, err);
  if (all == 0) {
    rc = mpt_job_share_evaluator_options(job, err); /* a resume may have taken the logged ones */
    if (rc == 0 && job->is_worker) rc = mpt_job_open_rank_evaluator(job, err);
    all = mpt_job_workers_gonogo(job->comm, job->is_worker, job->cmd, rc, &job->absent, err);
  }
  if (all < 0) {
    mpt_job_close(job);
    return rc < 0 ? rc : all;
  }
  *out = job;
  return 0;
}

void mpt_job_close(mpt_job *job) {
  if (!job) return;
  if (job->t4_fd >= 0) close(job->t4_fd);
  if (job->rctx.trace_fd >= 0) close(job->rctx.trace_fd);
  if (job->log) mpt_runlog_close(job->log);
  if (job->strat) mpt_strategy_destroy(job->strat);
  mpt_job_objective_close(&job->objective);
  mpt_job_confirm_free(&job->confirm);
  for (int k = 1; k < MPT_JOB_MAX_CLASSES; k++)
    if (job->class_strat[k]) mpt_strategy_destroy(job->class_strat[k]);
  mpt_job_classes_free(&job->classes);
  free(job->absent);
  if (job->ev) mpt_evaluator_close(job->ev);
  if (job->space) mpt_space_free(job->space);
  if (job->prob) mpt_problem_free(job->prob);
  free(job->cmdline);
  free(job->optstr);
  free(job->logged_opts);
  free(job->eval_optstr);
  free(job->eval_opts_buf);
  free(job->t4_logged);
  free(job);
}
