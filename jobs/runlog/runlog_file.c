/* jobs/runlog/runlog_file.c: the log object (struct mpt_runlog, jobs/runlog/runlog_state.h) and its open HDF5
 * file: creating and freeing the object, its HDF5 types, the file's handles and access properties, the
 * durability of what was written (fdatasync, fsync of a rename), and the records read and written in blocks
 * (also where a log recovered from its records found them: jobs/runlog/runlog_recover.c). */
#include "jobs/runlog/runlog_file.h"
#include "jobs/runlog/runlog_attrs.h"
#include "jobs/runlog/runlog_h5.h"
#include "jobs/runlog/runlog_attrs.h"
#include "jobs/runlog/runlog_lock.h"
#include "jobs/output/outfile.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "spaces/sys/clock.h"

int mpt_rl_h5err(mpt_error *err, const char *path, const char *what) {
  const char *why = mpt_h5_last_error();
  if (why[0]) return mpt_error_set(err, MPT_ERR_IO, "run log %s: HDF5 error while %s (%s)", path, what, why);
  return mpt_error_set(err, MPT_ERR_IO, "run log %s: HDF5 error while %s", path, what);
}

hid_t mpt_rl_fapl(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_sieve_buf_size(fapl, 0);  /* raw data straight to the file, in the order written */
  /* no HDF5 file lock: the writer would lock readers out (h5py, mptune export) for the whole run. A reader
   * needs none: appends change no metadata, and every other change comes as a new file by rename */
  H5Pset_file_locking(fapl, 0, 1);
  return fapl;
}

/* ---- durability: what a node failure (power, kernel panic) leaves, not only a killed process ---- */

/* the open log's data on stable storage (fdatasync of HDF5's sec2 descriptor); 0, or -1 with errno */
int mpt_rl_sync_log(mpt_runlog *log) {
  void *h = NULL;
  if (H5Fget_vfd_handle(log->file, H5P_DEFAULT, &h) < 0 || !h) return errno = EIO, -1;
  if (fdatasync(*(int *)h) != 0 && errno != EINVAL) return -1; /* EINVAL: a file that cannot be synced (a pipe) */
  log->synced_at = mpt_clock_mono_s();
  return 0;
}

/* fsync of a closed file, or with dir != 0 of the directory holding it (a rename made durable) */
int mpt_rl_sync_path(const char *path, int dir) {
  char *copy = dir ? strdup(path) : NULL;
  if (dir && !copy) return errno = ENOMEM, -1;
  int fd = open(dir ? dirname(copy) : path, O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
  free(copy);
  if (fd < 0) return -1;
  int rc = fsync(fd) != 0 && errno != EINVAL ? -1 : 0;
  int e = errno;
  close(fd);
  errno = e;
  return rc;
}

/* ---- the log object ---- */

void mpt_rl_close_handles(mpt_runlog *log) {
  if (log->evals >= 0) H5Dclose(log->evals);
  if (log->countd >= 0) H5Dclose(log->countd);
  if (log->file >= 0) H5Fclose(log->file);
  log->evals = log->countd = log->file = -1;
}

mpt_runlog *mpt_rl_new_log(const char *path) {
  mpt_runlog *log = calloc(1, sizeof *log);
  if (!log) return NULL;
  log->path = strdup(path);
  log->tmp = mpt_outfile_tmp_name(path);
  log->file = log->evals = log->countd = -1;
  log->rec_fd = log->lock_fd = -1;
  log->rec_type = log->dev_type = log->ses_type = -1;
  log->file_format = MPT_RL_FORMAT_VERSION;
  if (!log->path || !log->tmp) { free(log->path); free(log->tmp); free(log); return NULL; }
  return log;
}

void mpt_rl_free_log(mpt_runlog *log) {
  if (!log) return;
  mpt_rl_close_handles(log);
  mpt_runlog_unlock(log->path, log->lock_fd); /* after the file's last write */
  if (log->rec_type >= 0) H5Tclose(log->rec_type);
  if (log->dev_type >= 0) H5Tclose(log->dev_type);
  if (log->ses_type >= 0) H5Tclose(log->ses_type);
  mpt_rl_params_free(log->params, log->dims);
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) free(log->attr[i]);
  free(log->devs);
  free(log->sess);
  free(log->confirms);
  free(log->buf);
  free(log->path);
  free(log->tmp);
  free(log->damaged_copy);
  free(log->recovered);
  if (log->rec_fd >= 0) close(log->rec_fd);
  free(log->rec_off);
  free(log);
}

void mpt_rl_make_types(mpt_runlog *log) {
  log->rec_size = mpt_rl_rec_size(log->dims);
  log->rec_type = mpt_rl_rec_type(log->dims);
  log->dev_type = mpt_rl_dev_type();
  log->ses_type = mpt_rl_session_type();
}

int mpt_rl_open_datasets(mpt_runlog *log) {
  log->evals = H5Dopen2(log->file, "evaluations", H5P_DEFAULT);
  log->countd = H5Dopen2(log->file, "count", H5P_DEFAULT);
  if (log->evals < 0 || log->countd < 0) return -1;
  log->capacity = (int64_t)mpt_h5_extent(log->evals);
  return 0;
}

void mpt_runlog_close(mpt_runlog *log) {
  mpt_h5_quiet();
  if (!log) return;
  if (log->file >= 0 && !log->readonly && H5Fflush(log->file, H5F_SCOPE_LOCAL) >= 0) mpt_rl_sync_log(log);
  mpt_rl_free_log(log);
}

/* ---- records ---- */

int mpt_rl_ensure_buf(mpt_runlog *log, size_t n) {
  size_t need = n * log->rec_size;
  if (need <= log->buf_cap) return 0;
  unsigned char *b = realloc(log->buf, need);
  if (!b) return -1;
  log->buf = b;
  log->buf_cap = need;
  return 0;
}

/* reads n records of a file of format 2 or 3 (ms, fs selected) into log->buf as records of the current format */
static herr_t read_v3(mpt_runlog *log, hid_t d, hid_t ms, hid_t fs, hsize_t n) {
  size_t old = mpt_rl_rec_size_v3(log->dims);
  unsigned char *tmp = malloc(old * (size_t)n);
  hid_t t = mpt_rl_rec_type_v3(log->dims);
  herr_t rc = tmp ? H5Dread(d, t, ms, fs, H5P_DEFAULT, tmp) : -1;
  for (hsize_t i = 0; rc >= 0 && i < n; i++) mpt_rl_rec_from_v3(tmp + i * old, log->buf + i * log->rec_size, log->dims);
  H5Tclose(t);
  free(tmp);
  return rc;
}

/* reads (write = 0) or writes records [start, start+n) of dataset d from / to log->buf */
int mpt_rl_block_io(mpt_runlog *log, hid_t d, hsize_t start, hsize_t n, int write) {
  hid_t fs = H5Dget_space(d);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL);
  hid_t ms = H5Screate_simple(1, &n, NULL);
  herr_t rc = write ? H5Dwrite(d, log->rec_type, ms, fs, H5P_DEFAULT, log->buf)
              : log->file_format < 4 && d == log->evals ? read_v3(log, d, ms, fs, n)
                                     : H5Dread(d, log->rec_type, ms, fs, H5P_DEFAULT, log->buf);
  H5Sclose(ms);
  H5Sclose(fs);
  return rc < 0 ? -1 : 0;
}

/* reads records [start, start+n) of the open log into log->buf */
int mpt_rl_read_block(mpt_runlog *log, hsize_t start, hsize_t n) { return mpt_rl_block_io(log, log->evals, start, n, 0); }

/* mpt_rl_each_valid_block for a log recovered from its records (mpt_runlog_recover): read where they were found */
static int each_recovered_block(mpt_runlog *log, int (*fn)(mpt_runlog *, hsize_t, void *), void *ctx) {
  size_t rs = log->rec_size;
  for (int64_t start = 0; start < log->end; start += MPT_RL_COPY_BLOCK) {
    int64_t n = log->end - start < MPT_RL_COPY_BLOCK ? log->end - start : MPT_RL_COPY_BLOCK;
    for (int64_t i = 0; i < n; i++) {
      unsigned char *dst = log->buf + (size_t)i * rs;
      if (pread(log->rec_fd, dst, rs, (off_t)log->rec_off[start + i]) != (ssize_t)rs || !mpt_rl_rec_valid(dst, rs)) return -1;
    }
    if (fn(log, (hsize_t)n, ctx) < 0) return -1;
  }
  return 0;
}

int mpt_rl_each_valid_block(mpt_runlog *log, int (*fn)(mpt_runlog *, hsize_t, void *), void *ctx) {
  if (mpt_rl_ensure_buf(log, MPT_RL_COPY_BLOCK) < 0) return -1;
  if (log->rec_off) return each_recovered_block(log, fn, ctx);
  for (hsize_t start = 0; start < (hsize_t)log->end; start += MPT_RL_COPY_BLOCK) {
    hsize_t n = (hsize_t)log->end - start < MPT_RL_COPY_BLOCK ? (hsize_t)log->end - start : MPT_RL_COPY_BLOCK;
    if (mpt_rl_read_block(log, start, n) < 0) return -1;
    hsize_t k = 0;
    for (hsize_t i = 0; i < n; i++) {
      unsigned char *src = log->buf + i * log->rec_size;
      if (!mpt_rl_rec_valid(src, log->rec_size)) continue;
      if (k != i) memmove(log->buf + k * log->rec_size, src, log->rec_size);
      k++;
    }
    if (k && fn(log, k, ctx) < 0) return -1;
  }
  return 0;
}
