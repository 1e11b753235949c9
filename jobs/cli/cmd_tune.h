/* jobs/cli/cmd_tune.h: the parts of `mptune tune` and `mptune collect` (jobs/cli/cmd_tune.c runs them): the
 * options parsed (cmd_tune_args.c) and the help (cmd_tune_help.c). Private to jobs/cli/. */
#ifndef MPT_CMD_TUNE_H
#define MPT_CMD_TUNE_H
#include "jobs/job.h"
#include "spaces/sys/error.h"

/* the command line of tune (collect: 1 for collect) parsed into *a and checked (an output never replaces an input,
 * the evaluator and its options known); *help = 1 when --help or -h is given (nothing checked then). 0 or <0 */
int mpt_tune_parse_args(int argc, char **argv, int collect, mpt_job_options *a, int *help, mpt_error *err);
/* --help, or --strategy NAME --help, or --evaluator NAME --help: the usage, or the strategy's or the evaluator's
 * options, printed on rank 0; the exit status */
int mpt_tune_help(int argc, char **argv, int collect, int rank);
/* "auto, sim, cpu, cuda, hip": the registered evaluators */
const char *mpt_tune_evaluator_names(void);

#endif
