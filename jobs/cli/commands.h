/* jobs/cli/commands.h: the sub-commands of the mptune executable, one file each (jobs/cli/cmd_*.c). Each
 * returns the process exit status; MPI is initialized by main() before any of them runs. */
#ifndef MPT_COMMANDS_H
#define MPT_COMMANDS_H
#include <stdint.h>
#include "spaces/sys/error.h"
#include "spaces/space.h"
#include "jobs/runlog/runlog.h"

typedef struct mpt_command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);  /* argv[0] is the sub-command name */
} mpt_command;

int mpt_cmd_space(int argc, char **argv);
int mpt_cmd_tune(int argc, char **argv);    /* jobs/cli/cmd_tune.c */
int mpt_cmd_collect(int argc, char **argv); /* jobs/cli/cmd_tune.c */
int mpt_cmd_devices(int argc, char **argv); /* jobs/cli/cmd_devices.c */
int mpt_cmd_export(int argc, char **argv);  /* jobs/cli/cmd_export.c */
int mpt_cmd_show(int argc, char **argv);    /* jobs/cli/cmd_show.c */
int mpt_cmd_bench(int argc, char **argv);   /* jobs/bench/cmd_bench.c */
int mpt_cmd_campaign(int argc, char **argv); /* jobs/cli/cmd_campaign.c */

extern const mpt_command mpt_commands[];

/* the value of the option argv[*i] (jobs/cli/cmd_args.c): argv[*i + 1], with *i moved onto it; NULL, with an error
 * naming the option, when there is none or the next word is itself an option ("--problem --space x.json") */
const char *mpt_cmd_value(int argc, char **argv, int *i, mpt_error *err);
/* 0 when option o is one of `known` (NULL-terminated); else "unknown option 'o'; did you mean 'K'?
 * (see mptune CMD --help)": checked before a value is taken, so a misspelt last option is not "needs a value" */
int mpt_cmd_known(const char *cmd, const char *o, const char *const *known, mpt_error *err);
/* "--opt VALUE" as an integer >= lo (jobs/cli/cmd_args.c): 0, or an error naming opt and the value */
int mpt_cmd_parse_int(const char *opt, const char *s, int64_t lo, int64_t *out, mpt_error *err);
/* "--opt VALUE" as a finite number in [lo, hi]: 0, or an error naming opt and the value */
int mpt_cmd_parse_num(const char *opt, const char *s, double lo, double hi, double *out, mpt_error *err);
/* "--opt VALUE" as a finite number in (0, hi]: 0, or an error naming opt, the value and what is accepted */
int mpt_cmd_parse_positive(const char *opt, const char *s, double hi, double *out, mpt_error *err);
/* checked before a command runs, for an output written as PATH.tmp then renamed (jobs/output/outfile.h): 0 when
 * PATH is special (/dev/stdout, a pipe) or its directory exists and is writable and PATH is not a
 * directory; else an error naming opt, PATH and why */
int mpt_cmd_check_output(const char *opt, const char *path, mpt_error *err);
/* the problem of file path as the commands read it: mpt_problem_load, then its KernelSpecification's keys
 * checked (mpt_kspec_check_keys: a misspelt key is refused whatever the evaluator, also where the spec is
 * never read: --simulate, devices, bench). *out is set when the file was loaded, also when its keys are
 * refused (the caller frees it). */
int mpt_cmd_load_problem(const char *path, mpt_problem **out, mpt_error *err);
/* mpt_space_build for command cmd, watched (mpt_space_build_watched): with print, from 5 s on a line on
 * stderr every 5 s with the share of the enumeration walked and the time left; the build stops on
 * SIGINT/SIGTERM where the command handles them (coordinator/signals.h) */
int mpt_cmd_build_space(const char *cmd, int print, const mpt_problem *p, mpt_space **out, mpt_error *err);

/* a run log opened by a command that reads one (jobs/cli/cmd_log.c), with the problem and space that recovered
 * it when HDF5 could not read it */
typedef struct mpt_cmd_log {
  mpt_runlog *log;
  mpt_problem *problem; /* NULL unless recovered */
  mpt_space *space;
} mpt_cmd_log;
/* the log at log_path read-only, without the writer's lock (a log a run is writing is read as it stands);
 * one HDF5 can not read is recovered from its records with problem's space when problem is given (a warning
 * on stderr says so, prefixed "mptune cmd:"), else the error says that --problem can; 0 or an error */
int mpt_cmd_open_log(const char *cmd, const char *log_path, const char *problem, mpt_cmd_log *out, mpt_error *err);
/* a warning on stderr when the log had damaged records, left out ("the N intact ones are VERB") */
void mpt_cmd_warn_damaged(const char *cmd, const char *log_path, const mpt_runlog *log, const char *verb);
void mpt_cmd_close_log(mpt_cmd_log *l);

#endif
