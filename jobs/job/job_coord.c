/* jobs/job/job_coord.c: a job's run after its start: rank 0's coordinator settings (searches, record callback,
 * resumed log, lookahead) and loop, real or on a virtual clock; the workers serving it; a campaign's share of a
 * shared run. Rank 0 owns the log here: one flushed record per evaluation (and the MPT_TRACE_APPENDS hook). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "jobs/job/job_internal.h"
#include "coordinator/signals.h"
#include "jobs/prior.h"
#include "mpi/wire.h"
#include "mpi/worker.h"
#include "spaces/space.h"
#include "spaces/sys/clock.h"

/* the coordinator's warm start reads a resumed log block by block; the session of the default's
 * measurement is noted on the way (the summary says when it was an earlier one) */
typedef struct resume_walk {
  mpt_job *job;
  int (*fn)(void *ctx, const mpt_obs *o, const int32_t *config);
  void *ctx;
} resume_walk;

static int walk_one(void *ctx, const mpt_obs *o, const int32_t *config, int32_t session) {
  resume_walk *w = ctx;
  if (o->id == w->job->default_id && o->status != MPT_STATUS_MISSING && o->status != MPT_STATUS_CANCELLED)
    w->job->default_session = session;
  mpt_job_objective_see(&w->job->objective, o);
  mpt_job_confirm_see(&w->job->confirm, o);
  return w->fn(w->ctx, o, config);
}

static int log_each(void *src, int (*fn)(void *ctx, const mpt_obs *o, const int32_t *config), void *ctx,
                    mpt_error *err) {
  resume_walk w = {src, fn, ctx};
  return mpt_runlog_each_session(w.job->log, walk_one, &w, err);
}

static int record_obs(void *ctx, const mpt_obs *o, mpt_error *err) {
  record_ctx *rc = ctx;
  int r = mpt_runlog_append(rc->log, o, 1, err);
  if (r < 0) return r;
  mpt_job_objective_see(rc->objective, o);
  mpt_job_confirm_see(rc->confirm, o);
  if (rc->trace_fd >= 0) {
    char line[64];
    int n = snprintf(line, sizeof line, "%" PRId64 " %d\n", o->id, (int)o->status);
    if (write(rc->trace_fd, line, (size_t)n) != n) { /* tracing is best effort */ }
  }
  return 0;
}

/* a re-measurement of a finalist (--confirm, stamped with its device class): logged apart from the evaluations */
static int record_confirmation(void *ctx, const mpt_obs *o, mpt_error *err) {
  record_ctx *rc = ctx;
  return mpt_runlog_append_confirmation(rc->log, o, err);
}

/* --lookahead, else as many as a worker compiles at once (mpt_evaluator_default_jobs for the node with the most
 * workers), at most 8: each one more is one more configuration the strategy chooses before it hears of the
 * ones before (bo fantasizes them) */
static int default_lookahead(const mpt_job *job) {
  const mpt_job_options *o = &job->o;
  if (o->lookahead >= 0) return o->lookahead;
  const char *name = mpt_job_workers_evaluator(job);
  const mpt_evaluator_type *t = mpt_evaluator_find(name);
  if (!t || !t->ahead) return 0; /* nothing to compile ahead (sim) */
  int jobs = o->compile_jobs > 0 ? o->compile_jobs : mpt_evaluator_default_jobs(name, o->node_workers);
  return jobs < 1 ? 1 : jobs > 8 ? 8 : jobs;
}

int mpt_job_coord_config(mpt_job *job, mpt_coord_config *c, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  const char *trace = getenv("MPT_TRACE_APPENDS");
  if (trace && trace[0]) job->rctx.trace_fd = open(trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  job->rctx.log = job->log;
  job->rctx.objective = &job->objective;
  job->rctx.confirm = &job->confirm;
  job->default_id = mpt_space_default_id(job->space);
  job->confirm.default_id = job->default_id; /* measured again with the finalists: the speed-up's baseline */
  mpt_coord_config cc;
  memset(&cc, 0, sizeof cc);
  *c = cc;
  cc.comm = job->comm;
  cc.local = job->size == 1 ? job->ev : NULL;
  cc.strategy = job->strat;
  int rc = job->size > 1 ? mpt_job_classes_searches(&job->classes, &job->o, job->space, job->strat, job->default_id,
                                                    job->class_strat, job->searches, err) : 0;
  if (rc == 0 && job->size > 1) rc = mpt_job_confirm_classes(&job->confirm, job->classes.n, err); /* each its own */
  for (int k = 1; rc == 0 && k < job->classes.n && o->n_priors > 0; k++) { /* each class is told the priors too */
    char desc[sizeof job->priors_desc];
    if (job->class_strat[k]) rc = mpt_prior_tell(o->priors, o->n_priors, job->space, job->class_strat[k], desc, sizeof desc, err);
  }
  if (rc < 0) return rc;
  job->n_searches = job->size > 1 ? job->classes.n : 0;
  cc.searches = job->size > 1 ? job->searches : NULL;
  cc.n_searches = job->n_searches;
  cc.transfer = !o->no_transfer;
  cc.cross = !o->no_cross;
  cc.space = job->space;
  cc.budget = o->budget;
  cc.time_budget = o->time_budget;
  cc.grace_s = o->grace_s;
  cc.resume_each = o->resume ? log_each : NULL;
  cc.resume_src = job;
  cc.default_id = job->default_id;
  cc.default_first = !o->collect; /* a tuning run measures the default first: the baseline of its speed-up */
  cc.record = record_obs;
  cc.record_ctx = &job->rctx;
  cc.progress = o->progress;
  cc.progress_out = stderr;
  cc.confirm = mpt_job_confirm_plan(&job->confirm, record_confirmation, &job->rctx);
  cc.lookahead = default_lookahead(job);
  for (int k = 0; k < cc.n_searches; k++) { /* the job's own, for a run with other jobs' searches */
    mpt_coord_search *S = &job->searches[k];
    S->space = job->space;
    S->record = record_obs, S->record_ctx = &job->rctx;
    S->resume_each = cc.resume_each, S->resume_src = job;
  }
  if (o->resume) printf("resuming %s: %lld logged observations\n", o->log, (long long)job->n_resumed);
  *c = cc;
  return 0;
}

/* rank 0: the coordinator loop over the strategy, the workers (or the in-process evaluator) and the log */
static int coordinate(mpt_job *job, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  mpt_coord_config cc;
  int rc = mpt_job_coord_config(job, &cc, err);
  if (rc < 0) {
    mpt_wire_stop_all(job->comm, 1);
    return rc;
  }
  if (o->virtual_workers > 0) { /* a projection: the time budget is virtual, nothing sleeps */
    mpt_virtual_config vc = {o->virtual_workers, o->simulate_delay, mpt_clock_unix_s(), o->virtual_cpu_time};
    job->run_rc = mpt_coord_run_virtual(&cc, &vc, &job->res, &job->vres, err);
    job->ran = 1;
    return job->run_rc;
  }
  if (job->size == 1 && o->time_budget > 0) job->stop.deadline_s = mpt_clock_mono_s() + o->time_budget + o->grace_s;
  job->run_rc = mpt_coord_run(&cc, &job->res, err);
  job->stop.deadline_s = 0;
  job->ran = 1;
  return job->run_rc;
}

/* a worker's own signal (mpi/worker.h): the last SIGINT/SIGTERM it received, 0 while none */
static int own_signal(void) { return mpt_signals_count() > 0 ? mpt_signals_last() : 0; }

void mpt_job_serve(mpt_job *const *jobs, int n) {
  mpt_evaluator **evs = calloc((size_t)(n > 0 ? n : 1), sizeof *evs);
  int any = 0, code = 1;
  for (int j = 0; evs && j < n; j++) any |= (evs[j] = jobs[j]->ev) != NULL;
  MPI_Comm comm = jobs[0]->comm;
  if (!any) { /* left out (no usable device): no work comes, only the STOP at the end */
    mpt_backoff b;
    mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
    MPI_Status st;
    if (mpt_wire_probe_wait(comm, 0, MPT_TAG_STOP, -1, &b, NULL, &st)) mpt_wire_recv_stop(comm, &st, &code);
  } else {
    mpt_worker_signals own = {own_signal, mpt_signals_flag()};
    code = mpt_worker_run_jobs(comm, 0, evs, n, &own, NULL);
  }
  free(evs);
  for (int j = 0; j < n; j++) jobs[j]->exit_status = code == 0 ? 0 : 1;
}

void mpt_job_keep_searches(mpt_job *job, int n) {
  if (n >= 0 && n < job->n_searches) job->n_searches = n;
}

void mpt_job_take_result(mpt_job *job, int rc, const mpt_coord_result *all) {
  mpt_coord_result *r = &job->res;
  *r = *all;
  mpt_search_totals(job->searches, job->n_searches, r);
  int finished = job->n_searches > 0, exhausted = 1, out_of_time = job->n_searches > 0;
  for (int k = 0; k < job->n_searches; k++) {
    const char *why = job->searches[k].res.reason;
    finished &= why && (strcmp(why, "budget") == 0 || strcmp(why, "exhausted") == 0);
    exhausted &= why && strcmp(why, "exhausted") == 0;
    out_of_time &= why && (strcmp(why, "budget") == 0 || strcmp(why, "exhausted") == 0 || strcmp(why, "time") == 0);
  }
  if (rc == 0 && finished) r->reason = exhausted ? "exhausted" : "budget";
  else if (rc == 0 && out_of_time) r->reason = "time"; /* its searches' own time budget (a campaign's job) */
  int workers = 0; /* its searches' workers (a campaign's jobs share them) */
  for (int k = 0; k < job->n_searches; k++) workers += job->searches[k].n_workers;
  r->n_workers = workers;
  /* the coordinator's time is the run's: the job's share of it by its evaluations, so that its per-evaluation
   * figures are the run's */
  double share = all->new_evals > 0 ? (double)r->new_evals / (double)all->new_evals : 0;
  r->busy_s = all->busy_s * share, r->cpu_s = all->cpu_s * share, r->wait_s = all->wait_s * share;
  job->run_rc = rc;
  job->ran = 1;
}

int mpt_job_run(mpt_job *job, mpt_error *err) {
  int rc = mpt_job_start(job, err);
  if (rc < 0) return rc;
  if (job->rank != 0) {
    mpt_job_serve(&job, 1);
    return 0;
  }
  return coordinate(job, err);
}
