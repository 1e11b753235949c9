/* jobs/runlog/runlog.c: a run's log opened for writing (jobs/runlog/runlog.h, layout in docs/RUNLOG.md): a new
 * log created for a run, an existing one resumed (locked, read or recovered, checked against the problem
 * and the command, reopened when a larger budget extends it) and its new session begun, or one opened
 * read-only. One file per run, written by rank 0 with serial HDF5 calls.
 *
 * The layers of jobs/runlog/, top down: this file (the sessions) and runlog_append.c (what a run writes),
 * runlog_read.c (what a log holds); runlog_recover.c (a log HDF5 can not read); runlog_check.c (whether a
 * log belongs to a problem); runlog_load.c, runlog_rewrite.c, runlog_file.c and runlog_attrs.c (the file);
 * under them the record layout, tables, metadata copy, lock and HDF5 helpers. No file takes names from a
 * file above it. */
#include "jobs/runlog/runlog_attrs.h"
#include "jobs/runlog/runlog_check.h"
#include "jobs/runlog/runlog_file.h"
#include "jobs/runlog/runlog_h5.h"
#include "jobs/runlog/runlog_load.h"
#include "jobs/runlog/runlog_lock.h"
#include "jobs/runlog/runlog_recover.h"
#include "jobs/runlog/runlog_rewrite.h"
#include "jobs/output/outfile.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "spaces/sys/clock.h"

/* ---- a new log ---- */

/* the row of the sessions table for the process starting now */
static mpt_rl_session this_session(void) {
  mpt_rl_session s;
  memset(&s, 0, sizeof s);
  s.start_unix = mpt_clock_unix_s();
  s.pid = (int32_t)getpid();
  gethostname(s.host, sizeof s.host);
  s.host[sizeof s.host - 1] = '\0';
  mpt_rl_iso_time(s.start_unix, s.start_time, sizeof s.start_time);
  return s;
}

/* the parameter tables of space's problem (names HDF5 can store) and the HDF5 types; 0 or an error */
static int new_log_tables(mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err) {
  const mpt_problem *pr = mpt_space_problem(space);
  log->dims = pr->n_params;
  log->params = mpt_rl_params_from_problem(pr);
  if (!log->params) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int p = 0; p < log->dims; p++)
    if (strchr(log->params[p].name, '/') || strcmp(log->params[p].name, ".") == 0)
      return mpt_error_set(err, MPT_ERR_VALUE, "run log %s: parameter name '%s' can not be stored", path, pr->params[p].name);
  mpt_rl_make_types(log);
  return 0;
}

/* the first session's row and the attributes of a new log: itself, its problem, the run's settings, its
 * start; 0 or an error */
static int first_session(mpt_runlog *log, const mpt_space *space, const mpt_run_meta *meta, mpt_error *err) {
  mpt_rl_session s = this_session();
  log->sess = malloc(sizeof s);
  if (!log->sess) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  log->sess[0] = s;
  log->n_sess = 1;
  log->session = 0;
  int bad = mpt_rl_set_log_attrs(log, space, meta->problem_path, meta->problem_text);
  bad |= mpt_rl_set_run_attrs(log, meta, 0);
  bad |= mpt_rl_set_attr(log, "start_time", s.start_time);
  bad |= mpt_rl_set_attr_num(log, "start_unix", "%.17g", s.start_unix);
  bad |= mpt_rl_set_attr(log, "host", s.host);
  bad |= mpt_rl_set_attr(log, "stop_reason", "");
  bad |= mpt_rl_set_attr(log, "finish_time", "");
  return bad ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
}

/* records a new log has room for: the whole run when its size is known, else grown by doubling */
static int64_t initial_capacity(const mpt_space *space, const mpt_run_meta *meta) {
  int64_t size = mpt_space_size(space), cap = 1024;
  if (meta->budget > 0) cap = meta->budget + 16;
  if (cap > size + 16) cap = size + 16;
  if (meta->records > 0) cap = meta->records + 16;
  if (cap > 16384) cap = 16384; /* 23 MB; a longer run grows by doubling */
  return cap;
}

static int create_at(const char *path, const mpt_space *space, const mpt_run_meta *meta, mpt_runlog **out,
                     mpt_error *err) {
  *out = NULL;
  mpt_h5_quiet();
  mpt_runlog *log = mpt_rl_new_log(path);
  if (!log) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = mpt_runlog_lock(path, &log->lock_fd, err); /* never replace a log another run is writing */
  if (rc < 0) { mpt_rl_free_log(log); return rc; }
  log->space = space;
  const mpt_run_meta empty = {0};
  if (!meta) meta = &empty;
  rc = new_log_tables(log, space, path, err);
  if (rc == 0) rc = first_session(log, space, meta, err);
  if (rc == 0) rc = mpt_rl_rewrite(log, 0, initial_capacity(space, meta), err);
  if (rc < 0) { mpt_rl_free_log(log); return rc; }
  *out = log;
  return 0;
}

/* ---- a log resumed ---- */

/* the log at path, locked against other writers, read, or recovered from its records when HDF5 can not
 * read it; 0 or an error (the lock released) */
static int lock_and_load(const char *path, const mpt_space *space, mpt_runlog **out, mpt_error *err) {
  mpt_runlog *log;
  int unreadable, lock_fd;
  int rc = mpt_runlog_lock(path, &lock_fd, err); /* a log being written is neither resumed nor recovered */
  if (rc < 0) return rc;
  rc = mpt_rl_load(path, 0, &log, &unreadable, err);
  if (rc < 0 && unreadable) { /* its records may still be there: resume from them */
    rc = mpt_rl_recover_records(path, space, unreadable, &log, err);
    if (rc == 0) log->readonly = 0;
  }
  if (rc < 0) {
    mpt_runlog_unlock(path, lock_fd);
    return rc;
  }
  log->lock_fd = lock_fd;
  log->space = space;
  *out = log;
  return 0;
}

/* mode (NULL: any): the command resuming the log; 0, or MPT_ERR_STATE for a log of the other command */
static int check_mode(const mpt_runlog *log, const char *path, const char *mode, mpt_error *err) {
  const char *logged_mode = mpt_rl_get_attr(log, "mode"); /* absent only when lost with damaged metadata */
  if (mode && logged_mode && logged_mode[0] && strcmp(logged_mode, mode) != 0)
    return mpt_error_set(err, MPT_ERR_STATE, "%s is the log of an `mptune %s` run: resume it with mptune %s --resume",
                         path, logged_mode, logged_mode);
  return 0;
}

/* A finished log: reopened (not finished now, log->extended) when it was finished by its budget (or with
 * stop_reason "time", which older logs carry) and extend_to is more than the evaluations it holds (records
 * of no measurement, cancelled or missing, do not count, as they did not against its budget); else
 * MPT_ERR_STATE saying why nothing is resumed */
static int reopen_finished(mpt_runlog *log, const char *path, int64_t extend_to, mpt_error *err) {
  const char *w = mpt_rl_get_attr(log, "stop_reason");
  w = w ? w : "";
  int by_budget = strcmp(w, "budget") == 0 || strcmp(w, "time") == 0;
  const char *text = strcmp(w, "budget") == 0 ? "budget reached" : strcmp(w, "time") == 0 ? "time budget reached"
                     : strcmp(w, "exhausted") == 0 ? "space exhausted" : w;
  int64_t measured = log->class_most; /* the budget is per device class */
  if (by_budget && extend_to > measured) {
    if (mpt_rl_set_finished(log, NULL, NULL)) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    log->finished = 0, log->extended = 1;
    return 0;
  }
  if (by_budget && extend_to > 0)
    return mpt_error_set(err, MPT_ERR_STATE, "%s is finished (%s) with %lld evaluations; a budget of %lld does not extend it",
                         path, text, (long long)measured, (long long)extend_to);
  return mpt_error_set(err, MPT_ERR_STATE, "%s is finished (%s); nothing to resume%s", path, text,
                       by_budget ? " (a larger budget extends it)" : "");
}

/* a resumed log's new session: the file as it was kept when damaged or recovered, the session's row, and
 * a fresh copy without any torn or damaged record */
static int begin_session(mpt_runlog *log, mpt_error *err) {
  int rc = 0;
  if ((log->damaged > 0 || log->recovered) && (rc = mpt_rl_keep_damaged_copy(log, err)) < 0) return rc;
  mpt_rl_session s = this_session();
  mpt_rl_session *ns = realloc(log->sess, sizeof s * (size_t)(log->n_sess + 1));
  if (!ns) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  log->sess = ns;
  log->sess[log->n_sess++] = s;
  log->session = log->n_sess - 1;
  if ((rc = mpt_rl_rewrite(log, log->count, log->capacity, err)) < 0) return rc;
  if (log->rec_off) { /* recovered: from now on the new file */
    close(log->rec_fd);
    log->rec_fd = -1;
    free(log->rec_off);
    log->rec_off = NULL;
  }
  log->session_pending = 0;
  return 0;
}

/* begin = 0: the log is locked and read and checked, nothing written (mpt_runlog_begin_session writes).
 * extend_to > 0: a log finished by its budget is reopened to go on to extend_to evaluations when that is
 * more than it holds (reopen_finished). mode (NULL: any): the command resuming it; a log of the other
 * command is refused before it is found finished (else a finished tune log resumed by collect would be
 * said to be extendable by a larger budget) */
static int open_at(const char *path, const mpt_space *space, int64_t extend_to, const char *mode, int begin,
                   mpt_runlog **out, mpt_error *err) {
  mpt_runlog *log;
  int rc = lock_and_load(path, space, &log, err);
  if (rc < 0) return rc;
  rc = check_mode(log, path, mode, err);
  if (rc == 0 && log->finished) rc = reopen_finished(log, path, extend_to, err);
  if (rc == 0) rc = mpt_rl_check_params(log, space, path, err);
  if (rc == 0) rc = mpt_rl_check_same_space(log, space, path, err);
  if (rc == 0 && begin) rc = begin_session(log, err);
  else if (rc == 0) log->session_pending = 1;
  if (rc < 0) { mpt_rl_free_log(log); return rc; }
  *out = log;
  return 0;
}

/* ---- the contract (jobs/runlog/runlog.h) ---- */

int mpt_runlog_check_problem(mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err) {
  int rc = mpt_rl_check_params(log, space, path, err);
  return rc ? rc : mpt_rl_check_same_space(log, space, path, err);
}

int mpt_runlog_begin_session(mpt_runlog *log, mpt_error *err) {
  return log->session_pending ? begin_session(log, err) : 0;
}

int mpt_runlog_open_checked(const char *path, const mpt_space *space, int64_t extend_to, const char *mode,
                            mpt_runlog **out, mpt_error *err) {
  char *real = mpt_outfile_resolve(path);
  if (!real) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = open_at(real, space, extend_to, mode, 0, out, err);
  free(real);
  return rc;
}

/* A log named through a symbolic link is written at the link's target, so that the link stays when the log
 * is rewritten (a rename over it would replace the link), and locked there (jobs/output/outfile.h) */
int mpt_runlog_create(const char *path, const mpt_space *space, const mpt_run_meta *meta, mpt_runlog **out,
                      mpt_error *err) {
  *out = NULL;
  if (mpt_outfile_special(path)) /* a device or pipe is never replaced by a log */
    return mpt_error_set(err, MPT_ERR_IO, "run log %s exists and is not a regular file; it is not replaced", path);
  char *real = mpt_outfile_resolve(path);
  if (!real) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = create_at(real, space, meta, out, err);
  free(real);
  return rc;
}

int mpt_runlog_open_to(const char *path, const mpt_space *space, int64_t extend_to, mpt_runlog **out, mpt_error *err) {
  char *real = mpt_outfile_resolve(path);
  if (!real) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = open_at(real, space, extend_to, NULL, 1, out, err);
  free(real);
  return rc;
}

int mpt_runlog_check_unlocked(const char *path, mpt_error *err) {
  char *real = mpt_outfile_resolve(path);
  if (!real) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int fd, rc = mpt_runlog_lock(real, &fd, err);
  if (rc == 0) mpt_runlog_unlock(real, fd);
  free(real);
  return rc;
}

int mpt_runlog_open(const char *path, const mpt_space *space, mpt_runlog **out, mpt_error *err) {
  return mpt_runlog_open_to(path, space, 0, out, err);
}

int mpt_runlog_open_readonly(const char *path, mpt_runlog **out, mpt_error *err) {
  int unreadable;
  return mpt_rl_load(path, 1, out, &unreadable, err);
}

int mpt_runlog_adopt_meta(mpt_runlog *log, const mpt_run_meta *meta, mpt_error *err) {
  return mpt_rl_set_run_attrs(log, meta, 1) ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
}

int mpt_runlog_resume_meta(mpt_runlog *log, const mpt_run_meta *meta, mpt_error *err) {
  return mpt_rl_set_run_attrs(log, meta, 2) ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
}
