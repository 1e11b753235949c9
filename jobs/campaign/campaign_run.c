/* jobs/campaign/campaign_run.c: a campaign run in one allocation (jobs/campaign/campaign_run.h): the jobs whose
 * logs are finished left out, the others opened (resumed where their log exists) and started, their searches
 * joined into one coordinator run (each search keeps its job's space, strategy, budget per class, time budget and
 * log), and
 * each job's summary. */
#include "jobs/campaign/campaign_run.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "coordinator/coordinator.h"
#include "coordinator/signals.h"
#include "jobs/runlog/runlog.h"
#include "mpi/wire.h"

enum { LOG_NEW = 0, LOG_RESUME = 1, LOG_FINISHED = 2 };

typedef struct camp_state {
  const mpt_campaign *c;
  const mpt_campaign_run_options *ro;
  int rank, size;
  int *log_state;              /* per job of the file: LOG_NEW, LOG_RESUME, LOG_FINISHED */
  mpt_job **jobs;              /* the jobs run, in the file's order */
  const mpt_campaign_job **cj; /* and their entries in the file */
  int n;
  mpt_coord_search **own;      /* rank 0, per job run: its searches (mpt_job_coord_config's) */
  int *first, *count;          /* and their place in all */
  mpt_coord_search *all;
  int n_all;
  char (*names)[200];          /* "JOB/CLASS", the searches' names on the progress line */
  mpt_device_info device;      /* a worker: its device, as the first job's evaluator describes it */
  int device_known;
} camp_state;

/* the budget a job's strategy and log get: the largest of its classes' (0 when the file gives none: -1, the
 * problem's Budget block) */
static int64_t largest_budget(const mpt_campaign *c, const mpt_campaign_job *j) {
  int64_t most = j->opts.budget > 0 ? j->opts.budget : -1;
  for (int k = 0; k < c->n_sims; k++) {
    int64_t b = mpt_campaign_job_budget(j, c->sims[k].device_class);
    if (b > most) most = b;
  }
  for (int k = 0; k < j->n_class_budgets; k++)
    if (j->class_budgets[k].budget > most) most = j->class_budgets[k].budget;
  return most;
}

/* a finished log (mpt_runlog_is_finished) that the job's budget does not extend: stopped by its budget or its time
 * budget with no class budget above the most a class holds (as `tune --resume --budget N` extends one), or exhausted */
static int stays_finished(mpt_runlog *rl, int64_t budget) {
  if (!mpt_runlog_is_finished(rl)) return 0;
  const char *why = mpt_runlog_meta(rl, "stop_reason");
  int by_budget = why && (strcmp(why, "budget") == 0 || strcmp(why, "time") == 0);
  return !(by_budget && budget > mpt_runlog_measured_class(rl));
}

/* rank 0: whether each job's log exists and whether it is finished (broadcast); a finished one is said */
static void read_log_states(camp_state *s) {
  const mpt_campaign *c = s->c;
  for (int j = 0; s->rank == 0 && j < c->n_jobs; j++) {
    struct stat sb;
    const char *log = c->jobs[j].opts.log;
    s->log_state[j] = stat(log, &sb) == 0 ? LOG_RESUME : LOG_NEW;
    mpt_runlog *rl = NULL;
    mpt_error ignored;
    mpt_error_clear(&ignored);
    if (s->log_state[j] != LOG_RESUME || mpt_runlog_open_readonly(log, &rl, &ignored) != 0) continue;
    if (stays_finished(rl, largest_budget(c, &c->jobs[j]))) {
      s->log_state[j] = LOG_FINISHED;
      printf("job %s: finished (%s, %lld evaluations); not run again\n", c->jobs[j].name, log,
             (long long)mpt_runlog_measured(rl));
    }
    mpt_runlog_close(rl);
  }
  MPI_Bcast(s->log_state, c->n_jobs, MPI_INT, 0, MPI_COMM_WORLD);
}

/* what a `tune` of job j over every class gets: its options, the campaign's simulated classes and the command
 * line's ranks per class; resumed when its log exists */
static void job_options(const camp_state *s, const mpt_campaign_job *j, mpt_job_options *o) {
  const mpt_campaign *c = s->c;
  *o = j->opts;
  o->budget = largest_budget(c, j);
  o->resume = s->log_state[j->index] == LOG_RESUME;
  o->n_sim = c->n_sims < MPT_JOB_MAX_CLASSES ? c->n_sims : MPT_JOB_MAX_CLASSES;
  for (int k = 0; k < o->n_sim; k++) {
    snprintf(o->sim_class[k], sizeof o->sim_class[k], "%s", c->sims[k].device_class);
    o->sim_file[k] = c->sims[k].path;
  }
  o->simulate = o->n_sim > 0 ? o->sim_file[0] : NULL;
  if (!o->evaluator) o->evaluator = o->n_sim > 0 ? "sim" : "auto";
  o->n_class_ranks = s->ro->n_class_ranks;
  for (int k = 0; k < o->n_class_ranks; k++) o->class_ranks[k] = s->ro->class_ranks[k];
  o->no_cross = s->ro->no_cross;
  o->progress = s->ro->progress;
  o->argc = s->ro->argc, o->argv = s->ro->argv;
  o->comm = MPI_COMM_WORLD;
  o->model_comm = MPI_COMM_NULL;
}

/* every job not finished opened (collective); 0, or <0 with the message said on rank 0 */
static int open_jobs(camp_state *s) {
  for (int j = 0; j < s->c->n_jobs; j++) {
    if (s->log_state[j] == LOG_FINISHED) continue;
    mpt_job_options o;
    job_options(s, &s->c->jobs[j], &o);
    o.no_device_table = s->n > 0; /* the first job's shows it */
    /* a worker opens the evaluators of the jobs its class runs (and the first job's, which describes its device) */
    if (s->device_known && mpt_campaign_job_budget(&s->c->jobs[j], s->device.device_class) < 0) o.device = &s->device;
    mpt_error err;
    mpt_error_clear(&err);
    int rc = mpt_job_open(&o, &s->jobs[s->n], &err);
    if (rc < 0) {
      if (s->rank == 0) fprintf(stderr, "mptune campaign: job %s: %s\n", s->c->jobs[j].name, err.msg);
      return rc;
    }
    if (s->rank > 0 && s->n == 0 && mpt_job_evaluator_open(s->jobs[0])) {
      mpt_job_device(s->jobs[0], &s->device);
      s->device_known = 1;
    }
    s->cj[s->n++] = &s->c->jobs[j];
  }
  return 0;
}

/* each job's device table and log session (collective); on rank 0's failure the workers were stopped and take
 * the STOP here */
static int start_jobs(camp_state *s) {
  for (int j = 0; j < s->n; j++) {
    mpt_error err;
    mpt_error_clear(&err);
    if (s->rank == 0) printf("job %s: ", s->cj[j]->name); /* its header line follows */
    int rc = mpt_job_start(s->jobs[j], &err);
    if (s->rank == 0 && rc < 0) fprintf(stderr, "mptune campaign: job %s: %s\n", s->cj[j]->name, err.msg);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc < 0) {
      if (s->rank != 0) mpt_job_serve(s->jobs, s->n);
      return rc;
    }
  }
  return 0;
}

/* rank 0: job j's searches, those of the classes it runs kept (each with its class's budget from the file), and
 * appended to all as job j's */
static int join_searches(camp_state *s, int j, mpt_coord_config *cc, mpt_error *err) {
  int rc = mpt_job_coord_config(s->jobs[j], cc, err);
  if (rc < 0) return rc;
  mpt_coord_search *S = cc->searches;
  int kept = 0;
  for (int k = 0; k < cc->n_searches; k++) {
    int64_t b = mpt_campaign_job_budget(s->cj[j], S[k].name);
    if (b < 0) continue; /* a class the job does not run */
    if (b > 0) S[k].budget = b;
    S[k].time_budget = s->cj[j]->opts.time_budget; /* its own, else the campaign's (0: none) */
    S[kept++] = S[k];
  }
  mpt_job_keep_searches(s->jobs[j], kept);
  s->own[j] = S, s->first[j] = s->n_all, s->count[j] = kept;
  for (int k = 0; k < kept; k++) {
    mpt_coord_search *a = &s->all[s->n_all];
    *a = S[k];
    a->job = j;
    snprintf(s->names[s->n_all], sizeof s->names[0], "%s/%s", s->cj[j]->name, S[k].name);
    a->name = s->names[s->n_all++];
  }
  if (kept == 0) printf("job %s: none of its classes has a worker in this allocation; it waits\n", s->cj[j]->name);
  printf("job %s: budget per class:", s->cj[j]->name);
  for (int k = 0; k < kept; k++) printf("%s %s %lld", k ? "," : "", S[k].name, (long long)S[k].budget);
  printf("\n");
  return 0;
}

/* rank 0: the classes a real (not simulated) campaign's jobs name are among those present (the first job's) */
static int check_present(camp_state *s, const mpt_coord_config *first, mpt_error *err) {
  if (s->c->n_sims > 0 || first->n_searches <= 0) return 0; /* checked before anything was opened */
  const char *present[MPT_JOB_MAX_CLASSES];
  int n = first->n_searches < MPT_JOB_MAX_CLASSES ? first->n_searches : MPT_JOB_MAX_CLASSES;
  for (int k = 0; k < n; k++) present[k] = first->searches[k].name;
  return mpt_campaign_check_classes(s->c, present, n, err);
}

/* rank 0: one coordinator run over every job's searches; the settings the jobs share are the first's; each search
 * stops at its job's time budget, the run when every search is finished or out of time (the run's time budget,
 * for the progress line, the largest of the jobs' when every job has one) */
static int coordinate(camp_state *s, mpt_coord_result *res, mpt_error *err) {
  mpt_coord_config cc, one;
  int rc = 0;
  double time_budget = 0;
  int timed = 1;
  for (int j = 0; rc == 0 && j < s->n; j++) {
    rc = join_searches(s, j, &one, err);
    if (rc == 0 && j == 0) rc = check_present(s, &one, err), cc = one;
    double t = s->cj[j]->opts.time_budget;
    timed &= t > 0;
    if (t > time_budget) time_budget = t;
  }
  if (rc < 0) {
    mpt_wire_stop_all(MPI_COMM_WORLD, 1);
    return rc;
  }
  cc.searches = s->all, cc.n_searches = s->n_all;
  cc.resume_each = NULL, cc.resume_src = NULL; /* each search's own log */
  cc.record = NULL, cc.record_ctx = NULL;
  cc.strategy = NULL;
  cc.time_budget = timed ? time_budget : 0;
  cc.cross = !s->ro->no_cross;
  memset(&cc.confirm, 0, sizeof cc.confirm);
  rc = mpt_coord_run(&cc, res, err);
  for (int j = 0; j < s->n; j++)
    for (int k = 0; k < s->count[j]; k++) s->own[j][k].res = s->all[s->first[j] + k].res;
  return rc;
}

/* rank 0: each job's summary, as `tune` prints it, under its name; the exit status */
static int report(camp_state *s, int rc, const mpt_coord_result *res) {
  int status = 0;
  for (int j = 0; j < s->n; j++) {
    printf("\n== job %s ==\n", s->cj[j]->name);
    mpt_job_take_result(s->jobs[j], rc, res);
    mpt_error err;
    mpt_error_clear(&err);
    if (mpt_job_report(s->jobs[j], &err) < 0) fprintf(stderr, "mptune campaign: job %s: %s\n", s->cj[j]->name, err.msg);
    int st = mpt_job_exit_status(s->jobs[j]);
    if (st > status) status = st;
  }
  fflush(stdout);
  return rc < 0 ? 1 : status;
}

static int run_jobs(camp_state *s) {
  if (open_jobs(s) < 0) return 1;
  if (s->n == 0) {
    if (s->rank == 0) printf("campaign %s: every job is finished\n", s->c->name);
    return 0;
  }
  if (start_jobs(s) < 0) return 1;
  if (s->rank != 0) {
    mpt_job_serve(s->jobs, s->n);
    return mpt_job_exit_status(s->jobs[0]);
  }
  mpt_coord_result res;
  memset(&res, 0, sizeof res); /* what the jobs report when the run fails before it starts */
  res.reason = "error";
  mpt_error err;
  mpt_error_clear(&err);
  int rc = coordinate(s, &res, &err);
  if (rc < 0) fprintf(stderr, "mptune campaign: %s\n", err.msg);
  return report(s, rc, &res);
}

static int state_open(camp_state *s) {
  int n = s->c->n_jobs;
  s->log_state = calloc((size_t)n, sizeof *s->log_state);
  s->jobs = calloc((size_t)n, sizeof *s->jobs);
  s->cj = calloc((size_t)n, sizeof *s->cj);
  s->own = calloc((size_t)n, sizeof *s->own);
  s->first = calloc((size_t)n, sizeof *s->first);
  s->count = calloc((size_t)n, sizeof *s->count);
  s->all = calloc((size_t)n * MPT_JOB_MAX_CLASSES, sizeof *s->all);
  s->names = calloc((size_t)n * MPT_JOB_MAX_CLASSES, sizeof *s->names);
  return s->log_state && s->jobs && s->cj && s->own && s->first && s->count && s->all && s->names ? 0 : -1;
}

static void state_close(camp_state *s) {
  for (int j = 0; s->jobs && j < s->n; j++) mpt_job_close(s->jobs[j]);
  free(s->log_state);
  free(s->jobs);
  free(s->cj);
  free(s->own);
  free(s->first);
  free(s->count);
  free(s->all);
  free(s->names);
}

/* what is refused before anything opens (the same on every rank): one rank, an unknown simulated class */
static int check_before(const camp_state *s, mpt_error *err) {
  if (s->size < 2)
    return mpt_error_set(err, MPT_ERR_VALUE, "a campaign runs on several ranks (rank 0 coordinates, the others are "
                         "workers): start it with mpiexec.mpich -n N, N >= 2");
  const char *present[MPT_JOB_MAX_CLASSES];
  int n = mpt_campaign_sim_classes(s->c, present, MPT_JOB_MAX_CLASSES);
  return n > 0 ? mpt_campaign_check_classes(s->c, present, n, err) : 0;
}

int mpt_campaign_run(const mpt_campaign *c, const mpt_campaign_run_options *ro) {
  camp_state s;
  memset(&s, 0, sizeof s);
  s.c = c, s.ro = ro;
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  mpt_error err;
  mpt_error_clear(&err);
  int rc = state_open(&s) < 0 ? mpt_error_set(&err, MPT_ERR_NOMEM, "out of memory") : check_before(&s, &err);
  if (rc < 0) {
    if (s.rank == 0) fprintf(stderr, "mptune campaign: %s\n", err.msg);
    state_close(&s);
    return 1;
  }
  mpt_signals_install();
  read_log_states(&s);
  if (s.rank == 0) fflush(stdout);
  int status = run_jobs(&s);
  state_close(&s);
  return status;
}
