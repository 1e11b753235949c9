/* jobs/cli/cmd_export.c: `mptune export RUN.h5 --t4 FILE [--problem T1]`: writes a run log in the community
 * T4 results format (jobs/output/export_t4.c); with the problem, also a log HDF5 can not read, from its records
 * (mpt_runlog_recover). Only rank 0 works when started under mpiexec. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "jobs/cli/commands.h"
#include "jobs/output/outfile.h"
#include "jobs/runlog/runlog.h"
#include "spaces/space.h"
#include "spaces/t1.h"

static void export_usage(FILE *f) {
  fprintf(f, "usage: mptune export RUN.h5 --t4 FILE.json [--problem PROBLEM.json]\n"
             "  writes the evaluations of the run log RUN.h5 as a T4 results file (schema 1.0.0),\n"
             "  in the order they finished; FILE is written whole (as a new FILE.tmp.XXXXXX, then renamed)\n"
             "  --problem: the run's T1 file; needed only when RUN.h5 can not be read (damaged, or cut\n"
             "             short): its intact records are then recovered by their checksums\n");
}

int mpt_cmd_export(int argc, char **argv) {
  mpt_outfile_remove_on_signal(); /* no cut temporary output left by Ctrl-C */
  const char *log_path = NULL, *t4 = NULL, *problem = NULL;
  mpt_error err;
  mpt_error_clear(&err);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      export_usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--t4") == 0 || strcmp(argv[i], "--problem") == 0) {
      const char **dst = strcmp(argv[i], "--t4") == 0 ? &t4 : &problem;
      if (!(*dst = mpt_cmd_value(argc, argv, &i, &err))) { fprintf(stderr, "mptune export: %s\n", err.msg); return 2; }
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "mptune export: unknown option '%s'\n", argv[i]);
      export_usage(stderr);
      return 2;
    } else if (!log_path) {
      log_path = argv[i];
    } else {
      fprintf(stderr, "mptune export: more than one run log given ('%s', '%s')\n", log_path, argv[i]);
      return 2;
    }
  }
  if (!log_path || !t4) {
    fprintf(stderr, "mptune export: %s\n", !log_path ? "no run log given" : "no output given (--t4 FILE)");
    export_usage(stderr);
    return 2;
  }
  if (mpt_same_file(t4, log_path) || mpt_same_file(t4, problem)) {
    fprintf(stderr, "mptune export: --t4 %s is the %s: it would be replaced by the export\n", t4,
            mpt_same_file(t4, log_path) ? "run log" : "problem file");
    return 2;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return 0;
  mpt_error_clear(&err);
  mpt_runlog *log = NULL;
  mpt_problem *prob = NULL;
  mpt_space *space = NULL;
  int rc = mpt_runlog_open_readonly(log_path, &log, &err);
  if (rc < 0 && problem) { /* unreadable: recover its records with the problem's space (else the same error) */
    rc = mpt_problem_load(problem, &prob, &err);
    if (rc == 0 && (rc = mpt_space_build(prob, &space, &err)) < 0) mpt_error_prefix(&err, "%s", problem);
    if (rc < 0) mpt_error_prefix(&err, "%s can not be read, and its records not recovered: --problem", log_path);
    if (rc == 0) rc = mpt_runlog_recover(log_path, space, &log, &err);
    if (rc == 0)
      fprintf(stderr, "mptune export: warning: %s\nmptune export: warning: its %lld intact records were recovered by their "
              "checksums; the run's settings and device table %s\n", mpt_runlog_recovered(log),
              (long long)mpt_runlog_count(log),
              mpt_runlog_recovered_meta_text(log));
  } else if (rc < 0 && mpt_runlog_hdf5_failed()) {
    size_t l = strlen(err.msg);
    snprintf(err.msg + l, sizeof err.msg - l, "; its records may still be recovered: give the run's problem with --problem FILE");
  }
  if (rc == 0) {
    rc = mpt_runlog_write_t4(log, t4, &err);
    long long d = (long long)mpt_runlog_damaged(log); /* the export skips damaged records: say so */
    if (rc == 0 && d > 0)
      fprintf(stderr, "mptune export: warning: %s has %lld damaged record%s (checksum mismatch), left out; the %lld "
              "intact ones are exported\n", log_path, d, d == 1 ? "" : "s", (long long)mpt_runlog_count(log));
    mpt_runlog_close(log);
  }
  if (space) mpt_space_free(space);
  if (prob) mpt_problem_free(prob);
  if (rc < 0) {
    fprintf(stderr, "mptune export: %s\n", err.msg);
    return 1;
  }
  if (!mpt_outfile_special(t4)) printf("wrote %s\n", t4); /* not into --t4 /dev/stdout */
  return 0;
}
