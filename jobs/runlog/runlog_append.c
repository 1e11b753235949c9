/* jobs/runlog/runlog_append.c: what a run writes into its open log: records appended in place, the device
 * table, the end of the run.
 *
 * Crash safety without trusting HDF5's metadata writes: a SIGKILL can interrupt a large write() between
 * pages, so any HDF5 metadata update in flight may be torn (SWMR included). So the hot path never changes
 * HDF5 metadata: /evaluations is a contiguous dataset allocated up front (capacity records, fill id -1)
 * and an append only overwrites raw bytes in place: the records (each carrying a CRC-32), then the
 * 8-byte /count, then H5Fflush (and an fdatasync at least every MPT_RL_SYNC_INTERVAL_S). More capacity,
 * the devices and the end of the run change metadata: the whole file is written anew and renamed over the
 * log (jobs/runlog/runlog_rewrite.c), as do the confirmations of the finalists (--confirm), a few at the end. So the file under the real name is always a complete HDF5 file, and
 * its records are those acknowledged plus at most a torn one, which the CRC rejects. */
#include "jobs/runlog/runlog_attrs.h"
#include "jobs/runlog/runlog_file.h"
#include "jobs/runlog/runlog_h5.h"
#include "jobs/runlog/runlog_rewrite.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/sys/clock.h"

/* nonzero (err set) when the log cannot be written: open read-only, or a resume whose session has not begun */
static int not_writable(const mpt_runlog *log, mpt_error *err) {
  if (log->readonly) return mpt_error_set(err, MPT_ERR_STATE, "run log %s is open read-only", log->path);
  if (log->session_pending) return mpt_error_set(err, MPT_ERR_STATE, "run log %s: its session has not begun", log->path);
  return 0;
}

int mpt_runlog_append(mpt_runlog *log, const mpt_obs *obs, int n, mpt_error *err) {
  mpt_h5_quiet();
  if (n <= 0) return 0;
  if (not_writable(log, err)) return err->code;
  for (int i = 0; i < n; i++)
    if (obs[i].id < 0) return mpt_error_set(err, MPT_ERR_VALUE, "run log %s: observation with id %lld", log->path, (long long)obs[i].id);
  if (log->count + n > log->capacity) {
    int64_t cap = 2 * log->capacity;
    if (cap < log->count + n + 16) cap = log->count + n + 16;
    int rc = mpt_rl_rewrite(log, log->count, cap, err);
    if (rc < 0) return rc;
  }
  if (mpt_rl_ensure_buf(log, (size_t)n) < 0) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) mpt_rl_rec_from_obs(log->buf + (size_t)i * log->rec_size, log->rec_size, &obs[i], log->session, log->space, log->dims);
  /* the records, then the count: raw bytes in place, no HDF5 metadata changes */
  if (mpt_rl_block_io(log, log->evals, (hsize_t)log->end, (hsize_t)n, 1) < 0) return mpt_rl_h5err(err, log->path, "appending evaluations");
  int64_t c = log->count + n;
  if (H5Dwrite(log->countd, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &c) < 0)
    return mpt_rl_h5err(err, log->path, "updating the count");
  if (H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0) return mpt_rl_h5err(err, log->path, "flushing");
  if (mpt_clock_mono_s() - log->synced_at >= MPT_RL_SYNC_INTERVAL_S && mpt_rl_sync_log(log) != 0)
    return mpt_error_set(err, MPT_ERR_IO, "run log %s: cannot sync the evaluations to disk: %s", log->path, strerror(errno));
  log->count = c;
  log->end += n;
  return 0;
}

int mpt_runlog_append_confirmation(mpt_runlog *log, const mpt_obs *o, mpt_error *err) {
  mpt_h5_quiet();
  if (not_writable(log, err)) return err->code;
  if (o->id < 0 || o->confirm < 1)
    return mpt_error_set(err, MPT_ERR_VALUE, "run log %s: a confirmation of id %lld, round %d", log->path, (long long)o->id,
                         (int)o->confirm);
  unsigned char *rows = realloc(log->confirms, log->rec_size * (size_t)(log->n_confirms + 1));
  if (!rows) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  log->confirms = rows;
  mpt_rl_rec_from_obs(rows + log->rec_size * (size_t)log->n_confirms, log->rec_size, o, log->session, log->space, log->dims);
  log->n_confirms++;
  return mpt_rl_rewrite(log, log->count, log->capacity, err); /* a few at the end of a run: the whole file */
}

int mpt_runlog_set_devices(mpt_runlog *log, const mpt_device_info *devs, int n, mpt_error *err) {
  mpt_h5_quiet();
  if (n <= 0) return 0;
  if (not_writable(log, err)) return err->code;
  mpt_rl_dev *rows = realloc(log->devs, sizeof *rows * (size_t)(log->n_devs + n));
  if (!rows) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  log->devs = rows;
  for (int i = 0; i < n; i++) {
    mpt_rl_dev *r = &rows[log->n_devs + i];
    memset(r, 0, sizeof *r);
    r->session = log->session;
    r->rank = devs[i].rank;
    r->index = devs[i].index;
    r->memory_gib = devs[i].memory_gib;
    snprintf(r->host, sizeof r->host, "%.*s", (int)sizeof r->host - 1, devs[i].host);
    snprintf(r->vendor, sizeof r->vendor, "%.*s", (int)sizeof r->vendor - 1, devs[i].vendor);
    snprintf(r->name, sizeof r->name, "%.*s", (int)sizeof r->name - 1, devs[i].name);
    snprintf(r->arch, sizeof r->arch, "%.*s", (int)sizeof r->arch - 1, devs[i].arch);
    snprintf(r->evaluator, sizeof r->evaluator, "%.*s", (int)sizeof r->evaluator - 1, devs[i].evaluator);
  }
  log->n_devs += n;
  return mpt_rl_rewrite(log, log->count, log->capacity, err);
}

int mpt_runlog_set_classes(mpt_runlog *log, const char *text, mpt_error *err) {
  if (not_writable(log, err)) return err->code;
  return mpt_rl_set_attr(log, "classes", text) ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
}

int mpt_runlog_finish(mpt_runlog *log, const char *reason, mpt_error *err) {
  mpt_h5_quiet();
  if (not_writable(log, err)) return err->code;
  if (!reason) reason = "";
  /* a stopped run stays resumable: everything is on disk already */
  if (strcmp(reason, "signal") == 0 || strcmp(reason, "time") == 0 || strcmp(reason, "waiting") == 0)
    return H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0 ? mpt_rl_h5err(err, log->path, "flushing") : 0;
  char when[40];
  mpt_rl_iso_time(mpt_clock_unix_s(), when, sizeof when);
  if (mpt_rl_set_finished(log, reason, when)) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = mpt_rl_rewrite(log, log->count, log->count, err); /* no spare room left in a finished log */
  if (rc == 0) log->finished = 1;
  return rc;
}
