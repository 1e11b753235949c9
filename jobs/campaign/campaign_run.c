/* jobs/campaign/campaign_run.c: a campaign run in one allocation (jobs/campaign/campaign_run.h): the jobs whose
 * logs are finished left out (jobs/campaign/campaign_logs.h), the others opened (resumed where their log exists),
 * the classes they name checked against the workers' and started, their searches joined into one coordinator run
 * (each search keeps its job's space, strategy, budget per class, time budget and log), and each job's summary. */
#include "jobs/campaign/campaign_run.h"
#include "jobs/campaign/campaign_logs.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coordinator/coordinator.h"
#include "coordinator/signals.h"
#include "mpi/wire.h"

typedef struct camp_state {
  const mpt_campaign *c;
  const mpt_campaign_run_options *ro;
  int rank, size;
  mpt_camp_log *logs;          /* per job of the file, as rank 0 found its log (broadcast) */
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

/* what a `tune` of job j over every class gets: its options, the campaign's simulated classes and the command
 * line's ranks per class; resumed when its log exists */
static void job_options(const camp_state *s, const mpt_campaign_job *j, mpt_job_options *o) {
  const mpt_campaign *c = s->c;
  *o = j->opts;
  o->budget = mpt_camp_largest_budget(c, j);
  o->resume = s->logs[j->index].state == MPT_CAMP_LOG_RESUME;
  o->reopen = s->logs[j->index].reopen;
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
    if (s->logs[j].state == MPT_CAMP_LOG_FINISHED) continue;
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

/* rank 0: the distinct classes of all[1..size) (a worker without a usable device sent "") into present */
static int distinct_classes(char (*all)[64], int size, const char **present) {
  int n = 0;
  for (int r = 1; r < size; r++) {
    int seen = !all[r][0];
    for (int k = 0; k < n && !seen; k++) seen = strcmp(present[k], all[r]) == 0;
    if (!seen && n < MPT_JOB_MAX_CLASSES) present[n++] = all[r];
  }
  return n;
}

/* a real (not simulated) campaign: the classes each job to run names are among the workers' classes (or in the
 * job's own log: that class waits for its workers), checked before any log is written (collective); 0, or <0 on
 * every rank with the message said on rank 0. A simulated campaign's were checked before anything opened. */
static int check_present(camp_state *s) {
  if (s->c->n_sims > 0) return 0;
  char mine[sizeof s->device.device_class] = "", (*all)[sizeof mine] = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  int rc = 0;
  if (s->rank == 0 && !(all = calloc((size_t)s->size, sizeof *all)))
    rc = mpt_error_set(&err, MPT_ERR_NOMEM, "out of memory");
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rc == 0) {
    if (s->rank > 0 && s->device_known) snprintf(mine, sizeof mine, "%s", s->device.device_class);
    MPI_Gather(mine, (int)sizeof mine, MPI_CHAR, all ? all[0] : NULL, (int)sizeof mine, MPI_CHAR, 0, MPI_COMM_WORLD);
    const char *present[MPT_JOB_MAX_CLASSES];
    if (s->rank == 0)
      rc = mpt_camp_check_job_classes(s->c, s->logs, present, distinct_classes(all, s->size, present), &err);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  if (s->rank == 0 && rc < 0) fprintf(stderr, "mptune campaign: %s\n", err.msg);
  free(all);
  return rc;
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
    if (rc == 0 && j == 0) cc = one;
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
  if (check_present(s) < 0 || start_jobs(s) < 0) return 1;
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
  s->logs = calloc((size_t)n, sizeof *s->logs);
  s->jobs = calloc((size_t)n, sizeof *s->jobs);
  s->cj = calloc((size_t)n, sizeof *s->cj);
  s->own = calloc((size_t)n, sizeof *s->own);
  s->first = calloc((size_t)n, sizeof *s->first);
  s->count = calloc((size_t)n, sizeof *s->count);
  s->all = calloc((size_t)n * MPT_JOB_MAX_CLASSES, sizeof *s->all);
  s->names = calloc((size_t)n * MPT_JOB_MAX_CLASSES, sizeof *s->names);
  return s->logs && s->jobs && s->cj && s->own && s->first && s->count && s->all && s->names ? 0 : -1;
}

static void state_close(camp_state *s) {
  for (int j = 0; s->jobs && j < s->n; j++) mpt_job_close(s->jobs[j]);
  free(s->logs);
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
  if (s.rank == 0) mpt_camp_read_logs(c, s.logs);
  MPI_Bcast(s.logs, (int)(sizeof *s.logs * (size_t)c->n_jobs), MPI_BYTE, 0, MPI_COMM_WORLD);
  if (s.rank == 0) fflush(stdout);
  int status = run_jobs(&s);
  state_close(&s);
  return status;
}
