/* jobs/cli/cmd_show.c: `mptune show RUN.h5 [--top N] [--json] [--problem T1]`: a run log at a glance
 * (jobs/output/summary.h): the run (problem, strategy, budget and evaluations, how it finished, devices,
 * sessions), the best configurations with their times and speed-up over the default, and the failures by
 * status, per device class when several evaluated (a class's portability checks counted apart); --json the
 * same as one JSON document. This file owns the command: its options, the log opened and summarized, and the
 * form chosen (text: cmd_show_text.c, JSON: cmd_show_json.c). Reads the log read-only without its lock, so also
 * while a run writes it; with --problem, a log HDF5 can not read is recovered from its records. Only rank 0
 * works when started under mpiexec. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "jobs/cli/cmd_show.h"
#include "jobs/cli/commands.h"
#include "jobs/output/summary.h"

#define SHOW_TOP_DEFAULT 10

static void show_usage(FILE *f) {
  fprintf(f, "usage: mptune show RUN.h5 [--top N] [--json] [--problem PROBLEM.json]\n"
             "  prints a run log at a glance: the problem, strategy, budget and evaluations, how the run\n"
             "  finished, its devices and sessions; the best configurations by objective (time in ms) with\n"
             "  every parameter, the median and standard deviation of their per-iteration times and the\n"
             "  speed-up over the default configuration; the failures by status with their first reasons;\n"
             "  per device class when several evaluated, each class's portability checks (other classes'\n"
             "  bests measured on it) counted apart. A log a run is writing is read as it stands.\n"
             "  --top N      the N best configurations (default %d)\n"
             "  --json       the same as one JSON document on standard output\n"
             "  --problem    the run's T1 file; needed only when RUN.h5 can not be read (damaged, or cut\n"
             "               short): its intact records are then recovered by their checksums\n",
             SHOW_TOP_DEFAULT);
}

typedef struct show_args {
  const char *log, *problem;
  int64_t top;
  int json;
} show_args;

/* 0, 1 after --help (printed), or 2 after an error (printed) */
static int parse_show(int argc, char **argv, show_args *a) {
  static const char *const known[] = {"--help", "-h", "--top", "--json", "--problem", NULL};
  mpt_error err;
  mpt_error_clear(&err);
  for (int i = 1; i < argc; i++) {
    const char *v;
    if (argv[i][0] == '-' && argv[i][1] && mpt_cmd_known("show", argv[i], known, &err) < 0) {
      fprintf(stderr, "mptune show: %s\n", err.msg);
      return 2;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      show_usage(stdout);
      return 1;
    } else if (strcmp(argv[i], "--json") == 0) {
      a->json = 1;
    } else if (strcmp(argv[i], "--top") == 0 || strcmp(argv[i], "--problem") == 0) {
      int top = strcmp(argv[i], "--top") == 0;
      const char *opt = argv[i];
      if (!(v = mpt_cmd_value(argc, argv, &i, &err)) || (top && mpt_cmd_parse_int(opt, v, 1, &a->top, &err) < 0)) {
        fprintf(stderr, "mptune show: %s\n", err.msg);
        return 2;
      }
      if (!top) a->problem = v;
    } else if (!a->log) {
      a->log = argv[i];
    } else {
      fprintf(stderr, "mptune show: more than one run log given ('%s', '%s')\n", a->log, argv[i]);
      return 2;
    }
  }
  if (!a->log) {
    fprintf(stderr, "mptune show: no run log given\n");
    show_usage(stderr);
    return 2;
  }
  return 0;
}

int mpt_cmd_show(int argc, char **argv) {
  show_args a = {NULL, NULL, SHOW_TOP_DEFAULT, 0};
  int rc = parse_show(argc, argv, &a);
  if (rc) return rc == 1 ? 0 : rc;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return 0;
  mpt_error err;
  mpt_error_clear(&err);
  mpt_cmd_log l;
  mpt_summary *s = NULL;
  if ((rc = mpt_cmd_open_log("show", a.log, a.problem, &l, &err)) == 0) {
    mpt_cmd_warn_damaged("show", a.log, l.log, "shown");
    rc = mpt_summary_build(l.log, a.top > 1000000 ? 1000000 : (int)a.top, &s, &err);
  }
  if (rc == 0 && (a.json ? mpt_show_json(a.log, s) : mpt_show_text(a.log, s)) < 0)
    rc = mpt_error_set(&err, MPT_ERR_NOMEM, "out of memory");
  mpt_summary_free(s);
  mpt_cmd_close_log(&l);
  if (rc < 0) {
    fprintf(stderr, "mptune show: %s\n", err.msg);
    return 1;
  }
  return 0;
}
