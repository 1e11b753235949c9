/* jobs/job.c: the job object (jobs/job.h): its set-up on every rank (problem, space, log, resume,
 * strategy, evaluator; a go/no-go), its run (device table, log session, coordinator or worker loop), the
 * report rank 0 prints, and the watch that cancels an evaluation in progress when the run stops. */
#include "jobs/job.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <strings.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "coordinator/coordinator.h"
#include "coordinator/signals.h"
#include "coordinator/virtual.h"
#include "evaluators/kernel_spec.h"
#include "jobs/cli/commands.h"
#include "jobs/job_confirm.h"
#include "jobs/job_objective.h"
#include "jobs/job_t1.h"
#include "jobs/output/class_summary.h"
#include "jobs/output/portability.h"
#include "jobs/output/outfile.h"
#include "jobs/prior.h"
#include "jobs/runlog/runlog.h"
#include "mpi/device.h"
#include "mpi/device_class.h"
#include "mpi/wire.h"
#include "mpi/worker.h"
#include "evaluators/cpu_load.h"
#include "spaces/space.h"
#include "spaces/sys/clock.h"
#include "spaces/t1.h"
#include "strategies/strategy.h"
#include "strategies/bo/bo_dist.h"
#include "spaces/sys/signame.h"

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

int mpt_job_refuse_input(const mpt_job_options *o, const char *what, const char *path, mpt_error *err) {
  if (mpt_same_file(o->log, path))
    return mpt_error_set(err, MPT_ERR_VALUE, "--log %s is %s: it would be replaced by the run log", o->log, what);
  if (mpt_same_file(o->t4, path))
    return mpt_error_set(err, MPT_ERR_VALUE, "--t4 %s is %s: it would be replaced by the T4 export", o->t4, what);
  return 0;
}

/* ---- the watch of the evaluations ---- */

static int evaluation_watch(void *ctx, const char *doing, double done) {
  (void)doing, (void)done;
  const evaluation_stop *e = ctx;
  int n = mpt_signals_count();
  if (n >= 2 || (n == 1 && mpt_clock_mono_s() - mpt_signals_first_s() >= e->grace_s)) return 1;
  if (e->deadline_s > 0 && mpt_clock_mono_s() >= e->deadline_s) return 1;
  int flag = 0;
  if (e->stop_comm != MPI_COMM_NULL) MPI_Iprobe(0, MPT_TAG_STOP, e->stop_comm, &flag, MPI_STATUS_IGNORE);
  return flag;
}

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

/* the files the kernel source names in #include "FILE" lines (resolved as the compilers' -I of the kernel's
 * directory finds them; one level: a header's own includes are not followed) are inputs too */
static int check_kernel_includes(const mpt_job_options *o, const mpt_kernel_spec *ks, mpt_error *err) {
  for (const char *line = ks->source; line && *line;) {
    const char *t = line, *nl = strchr(line, '\n');
    line = nl ? nl + 1 : NULL;
    while (*t == ' ' || *t == '\t') t++;
    if (*t++ != '#') continue;
    while (*t == ' ' || *t == '\t') t++;
    if (strncmp(t, "include", 7) != 0) continue;
    for (t += 7; *t == ' ' || *t == '\t';) t++;
    const char *q = *t == '"' ? strchr(t + 1, '"') : NULL;
    if (!q || (nl && q > nl) || q == t + 1) continue;
    char path[4096], what[600];
    int len = (int)(q - t - 1);
    snprintf(path, sizeof path, "%s%s%.*s", t[1] == '/' ? "" : ks->kernel_dir, t[1] == '/' ? "" : "/", len, t + 1);
    snprintf(what, sizeof what, "a file the kernel source #includes (\"%.*s\")", len, t + 1);
    if (mpt_job_refuse_input(o, what, path, err)) return err->code;
  }
  return 0;
}

/* the files the problem's KernelSpecification reads (the kernel source, BinaryRaw DataSource files; paths
 * resolved by the spec's own parser) are inputs too. A problem whose spec does not load (none, with a
 * replayed run) has none here; a worker that needs it reports why. */
static int check_kernel_inputs(const mpt_job_options *o, const mpt_problem *prob, mpt_error *err) {
  mpt_kernel_spec *ks = NULL;
  mpt_error ignored;
  mpt_error_clear(&ignored);
  if (mpt_kspec_load(prob, &ks, &ignored) != 0) return 0;
  int rc = mpt_job_refuse_input(o, "the kernel source (KernelSpecification.KernelFile)", ks->kernel_file, err);
  if (rc == 0) rc = check_kernel_includes(o, ks, err);
  for (int i = 0; rc == 0 && i < ks->n_args; i++) {
    const mpt_ks_fillspec *f[2] = {&ks->args[i].fill, ks->args[i].has_reference ? &ks->args[i].ref : NULL};
    for (int k = 0; rc == 0 && k < 2; k++) {
      if (!f[k] || f[k]->type != MPT_FILL_BINARY_RAW || !f[k]->source) continue;
      char what[256];
      snprintf(what, sizeof what, "the BinaryRaw DataSource of %sargument '%s'", k ? "the reference of " : "",
               ks->args[i].name);
      rc = mpt_job_refuse_input(o, what, f[k]->source, err);
    }
  }
  mpt_kspec_free(ks);
  return rc;
}

/* rank 0, before anything runs: what would be replaced, or cannot be written */
static int check_outputs(mpt_job *job, mpt_error *err) {
  int rc = check_kernel_inputs(&job->o, job->prob, err);
  if (rc == 0 && !job->o.resume) rc = mpt_cmd_check_output("--log", job->o.log, err);
  if (rc == 0) rc = mpt_cmd_check_output("--t4", job->o.t4, err);
  return rc;
}

/* --t4 - (or a name of standard output): the T4 document alone on standard output, the report on standard
 * error (as with space --list -); the export writes to a copy of the original descriptor */
static int set_t4_aside(mpt_job *job, mpt_error *err) {
  if (!job->o.t4 || !mpt_outfile_is_stdout(job->o.t4)) return 0;
  fflush(stdout);
  job->t4_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (job->t4_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    return mpt_error_set(err, MPT_ERR_IO, "--t4 %s: cannot set standard output aside: %s", job->o.t4, strerror(errno));
  snprintf(job->t4_fd_name, sizeof job->t4_fd_name, "/dev/fd/%d", job->t4_fd);
  job->o.t4 = job->t4_fd_name;
  return 0;
}

/* --resume: the run goes on with the strategy it was started with and, unless --option is given, its
 * options (the log's "strategy" and "options" settings; job->logged_opts keeps the split copy of the
 * options); a --strategy given instead is used, with a note */
static int resume_strategy(mpt_job *job, mpt_error *err) {
  mpt_job_options *o = &job->o;
  const char *st = mpt_runlog_meta(job->log, "strategy");
  if (!st || !st[0]) return 0; /* lost with damaged metadata: --strategy or the default */
  if (o->strategy_given) {
    if (strcmp(st, o->strategy) != 0)
      printf("note: %s was started with strategy '%s'; continuing with '%s'\n", o->log, st, o->strategy);
    return 0;
  }
  o->strategy = st;
  const char *logged = mpt_runlog_meta(job->log, "options");
  int take = o->n_opts == 0 && logged && logged[0];
  printf("note: continuing with the strategy %s was started with, '%s'%s%s%s\n", o->log, st,
         take ? " (options " : o->n_opts ? " (with the --option given)" : "", take ? logged : "", take ? ")" : "");
  if (!take) return 0;
  if (!(job->logged_opts = strdup(logged))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (char *save = NULL, *kv = strtok_r(job->logged_opts, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
    if (o->n_opts >= MPT_JOB_MAX_OPTS)
      return mpt_error_set(err, MPT_ERR_VALUE, "%s: too many logged options (max %d)", o->log, MPT_JOB_MAX_OPTS);
    o->opts[o->n_opts++] = kv;
  }
  return 0;
}

/* replayed and real measurements never in one log; another replay file (a partial one completed, or
 * another device's) is said */
static int check_resumed_simulate(mpt_job *job, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  const char *ev = mpt_runlog_meta(job->log, "evaluator");
  if (ev && strcmp(ev, MPT_JOB_VIRTUAL_EVALUATOR) == 0)
    return mpt_error_set(err, MPT_ERR_STATE, "%s is a projection on a virtual clock (--virtual-workers): its times "
                         "are virtual, so it is not resumed (start a new log)", o->log);
  const char *sim = mpt_runlog_meta(job->log, "simulate"); /* "" or absent: real evaluations */
  char now[4096];
  mpt_job_sim_text(o, now, sizeof now);
  if (o->n_sim > 0 && sim && strcmp(sim, now) == 0) return 0; /* the same simulated classes */
  if (sim && (sim[0] != 0) != (o->simulate != NULL))
    return mpt_error_set(err, MPT_ERR_STATE, "%s was run %s%s; resuming it %s would mix replayed and real "
                         "measurements in one log (start a new log for that)", o->log,
                         sim[0] ? "with --simulate " : "on real evaluations", sim,
                         o->simulate ? "with --simulate" : "on real evaluations");
  if (sim && sim[0] && strcmp(sim, o->simulate) != 0 && !mpt_same_file(sim, o->simulate))
    fprintf(stderr, "mptune %s: warning: %s was run with --simulate %s; resuming it with --simulate %s puts the "
            "measurements of both files in one log\n", job->cmd, o->log, sim, o->simulate);
  return 0;
}

/* --resume: the T4 path the log records; without --t4 the export goes there, checked as a --t4 given is
 * (an output never replaces an input) */
static int resume_t4(mpt_job *job, mpt_error *err) {
  const char *t4 = mpt_runlog_meta(job->log, "t4");
  if (!t4 || !t4[0]) return 0;
  if (!(job->t4_logged = strdup(t4))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (job->o.t4) return 0;
  job->o.t4 = job->t4_shown = job->t4_logged;
  job->t4_from_log = 1;
  if (mpt_same_file(job->o.log, job->o.t4))
    return mpt_error_set(err, MPT_ERR_VALUE, "%s records --t4 %s, the log itself", job->o.log, job->o.t4);
  return check_outputs(job, err);
}

/* the T4 path the log keeps for the next --resume: --t4 as given, but not standard output (a pipe is not
 * re-opened: the recorded one stays) */
static const char *t4_to_record(const mpt_job *job) {
  if (job->t4_fd >= 0) return job->t4_logged ? job->t4_logged : "";
  return job->o.t4 ? job->o.t4 : "";
}

/* --resume: the log read and checked only (a resume refused here or by a worker leaves it as it was; its
 * new session begins when the run does), and the settings the run goes on with taken from it: the seed,
 * the budget (a --time given bounds it too), the strategy and its options */
static int resume_log(mpt_job *job, mpt_error *err) {
  mpt_job_options *o = &job->o;
  int collect = o->collect;
  int rc = mpt_runlog_open_checked(o->log, job->space, collect || !job->budget_given ? 0 : o->budget, job->cmd,
                                   &job->log, err); /* a log of the other command is refused there, finished or not */
  if (rc) return rc;
  job->n_resumed = mpt_runlog_count(job->log); /* the coordinator reads them (resume_each) */
  if (mpt_runlog_extended(job->log))
    printf("note: %s had finished with %lld evaluations; extending it to %lld\n", o->log,
           (long long)mpt_runlog_measured_class(job->log), (long long)o->budget);
  if (!o->seed_given) {
    const char *s = mpt_runlog_meta(job->log, "seed");
    if (s) o->seed = strtoull(s, NULL, 10), o->seed_given = 1;
  }
  if ((rc = check_resumed_simulate(job, err)) != 0) return rc;
  if (!collect && !job->budget_given) {
    const char *b = mpt_runlog_meta(job->log, "budget");
    long long v = b ? strtoll(b, NULL, 10) : 0;
    if (v > 0) o->budget = v;
    else if (o->time_budget <= 0)
      return mpt_error_set(err, MPT_ERR_VALUE, "%s records no evaluation budget%s: give --budget N or --time SECONDS", o->log,
                           mpt_runlog_recovered(job->log) ? " (it was lost with the damaged metadata; the recovered records are kept)" : "");
  }
  if ((rc = resume_t4(job, err)) != 0) return rc;
  return collect ? 0 : resume_strategy(job, err);
}

/* rank 0: the log to resume, or the place of a new one (created once every rank is ready) */
static int open_log(mpt_job *job, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  struct stat sb;
  int exists = stat(o->log, &sb) == 0;
  if (o->resume) {
    if (!exists) return mpt_error_set(err, MPT_ERR_IO, "--resume: run log '%s' does not exist", o->log);
    return resume_log(job, err);
  }
  if (exists && !o->force)
    return mpt_error_set(err, MPT_ERR_STATE, "run log '%s' already exists: use --resume to continue that run or --force to overwrite it", o->log);
  if (exists && S_ISDIR(sb.st_mode)) return mpt_error_set(err, MPT_ERR_IO, "run log '%s' is a directory", o->log);
  if (exists) return mpt_runlog_check_unlocked(o->log, err); /* --force: not over a log another run is writing */
  return 0;
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

int mpt_job_open_evaluator(const mpt_job_options *o, const mpt_problem *p, const mpt_space *s, int rank,
                           int local_rank, mpt_watch watch, mpt_evaluator **out, mpt_error *err) {
  mpt_eval_settings set;
  memset(&set, 0, sizeof set);
  set.simulate_path = o->simulate;
  set.simulate_delay = o->simulate_delay;
  set.simulate_skip_missing = o->simulate_skip_missing;
  set.timeout_s = o->timeout_s;
  set.iterations = o->iterations;
  set.workdir = o->workdir;
  set.objective = o->objective;
  set.local_rank = local_rank;
  set.rank = rank;
  set.watch = watch;
  set.options = o->eval_opts;
  set.n_options = o->n_eval_opts;
  set.compile_jobs = o->compile_jobs;
  set.local_workers = o->node_workers;
  return mpt_evaluator_open(o->evaluator, p, s, &set, out, err);
}

/* workers (or the one rank): the evaluator, bound to the node-local device and watched by the job; a
 * worker of a simulated class replays that class's file */
static int open_evaluator(mpt_job *job, mpt_error *err) {
  job->stop.grace_s = job->o.grace_s;
  job->stop.stop_comm = job->size > 1 ? job->comm : MPI_COMM_NULL;
  mpt_job_options eo = job->o;
  int k = mpt_job_rank_class(&job->o, job->rank, job->size, job->rank_class, sizeof job->rank_class);
  if (k >= 0) eo.simulate = eo.sim_file[k];
  if (job->size > 1 && job->o.device) return 0; /* a job of another class: no evaluator, the device as given */
  if (eo.virtual_workers > 0) {
    if (job->size > 1)
      return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-workers runs on one rank (rank 0 simulates the workers): "
                           "start it without mpiexec or with -n 1");
    eo.simulate_delay = 0; /* the virtual clock takes the delay; nothing sleeps */
  }
  return mpt_job_open_evaluator(&eo, job->prob, job->space, job->rank, job->local_rank,
                                (mpt_watch){evaluation_watch, &job->stop}, &job->ev, err);
}

/* rank 0: --objective, the one a resumed log was tuned for (the workers score with the one given: no other) */
static int open_objective(mpt_job *job, mpt_error *err) {
  int rc = mpt_job_objective_open(&job->objective, job->o.objective, job->prob, job->space, err);
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
  if (rc == 0 && job->rank == 0) rc = check_outputs(job, err);
  if (rc == 0 && job->rank == 0) rc = set_t4_aside(job, err);
  if (rc == 0 && job->rank == 0) rc = open_log(job, err);
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
    rc = job->is_worker ? open_evaluator(job, err) : 0;
    all = mpt_job_workers_gonogo(job->comm, job->is_worker, job->cmd, rc, &job->absent, err);
  }
  if (all < 0) {
    mpt_job_close(job);
    return rc < 0 ? rc : all;
  }
  *out = job;
  return 0;
}

/* ---- run: the phases ---- */

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

/* rank 0: the run's session in the log: a new log (with --force too: it replaces the old by rename, never
 * while another run writes it) or the resumed one's next session, with the settings it goes on with (and
 * those a recovered log lost), and the device table */
static int start_log(mpt_job *job, const mpt_device_info *devices, int n_devices, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  job->cmdline = join_command_line(o->argc, o->argv);
  job->optstr = join_options(o);
  const char *evaluator = o->virtual_workers > 0 ? MPT_JOB_VIRTUAL_EVALUATOR : o->evaluator;
  char simulate[4096];
  mpt_job_sim_text(o, simulate, sizeof simulate);
  mpt_run_meta meta = {job->cmd, o->problem, job->prob->text, o->strategy, job->optstr ? job->optstr : "",
                       evaluator, o->simulate ? simulate : NULL, o->seed, o->budget, o->time_budget,
                       job->cmdline ? job->cmdline : job->cmd, t4_to_record(job), job->objective_text, 0, job->priors_desc};
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

/* the evaluator the workers run: `auto` resolved as evaluators/auto.c resolves it (sim for a replayed file, cpu for
 * C, C++ or no kernel, a GPU evaluator for CUDA and HIP: "cuda" stands for both, their compile-ahead is the same) */
static const char *workers_evaluator(const mpt_job *job) {
  const mpt_job_options *o = &job->o;
  if (strcmp(o->evaluator, "auto") != 0) return o->evaluator;
  if (o->simulate) return "sim";
  const cJSON *ks = job->prob ? cJSON_GetObjectItemCaseSensitive(job->prob->json, "KernelSpecification") : NULL;
  const cJSON *lang = ks ? cJSON_GetObjectItemCaseSensitive(ks, "Language") : NULL;
  const char *l = cJSON_IsString(lang) ? lang->valuestring : "";
  if (strcasecmp(l, "CUDA") == 0 || strcasecmp(l, "HIP") == 0) return "cuda";
  return strcasecmp(l, "OpenCL") == 0 ? "auto" : "cpu";
}

/* rank 0, the cpu evaluator: once, when the workers of a node (rank 0's, the node with the most of them taken as
 * its shape) share cores, with their compile jobs exceed its cores, or its load average does */
static void warn_cpu_load(const mpt_job *job) {
  const mpt_job_options *o = &job->o;
  if (strcmp(workers_evaluator(job), "cpu") != 0) return;
  int workers = o->node_workers > 0 ? o->node_workers : 1;
  mpt_cpu_load l;
  mpt_cpu_load_read(workers, o->compile_jobs > 0 ? o->compile_jobs : mpt_evaluator_default_jobs("cpu", workers), &l);
  char msg[768];
  if (mpt_cpu_load_warning(&l, msg, sizeof msg)) fprintf(stderr, "mptune %s: warning: %s\n", job->cmd, msg);
}

void mpt_job_device(const mpt_job *job, mpt_device_info *out) {
  if (!job->ev && job->o.device) {
    *out = *job->o.device;
    out->rank = job->rank;
    return;
  }
  mpt_device_describe(job->ev, job->rank, out);
  if (job->rank_class[0]) mpt_device_class_assign(out, job->rank_class);
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

/* a re-measurement of a finalist (--confirm): logged apart from the evaluations */
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
  const char *name = workers_evaluator(job);
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
  mpt_coord_config cc;
  memset(&cc, 0, sizeof cc);
  *c = cc;
  cc.comm = job->comm;
  cc.local = job->size == 1 ? job->ev : NULL;
  cc.strategy = job->strat;
  int rc = job->size > 1 ? mpt_job_classes_searches(&job->classes, &job->o, job->space, job->strat, job->default_id,
                                                    job->class_strat, job->searches, err) : 0;
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

int mpt_job_evaluator_open(const mpt_job *job) { return job->ev != NULL; }

void mpt_job_take_result(mpt_job *job, int rc, const mpt_coord_result *all) {
  mpt_coord_result *r = &job->res;
  *r = *all;
  mpt_search_totals(job->searches, job->n_searches, r);
  int finished = job->n_searches > 0, exhausted = 1;
  for (int k = 0; k < job->n_searches; k++) {
    const char *why = job->searches[k].res.reason;
    finished &= why && (strcmp(why, "budget") == 0 || strcmp(why, "exhausted") == 0);
    exhausted &= why && strcmp(why, "exhausted") == 0;
  }
  if (rc == 0 && finished) r->reason = exhausted ? "exhausted" : "budget";
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

/* ---- report: the phases ---- */

static const char *reason_text(const char *reason) {
  if (!reason) return "?";
  if (strcmp(reason, "budget") == 0) return "evaluation budget reached";
  if (strcmp(reason, "time") == 0) return "time budget reached";
  if (strcmp(reason, "exhausted") == 0) return "every configuration evaluated";
  if (strcmp(reason, "signal") == 0) return "stopped by a signal";
  if (strcmp(reason, "waiting") == 0)
    return "every device class with workers is done; a class without workers in this session waits (continue with "
           "--resume where it has workers)";
  return reason;
}

/* "label: name=value,..." of configuration id, however long (mpt_space_format says how long) */
static void print_config(const char *label, const mpt_space *space, int64_t id) {
  char small[1024], *cfg = small;
  int need = mpt_space_format(space, id, small, (int)sizeof small);
  if (need >= (int)sizeof small && (cfg = malloc((size_t)need + 1)) != NULL) mpt_space_format(space, id, cfg, need + 1);
  printf("%s: %s\n", label, cfg ? cfg : small);
  if (cfg != small) free(cfg);
}

/* why the run stopped; a stop by a signal or by the time budget leaves it resumable: more time (or the rest
 * of an exhaustive collection) is one --resume away */
static void print_stop(const mpt_coord_result *res) {
  if (strcmp(res->reason, "signal") == 0 && res->stopped_rank > 0 && res->signal > 0)
    printf("stopped: worker rank %d received signal %d (%s); %lld evaluations logged (%lld cancelled in flight); "
           "continue with --resume\n", res->stopped_rank, res->signal, mpt_signal_name(res->signal),
           (long long)res->done, (long long)res->cancelled);
  else if (strcmp(res->reason, "signal") == 0 && res->signal == 0)
    printf("stopped: worker rank %d was stopped by a signal of its own (it cancelled its evaluation); %lld evaluations "
           "logged (%lld cancelled in flight); continue with --resume\n",
           res->stopped_rank, (long long)res->done, (long long)res->cancelled);
  else if (strcmp(res->reason, "signal") == 0)
    printf("stopped: signal %d received; %lld evaluations logged (%lld cancelled in flight); continue with --resume\n",
           res->signal, (long long)res->done, (long long)res->cancelled);
  else if (strcmp(res->reason, "time") == 0) {
    char cancelled[96] = "";
    if (res->cancelled > 0)
      snprintf(cancelled, sizeof cancelled, " (%lld cancelled: still running --grace seconds later)", (long long)res->cancelled);
    printf("stopped: time budget reached; %lld evaluations logged%s; more with --resume [--time SECONDS]\n",
           (long long)res->done, cancelled);
    if (res->ask_stopped[0] && res->new_evals == 0) /* a resume with as little time makes no progress either */
      printf("note: the time ran out before the strategy proposed anything (%s); a resume starts that over, so "
             "give it a longer --time\n", res->ask_stopped);
  }
  else
    printf("stopped: %s\n", reason_text(res->reason));
}

/* a projection's stop: it is never resumed */
static void print_virtual_stop(const mpt_coord_result *res) {
  if (strcmp(res->reason, "signal") == 0)
    printf("stopped: signal %d received; the projection ends here, with what was taken so far\n", res->signal);
  else if (strcmp(res->reason, "time") == 0)
    printf("stopped: time budget reached on the virtual clock; %lld evaluations\n", (long long)res->done);
  else
    printf("stopped: %s\n", reason_text(res->reason));
}

/* how many evaluations, how fast, and how busy the coordinator and the workers were */
static void print_counts(const mpt_coord_result *res, int size, const char *simulate) {
  printf("evaluations: %lld (%lld valid, %lld failed), %lld in this session\n", (long long)res->done,
         (long long)res->valid, (long long)res->failed, (long long)res->new_evals);
  if (res->missing > 0)
    printf("skipped: %lld configuration%s not in the replayed file %s (logged as missing, not counted)\n",
           (long long)res->missing, res->missing == 1 ? "" : "s", simulate ? simulate : "?");
  printf("rate: %.2f evaluations/s over %.3f s with %d worker%s; coordinator busy %.1f us/evaluation, cpu %.1f us/evaluation; workers busy %.1f %%\n",
         res->wall_s > 0 ? (double)res->new_evals / res->wall_s : 0.0, res->wall_s, res->n_workers,
         res->n_workers == 1 ? "" : "s", res->new_evals ? 1e6 * res->busy_s / (double)res->new_evals : 0.0,
         res->new_evals && size > 1 ? 1e6 * res->cpu_s / (double)res->new_evals : 0.0,
         res->wall_s > 0 ? 100.0 * res->eval_s / ((double)res->n_workers * res->wall_s) : 0.0);
}

/* how much of the wall time the devices worked (module load to the end of the timed runs, summed over the
 * workers) and waited: for a compiler, the coordinator, the exclusive lock of a shared GPU */
static void print_device_share(const mpt_coord_result *res) {
  if (!(res->device_s > 0) || !(res->wall_s > 0) || res->n_workers < 1) return;
  double worked = 100.0 * res->device_s / ((double)res->n_workers * res->wall_s);
  printf("devices: worked %.1f %% of the wall time, waited %.1f %% (%.3f s of device work over %d worker%s, "
         "%.2f evaluations/s)\n", worked, worked < 100 ? 100 - worked : 0.0, res->device_s, res->n_workers,
         res->n_workers == 1 ? "" : "s", (double)res->new_evals / res->wall_s);
}

/* a default measured in an earlier session: which one, as /sessions records it */
static void print_default_session(const mpt_job *job) {
  const mpt_runlog_session_info *s = &job->default_when;
  printf("note: the default was measured in an earlier session (session %d, %s, %s); a speed-up across sessions "
         "compares times taken under possibly different load\n", (int)job->default_session + 1,
         s->host[0] ? s->host : "host unknown", s->start_time[0] ? s->start_time : "date unknown");
}

/* the best configuration found, and the default's objective and the speed-up over it */
static void print_best(mpt_job *job) {
  const mpt_coord_result *res = &job->res;
  if (res->best_id < 0) {
    printf("best: none (no valid configuration among %lld evaluations)\n", (long long)res->done);
    return;
  }
  int reordered = 0;
  const mpt_job_finalist *confirmed = res->confirmed > 0 || job->confirm.use_logged
                                          ? mpt_job_confirm_best(&job->confirm, &reordered) : NULL;
  if (confirmed) mpt_job_confirm_print(&job->confirm, &job->objective, job->space, res->confirmed);
  double best = confirmed ? confirmed->confirmed : res->best;
  print_config("best", job->space, confirmed ? confirmed->id : res->best_id);
  mpt_job_objective_print(&job->objective, "objective", best);
  if (confirmed) printf("(the best confirmed: the median of its %d re-measurements)\n", confirmed->n_conf);
  if (!reordered) mpt_job_objective_print_spread(&job->objective);
  if (res->default_seen && isfinite(res->default_objective)) {
    print_config("default", job->space, job->default_id);
    mpt_job_objective_print(&job->objective, "default objective", res->default_objective);
    mpt_job_objective_print_gain(&job->objective, best, res->default_objective);
    if (res->default_logged) print_default_session(job);
  } else if (res->default_seen) {
    printf("default: failed (no valid measurement of the default configuration)\n");
  } else if (res->default_missing) {
    printf("default: not in the replayed file (skipped: no speed-up reported)\n");
  } else if (job->default_id < 0) {
    printf("default: not a valid configuration of the space (no speed-up reported)\n");
  }
}

/* the T4 export of a finished run (or of a tuning run stopped by its time budget; a collection is exported
 * once whole) */
static int export_t4(const mpt_job *job, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  const char *reason = job->res.reason;
  int by_time = strcmp(reason, "time") == 0, finished = !by_time && strcmp(reason, "signal") != 0;
  if (!o->t4) return 0;
  if (!finished && !(by_time && !o->collect)) {
    printf("t4: not written (the %s is not finished)\n", o->collect ? "collection" : "run");
    return 0;
  }
  if (job->classes.n > 1 && !mpt_outfile_special(o->t4)) /* one file per device class */
    return mpt_runlog_export_t4_classes(o->log, o->t4, stdout, "t4:", err);
  int rc = mpt_runlog_export_t4(o->log, o->t4, err);
  if (rc < 0) return rc;
  printf("t4: %s%s\n", job->t4_shown, job->t4_from_log ? " (as the first session asked)" : "");
  return 0;
}

int mpt_job_report(mpt_job *job, mpt_error *err) {
  if (!job->ran) return 0;
  const mpt_coord_result *res = &job->res;
  if (job->run_rc < 0) {
    fprintf(stderr, "mptune %s: the run stopped after %lld evaluations%s\n", job->cmd, (long long)res->done,
            job->o.virtual_workers > 0 ? " (a projection is not resumed)" : "; it can be continued with --resume");
    return 0;
  }
  if (job->default_session >= 0 && mpt_runlog_session(job->log, job->default_session, &job->default_when) != 0)
    memset(&job->default_when, 0, sizeof job->default_when);
  int rc = mpt_runlog_finish(job->log, res->reason, err);
  if (rc < 0) return rc;
  if (job->o.virtual_workers > 0) print_virtual_stop(res);
  else print_stop(res);
  print_counts(res, job->size, job->o.simulate);
  if (!job->o.simulate) print_device_share(res);
  if (job->o.virtual_workers > 0) {
    char line[512];
    mpt_virtual_format(&job->vres, job->o.virtual_workers, line, sizeof line);
    printf("%s; projection took %.3f s\n", line, job->vres.real_s);
  }
  if (job->n_searches > 1) /* times of different devices do not compare: a best per class */
    mpt_class_summary_print(stdout, job->space, job->searches, job->n_searches);
  else
    print_best(job);
  mpt_job_objective_print_front(&job->objective);
  int finished = strcmp(res->reason, "budget") == 0 || strcmp(res->reason, "exhausted") == 0;
  if (job->n_searches > 1 && !job->o.no_cross && finished &&
      (rc = mpt_portability_print(stdout, job->log, job->searches, job->n_searches, err)) < 0)
    return rc;
  mpt_runlog_close(job->log);
  job->log = NULL;
  printf("log: %s\n", job->o.log);
  if ((rc = export_t4(job, err)) < 0) return rc;
  fflush(stdout);
  /* as a shell reports a command a signal stopped (to rank 0, or to one worker that told of it): 130, 143;
   * a worker that cancelled without telling which signal: 1 */
  int by_signal = strcmp(res->reason, "signal") == 0;
  job->exit_status = by_signal ? (res->signal ? 128 + res->signal : 1) : 0;
  return 0;
}

int mpt_job_exit_status(const mpt_job *job) { return job->exit_status; }

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
  free(job->t4_logged);
  free(job);
}
