/* jobs/cli/cmd_tune_help.c: the help of `mptune tune` and `mptune collect`: their usage, a strategy's options
 * (--strategy NAME --help), an evaluator's (--evaluator NAME --help), and the names of the evaluators. */
#include <stdio.h>
#include <string.h>
#include "evaluators/evaluator.h"
#include "gp/gp_dist.h"
#include "jobs/cli/cmd_tune.h"
#include "strategies/strategy.h"

/* "auto, sim, cpu, cuda, hip": the registered evaluators */
const char *mpt_tune_evaluator_names(void) {
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
            mpt_tune_evaluator_names());
}

/* --evaluator NAME --help: the evaluator's options; the exit status */
static int evaluator_help(const char *name, int rank) {
  const mpt_evaluator_type *e = mpt_evaluator_find(name);
  if (!e && rank == 0) fprintf(stderr, "mptune: unknown evaluator '%s' (known: %s)\n", name, mpt_tune_evaluator_names());
  else if (rank == 0) mpt_evaluator_print_options(e, stdout);
  return e ? 0 : 2;
}

/* --help, or --strategy NAME --help, or --evaluator NAME --help: the usage, or the strategy's or the evaluator's
 * options; the exit status */
int mpt_tune_help(int argc, char **argv, int collect, int rank) {
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
