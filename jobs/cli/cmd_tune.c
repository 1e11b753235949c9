/* jobs/cli/cmd_tune.c: `mptune tune` and `mptune collect`: a distributed tuning run under MPI. Every rank
 * reads the T1 file and builds the same space; rank 0 checks the run (strategy, budget, log; that no output
 * replaces an input, the kernel's files included, and that every output's directory is writable), the
 * workers open their evaluator bound to their node-local device; a go/no-go makes every rank exit
 * together on any error; then rank 0 runs the coordinator loop and the workers the worker loop. Rank 0
 * owns the run log: create (or --resume), device table, one flushed record per evaluation, finish
 * reason, optional T4 export. `collect` is a brute-force run over the whole valid set.
 * Test hook: with MPT_TRACE_APPENDS=FILE the coordinator appends "id status" to FILE after each record
 * is flushed to the log (the SIGKILL test checks that every traced record survives). */
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
#include <unistd.h>
#include "coordinator/coordinator.h"
#include "coordinator/signals.h"
#include "evaluators/evaluator.h"
#include "evaluators/kernel_spec.h"
#include "jobs/cli/commands.h"
#include "jobs/output/outfile.h"
#include "jobs/runlog/runlog.h"
#include "mpi/device.h"
#include "mpi/wire.h"
#include "mpi/worker.h"
#include "spaces/sys/clock.h"
#include "spaces/space.h"
#include "spaces/t1.h"
#include "strategies/strategy.h"

#define MAX_OPTS 64

typedef struct tune_args {
  int collect;
  const char *problem;
  const char *strategy;
  int64_t budget;          /* -1: not given */
  double time_budget;
  uint64_t seed;
  int seed_given, strategy_given;
  const char *log;
  const char *t4;
  int resume, force;
  const char *simulate;
  double simulate_delay;
  const char *evaluator;
  const char *opts[MAX_OPTS];
  int n_opts;
  double timeout_s;
  int iterations;
  const char *workdir;
  double grace_s;
  mpt_progress_mode progress;
  int help;
} tune_args;

static void usage(FILE *f, int collect) {
  if (collect)
    fprintf(f,
            "usage: mpiexec.mpich -n N mptune collect FILE.json --log space.h5 [--t4 space_T4.json]\n"
            "         [--resume | --force] [--simulate FILE [--simulate-delay F]] [--evaluator NAME]\n"
            "         [--time SECONDS] [--timeout S] [--iterations N] [--workdir DIR] [--grace S]\n"
            "         [--progress auto|tty|lines|off | --no-progress]\n"
            "Evaluates every valid configuration of FILE.json across all workers (brute force); resumable.\n");
  else
    fprintf(f,
            "usage: mpiexec.mpich -n N mptune tune FILE.json --log run.h5 [--strategy NAME] [--budget N]\n"
            "         [--time SECONDS] [--seed S] [--t4 run_T4.json] [--resume | --force]\n"
            "         [--simulate FILE [--simulate-delay F]] [--evaluator NAME] [--option key=value]...\n"
            "         [--timeout S] [--iterations N] [--workdir DIR] [--grace S]\n"
            "         [--progress auto|tty|lines|off | --no-progress]\n"
            "Rank 0 coordinates, ranks 1..N-1 evaluate (one device each); with -n 1 one rank does both.\n"
            "Defaults: --strategy random, evaluator 'sim' with --simulate else 'cpu', --budget all\n"
            "configurations when only --time is given, the logged strategy, options and budget with\n"
            "--resume (a run finished by its budget goes on with a larger --budget), --grace 20\n"
            "(seconds to finish in-flight evaluations after SIGINT/SIGTERM or the --time budget; then\n"
            "they are logged as cancelled and evaluated again on --resume). A run log is never\n"
            "overwritten without --force.\n"
            "--resume of a log HDF5 can not read (damaged, cut short) recovers its intact records by their\n"
            "checksums, keeps the file as run.h5.damaged and takes the lost settings from this command.\n"
            "Progress (stderr): auto (the default) redraws one line on a terminal and prints a line every 5 s\n"
            "or 10%% of the budget otherwise; tty always redraws, lines always prints lines; off, --no-progress: none.\n"
            "mptune tune --strategy NAME --help lists the options of strategy NAME.\n");
}

/* an error when the run log or the T4 export would replace the input PATH (what: how to name it) */
static int refuse_input(const tune_args *a, const char *what, const char *path, mpt_error *err) {
  if (mpt_same_file(a->log, path))
    return mpt_error_set(err, MPT_ERR_VALUE, "--log %s is %s: it would be replaced by the run log", a->log, what);
  if (mpt_same_file(a->t4, path))
    return mpt_error_set(err, MPT_ERR_VALUE, "--t4 %s is %s: it would be replaced by the T4 export", a->t4, what);
  return 0;
}

/* the files the kernel source names in #include "FILE" lines (resolved as the compilers' -I of the kernel's
 * directory finds them; one level: a header's own includes are not followed) are inputs too */
static int check_kernel_includes(const tune_args *a, const mpt_kernel_spec *ks, mpt_error *err) {
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
    if (refuse_input(a, what, path, err)) return err->code;
  }
  return 0;
}

/* rank 0, before anything is written: the files the problem's KernelSpecification reads (the kernel source,
 * BinaryRaw DataSource files; paths resolved by the spec's own parser) are inputs too. A problem whose spec
 * does not load (none, with a replayed run) has none here; a worker that needs it reports why. */
static int check_kernel_inputs(const tune_args *a, const mpt_problem *prob, mpt_error *err) {
  mpt_kernel_spec *ks = NULL;
  mpt_error ignored;
  mpt_error_clear(&ignored);
  if (mpt_kspec_load(prob, &ks, &ignored) != 0) return 0;
  int rc = refuse_input(a, "the kernel source (KernelSpecification.KernelFile)", ks->kernel_file, err);
  if (rc == 0) rc = check_kernel_includes(a, ks, err);
  for (int i = 0; rc == 0 && i < ks->n_args; i++) {
    const mpt_ks_fillspec *f[2] = {&ks->args[i].fill, ks->args[i].has_reference ? &ks->args[i].ref : NULL};
    for (int k = 0; rc == 0 && k < 2; k++) {
      if (!f[k] || f[k]->type != MPT_FILL_BINARY_RAW || !f[k]->source) continue;
      char what[256];
      snprintf(what, sizeof what, "the BinaryRaw DataSource of %sargument '%s'", k ? "the reference of " : "",
               ks->args[i].name);
      rc = refuse_input(a, what, f[k]->source, err);
    }
  }
  mpt_kspec_free(ks);
  return rc;
}

/* the options of both tune and collect (flags included, for "did you mean") */
#define COMMON_OPTIONS                                                                                      \
  "--time", "--log", "--t4", "--simulate", "--simulate-delay", "--evaluator", "--timeout", "--iterations",   \
      "--workdir", "--grace", "--progress", "--resume", "--force", "--no-progress", "--help"

static int parse_args(int argc, char **argv, int collect, tune_args *a, mpt_error *err) {
  memset(a, 0, sizeof *a);
  a->collect = collect;
  a->budget = -1;
  a->grace_s = 20;
  a->progress = MPT_PROGRESS_AUTO;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) { a->help = 1; return 0; }
    if (o[0] != '-' || o[1] == '\0') {
      if (a->problem) return mpt_error_set(err, MPT_ERR_VALUE, "unexpected argument '%s' (one T1 file only)", o);
      a->problem = o;
      continue;
    }
    int flag_only = strcmp(o, "--resume") == 0 || strcmp(o, "--force") == 0;
    if (flag_only) {
      if (o[2] == 'r') a->resume = 1; else a->force = 1;
      continue;
    }
    if (strcmp(o, "--no-progress") == 0) { a->progress = MPT_PROGRESS_OFF; continue; } /* as bench spells it */
    static const char *const tune_known[] = {"--strategy", "--budget", "--seed", "--option", COMMON_OPTIONS, NULL};
    static const char *const collect_known[] = {COMMON_OPTIONS, NULL};
    if (mpt_cmd_known(collect ? "collect" : "tune", o, collect ? collect_known : tune_known, err)) return err->code;
    const char *v = mpt_cmd_value(argc, argv, &i, err);
    if (!v) return err->code;
    double d = 0;
    int64_t n = 0;
    int rc = 0;
    if (!collect && strcmp(o, "--strategy") == 0) a->strategy = v, a->strategy_given = 1;
    else if (!collect && strcmp(o, "--budget") == 0) {
      if ((rc = mpt_cmd_parse_int(o, v, 1, &n, err)) == 0) a->budget = n;
    } else if (strcmp(o, "--time") == 0) {
      if ((rc = mpt_cmd_parse_positive(o, v, 1e9, &d, err)) == 0) a->time_budget = d;
    } else if (!collect && strcmp(o, "--seed") == 0) {
      if ((rc = mpt_cmd_parse_int(o, v, 0, &n, err)) == 0) { a->seed = (uint64_t)n; a->seed_given = 1; }
    } else if (strcmp(o, "--log") == 0) a->log = v;
    else if (strcmp(o, "--t4") == 0) a->t4 = v;
    else if (strcmp(o, "--simulate") == 0) a->simulate = v;
    else if (strcmp(o, "--simulate-delay") == 0) rc = mpt_cmd_parse_num(o, v, 0, 1e6, &a->simulate_delay, err);
    else if (strcmp(o, "--evaluator") == 0) a->evaluator = v;
    else if (!collect && strcmp(o, "--option") == 0) {
      if (!strchr(v, '=')) return mpt_error_set(err, MPT_ERR_VALUE, "--option %s: expected key=value", v);
      if (a->n_opts >= MAX_OPTS) return mpt_error_set(err, MPT_ERR_VALUE, "too many --option (max %d)", MAX_OPTS);
      a->opts[a->n_opts++] = v;
    } else if (strcmp(o, "--timeout") == 0) rc = mpt_cmd_parse_num(o, v, 0, 1e7, &a->timeout_s, err);
    else if (strcmp(o, "--iterations") == 0) {
      if ((rc = mpt_cmd_parse_int(o, v, 1, &n, err)) == 0 && n > MPT_OBS_MAX_TIMES) /* it was capped silently */
        rc = mpt_error_set(err, MPT_ERR_VALUE, "--iterations: bad value '%s' (at most %d timed runs per evaluation)", v,
                           MPT_OBS_MAX_TIMES);
      if (rc == 0) a->iterations = (int)n;
    } else if (strcmp(o, "--workdir") == 0) a->workdir = v;
    else if (strcmp(o, "--grace") == 0) rc = mpt_cmd_parse_num(o, v, 0, 1e6, &a->grace_s, err);
    else if (strcmp(o, "--progress") == 0) {
      if (strcmp(v, "auto") == 0) a->progress = MPT_PROGRESS_AUTO;
      else if (strcmp(v, "tty") == 0) a->progress = MPT_PROGRESS_TTY;
      else if (strcmp(v, "lines") == 0) a->progress = MPT_PROGRESS_LINES;
      else if (strcmp(v, "off") == 0) a->progress = MPT_PROGRESS_OFF;
      else return mpt_error_set(err, MPT_ERR_VALUE, "--progress %s: expected auto, tty, lines or off", v);
    } else
      return mpt_error_set(err, MPT_ERR_NAME, "unknown option '%s' (see mptune %s --help)", o, collect ? "collect" : "tune");
    if (rc < 0) return rc;
  }
  if (!a->problem) return mpt_error_set(err, MPT_ERR_VALUE, "missing the T1 problem file (mptune %s FILE.json ...)", collect ? "collect" : "tune");
  if (!a->log) return mpt_error_set(err, MPT_ERR_VALUE, "missing --log FILE.h5 (the run log)");
  if (a->resume && a->force) return mpt_error_set(err, MPT_ERR_VALUE, "--resume and --force exclude each other");
  if (a->simulate_delay > 0 && !a->simulate)
    return mpt_error_set(err, MPT_ERR_VALUE, "--simulate-delay needs --simulate FILE");
  if (!a->evaluator) a->evaluator = a->simulate ? "sim" : "cpu";
  if (collect) a->strategy = "brute_force";
  else if (!a->strategy) a->strategy = "random";
  if (!collect && a->budget < 0 && a->time_budget <= 0 && !a->resume) /* resume: the logged budget */
    return mpt_error_set(err, MPT_ERR_VALUE, "give an evaluation budget (--budget N) and/or a time budget (--time SECONDS)");
  /* an output never replaces an input (the problem, the replayed file; the files the problem reads: see
   * check_kernel_inputs) or the other output */
  if (refuse_input(a, "the problem file", a->problem, err) != 0 || refuse_input(a, "--simulate", a->simulate, err) != 0)
    return err->code;
  if (mpt_same_file(a->log, a->t4))
    return mpt_error_set(err, MPT_ERR_VALUE, "--t4 and --log name the same file '%s'", a->log);
  if (!mpt_evaluator_find(a->evaluator)) {
    char names[512];
    int len = 0;
    names[0] = '\0';
    for (int i = 0; i < mpt_evaluator_count() && len < (int)sizeof names; i++)
      len += snprintf(names + len, sizeof names - (size_t)len, "%s%s", i ? ", " : "", mpt_evaluator_at(i)->name);
    return mpt_error_set(err, MPT_ERR_NAME, "unknown evaluator '%s' (known: %s)", a->evaluator, len ? names : "none");
  }
  return 0;
}

/* record callback: append + flush, then (for the kill test) note the id in MPT_TRACE_APPENDS */
typedef struct record_ctx {
  mpt_runlog *log;
  int trace_fd;
} record_ctx;

/* the coordinator's warm start reads a resumed log block by block */
static int log_each(void *src, int (*fn)(void *ctx, const mpt_obs *o, const int32_t *config), void *ctx,
                    mpt_error *err) {
  return mpt_runlog_each(src, fn, ctx, err);
}

static int record_obs(void *ctx, const mpt_obs *o, mpt_error *err) {
  record_ctx *rc = ctx;
  int r = mpt_runlog_append(rc->log, o, 1, err);
  if (r < 0) return r;
  if (rc->trace_fd >= 0) {
    char line[64];
    int n = snprintf(line, sizeof line, "%" PRId64 " %d\n", o->id, (int)o->status);
    if (write(rc->trace_fd, line, (size_t)n) != n) { /* tracing is best effort */ }
  }
  return 0;
}

static char *join_command_line(int argc, char **argv) {
  size_t len = 8;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 3;
  char *s = malloc(len);
  if (!s) return NULL;
  size_t at = (size_t)snprintf(s, len, "mptune");
  for (int i = 0; i < argc; i++) at += (size_t)snprintf(s + at, len - at, " %s", argv[i]);
  return s;
}

/* --resume: the run goes on with the strategy it was started with and, unless --option is given, its
 * options (the log's "strategy" and "options" settings; opts keeps the split copy of the options); a
 * --strategy given instead is used, with a note */
static int resume_strategy(tune_args *a, mpt_runlog *log, char **opts, mpt_error *err) {
  const char *st = mpt_runlog_meta(log, "strategy");
  if (!st || !st[0]) return 0; /* lost with damaged metadata: --strategy or the default */
  if (a->strategy_given) {
    if (strcmp(st, a->strategy) != 0)
      printf("note: %s was started with strategy '%s'; continuing with '%s'\n", a->log, st, a->strategy);
    return 0;
  }
  a->strategy = st;
  const char *logged = mpt_runlog_meta(log, "options");
  int take = a->n_opts == 0 && logged && logged[0];
  printf("note: continuing with the strategy %s was started with, '%s'%s%s%s\n", a->log, st,
         take ? " (options " : a->n_opts ? " (with the --option given)" : "", take ? logged : "", take ? ")" : "");
  if (!take) return 0;
  if (!(*opts = strdup(logged))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (char *save = NULL, *kv = strtok_r(*opts, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
    if (a->n_opts >= MAX_OPTS) return mpt_error_set(err, MPT_ERR_VALUE, "%s: too many logged options (max %d)", a->log, MAX_OPTS);
    a->opts[a->n_opts++] = kv;
  }
  return 0;
}

static char *join_options(const tune_args *a) {
  size_t len = 1;
  for (int i = 0; i < a->n_opts; i++) len += strlen(a->opts[i]) + 1;
  char *s = malloc(len);
  if (!s) return NULL;
  s[0] = '\0';
  for (int i = 0; i < a->n_opts; i++) {
    if (i) strcat(s, ",");
    strcat(s, a->opts[i]);
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

static const char *reason_text(const char *reason) {
  if (!reason) return "?";
  if (strcmp(reason, "budget") == 0) return "evaluation budget reached";
  if (strcmp(reason, "time") == 0) return "time budget reached";
  if (strcmp(reason, "exhausted") == 0) return "every configuration evaluated";
  if (strcmp(reason, "signal") == 0) return "stopped by a signal";
  return reason;
}

/* The watch of the run's evaluations (mpt_eval_settings.watch): an evaluation in progress is cancelled
 * (its child or compiler killed, logged as cancelled, evaluated again on --resume) on a second signal, once
 * the --grace period after the first has expired, with one rank once the --grace period after the time
 * budget has, and on a worker once the coordinator has sent STOP (it gave up waiting). So --grace bounds
 * the evaluations on every rank, not only the coordinator's wait for them. */
typedef struct evaluation_stop {
  double grace_s;
  double deadline_s;   /* one rank with a time budget, while it coordinates: the cancel time (0: none) */
  MPI_Comm stop_comm;  /* a worker's: where the coordinator's STOP comes from (MPI_COMM_NULL: one rank) */
} evaluation_stop;

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

/* "label: name=value,..." of configuration id, however long (mpt_space_format says how long) */
static void print_config(const char *label, const mpt_space *space, int64_t id) {
  char small[1024], *cfg = small;
  int need = mpt_space_format(space, id, small, (int)sizeof small);
  if (need >= (int)sizeof small && (cfg = malloc((size_t)need + 1)) != NULL) mpt_space_format(space, id, cfg, need + 1);
  printf("%s: %s\n", label, cfg ? cfg : small);
  if (cfg != small) free(cfg);
}

static int run(int argc, char **argv, int collect) {
  const char *cmd = collect ? "collect" : "tune";
  int rank, size;
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int is_worker = size == 1 || rank > 0;
  mpt_signals_install();

  mpt_error err;
  mpt_error_clear(&err);
  tune_args a;
  int rc = parse_args(argc, argv, collect, &a, &err);
  if (rc == 0 && a.help) {
    const mpt_strategy_type *t = NULL; /* --strategy NAME --help: its options too */
    const char *name = NULL;
    for (int i = 1; i + 1 < argc && !collect; i++)
      if (strcmp(argv[i], "--strategy") == 0) t = mpt_strategy_find(name = argv[i + 1]);
    if (name && !t) {
      char names[1024];
      mpt_strategy_names(names, sizeof names);
      if (rank == 0) fprintf(stderr, "mptune tune: unknown strategy '%s'; known strategies: %s\n", name, names);
      return 2;
    }
    if (rank == 0 && t) mpt_strategy_print_options(t, stdout);
    else if (rank == 0) usage(stdout, collect);
    return 0;
  }
  int local_rank = -1, local_count = 0;
  if (mpt_device_local_rank(comm, is_worker, &local_rank, &local_count) != 0 && rc == 0)
    rc = mpt_error_set(&err, MPT_ERR_INTERNAL, "cannot determine the node-local rank");

  mpt_problem *prob = NULL;
  mpt_space *space = NULL;
  mpt_strategy *strat = NULL;
  mpt_evaluator *ev = NULL;
  mpt_runlog *log = NULL;
  evaluation_stop stop = {a.grace_s, 0, size > 1 ? comm : MPI_COMM_NULL}; /* ev's watch's context */
  int64_t n_resumed = 0;
  int trace_fd = -1;
  char *cmdline = NULL, *optstr = NULL, *logged_opts = NULL;
  int exit_code = 1;

  if (rc == 0) rc = mpt_cmd_load_problem(a.problem, &prob, &err);
  if (rc == 0) {
    rc = mpt_cmd_build_space(cmd, rank == 0, prob, &space, &err);
    if (rc < 0 && mpt_signals_count() > 0) exit_code = 128 + mpt_signals_last(); /* stopped by a signal */
    if (rc < 0 && strncmp(err.msg, a.problem, strlen(a.problem)) != 0) mpt_error_prefix(&err, "%s", a.problem);
    /* the problem's warnings as mptune space gives them (a condition that fails to evaluate, a Default
     * not among the values), once; with an empty space, the cause */
    for (int i = 0; rank == 0 && i < prob->n_warnings; i++) fprintf(stderr, "mptune %s: warning: %s\n", cmd, prob->warnings[i]);
    const char *ew = rc == 0 ? mpt_space_eval_warning(space) : NULL;
    if (rank == 0 && ew && mpt_space_size(space) > 0) fprintf(stderr, "mptune %s: warning: %s\n", cmd, ew);
    int first_line = ew ? (int)strcspn(ew, "\n") : 0; /* the cause is said there, before the expression and caret */
    if (rc == 0 && mpt_space_size(space) == 0)
      rc = ew ? mpt_error_set(&err, MPT_ERR_VALUE, "%.*s; so the search space has no valid configuration%s", first_line,
                              ew, ew + first_line)
              : mpt_error_set(&err, MPT_ERR_VALUE, "%s: the search space has no valid configuration", a.problem);
  }
  if (rc == 0 && collect) a.budget = mpt_space_size(space);
  int budget_given = a.budget > 0;
  if (rc == 0 && a.budget < 0) a.budget = mpt_space_size(space); /* --time only (or resume, below) */

  /* rank 0: the run itself (strategy, log) */
  if (rc == 0 && rank == 0) { /* first what would be replaced or cannot be written: before anything runs */
    rc = check_kernel_inputs(&a, prob, &err);
    if (rc == 0 && !a.resume) rc = mpt_cmd_check_output("--log", a.log, &err);
    if (rc == 0) rc = mpt_cmd_check_output("--t4", a.t4, &err);
  }
  /* --t4 - (or a name of standard output): the T4 document alone on standard output, the report on
   * standard error (as with space --list -); the export writes to a copy of the original descriptor */
  const char *t4_shown = a.t4;
  char t4_fd_name[32];
  int t4_fd = -1;
  if (rc == 0 && rank == 0 && a.t4 && mpt_outfile_is_stdout(a.t4)) {
    fflush(stdout);
    t4_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (t4_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
      rc = mpt_error_set(&err, MPT_ERR_IO, "--t4 %s: cannot set standard output aside: %s", a.t4, strerror(errno));
    } else {
      snprintf(t4_fd_name, sizeof t4_fd_name, "/dev/fd/%d", t4_fd);
      a.t4 = t4_fd_name;
    }
  }
  if (rc == 0 && rank == 0) {
    struct stat sb;
    int exists = stat(a.log, &sb) == 0;
    if (a.resume) {
      if (!exists) rc = mpt_error_set(&err, MPT_ERR_IO, "--resume: run log '%s' does not exist", a.log);
      /* read and checked only: a resume refused below (or by a worker) leaves the log as it was; its new
       * session begins when the run does (mpt_runlog_begin_session) */
      else rc = mpt_runlog_open_checked(a.log, space, collect || !budget_given ? 0 : a.budget, cmd, &log, &err);
      if (rc == 0) n_resumed = mpt_runlog_count(log); /* the coordinator reads them (resume_each) */
      if (rc == 0 && mpt_runlog_extended(log))
        printf("note: %s had finished with %lld evaluations; extending it to %lld\n", a.log, (long long)n_resumed,
               (long long)a.budget);
      if (rc == 0 && !a.seed_given) {
        const char *s = mpt_runlog_meta(log, "seed");
        if (s) a.seed = strtoull(s, NULL, 10), a.seed_given = 1;
      }
      /* a log of the other command was refused by mpt_runlog_open_checked (cmd), finished or not */
      /* replayed and real measurements never in one log; another replay file (a partial one completed,
       * or another device's) is said */
      const char *sim = rc == 0 ? mpt_runlog_meta(log, "simulate") : NULL; /* "" or absent: real evaluations */
      if (rc == 0 && sim && (sim[0] != 0) != (a.simulate != NULL))
        rc = mpt_error_set(&err, MPT_ERR_STATE, "%s was run %s%s; resuming it %s would mix replayed and real "
                           "measurements in one log (start a new log for that)", a.log,
                           sim[0] ? "with --simulate " : "on real evaluations", sim,
                           a.simulate ? "with --simulate" : "on real evaluations");
      else if (rc == 0 && sim && sim[0] && strcmp(sim, a.simulate) != 0 && !mpt_same_file(sim, a.simulate))
        fprintf(stderr, "mptune %s: warning: %s was run with --simulate %s; resuming it with --simulate %s puts the "
                "measurements of both files in one log\n", cmd, a.log, sim, a.simulate);
      if (rc == 0 && !collect && !budget_given) { /* continue to the logged budget (a --time given bounds it too) */
        const char *b = mpt_runlog_meta(log, "budget");
        long long v = b ? strtoll(b, NULL, 10) : 0;
        if (v > 0) a.budget = v;
        else if (a.time_budget <= 0)
          rc = mpt_error_set(&err, MPT_ERR_VALUE, "%s records no evaluation budget%s: give --budget N or --time SECONDS", a.log,
                             mpt_runlog_recovered(log) ? " (it was lost with the damaged metadata; the recovered records are kept)" : "");
      }
      if (rc == 0 && !collect) rc = resume_strategy(&a, log, &logged_opts, &err);
    } else if (exists && !a.force) {
      rc = mpt_error_set(&err, MPT_ERR_STATE, "run log '%s' already exists: use --resume to continue that run or --force to overwrite it", a.log);
    } else if (exists && S_ISDIR(sb.st_mode)) {
      rc = mpt_error_set(&err, MPT_ERR_IO, "run log '%s' is a directory", a.log);
    } else if (exists) { /* --force: not over a log another run is writing (said before anything runs) */
      rc = mpt_runlog_check_unlocked(a.log, &err);
    }
    if (rc == 0 && !a.seed_given) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      a.seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec;
      a.seed %= 1000000000000ull;
    }
    if (rc == 0)
      rc = mpt_strategy_create(a.strategy, space, a.opts, a.n_opts, a.seed, a.budget, &strat, &err);
  }
  /* workers (or the one rank): the evaluator, bound to the node-local device */
  if (rc == 0 && is_worker) {
    mpt_eval_settings set;
    memset(&set, 0, sizeof set);
    set.simulate_path = a.simulate;
    set.simulate_delay = a.simulate_delay;
    set.timeout_s = a.timeout_s;
    set.iterations = a.iterations;
    set.workdir = a.workdir;
    set.local_rank = local_rank;
    set.rank = rank;
    set.watch = (mpt_watch){evaluation_watch, &stop};
    rc = mpt_evaluator_open(a.evaluator, prob, space, &set, &ev, &err);
  }

  /* go/no-go: any rank's error stops every rank now */
  rc = mpt_wire_gonogo(comm, rc, &err);
  if (rc < 0) {
    if (rank == 0) fprintf(stderr, "mptune %s: %s\n", cmd, err.msg);
    goto done;
  }

  /* device table */
  {
    mpt_device_info mine, *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
    if (is_worker) mpt_device_describe(ev, rank, &mine);
    else {
      memset(&mine, 0, sizeof mine);
      mine.rank = -1;
    }
    mpt_wire_gather_devices(comm, &mine, all ? all : &mine);
    if (rank == 0) {
      int first = size == 1 ? 0 : 1;
      printf("%s %s: %s, %lld valid configurations, strategy %s, budget %lld%s, seed %llu, %d worker%s\n",
             cmd, a.problem, prob->name, (long long)mpt_space_size(space), a.strategy, (long long)a.budget,
             a.time_budget > 0 ? " (and a time budget)" : "", (unsigned long long)a.seed, size - first,
             size - first == 1 ? "" : "s");
      if (all) mpt_device_table_print(stdout, all + first, size - first);
      fflush(stdout);
      cmdline = join_command_line(argc, argv);
      optstr = join_options(&a);
      mpt_run_meta meta = {collect ? "collect" : "tune", a.problem, prob->text, a.strategy,
                           optstr ? optstr : "", a.evaluator, a.simulate, a.seed, a.budget, a.time_budget,
                           cmdline ? cmdline : cmd};
      if (!a.resume) { /* with --force too: the new log replaces the old by rename, never while another run writes it */
        rc = mpt_runlog_create(a.log, space, &meta, &log, &err);
      } else {
        rc = mpt_runlog_begin_session(log, &err);
        if (rc == 0) warn_damaged(a.log, log, n_resumed);
        if (rc == 0) rc = mpt_runlog_resume_meta(log, &meta, &err); /* the settings it goes on with; those a recovered log lost */
      }
      if (rc == 0 && all) rc = mpt_runlog_set_devices(log, all + first, size - first, &err);
      free(all);
      if (rc < 0) {
        fprintf(stderr, "mptune %s: %s\n", cmd, err.msg);
        if (size > 1) mpt_wire_stop_all(comm, 1);
        goto done;
      }
    }
  }

  if (rank != 0) { /* worker */
    exit_code = mpt_worker_run(comm, 0, ev, NULL) == 0 ? 0 : 1;
    goto done;
  }

  /* coordinator */
  {
    const char *trace = getenv("MPT_TRACE_APPENDS");
    if (trace && trace[0]) trace_fd = open(trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    record_ctx rctx = {log, trace_fd};
    mpt_coord_config cc;
    memset(&cc, 0, sizeof cc);
    cc.comm = comm;
    cc.local = size == 1 ? ev : NULL;
    cc.strategy = strat;
    cc.space = space;
    cc.budget = a.budget;
    cc.time_budget = a.time_budget;
    cc.grace_s = a.grace_s;
    cc.resume_each = a.resume ? log_each : NULL;
    cc.resume_src = log;
    cc.default_id = mpt_space_default_id(space);
    cc.default_first = !collect; /* a tuning run measures the default first: the baseline of its speed-up */
    cc.record = record_obs;
    cc.record_ctx = &rctx;
    cc.progress = a.progress;
    cc.progress_out = stderr;
    if (a.resume)
      printf("resuming %s: %lld logged observations\n", a.log, (long long)n_resumed);
    mpt_coord_result res;
    if (size == 1 && a.time_budget > 0) stop.deadline_s = mpt_clock_mono_s() + a.time_budget + a.grace_s;
    rc = mpt_coord_run(&cc, &res, &err);
    stop.deadline_s = 0;
    if (rc < 0) {
      fprintf(stderr, "mptune %s: %s\n", cmd, err.msg);
      fprintf(stderr, "mptune %s: the run stopped after %lld evaluations; it can be continued with --resume\n",
              cmd, (long long)res.done);
      goto done;
    }
    /* a stop by a signal or by the time budget leaves the run resumable: more time (or the rest of an
     * exhaustive collection) is one --resume away */
    int by_signal = strcmp(res.reason, "signal") == 0, by_time = strcmp(res.reason, "time") == 0;
    int finished = !by_signal && !by_time;
    if (mpt_runlog_finish(log, res.reason, &err) < 0) {
      fprintf(stderr, "mptune %s: %s\n", cmd, err.msg);
      goto done;
    }
    mpt_runlog_close(log);
    log = NULL;
    if (by_signal && res.signal == 0)
      printf("stopped: worker rank %d was stopped by a signal of its own (it cancelled its evaluation); %lld evaluations "
             "logged (%lld cancelled in flight); continue with --resume\n",
             res.stopped_rank, (long long)res.done, (long long)res.cancelled);
    else if (by_signal)
      printf("stopped: signal %d received; %lld evaluations logged (%lld cancelled in flight); continue with --resume\n",
             res.signal, (long long)res.done, (long long)res.cancelled);
    else if (by_time) {
      char cancelled[96] = "";
      if (res.cancelled > 0)
        snprintf(cancelled, sizeof cancelled, " (%lld cancelled: still running --grace seconds later)", (long long)res.cancelled);
      printf("stopped: time budget reached; %lld evaluations logged%s; more with --resume [--time SECONDS]\n",
             (long long)res.done, cancelled);
      if (res.ask_stopped[0] && res.new_evals == 0) /* a resume with as little time makes no progress either */
        printf("note: the time ran out before the strategy proposed anything (%s); a resume starts that over, so "
               "give it a longer --time\n", res.ask_stopped);
    }
    else
      printf("stopped: %s\n", reason_text(res.reason));
    printf("evaluations: %lld (%lld valid, %lld failed), %lld in this session\n", (long long)res.done,
           (long long)res.valid, (long long)res.failed, (long long)res.new_evals);
    printf("rate: %.2f evaluations/s over %.3f s with %d worker%s; coordinator busy %.1f us/evaluation, cpu %.1f us/evaluation; workers busy %.1f %%\n",
           res.wall_s > 0 ? (double)res.new_evals / res.wall_s : 0.0, res.wall_s, res.n_workers,
           res.n_workers == 1 ? "" : "s", res.new_evals ? 1e6 * res.busy_s / (double)res.new_evals : 0.0,
           res.new_evals && size > 1 ? 1e6 * res.cpu_s / (double)res.new_evals : 0.0,
           res.wall_s > 0 ? 100.0 * res.eval_s / ((double)res.n_workers * res.wall_s) : 0.0);
    if (res.best_id >= 0) {
      print_config("best", space, res.best_id);
      printf("objective: %.6g\n", res.best);
      if (res.default_seen && isfinite(res.default_objective)) {
        print_config("default", space, cc.default_id);
        printf("default objective: %.6g\n", res.default_objective);
        if (res.best > 0) printf("speed-up over default: %.2fx\n", res.default_objective / res.best);
      } else if (res.default_seen) {
        printf("default: failed (no valid measurement of the default configuration)\n");
      } else if (cc.default_id < 0) {
        printf("default: not a valid configuration of the space (no speed-up reported)\n");
      }
    } else {
      printf("best: none (no valid configuration among %lld evaluations)\n", (long long)res.done);
    }
    printf("log: %s\n", a.log);
    if (a.t4 && (finished || (by_time && !collect))) { /* a collection is exported once whole */
      if (mpt_runlog_export_t4(a.log, a.t4, &err) < 0) {
        fprintf(stderr, "mptune %s: %s\n", cmd, err.msg);
        goto done;
      }
      printf("t4: %s\n", t4_shown);
    } else if (a.t4) {
      printf("t4: not written (the %s is not finished)\n", collect ? "collection" : "run");
    }
    fflush(stdout);
    /* as a shell reports a command a signal stopped: 130, 143; a worker's own signal: 1 */
    exit_code = by_signal ? (res.signal ? 128 + res.signal : 1) : 0;
  }

done:
  if (t4_fd >= 0) close(t4_fd);
  if (trace_fd >= 0) close(trace_fd);
  if (log) mpt_runlog_close(log);
  if (strat) mpt_strategy_destroy(strat);
  if (ev) mpt_evaluator_close(ev);
  if (space) mpt_space_free(space);
  if (prob) mpt_problem_free(prob);
  free(cmdline);
  free(optstr);
  free(logged_opts);
  return exit_code;
}

int mpt_cmd_tune(int argc, char **argv) { return run(argc, argv, 0); }
int mpt_cmd_collect(int argc, char **argv) { return run(argc, argv, 1); }
