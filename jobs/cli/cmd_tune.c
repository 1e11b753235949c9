/* jobs/cli/cmd_tune.c: `mptune tune` and `mptune collect` on the command line: their options parsed into
 * a job's (jobs/job.h: the distributed run itself, its log and its report), --help (a strategy's options
 * with --strategy NAME), and the job opened, run, reported and closed, its errors said on rank 0. `collect`
 * is a brute-force run over the whole valid set. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coordinator/coordinator.h"
#include "coordinator/signals.h"
#include "evaluators/evaluator.h"
#include "gp/gp_dist.h"
#include "gp/gp_slices.h"
#include "jobs/cli/commands.h"
#include "jobs/job.h"
#include "jobs/job_confirm.h"
#include "jobs/output/outfile.h"
#include "mpi/wire.h"
#include "strategies/strategy.h"

/* "auto, sim, cpu, cuda, hip": the registered evaluators */
static const char *evaluator_names(void) {
  static char names[512];
  int len = 0;
  names[0] = '\0';
  for (int i = 0; i < mpt_evaluator_count() && len < (int)sizeof names; i++)
    len += snprintf(names + len, sizeof names - (size_t)len, "%s%s", i ? ", " : "", mpt_evaluator_at(i)->name);
  return names;
}

static void usage(FILE *f, int collect) {
  if (collect)
    fprintf(f,
            "usage: mpiexec.mpich -n N mptune collect FILE.json --log space.h5 [--t4 space_T4.json]\n"
            "         [--resume | --force] [--simulate [CLASS=]FILE]... [--simulate-delay F]\n"
            "         [--simulate-missing stop|skip] [--class-ranks CLASS=R1,R2,...]... [--evaluator NAME]\n"
            "         [--evaluator-option key=value]... [--objective time|energy|edp|METRIC[:min|:max][,...]]\n"
            "         [--time SECONDS] [--timeout S] [--iterations N] [--workdir DIR] [--grace S]\n"
            "         [--compile-jobs N] [--lookahead N] [--progress auto|tty|lines|off | --no-progress]\n"
            "Evaluates every valid configuration of FILE.json across all workers (brute force); resumable.\n");
  else
    fprintf(f,
            "usage: mpiexec.mpich -n N mptune tune FILE.json --log run.h5 [--strategy NAME] [--budget N]\n"
            "         [--time SECONDS] [--seed S] [--t4 run_T4.json] [--resume | --force]\n"
            "         [--simulate [CLASS=]FILE]... [--simulate-delay F] [--simulate-missing stop|skip]\n"
            "         [--virtual-workers N [--virtual-time wall|cpu]] [--class-ranks CLASS=R1,R2,...]...\n"
            "         [--no-transfer] [--no-cross] [--evaluator NAME] [--option key=value]...\n"
            "         [--evaluator-option key=value]... [--objective time|energy|edp|METRIC[:min|:max][,...]]\n"
            "         [--confirm K] [--prior FILE]...\n"
            "         [--timeout S] [--iterations N] [--workdir DIR] [--grace S]\n"
            "         [--compile-jobs N] [--lookahead N] [--progress auto|tty|lines|off | --no-progress]\n"
            "         [--model-ranks K]\n"
            "Rank 0 coordinates, ranks 1..N-1 evaluate (one device each); with -n 1 one rank does both.\n"
            "--model-ranks K: the last K ranks evaluate nothing and serve bo's model with rank 0 (each holds a\n"
            "slice of the candidates; from %d observations on (environment MPT_GP_DIST_MIN_OBS) the marginal\n"
            "likelihood is factorized with ScaLAPACK over them); bo with acquisition=ei, no local picks and\n"
            "stall_action=boost (the defaults).\n"
            "Defaults: --strategy and --option the problem's Search block, else random; --budget and\n"
            "--time its Budget block (ConfigurationCount or ConfigurationFraction, TuningDuration), --budget\n"
            "all configurations when only --time is given; evaluator 'sim' with --simulate, else 'auto' (cpu for\n"
            "C and C++ kernels; for CUDA and HIP kernels each worker picks cuda on an NVIDIA GPU, hip on an AMD\n"
            "one); the\n"
            "logged strategy, options and budget with --resume (a run finished by its budget goes on with a\n"
            "larger --budget); --grace 20\n"
            "(seconds to finish in-flight evaluations after SIGINT/SIGTERM or the --time budget; then\n"
            "they are logged as cancelled and evaluated again on --resume). A run log is never\n"
            "overwritten without --force.\n"
            "--resume of a log HDF5 can not read (damaged, cut short) recovers its intact records by their\n"
            "checksums, keeps the file as run.h5.damaged and takes the lost settings from this command.\n"
            "Progress (stderr): auto (the default) redraws one line on a terminal and prints a line every 5 s\n"
            "or 10%% of the budget otherwise; tty always redraws, lines always prints lines; off, --no-progress: none.\n"
            "--simulate-missing: a configuration the replayed file lacks ends the run (stop, the default:\n"
            "resumable with a file that has it), or is logged as missing and skipped (skip: no measurement,\n"
            "not counted against the budget, not exported, never proposed again).\n"
            "Device classes: workers are grouped by their device (vendor, name, architecture; the environment\n"
            "variable MPTUNE_DEVICE_CLASS or --class-ranks CLASS=R1,R2 names a class explicitly), and each class\n"
            "gets a search of its own: its own strategy instance and seed stream, its candidates sent only to its\n"
            "workers, and its own --budget (the budget is per class). --simulate CLASS=FILE (repeatable) makes\n"
            "simulated classes, CLASS replaying FILE; worker ranks are given to them round-robin (rank 1 the first\n"
            "class, rank 2 the second, ...) unless --class-ranks CLASS=R1,R2 names them. A worker whose evaluator\n"
            "cannot open (no usable device) is left out, and the run goes on with the others. Each observation of\n"
            "one class is told to the other classes' searches as related knowledge (--no-transfer: not). At the\n"
            "end the best configuration of each class is measured on every other class and shown as a\n"
            "portability table (logged, not counted against any budget; --no-cross: not).\n"
            "--objective: what is minimized (or maximized with :max): time (ms, the default), energy (J per\n"
            "launch) or edp (energy x delay, J*s), both measured by a power observer (cuda, hip: NVML, ROCm SMI),\n"
            "or the Name of one of the problem's Metrics (an expression over the parameters, time, energy and\n"
            "power; its Goal min or max). Several, comma-separated (time,energy): the strategy minimizes the\n"
            "first and the summary prints the Pareto front of all (docs/GPU.md).\n"
            "--confirm K (default 3): once the budget or the space is spent, the K best are measured again, 3 times\n"
            "each, interleaved, on one worker; the best reported is the best confirmed (the median of its\n"
            "re-measurements), and the summary says when that reorders them. The default is measured again in\n"
            "the same rounds (when it is valid and no finalist), and the speed-up is over its confirmed time.\n"
            "Not counted against the budget, logged apart (/confirmations); 0: none.\n"
            "--prior FILE (repeatable): an earlier run log or a brute-forced T4 / Kernel Tuner cache file of\n"
            "this problem on another device, told to the strategy as prior knowledge before its first ask\n"
            "(one source per file; never counted as this run's evaluations; listed in the log's 'priors').\n"
            "bo uses it as its GP's prior mean (option transfer), the evolutionary strategies seed their\n"
            "populations with its best configurations (option transfer), prior_order follows it blindly;\n"
            "random and brute_force ignore it.\n"
            "Compile-ahead: each worker holds --lookahead configurations beyond the one it runs (default: its\n"
            "compile jobs, at most 8) and compiles them in forked processes while the device times the current\n"
            "one, --compile-jobs at once (default: the node's online cores / its workers; for the cpu evaluator\n"
            "one less, the core the timed variant takes). Only module load, launch and timing stay on the\n"
            "device's critical path; a stop answers what was held and not started as cancelled (evaluated again\n"
            "on --resume). The same source and defines never compile twice in a run. Workers bound to one GPU\n"
            "compile at once but time one at a time (a lock per device in /dev/shm). The cpu evaluator stops\n"
            "its compiles while it times a variant when workers + compile jobs, or the load average, exceed\n"
            "the node's cores, and warns once when its workers share cores or the node is loaded.\n"
            "mptune tune --strategy NAME --help lists the options of strategy NAME, mptune tune --evaluator\n"
            "NAME --help those of evaluator NAME (--evaluator-option key=value; evaluators: %s).\n", mpt_gp_dist_min_obs(),
            evaluator_names());
}

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

static int parse_args(int argc, char **argv, int collect, mpt_job_options *a, int *help, mpt_error *err) {
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
  int missing_given = 0, delay_given = 0, vtime_given = 0;
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
      delay_given = 1;
    } else if (!collect && strcmp(o, "--virtual-workers") == 0) {
      if ((rc = mpt_cmd_parse_int(o, v, 1, &n, err)) == 0 && n > 1000000)
        rc = mpt_error_set(err, MPT_ERR_VALUE, "--virtual-workers: bad value '%s' (at most 1000000)", v);
      if (rc == 0) a->virtual_workers = (int)n;
    } else if (!collect && strcmp(o, "--virtual-time") == 0) {
      if (strcmp(v, "wall") != 0 && strcmp(v, "cpu") != 0)
        return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-time %s: expected wall or cpu", v);
      a->virtual_cpu_time = strcmp(v, "cpu") == 0;
      vtime_given = 1;
    }
    else if (strcmp(o, "--simulate-missing") == 0) {
      if (strcmp(v, "stop") != 0 && strcmp(v, "skip") != 0)
        return mpt_error_set(err, MPT_ERR_VALUE, "--simulate-missing %s: expected stop or skip", v);
      a->simulate_skip_missing = strcmp(v, "skip") == 0;
      missing_given = 1;
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
    if (rc < 0) return rc;
  }
  if (!a->problem) return mpt_error_set(err, MPT_ERR_VALUE, "missing the T1 problem file (mptune %s FILE.json ...)", collect ? "collect" : "tune");
  if (!a->log) return mpt_error_set(err, MPT_ERR_VALUE, "missing --log FILE.h5 (the run log)");
  if (a->resume && a->force) return mpt_error_set(err, MPT_ERR_VALUE, "--resume and --force exclude each other");
  if (a->simulate_delay > 0 && !a->simulate)
    return mpt_error_set(err, MPT_ERR_VALUE, "--simulate-delay needs --simulate FILE");
  if (missing_given && !a->simulate)
    return mpt_error_set(err, MPT_ERR_VALUE, "--simulate-missing needs --simulate FILE");
  if (a->virtual_workers > 0 && !a->simulate)
    return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-workers needs --simulate FILE (the recorded times)");
  if (a->virtual_workers > 0 && a->resume)
    return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-workers: a projection starts afresh (no --resume)");
  if (vtime_given && a->virtual_workers == 0)
    return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-time needs --virtual-workers N");
  if (a->virtual_workers > 0 && !delay_given) a->simulate_delay = 1; /* the recorded times as they are */
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
  if (!et) return mpt_error_set(err, MPT_ERR_NAME, "unknown evaluator '%s' (known: %s)", a->evaluator, evaluator_names());
  for (int i = 0; i < a->n_eval_opts; i++) /* said once, before anything opens */
    if (mpt_evaluator_check_option(et, a->eval_opts[i], err)) return err->code;
  return 0;
}

/* --evaluator NAME --help: the evaluator's options; the exit status */
static int evaluator_help(const char *name, int rank) {
  const mpt_evaluator_type *e = mpt_evaluator_find(name);
  if (!e && rank == 0) fprintf(stderr, "mptune: unknown evaluator '%s' (known: %s)\n", name, evaluator_names());
  else if (rank == 0) mpt_evaluator_print_options(e, stdout);
  return e ? 0 : 2;
}

/* --help, or --strategy NAME --help, or --evaluator NAME --help: the usage, or the strategy's or the evaluator's
 * options; the exit status */
static int help(int argc, char **argv, int collect, int rank) {
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--evaluator") == 0) return evaluator_help(argv[i + 1], rank);
  const mpt_strategy_type *t = NULL;
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

/* --model-ranks K: the job's communicator (rank 0 and the workers) and the model's (rank 0 and the last K
 * ranks), split from MPI_COMM_WORLD on every rank; *serving: this rank is a model rank */
static int split_model_ranks(mpt_job_options *o, int *serving, mpt_error *err) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  *serving = 0;
  if (o->model_ranks <= 0) return 0;
  if (o->model_ranks >= size)
    return mpt_error_set(err, MPT_ERR_VALUE, "--model-ranks %d: needs more than %d ranks (rank 0 coordinates, the last %d "
                         "serve the model; mpiexec.mpich -n %d or more)", o->model_ranks, o->model_ranks, o->model_ranks,
                         o->model_ranks + 1);
  int model = rank >= size - o->model_ranks;
  MPI_Comm_split(MPI_COMM_WORLD, model, rank, &o->comm);
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 || model ? 0 : MPI_UNDEFINED, rank, &o->model_comm);
  *serving = model;
  return 0;
}

/* the job on rank 0 and the workers: opened, run, reported, closed; the exit status */
static int run_job(const char *cmd, mpt_job_options *o, int rc, mpt_error *err) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_job *job = NULL;
  if (rc < 0) rc = mpt_wire_gonogo(MPI_COMM_WORLD, rc, err); /* every rank read the same options: all stop */
  else rc = mpt_job_open(o, &job, err);
  if (rc < 0) {
    if (rank == 0) fprintf(stderr, "mptune %s: %s\n", cmd, err->msg);
    return rc == MPT_ERR_STOPPED ? 128 + mpt_signals_last() : 1; /* a signal stopped the set-up */
  }
  if (mpt_job_run(job, err) < 0) fprintf(stderr, "mptune %s: %s\n", cmd, err->msg); /* rank 0 only */
  if (mpt_job_report(job, err) < 0) fprintf(stderr, "mptune %s: %s\n", cmd, err->msg);
  int status = mpt_job_exit_status(job);
  mpt_job_close(job);
  return status;
}

static int run(int argc, char **argv, int collect) {
  const char *cmd = collect ? "collect" : "tune";
  int rank, serving = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mpt_signals_install();
  mpt_error err;
  mpt_error_clear(&err);
  mpt_job_options o;
  int want_help;
  int rc = parse_args(argc, argv, collect, &o, &want_help, &err);
  if (rc == 0 && want_help) return help(argc, argv, collect, rank);
  if (rc == 0) rc = split_model_ranks(&o, &serving, &err);
  if (serving) { /* a model rank: serves rank 0 until it quits */
    rc = mpt_gp_slices_serve(o.model_comm, &err);
    if (rc < 0) fprintf(stderr, "mptune %s: model rank %d: %s\n", cmd, rank, err.msg);
    return rc < 0 ? 1 : 0;
  }
  int status = run_job(cmd, &o, rc, &err);
  if (rank == 0 && o.model_ranks > 0 && rc == 0) mpt_gp_slices_quit(o.model_comm); /* the model ranks are done */
  return status;
}

int mpt_cmd_tune(int argc, char **argv) { return run(argc, argv, 0); }
int mpt_cmd_collect(int argc, char **argv) { return run(argc, argv, 1); }
