/* jobs/cli/cmd_tune_args.c: the command line of `mptune tune` and `mptune collect` parsed into a job's options
 * (jobs/job.h) and checked before anything opens: values in range, options that need others, an output never
 * replacing an input, the evaluator and its options known. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coordinator/coordinator.h"
#include "evaluators/evaluator.h"
#include "jobs/cli/cmd_tune.h"
#include "jobs/cli/commands.h"
#include "jobs/job.h"
#include "jobs/job_confirm.h"
#include "jobs/output/outfile.h"

/* --simulate FILE (one class, named by its device) or CLASS=FILE (repeatable: simulated classes) */
static int add_simulate(mpt_job_options *a, const char *v, mpt_error *err) {
  char cls[64];
  const char *file;
  int rc = mpt_job_sim_split(v, cls, sizeof cls, &file, err);
  if (rc) return rc;
  if (!cls[0] && (a->simulate || a->n_sim))
    return mpt_error_set(err, MPT_ERR_VALUE, "--simulate %s: several replayed files need a class each (--simulate CLASS=FILE)", v);
  if (cls[0] && a->simulate && !a->n_sim)
    return mpt_error_set(err, MPT_ERR_VALUE, "--simulate %s: give every replayed file a class (CLASS=FILE)", v);
  if (!cls[0]) {
    a->simulate = file;
    return 0;
  }
  for (int i = 0; i < a->n_sim; i++)
    if (strcmp(a->sim_class[i], cls) == 0) return mpt_error_set(err, MPT_ERR_VALUE, "--simulate %s: class %s is given twice", v, cls);
  if (a->n_sim >= MPT_JOB_MAX_CLASSES) return mpt_error_set(err, MPT_ERR_VALUE, "too many --simulate (max %d)", MPT_JOB_MAX_CLASSES);
  snprintf(a->sim_class[a->n_sim], sizeof a->sim_class[0], "%s", cls);
  a->sim_file[a->n_sim++] = file;
  if (!a->simulate) a->simulate = file;
  return 0;
}

/* the options of both tune and collect (flags included, for "did you mean") */
#define COMMON_OPTIONS                                                                                      \
  "--time", "--log", "--t4", "--simulate", "--simulate-delay", "--simulate-missing", "--evaluator", "--timeout", \
      "--evaluator-option", "--iterations", "--class-ranks", "--no-transfer", "--no-cross",                   \
      "--workdir", "--grace", "--compile-jobs", "--lookahead", "--progress", "--resume", "--force", "--no-progress", \
      "--objective", "--help"

/* which of the options that others depend on were given: --simulate-missing, --simulate-delay, --virtual-time */
typedef struct given_flags {
  int missing, delay, vtime;
} given_flags;

/* option o (of tune, or of collect) with its value v into *a; 0 or <0 */
static int take_value(const char *o, const char *v, int collect, mpt_job_options *a, given_flags *g, mpt_error *err) {
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
  } else if (!collect && strcmp(o, "--model-ranks") == 0) {
    if ((rc = mpt_cmd_parse_int(o, v, 1, &n, err)) == 0) a->model_ranks = (int)n;
  } else if (strcmp(o, "--log") == 0) a->log = v;
  else if (strcmp(o, "--t4") == 0) a->t4 = v;
  else if (strcmp(o, "--simulate") == 0) rc = add_simulate(a, v, err);
  else if (strcmp(o, "--class-ranks") == 0) {
    if (a->n_class_ranks >= MPT_JOB_MAX_CLASSES)
      return mpt_error_set(err, MPT_ERR_VALUE, "too many --class-ranks (max %d)", MPT_JOB_MAX_CLASSES);
    a->class_ranks[a->n_class_ranks++] = v;
  }
  else if (strcmp(o, "--simulate-delay") == 0) {
    rc = mpt_cmd_parse_num(o, v, 0, 1e6, &a->simulate_delay, err);
    g->delay = 1;
  } else if (!collect && strcmp(o, "--virtual-workers") == 0) {
    if ((rc = mpt_cmd_parse_int(o, v, 1, &n, err)) == 0 && n > 1000000)
      rc = mpt_error_set(err, MPT_ERR_VALUE, "--virtual-workers: bad value '%s' (at most 1000000)", v);
    if (rc == 0) a->virtual_workers = (int)n;
  } else if (!collect && strcmp(o, "--virtual-time") == 0) {
    if (strcmp(v, "wall") != 0 && strcmp(v, "cpu") != 0)
      return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-time %s: expected wall or cpu", v);
    a->virtual_cpu_time = strcmp(v, "cpu") == 0;
    g->vtime = 1;
  }
  else if (strcmp(o, "--simulate-missing") == 0) {
    if (strcmp(v, "stop") != 0 && strcmp(v, "skip") != 0)
      return mpt_error_set(err, MPT_ERR_VALUE, "--simulate-missing %s: expected stop or skip", v);
    a->simulate_skip_missing = strcmp(v, "skip") == 0;
    g->missing = 1;
  }
  else if (strcmp(o, "--evaluator") == 0) a->evaluator = v;
  else if (strcmp(o, "--evaluator-option") == 0) {
    if (a->n_eval_opts >= MPT_JOB_MAX_OPTS)
      return mpt_error_set(err, MPT_ERR_VALUE, "too many --evaluator-option (max %d)", MPT_JOB_MAX_OPTS);
    a->eval_opts[a->n_eval_opts++] = v;
  }
  else if (strcmp(o, "--objective") == 0) a->objective = v;
  else if (!collect && strcmp(o, "--confirm") == 0) {
    if ((rc = mpt_cmd_parse_int(o, v, 0, &n, err)) == 0 && n > MPT_CONFIRM_MAX_K)
      rc = mpt_error_set(err, MPT_ERR_VALUE, "--confirm: bad value '%s' (at most %d finalists)", v, MPT_CONFIRM_MAX_K);
    if (rc == 0) a->confirm_k = (int)n;
  }
  else if (!collect && strcmp(o, "--option") == 0) {
    if (!strchr(v, '=')) return mpt_error_set(err, MPT_ERR_VALUE, "--option %s: expected key=value", v);
    if (a->n_opts >= MPT_JOB_MAX_OPTS)
      return mpt_error_set(err, MPT_ERR_VALUE, "too many --option (max %d)", MPT_JOB_MAX_OPTS);
    a->opts[a->n_opts++] = v;
  } else if (!collect && strcmp(o, "--prior") == 0) {
    if (a->n_priors >= (int)(sizeof a->priors / sizeof a->priors[0]))
      return mpt_error_set(err, MPT_ERR_VALUE, "too many --prior (max %d)", (int)(sizeof a->priors / sizeof a->priors[0]));
    a->priors[a->n_priors++] = v;
  } else if (strcmp(o, "--timeout") == 0) rc = mpt_cmd_parse_num(o, v, 0, 1e7, &a->timeout_s, err);
  else if (strcmp(o, "--iterations") == 0) {
    if ((rc = mpt_cmd_parse_int(o, v, 1, &n, err)) == 0 && n > MPT_OBS_MAX_TIMES) /* refused, not capped */
      rc = mpt_error_set(err, MPT_ERR_VALUE, "--iterations: bad value '%s' (at most %d timed runs per evaluation)", v,
                         MPT_OBS_MAX_TIMES);
    if (rc == 0) a->iterations = (int)n;
  } else if (strcmp(o, "--workdir") == 0) a->workdir = v;
  else if (strcmp(o, "--grace") == 0) rc = mpt_cmd_parse_num(o, v, 0, 1e6, &a->grace_s, err);
  else if (strcmp(o, "--compile-jobs") == 0) {
    if ((rc = mpt_cmd_parse_int(o, v, 1, &n, err)) == 0 && n > 1024)
      rc = mpt_error_set(err, MPT_ERR_VALUE, "--compile-jobs: bad value '%s' (at most 1024)", v);
    if (rc == 0) a->compile_jobs = (int)n;
  } else if (strcmp(o, "--lookahead") == 0) {
    if ((rc = mpt_cmd_parse_int(o, v, 0, &n, err)) == 0 && n > MPT_COORD_MAX_LOOKAHEAD)
      rc = mpt_error_set(err, MPT_ERR_VALUE, "--lookahead: bad value '%s' (at most %d)", v, MPT_COORD_MAX_LOOKAHEAD);
    if (rc == 0) a->lookahead = (int)n;
  }
  else if (strcmp(o, "--progress") == 0) {
    if (strcmp(v, "auto") == 0) a->progress = MPT_PROGRESS_AUTO;
    else if (strcmp(v, "tty") == 0) a->progress = MPT_PROGRESS_TTY;
    else if (strcmp(v, "lines") == 0) a->progress = MPT_PROGRESS_LINES;
    else if (strcmp(v, "off") == 0) a->progress = MPT_PROGRESS_OFF;
    else return mpt_error_set(err, MPT_ERR_VALUE, "--progress %s: expected auto, tty, lines or off", v);
  } else
    return mpt_error_set(err, MPT_ERR_NAME, "unknown option '%s' (see mptune %s --help)", o, collect ? "collect" : "tune");
  return rc;
}

/* the options taken together, once all are read: those that need others, the defaults that depend on others, an
 * output never replacing an input, the evaluator and its options known; 0 or <0 */
static int check_args(mpt_job_options *a, int collect, const given_flags *g, mpt_error *err) {
  if (!a->problem) return mpt_error_set(err, MPT_ERR_VALUE, "missing the T1 problem file (mptune %s FILE.json ...)", collect ? "collect" : "tune");
  if (!a->log) return mpt_error_set(err, MPT_ERR_VALUE, "missing --log FILE.h5 (the run log)");
  if (a->resume && a->force) return mpt_error_set(err, MPT_ERR_VALUE, "--resume and --force exclude each other");
  if (a->simulate_delay > 0 && !a->simulate)
    return mpt_error_set(err, MPT_ERR_VALUE, "--simulate-delay needs --simulate FILE");
  if (g->missing && !a->simulate)
    return mpt_error_set(err, MPT_ERR_VALUE, "--simulate-missing needs --simulate FILE");
  if (a->virtual_workers > 0 && !a->simulate)
    return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-workers needs --simulate FILE (the recorded times)");
  if (a->virtual_workers > 0 && a->resume)
    return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-workers: a projection starts afresh (no --resume)");
  if (g->vtime && a->virtual_workers == 0)
    return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-time needs --virtual-workers N");
  if (a->virtual_workers > 0 && !g->delay) a->simulate_delay = 1; /* the recorded times as they are */
  if (!a->evaluator) a->evaluator = a->simulate ? "sim" : "auto";
  if (a->virtual_workers > 0 && strcmp(a->evaluator, "sim") != 0)
    return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-workers replays the --simulate file: evaluator sim, not '%s'",
                         a->evaluator);
  if (collect) a->strategy = "brute_force";
  else if (!a->strategy) a->strategy = "random";
  /* an output never replaces an input (the problem, the replayed file; the files the problem reads: the job
   * checks those) or the other output */
  if (mpt_job_refuse_input(a, "the problem file", a->problem, err) != 0 ||
      mpt_job_refuse_input(a, "--simulate", a->simulate, err) != 0)
    return err->code;
  for (int i = 1; i < a->n_sim; i++)
    if (mpt_job_refuse_input(a, "--simulate", a->sim_file[i], err) != 0) return err->code;
  for (int i = 0; i < a->n_priors; i++)
    if (mpt_job_refuse_input(a, "--prior", a->priors[i], err) != 0) return err->code;
  if (mpt_same_file(a->log, a->t4))
    return mpt_error_set(err, MPT_ERR_VALUE, "--t4 and --log name the same file '%s'", a->log);
  const mpt_evaluator_type *et = mpt_evaluator_find(a->evaluator);
  if (!et) return mpt_error_set(err, MPT_ERR_NAME, "unknown evaluator '%s' (known: %s)", a->evaluator, mpt_tune_evaluator_names());
  for (int i = 0; i < a->n_eval_opts; i++) /* said once, before anything opens */
    if (mpt_evaluator_check_option(et, a->eval_opts[i], err)) return err->code;
  return 0;
}

int mpt_tune_parse_args(int argc, char **argv, int collect, mpt_job_options *a, int *help, mpt_error *err) {
  memset(a, 0, sizeof *a);
  *help = 0;
  a->collect = collect;
  a->argc = argc;
  a->argv = argv;
  a->budget = -1;
  a->grace_s = 20;
  a->confirm_k = collect ? 0 : MPT_CONFIRM_DEFAULT_K;
  a->lookahead = -1;
  a->progress = MPT_PROGRESS_AUTO;
  given_flags g = {0, 0, 0};
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) { *help = 1; return 0; }
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
    if (strcmp(o, "--no-transfer") == 0) { a->no_transfer = 1; continue; }
    if (strcmp(o, "--no-cross") == 0) { a->no_cross = 1; continue; }
    static const char *const tune_known[] = {"--strategy", "--budget", "--seed", "--option", "--virtual-workers", "--virtual-time",
                                             "--confirm", "--prior", "--model-ranks", COMMON_OPTIONS, NULL};
    static const char *const collect_known[] = {COMMON_OPTIONS, NULL};
    if (mpt_cmd_known(collect ? "collect" : "tune", o, collect ? collect_known : tune_known, err)) return err->code;
    const char *v = mpt_cmd_value(argc, argv, &i, err);
    if (!v) return err->code;
    int rc = take_value(o, v, collect, a, &g, err);
    if (rc < 0) return rc;
  }
  return check_args(a, collect, &g, err);
}
