/* jobs/cli/cmd_log.c: a run log opened for the commands that read one (export, show): read-only and without
 * the writer's lock (also while a run writes it), or, given the run's problem, recovered from its records
 * when HDF5 can not read it; what was left out or recovered said on standard error. */
#include <stdio.h>
#include <string.h>
#include "jobs/cli/commands.h"
#include "jobs/runlog/runlog.h"
#include "spaces/space.h"
#include "spaces/t1.h"

int mpt_cmd_open_log(const char *cmd, const char *log_path, const char *problem, mpt_cmd_log *out, mpt_error *err) {
  memset(out, 0, sizeof *out);
  int rc = mpt_runlog_open_readonly(log_path, &out->log, err);
  if (rc < 0 && problem) { /* unreadable: recover its records with the problem's space (else the same error) */
    rc = mpt_problem_load(problem, &out->problem, err);
    if (rc == 0 && (rc = mpt_space_build(out->problem, &out->space, err)) < 0) mpt_error_prefix(err, "%s", problem);
    if (rc < 0) mpt_error_prefix(err, "%s can not be read, and its records not recovered: --problem", log_path);
    if (rc == 0) rc = mpt_runlog_recover(log_path, out->space, &out->log, err);
    if (rc == 0)
      fprintf(stderr, "mptune %s: warning: %s\nmptune %s: warning: its %lld intact records were recovered by their "
              "checksums; the run's settings and device table %s\n", cmd, mpt_runlog_recovered(out->log), cmd,
              (long long)mpt_runlog_count(out->log), mpt_runlog_recovered_meta_text(out->log));
  } else if (rc < 0 && mpt_runlog_hdf5_failed()) {
    size_t l = strlen(err->msg);
    snprintf(err->msg + l, sizeof err->msg - l, "; its records may still be recovered: give the run's problem with --problem FILE");
  }
  if (rc < 0) mpt_cmd_close_log(out);
  return rc;
}

void mpt_cmd_warn_damaged(const char *cmd, const char *log_path, const mpt_runlog *log, const char *verb) {
  long long d = (long long)mpt_runlog_damaged(log);
  if (d > 0)
    fprintf(stderr, "mptune %s: warning: %s has %lld damaged record%s (checksum mismatch), left out; the %lld "
            "intact ones are %s\n", cmd, log_path, d, d == 1 ? "" : "s", (long long)mpt_runlog_count(log), verb);
}

void mpt_cmd_close_log(mpt_cmd_log *l) {
  if (l->log) mpt_runlog_close(l->log);
  if (l->space) mpt_space_free(l->space);
  if (l->problem) mpt_problem_free(l->problem);
  memset(l, 0, sizeof *l);
}
