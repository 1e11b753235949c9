/* jobs/runlog/runlog_load.c: an existing log opened and read: the checks of the path and of the format, the
 * attributes and tables, what HDF5 does not checksum compared with the metadata copy, and the scan that
 * counts the valid records and finds the damaged ones. What reads as damaged is left to recovery
 * (jobs/runlog/runlog_recover.c). */
#include "jobs/runlog/runlog_load.h"
#include "jobs/runlog/runlog_attrs.h"
#include "jobs/runlog/runlog_file.h"
#include "jobs/runlog/runlog_h5.h"
#include "jobs/runlog/runlog_meta.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int hdf5_failed;

int mpt_runlog_hdf5_failed(void) { return hdf5_failed; }

static int is_hdf5(const char *path) {
  mpt_h5_quiet();
  return H5Fis_hdf5(path) > 0;
}

/* What HDF5 does not checksum (the raw data of /parameters, text attributes stored as heap objects such
 * as problem_text) compared with the log's checksummed metadata copy: "" when they agree or there is no
 * copy (format 2), else what is damaged: what differs, or the copy itself (then nothing can be checked, and
 * a log whose tables are damaged too would export wrong configurations without an error) */
static const char *differs_from_copy(mpt_runlog *log) {
  if (H5Lexists(log->file, "metadata_copy", H5P_DEFAULT) <= 0) return "";
  int n = 0;
  unsigned char *blk = mpt_h5_read_table(log->file, "metadata_copy", H5T_NATIVE_UINT8, 1, &n);
  const char *keys[MPT_RL_COPY_KEYS];
  char *vals[MPT_RL_COPY_KEYS] = {0};
  mpt_rl_copy_keys(keys);
  mpt_rl_meta m = {MPT_RL_COPY_KEYS, keys, vals, NULL, 0, NULL, 0};
  int ok = blk && mpt_rl_meta_unpack(blk, (size_t)n, &m) == 0;
  free(blk);
  static char what[200];
  what[0] = '\0';
  if (!ok)
    snprintf(what, sizeof what, "its metadata copy (/metadata_copy) is damaged itself, so its parameter tables cannot be checked");
  for (int i = 0; i < MPT_RL_N_ATTRS && !what[0]; i++) /* text attributes: numbers read back reformatted */
    if (mpt_rl_attr_is_text(i) && vals[i] && log->attr[i] && strcmp(vals[i], log->attr[i]) != 0)
      snprintf(what, sizeof what, "its attribute %s differs from its checksummed metadata copy", keys[i]);
  if (!what[0] && vals[MPT_RL_N_ATTRS] &&
      strtoul(vals[MPT_RL_N_ATTRS], NULL, 10) != (unsigned long)mpt_rl_params_crc(log->params, log->dims))
    snprintf(what, sizeof what, "its parameter tables (/parameters) differ from its checksummed metadata copy");
  for (int i = 0; i <= MPT_RL_N_ATTRS; i++) free(vals[i]);
  free(m.devs);
  free(m.sess);
  return what;
}

/* Counts the records written completely (log->count) and where the last of them ends (log->end). The
 * records before /count were complete when /count was written and are never written again, so an
 * invalid one there is damage to the file (log->damaged; the valid records after it are kept). From
 * /count on, records may still be in flight (a reader beside the writer) or torn by a kill: the scan
 * ends at the first blank record, and invalid written ones count as damage only when a valid record
 * follows them (else they are the torn tail). */
/* a record whose status says it holds no measurement (cancelled in flight, missing from a replayed file) */
static int unmeasured(const unsigned char *rec) {
  int32_t status;
  memcpy(&status, rec + offsetof(mpt_rl_rec, status), sizeof status);
  return status == MPT_STATUS_CANCELLED || status == MPT_STATUS_MISSING;
}

/* a measurement of a class's search counted for its class (classes past the 64th share the last count) */
static void count_class(int64_t *per_class, int64_t *most, const unsigned char *rec) {
  const mpt_rl_rec *r = (const mpt_rl_rec *)rec;
  if (unmeasured(rec) || r->cross_from > 0) return;
  int k = r->device_class < 0 ? 0 : r->device_class > 63 ? 63 : r->device_class;
  if (++per_class[k] > *most) *most = per_class[k];
}

static int scan_records(mpt_runlog *log) {
  log->count = log->end = log->damaged = log->unmeasured = log->class_most = 0;
  int64_t per_class[64] = {0};
  int64_t settled = 0;
  if (H5Dread(log->countd, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &settled) < 0) return -1;
  /* a damaged /count: no record is known to be settled, so the whole dataset is read; the invalid
   * records before the last valid one are damage, the invalid ones after it a torn tail (with an
   * intact /count the tail starts at the first invalid record past it) */
  int count_ok = settled >= 0 && settled <= log->capacity;
  if (!count_ok) settled = 0;
  int64_t unsettled_bad = 0; /* invalid, not blank, past settled and since the last valid record */
  if (mpt_rl_ensure_buf(log, MPT_RL_COPY_BLOCK) < 0) return -1;
  for (hsize_t start = 0; start < (hsize_t)log->capacity; start += MPT_RL_COPY_BLOCK) {
    hsize_t n = (hsize_t)log->capacity - start < MPT_RL_COPY_BLOCK ? (hsize_t)log->capacity - start : MPT_RL_COPY_BLOCK;
    if (mpt_rl_read_block(log, start, n) < 0) return -1;
    for (hsize_t i = 0; i < n; i++) {
      int64_t at = (int64_t)(start + i);
      const unsigned char *rec = log->buf + i * log->rec_size;
      if (!mpt_rl_rec_valid(rec, log->rec_size)) {
        int blank = mpt_rl_rec_blank(rec, log->rec_size);
        /* past /count a blank record ends the records; a written but invalid one (torn by a kill, or
         * damaged when /count itself is damaged yet in range) does not: valid records after it prove
         * damage and are kept */
        if (at >= settled && count_ok && blank && unsettled_bad == 0) return 0;
        if (blank) continue; /* never written */
        if (at < settled) log->damaged++;
        else unsettled_bad++;
        continue;
      }
      log->damaged += unsettled_bad;
      unsettled_bad = 0;
      log->count++;
      log->unmeasured += unmeasured(rec);
      count_class(per_class, &log->class_most, rec);
      log->end = at + 1;
    }
  }
  return 0;
}

/* the file is there, readable (and writable unless readonly), and a regular file; 0 or an error */
static int check_path(const char *path, int readonly, mpt_error *err) {
  if (access(path, F_OK) != 0) return mpt_error_set(err, MPT_ERR_IO, "cannot open run log %s: no such file", path);
  if (access(path, readonly ? R_OK : R_OK | W_OK) != 0)
    return mpt_error_set(err, MPT_ERR_IO, "cannot open run log %s%s: permission denied", path, readonly ? "" : " for writing");
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) /* a pipe would block the reader, a device be replaced */
    return mpt_error_set(err, MPT_ERR_IO, "run log %s is not a regular file", path);
  return 0;
}

/* log->file opened, an mptune run log of a format version this mptune reads, with its records; 0 or an
 * error (*unreadable 0 for a log of another version) */
static int open_and_check_format(mpt_runlog *log, const char *path, int *unreadable, mpt_error *err) {
  hid_t fapl = mpt_rl_fapl();
  log->file = H5Fopen(path, log->readonly ? H5F_ACC_RDONLY : H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  const char *why = mpt_h5_last_error(); /* HDF5's last failure, kept up to date as the load goes on */
  if (log->file < 0)
    return mpt_error_set(err, MPT_ERR_STATE, "%s is damaged or not an mptune run log: HDF5 can not open it%s%s%s", path,
                         why[0] ? " (" : "", why, why[0] ? ")" : "");
  char *fmt = mpt_h5_attr_read_text(log->file, "mptune_format");
  int ok = fmt && strcmp(fmt, MPT_RL_FORMAT_NAME) == 0;
  free(fmt);
  char *ver = ok ? mpt_h5_attr_read_text(log->file, "format_version") : NULL;
  int rc = why[0] ? mpt_rl_h5err(err, path, "reading its attributes (the file is damaged)") : 0;
  if (rc == 0 && (!ok || !ver || H5Lexists(log->file, "evaluations", H5P_DEFAULT) <= 0))
    rc = why[0] ? mpt_rl_h5err(err, path, "looking for its records (the file is damaged)")
                : mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log", path);
  int v = ver ? atoi(ver) : 0;
  free(ver);
  log->file_format = v;
  if (rc == 0 && (v < MPT_RL_FORMAT_OLDEST || v > MPT_RL_FORMAT_VERSION)) {
    *unreadable = 0; /* a log, of another version */
    rc = mpt_error_set(err, MPT_ERR_STATE, "%s is an mptune run log of format %d; this mptune (%s) reads formats %d to %d",
                       path, v, MPT_VERSION, MPT_RL_FORMAT_OLDEST, MPT_RL_FORMAT_VERSION);
  }
  return rc;
}

/* the attributes (and whether the run finished), the parameter tables, the device and session tables;
 * 0 or an error */
static int read_state(mpt_runlog *log, const char *path, mpt_error *err) {
  const char *why = mpt_h5_last_error();
  mpt_rl_attrs_read(log);
  if (why[0]) return mpt_rl_h5err(err, path, "reading its attributes (the file is damaged)");
  const char *fin = mpt_rl_get_attr(log, "finished");
  log->finished = fin && atoi(fin) != 0;
  if (mpt_rl_params_read(log->file, &log->params, &log->dims) < 0)
    return mpt_rl_h5err(err, path, "reading the parameter tables (the file is damaged)");
  mpt_rl_make_types(log);
  log->devs = mpt_h5_read_table(log->file, "devices", log->dev_type, sizeof(mpt_rl_dev), &log->n_devs);
  log->sess = mpt_h5_read_table(log->file, "sessions", log->ses_type, sizeof(mpt_rl_session), &log->n_sess);
  if (log->file_format >= 4) /* none before */
    log->confirms = mpt_h5_read_table(log->file, "confirmations", log->rec_type, log->rec_size, &log->n_confirms);
  if (why[0]) return mpt_rl_h5err(err, path, "reading the device and session tables (the file is damaged)");
  return 0;
}

int mpt_rl_load(const char *path, int readonly, mpt_runlog **out, int *unreadable, mpt_error *err) {
  *out = NULL;
  *unreadable = 0;
  mpt_h5_quiet();
  int rc = check_path(path, readonly, err);
  if (rc) return rc;
  *unreadable = 1;
  if (!is_hdf5(path)) return mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log", path);
  mpt_runlog *log = mpt_rl_new_log(path);
  if (!log) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  log->readonly = readonly;
  rc = open_and_check_format(log, path, unreadable, err);
  if (rc == 0) rc = read_state(log, path, err);
  const char *differs = rc == 0 ? differs_from_copy(log) : "";
  if (differs[0]) { /* read as damaged: recovery from the records and the copy (given the problem) */
    rc = mpt_error_set(err, MPT_ERR_STATE, "%s is damaged: %s", path, differs);
    hdf5_failed = 1;
  }
  const char *why = mpt_h5_last_error();
  if (rc == 0 && mpt_rl_open_datasets(log) < 0)
    rc = why[0] ? mpt_rl_h5err(err, path, "opening its records (the file is damaged)")
                : mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log (datasets missing)", path);
  log->session = log->n_sess > 0 ? log->n_sess - 1 : 0;
  if (rc == 0 && scan_records(log) < 0) rc = mpt_rl_h5err(err, path, "reading the evaluations (the file is damaged)");
  if (rc < 0) { /* the message is set before closing: closing a damaged file can fail too */
    if (why[0] || differs[0]) hdf5_failed = 1, *unreadable = 2;
    mpt_rl_free_log(log);
    return rc;
  }
  *out = log;
  return 0;
}
