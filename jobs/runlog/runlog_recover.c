/* jobs/runlog/runlog_recover.c: a run log HDF5 can not read (damaged metadata, a file cut short): its records
 * found by their CRCs, its settings and tables from its metadata copy (jobs/runlog/runlog_meta.c), checked
 * against the problem given (the records are then read where they lie until a resume rewrites the file:
 * jobs/runlog/runlog_file.c); and the copy of a damaged or recovered log kept beside it before that
 * rewrite. Layout and behaviour: docs/RUNLOG.md. */
#include "jobs/runlog/runlog_recover.h"
#include "jobs/runlog/runlog_attrs.h"
#include "jobs/runlog/runlog_check.h"
#include "jobs/runlog/runlog_file.h"
#include "jobs/runlog/runlog_h5.h"
#include "jobs/runlog/runlog_load.h"
#include "jobs/runlog/runlog_meta.h"
#include "jobs/runlog/runlog_params.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* copies file src to dst (new); 0 or -1 (errno set) */
static int copy_file(const char *src, const char *dst) {
  FILE *in = fopen(src, "rb");
  if (!in) return -1;
  FILE *out = fopen(dst, "wbx");
  if (!out) { fclose(in); return -1; }
  char buf[65536];
  size_t n;
  int rc = 0;
  while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
    if (fwrite(buf, 1, n, out) != n) rc = -1;
  if (ferror(in)) rc = -1;
  fclose(in);
  if (fclose(out) != 0) rc = -1;
  if (rc < 0) unlink(dst);
  return rc;
}

/* Before a resume rewrites a log with damaged records (without them), the file as it was stays beside it
 * as PATH.damaged (PATH.damaged.2, ... when taken): a hard link, or a copy where links fail. */
int mpt_rl_keep_damaged_copy(mpt_runlog *log, mpt_error *err) {
  size_t cap = strlen(log->path) + 32;
  char *name = malloc(cap);
  if (!name) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int k = 1; k < 1000; k++) {
    if (k == 1) snprintf(name, cap, "%s.damaged", log->path);
    else snprintf(name, cap, "%s.damaged.%d", log->path, k);
    if (access(name, F_OK) == 0) continue;
    if (link(log->path, name) == 0 || copy_file(log->path, name) == 0) {
      log->damaged_copy = name;
      return 0;
    }
    break;
  }
  char what[64];
  if (log->recovered) snprintf(what, sizeof what, "could not be read (%lld records recovered)", (long long)log->count);
  else snprintf(what, sizeof what, "has %lld damaged record(s)", (long long)log->damaged);
  mpt_error_set(err, MPT_ERR_IO, "run log %s %s and no copy of it could be kept as %s (%s); resuming would rewrite it "
                "without what was lost, so it was not resumed", log->path, what, name, strerror(errno));
  free(name);
  return MPT_ERR_IO;
}

/* ---- recovery: the records of a log HDF5 can not read ---- */

/* finds the records in log->path: log->rec_fd, log->rec_off, log->count */
static int recover_scan(mpt_runlog *log, mpt_error *err) {
  log->rec_fd = open(log->path, O_RDONLY);
  if (log->rec_fd < 0) return mpt_error_set(err, MPT_ERR_IO, "cannot read %s: %s", log->path, strerror(errno));
  int rc = mpt_rl_recs_find(log->rec_fd, log->path, log->space, log->dims, &log->rec_off, &log->count, err);
  log->end = log->capacity = log->count;
  return rc;
}

/* the settings and the device and session tables from the metadata copy in log->path, when one is intact
 * (a log written before there was one, or whose copy is damaged, lacks them); 0 or an error */
static int recover_meta(mpt_runlog *log, mpt_error *err) {
  unsigned char *blk;
  size_t size;
  int rc = mpt_rl_meta_find(log->rec_fd, log->path, &blk, &size, err);
  if (rc <= 0) return rc;
  rc = 0;
  char *vals[MPT_RL_N_ATTRS] = {0};
  mpt_rl_meta m = {MPT_RL_N_ATTRS, mpt_rl_attr_keys(), vals, NULL, 0, NULL, 0};
  if (mpt_rl_meta_unpack(blk, size, &m) == 0) {
    for (int i = 0; i < MPT_RL_N_ATTRS; i++) /* a rewrite stores format_version as it writes the file */
      if (vals[i]) {
        free(log->attr[i]);
        log->attr[i] = vals[i];
      }
    free(log->devs);
    free(log->sess);
    log->devs = m.devs, log->n_devs = m.n_devs;
    log->sess = m.sess, log->n_sess = m.n_sess;
    log->session = log->n_sess > 0 ? log->n_sess - 1 : 0;
    /* not finished: records written after the copy may be lost, and a resume evaluates them again (one whose
     * records are all there stops at once, its budget reached) */
    if (mpt_rl_set_finished(log, NULL, NULL)) rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    log->meta_recovered = 1;
  }
  free(blk);
  return rc;
}

/* With the settings recovered from the metadata copy: the log's problem (its text, logged in full) must have
 * the parameters of the problem given, and its space the same number of valid configurations; otherwise
 * the records' ids would be read as other configurations. 0 or MPT_ERR_VALUE */
static int recovered_problem_check(mpt_runlog *log, const mpt_space *space, mpt_error *err) {
  const mpt_problem *pr = mpt_space_problem(space);
  const char *text = mpt_runlog_meta(log, "problem_text");
  char diff[1024] = "";
  mpt_problem *logged = NULL;
  mpt_error perr;
  if (text && text[0] && mpt_problem_parse(text, "(logged problem)", &logged, &perr) == 0) {
    mpt_rl_param *have = mpt_rl_params_from_problem(logged), *want = mpt_rl_params_from_problem(pr);
    if (have && want) mpt_rl_params_diff(have, logged->n_params, want, pr->n_params, diff, sizeof diff);
    mpt_rl_params_free(have, logged->n_params);
    mpt_rl_params_free(want, pr->n_params);
    mpt_problem_free(logged);
  }
  if (diff[0]) return mpt_error_set(err, MPT_ERR_VALUE, "%s belongs to another problem: %s", log->path, diff);
  return mpt_rl_check_space_size(log, space, log->path, err);
}

/* a log from the records of path alone (see mpt_runlog_recover), after mpt_rl_load failed with err (unreadable
 * as mpt_rl_load sets it); when none is found, load's error stays, told that no record was found for a damaged file */
int mpt_rl_recover_records(const char *path, const mpt_space *space, int unreadable, mpt_runlog **out, mpt_error *err) {
  *out = NULL;
  char why[sizeof err->msg];
  int why_code = err->code;
  snprintf(why, sizeof why, "%s", err->msg);
  const mpt_problem *pr = mpt_space_problem(space);
  mpt_runlog *log = mpt_rl_new_log(path);
  if (!log) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  log->readonly = 1;
  log->space = space;
  log->dims = pr->n_params;
  log->params = mpt_rl_params_from_problem(pr);
  log->recovered = strdup(why);
  int bad = !log->params || !log->recovered;
  if (!bad) {
    mpt_rl_make_types(log);
    bad = mpt_rl_set_log_attrs(log, space, NULL, NULL);
  }
  int rc = bad ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : recover_scan(log, err);
  if (rc == 0 && log->count > 0) rc = recover_meta(log, err);
  if (rc == 0 && log->meta_recovered) rc = recovered_problem_check(log, space, err);
  if (rc == 0 && log->count == 0)
    rc = unreadable == 2 ? mpt_error_set(err, why_code, "%s; no intact record of problem %s was found in it either", why,
                                         pr->name ? pr->name : pr->path)
                         : mpt_error_set(err, why_code, "%s", why);
  if (rc < 0) { mpt_rl_free_log(log); return rc; }
  *out = log;
  return 0;
}

int mpt_runlog_recover(const char *path, const mpt_space *space, mpt_runlog **out, mpt_error *err) {
  mpt_h5_quiet();
  int unreadable;
  int rc = mpt_rl_load(path, 1, out, &unreadable, err);
  if (rc == 0) {
    mpt_runlog_close(*out);
    *out = NULL;
    return mpt_error_set(err, MPT_ERR_STATE, "%s can be read as it is; nothing to recover", path);
  }
  return unreadable ? mpt_rl_recover_records(path, space, unreadable, out, err) : rc;
}

const char *mpt_runlog_recovered(const mpt_runlog *log) { return log ? log->recovered : NULL; }
int mpt_runlog_recovered_meta(const mpt_runlog *log) { return log && log->recovered && log->meta_recovered; }
const char *mpt_runlog_recovered_meta_text(const mpt_runlog *log) {
  return mpt_runlog_recovered_meta(log) ? "were recovered from its metadata copy" : "were lost (no intact metadata copy)";
}
