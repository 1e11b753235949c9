/* jobs/job/job_start.c: the start of a job's run (mpt_job_start): the workers' devices gathered, the run's class
 * table and device table, the cpu evaluator's load warning, and on rank 0 the log's session (a new log or the
 * resumed one's next session) with the settings and command line it records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/job/job_internal.h"
#include "evaluators/cpu_load.h"
#include "mpi/device.h"
#include "mpi/wire.h"
#include "spaces/space.h"
#include "spaces/t1.h"

static char *join_command_line(int argc, char **argv) {
  size_t len = 8;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 3;
  char *s = malloc(len);
  if (!s) return NULL;
  size_t at = (size_t)snprintf(s, len, "mptune");
  for (int i = 0; i < argc; i++) at += (size_t)snprintf(s + at, len - at, " %s", argv[i]);
  return s;
}

static char *join_options(const mpt_job_options *o) {
  size_t len = 1;
  for (int i = 0; i < o->n_opts; i++) len += strlen(o->opts[i]) + 1;
  char *s = malloc(len);
  if (!s) return NULL;
  s[0] = '\0';
  for (int i = 0; i < o->n_opts; i++) {
    if (i) strcat(s, ",");
    strcat(s, o->opts[i]);
  }
  return s;
}

/* a resumed log that was damaged or recovered: what was left out, what was recovered, where the file as it
 * was is kept (after mpt_runlog_begin_session) */
static void warn_damaged(const char *path, mpt_runlog *log, int64_t n_resumed) {
  long long damaged = (long long)mpt_runlog_damaged(log);
  if (damaged > 0)
    fprintf(stderr, "warning: run log %s had %lld damaged record%s (checksum mismatch), now left out; the %lld intact ones "
            "are resumed; the file as it was is kept as %s\n", path, damaged, damaged == 1 ? "" : "s",
            (long long)n_resumed, mpt_runlog_damaged_copy(log));
  if (mpt_runlog_recovered(log))
    fprintf(stderr, "warning: %s\nwarning: its %lld intact records were recovered by their checksums and are resumed; its "
            "settings (strategy, seed, budget) and device and session tables %s; the file as it was is kept as %s\n",
            mpt_runlog_recovered(log), (long long)n_resumed, mpt_runlog_recovered_meta_text(log),
            mpt_runlog_damaged_copy(log));
}

/* the T4 path the log keeps for the next --resume: --t4 as given, but not standard output (a pipe is not
 * re-opened: the recorded one stays) */
static const char *t4_to_record(const mpt_job *job) {
  if (job->t4_fd >= 0) return job->t4_logged ? job->t4_logged : "";
  return job->o.t4 ? job->o.t4 : "";
}

/* rank 0: the run's session in the log: a new log (with --force too: it replaces the old by rename, never
 * while another run writes it) or the resumed one's next session, with the settings it goes on with (and
 * those a recovered log lost), and the device table */
static int start_log(mpt_job *job, const mpt_device_info *devices, int n_devices, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  job->cmdline = join_command_line(o->argc, o->argv);
  job->optstr = join_options(o);
  job->eval_optstr = mpt_job_evaluator_options_text(o);
  const char *evaluator = o->virtual_workers > 0 ? MPT_JOB_VIRTUAL_EVALUATOR : o->evaluator;
  char simulate[4096];
  mpt_job_sim_text(o, simulate, sizeof simulate);
  mpt_run_meta meta = {job->cmd, o->problem, job->prob->text, o->strategy, job->optstr ? job->optstr : "",
                       evaluator, o->simulate ? simulate : NULL, o->seed, o->budget, o->time_budget,
                       job->cmdline ? job->cmdline : job->cmd, t4_to_record(job), job->objective_text, 0, job->priors_desc,
                       job->eval_optstr ? job->eval_optstr : ""};
  int64_t per_class = o->budget < mpt_space_size(job->space) ? o->budget : mpt_space_size(job->space);
  if (job->classes.n > 1) meta.records = job->classes.n * (per_class + job->classes.n - 1); /* and the portability row */
  int rc;
  if (!o->resume) {
    rc = mpt_runlog_create(o->log, job->space, &meta, &job->log, err);
  } else {
    rc = mpt_runlog_begin_session(job->log, err);
    if (rc == 0) warn_damaged(o->log, job->log, job->n_resumed);
    if (rc == 0) rc = mpt_runlog_resume_meta(job->log, &meta, err);
  }
  char *classes = rc == 0 ? mpt_job_classes_text(&job->classes) : NULL;
  if (rc == 0 && !classes) rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (rc == 0) rc = mpt_runlog_set_classes(job->log, classes, err);
  free(classes);
  if (rc == 0 && devices) rc = mpt_runlog_set_devices(job->log, devices, n_devices, err);
  return rc;
}

/* --virtual-workers N: the log's device table names the N simulated workers (ranks 1..N), each the one rank's
 * replayed device */
static int start_virtual_log(mpt_job *job, const mpt_device_info *one, mpt_error *err) {
  int n = job->o.virtual_workers;
  mpt_device_info *d = one ? malloc(sizeof *d * (size_t)n) : NULL;
  if (!d) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int k = 0; k < n; k++) {
    d[k] = *one;
    d[k].rank = k + 1;
    d[k].index = k;
  }
  int rc = start_log(job, d, n, err);
  free(d);
  return rc;
}

/* rank 0, the cpu evaluator: once, when the workers of a node (rank 0's, the node with the most of them taken as
 * its shape) share cores, with their compile jobs exceed its cores, or its load average does */
static void warn_cpu_load(const mpt_job *job) {
  const mpt_job_options *o = &job->o;
  if (strcmp(mpt_job_workers_evaluator(job), "cpu") != 0) return;
  int workers = o->node_workers > 0 ? o->node_workers : 1;
  mpt_cpu_load l;
  mpt_cpu_load_read(workers, o->compile_jobs > 0 ? o->compile_jobs : mpt_evaluator_default_jobs("cpu", workers), &l);
  char msg[768];
  if (mpt_cpu_load_warning(&l, msg, sizeof msg)) fprintf(stderr, "mptune %s: warning: %s\n", job->cmd, msg);
}

int mpt_job_start(mpt_job *job, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  int rank = job->rank, size = job->size;
  mpt_device_info mine, *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
  if (job->is_worker) {
    mpt_job_device(job, &mine);
  } else {
    memset(&mine, 0, sizeof mine);
    mine.rank = -1;
  }
  mpt_wire_gather_devices(job->comm, &mine, all ? all : &mine);
  if (rank != 0) return 0;
  int first = size == 1 ? 0 : 1;
  int rc = all ? mpt_job_classes_build(&job->classes, o->resume ? mpt_runlog_meta(job->log, "classes") : NULL, o, all + first,
                                       size - first, job->absent, err)
               : mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (rc == 0) rc = mpt_job_classes_check_sim(&job->classes, o, size, err);
  if (rc < 0) {
    free(all);
    if (size > 1) mpt_wire_stop_all(job->comm, 1);
    return rc;
  }
  for (int r = first; job->absent && r < size; r++)
    if (job->absent[r]) all[r].rank = -1; /* left out: not in the table nor the log */
  if (job->from_problem[0]) printf("%s\n", job->from_problem);
  int nw = o->virtual_workers > 0 ? o->virtual_workers : size - first;
  printf("%s %s: %s, %lld valid configurations, strategy %s, budget %lld%s, seed %llu, %d %sworker%s\n", job->cmd,
         o->problem, job->prob->name, (long long)mpt_space_size(job->space), o->strategy, (long long)o->budget,
         o->time_budget > 0 ? " (and a time budget)" : "", (unsigned long long)o->seed, nw,
         o->virtual_workers > 0 ? "virtual " : "", nw == 1 ? "" : "s");
  if (o->virtual_workers > 0) {
    printf("virtual clock: each evaluation takes %g x its recorded compile + benchmark time; rank 0's asks, logging "
           "and tells take their measured %s time\n", o->simulate_delay, o->virtual_cpu_time ? "CPU" : "wall");
    mpt_device_table_print(stdout, all + first, size - first);
  } else {
    if (!o->no_device_table) mpt_job_classes_print(stdout, &job->classes, all + first, size - first);
  }
  warn_cpu_load(job);
  fflush(stdout);
  rc = o->virtual_workers > 0 ? start_virtual_log(job, all, err) : start_log(job, all + first, size - first, err);
  free(all);
  if (rc < 0 && size > 1) mpt_wire_stop_all(job->comm, 1);
  return rc;
}
