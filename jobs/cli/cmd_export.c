/* jobs/cli/cmd_export.c: `mptune export RUN.h5 [--t4 FILE] [--header FILE] [--problem T1]`: writes a run log in
 * the community T4 results format (jobs/output/export_t4.c) and/or its best configuration as a C header of
 * defines (jobs/output/header.c); with the problem, also a log HDF5 can not read, from its records
 * (mpt_runlog_recover). Only rank 0 works when started under mpiexec. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "jobs/cli/commands.h"
#include "jobs/output/outfile.h"
#include "jobs/output/summary.h"
#include "jobs/runlog/runlog.h"

static void export_usage(FILE *f) {
  fprintf(f, "usage: mptune export RUN.h5 [--t4 FILE.json] [--header FILE.h] [--problem PROBLEM.json]\n"
             "  --t4:      the evaluations of the run log RUN.h5 as a T4 results file (schema 1.0.0),\n"
             "             in the order they finished\n"
             "  --header:  the best configuration as a C header, one '#define NAME VALUE' per tuning\n"
             "             parameter (as the kernel gets them while tuning); with several device classes\n"
             "             one '#if defined(TARGET_<device>)' block each, the first device's as the default\n"
             "  each FILE is written whole (as a new FILE.tmp.XXXXXX, then renamed)\n"
             "  --problem: the run's T1 file; needed only when RUN.h5 can not be read (damaged, or cut\n"
             "             short): its intact records are then recovered by their checksums\n");
}

typedef struct export_args {
  const char *log, *t4, *header, *problem;
} export_args;

/* 0, 1 after --help (printed), or 2 after an error (printed) */
static int parse_export(int argc, char **argv, export_args *a) {
  mpt_error err;
  mpt_error_clear(&err);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      export_usage(stdout);
      return 1;
    } else if (strcmp(argv[i], "--t4") == 0 || strcmp(argv[i], "--problem") == 0 || strcmp(argv[i], "--header") == 0) {
      const char **dst = strcmp(argv[i], "--t4") == 0 ? &a->t4 : strcmp(argv[i], "--header") == 0 ? &a->header : &a->problem;
      if (!(*dst = mpt_cmd_value(argc, argv, &i, &err))) { fprintf(stderr, "mptune export: %s\n", err.msg); return 2; }
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "mptune export: unknown option '%s'\n", argv[i]);
      export_usage(stderr);
      return 2;
    } else if (!a->log) {
      a->log = argv[i];
    } else {
      fprintf(stderr, "mptune export: more than one run log given ('%s', '%s')\n", a->log, argv[i]);
      return 2;
    }
  }
  if (!a->log || (!a->t4 && !a->header)) {
    fprintf(stderr, "mptune export: %s\n", !a->log ? "no run log given" : "no output given (--t4 FILE, --header FILE)");
    export_usage(stderr);
    return 2;
  }
  return 0;
}

/* 0, or 2 with a message when an output would replace an input or the other output */
static int check_outputs(const export_args *a) {
  const char *outs[] = {a->t4, a->header}, *opts[] = {"--t4", "--header"};
  for (int k = 0; k < 2; k++) {
    const char *o = outs[k];
    if (o && (mpt_same_file(o, a->log) || mpt_same_file(o, a->problem))) {
      fprintf(stderr, "mptune export: %s %s is the %s: it would be replaced by the export\n", opts[k], o,
              mpt_same_file(o, a->log) ? "run log" : "problem file");
      return 2;
    }
  }
  if (a->t4 && a->header && mpt_same_file(a->t4, a->header) && !mpt_outfile_is_stdout(a->t4)) {
    fprintf(stderr, "mptune export: --t4 and --header name one file (%s)\n", a->t4);
    return 2;
  }
  return 0;
}

static int write_header(mpt_runlog *log, const export_args *a, mpt_error *err) {
  mpt_summary *s;
  int rc = mpt_summary_build(log, 1, &s, err);
  if (rc == 0) rc = mpt_summary_write_header(s, a->log, a->header, err);
  mpt_summary_free(s);
  return rc;
}

int mpt_cmd_export(int argc, char **argv) {
  mpt_outfile_remove_on_signal(); /* no cut temporary output left by Ctrl-C */
  export_args a = {NULL, NULL, NULL, NULL};
  int rc = parse_export(argc, argv, &a);
  if (rc) return rc == 1 ? 0 : rc;
  if ((rc = check_outputs(&a))) return rc;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return 0;
  mpt_error err;
  mpt_error_clear(&err);
  mpt_cmd_log l;
  rc = mpt_cmd_open_log("export", a.log, a.problem, &l, &err);
  if (rc == 0 && a.t4) /* one file per device class; said as it is written, except into standard output */
    rc = mpt_runlog_write_t4_classes(l.log, a.t4, mpt_outfile_special(a.t4) ? NULL : stdout, "wrote", &err);
  if (rc == 0 && a.header) rc = write_header(l.log, &a, &err);
  if (rc == 0) mpt_cmd_warn_damaged("export", a.log, l.log, "exported"); /* the export skips damaged records */
  mpt_cmd_close_log(&l);
  if (rc < 0) {
    fprintf(stderr, "mptune export: %s\n", err.msg);
    return 1;
  }
  if (a.header && !mpt_outfile_special(a.header)) printf("wrote %s\n", a.header);
  return 0;
}
