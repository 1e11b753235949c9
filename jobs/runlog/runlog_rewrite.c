/* jobs/runlog/runlog_rewrite.c: every change of a log's HDF5 metadata (a new log, more capacity, devices, a
 * new session, finishing) writes a complete new file NAME.tmp from the in-memory state plus the valid
 * records, and renames it over NAME, which is atomic: a SIGKILL can interrupt a large write() between
 * pages, so an HDF5 metadata update made in place could be torn (SWMR included). Appends never change
 * metadata (jobs/runlog/runlog_append.c), so the file under the real name is always a complete HDF5
 * file. The new file's room is checked before HDF5 writes, and it is on disk before it takes the name. */
#include "jobs/runlog/runlog_rewrite.h"
#include "jobs/runlog/runlog_attrs.h"
#include "jobs/runlog/runlog_file.h"
#include "jobs/runlog/runlog_h5.h"
#include "jobs/runlog/runlog_meta.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* An upper bound of the size of the file mpt_rl_rewrite writes: the records, the text it stores, the
 * tables, and room for HDF5's own structures. */
static off_t file_size_bound(const mpt_runlog *log, int64_t capacity) {
  off_t n = (off_t)capacity * (off_t)log->rec_size + 48 * 1024;
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) n += log->attr[i] ? (off_t)strlen(log->attr[i]) + 64 : 64;
  for (int p = 0; p < log->dims; p++) {
    const mpt_rl_param *t = &log->params[p];
    n += 512 + (off_t)strlen(t->name);
    for (int i = 0; i < t->n; i++) n += t->str && t->str[i] ? (off_t)strlen(t->str[i]) + 1 : 8;
  }
  off_t tables = (off_t)log->n_devs * (off_t)sizeof(mpt_rl_dev) + (off_t)log->n_sess * (off_t)sizeof(mpt_rl_session);
  const char *const *keys = mpt_rl_attr_keys();
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) /* the metadata copy repeats the attributes and the tables */
    tables += (off_t)strlen(keys[i]) + (log->attr[i] ? (off_t)strlen(log->attr[i]) : 0) + 8;
  return n + 2 * tables + 1024;
}

/* Checks that the file system has room for a new file of `need` bytes (space, quota, file-size limit) by
 * allocating it as PATH.tmp before HDF5 writes anything there: a write HDF5 sees fail leaves its file in a
 * state it cannot close (and it crashes at exit). 0, or -1 with errno (ENOSPC, EDQUOT, EFBIG); file
 * systems that cannot allocate ahead (EOPNOTSUPP) pass. */
static int check_room(const char *tmp, off_t need) {
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 0; /* HDF5's create gives the message */
  int rc = fallocate(fd, 0, 0, need) == 0 ? 0 : errno;
  close(fd);
  unlink(tmp); /* frees the room, for HDF5 to take at once */
  if (rc == ENOSPC || rc == EDQUOT || rc == EFBIG) { errno = rc; return -1; }
  return 0;
}

/* the new file log->tmp (*f), once the file system has room for `capacity` records; 0 or an error */
static int create_new_file(mpt_runlog *log, int64_t capacity, hid_t *f, mpt_error *err) {
  unlink(log->tmp);
  off_t need = file_size_bound(log, capacity);
  if (check_room(log->tmp, need) < 0)
    return mpt_error_set(err, MPT_ERR_IO, "run log %s: no room for %s (%.1f MB): %s%s", log->path, log->tmp,
                         (double)need / 1e6, strerror(errno), log->file >= 0 ? "; the log is unchanged" : "");
  hid_t fapl = mpt_rl_fapl();
  /* the HDF5 1.8 object format: object headers, attributes and the superblock carry checksums, so damaged
   * metadata is an error, not a crash (no 1.10 format: its superblock would mark the file open for
   * writing, and a killed run's log would then not open) */
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18);
  *f = H5Fcreate(log->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (*f < 0) {
    const char *why = mpt_h5_last_error(); /* the system's reason, e.g. "No such file or directory" */
    return mpt_error_set(err, MPT_ERR_IO, "cannot create run log %s: %s", log->tmp, why[0] ? why : "is the directory writable?");
  }
  return 0;
}

/* /metadata_copy: the attributes and the tables once more as one checksummed block of raw bytes, which
 * recovery finds when HDF5 can not read the file (jobs/runlog/runlog_meta.h); written before /evaluations, so it
 * lies before the records and survives a file cut short in them. 0 or -1 */
static int write_meta_copy(mpt_runlog *log, hid_t f) {
  const char *keys[MPT_RL_COPY_KEYS];
  char *vals[MPT_RL_COPY_KEYS], crc[16];
  mpt_rl_copy_keys(keys);
  memcpy(vals, log->attr, sizeof(char *) * MPT_RL_N_ATTRS);
  snprintf(crc, sizeof crc, "%u", (unsigned)mpt_rl_params_crc(log->params, log->dims));
  vals[MPT_RL_N_ATTRS] = crc;
  mpt_rl_meta m = {MPT_RL_COPY_KEYS, keys, vals, log->devs, log->n_devs, log->sess, log->n_sess};
  size_t size;
  unsigned char *blk = mpt_rl_meta_pack(&m, &size);
  if (!blk) return -1;
  int rc = mpt_h5_write_table(f, "metadata_copy", H5T_NATIVE_UINT8, blk, (hsize_t)size);
  free(blk);
  return rc;
}

/* the attributes (format_version: the layout written now, also for a resumed older log), the parameter,
 * device and session tables and the metadata copy; 0, or nonzero when a write failed */
static int write_metadata(mpt_runlog *log, hid_t f) {
  int bad = mpt_rl_set_attr_num(log, "format_version", "%d", MPT_RL_FORMAT_VERSION);
  bad |= mpt_rl_attrs_write(log, f);
  bad |= mpt_rl_params_write(log->params, log->dims, f);
  bad |= mpt_h5_write_table(f, "devices", log->dev_type, log->devs, (hsize_t)log->n_devs);
  bad |= mpt_h5_write_table(f, "sessions", log->ses_type, log->sess, (hsize_t)log->n_sess);
  bad |= write_meta_copy(log, f);
  return bad;
}

typedef struct copy_ctx { hid_t d; hsize_t out; } copy_ctx;

static int copy_block(mpt_runlog *log, hsize_t k, void *ctx) {
  copy_ctx *c = ctx;
  if (mpt_rl_block_io(log, c->d, c->out, k, 1) < 0) return -1;
  c->out += k;
  return 0;
}

/* /evaluations: contiguous, allocated now, never-written records have id -1; the n_copy valid records
 * copied side by side (without a torn tail or damaged ones) unless a write failed before (bad). Returns
 * bad, or 1 when this failed */
static int write_evaluations(mpt_runlog *log, hid_t f, int64_t n_copy, int64_t capacity, int bad) {
  hsize_t cap = (hsize_t)capacity;
  hid_t sp = H5Screate_simple(1, &cap, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_layout(dcpl, H5D_CONTIGUOUS);
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC);
  unsigned char *fill = calloc(1, log->rec_size);
  if (fill) mpt_rl_rec_set_id(fill, log->rec_size, -1);
  if (!fill || H5Pset_fill_value(dcpl, log->rec_type, fill) < 0) bad = 1;
  free(fill);
  hid_t d = H5Dcreate2(f, "evaluations", log->rec_type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(sp);
  if (d < 0) bad = 1;
  if (!bad && n_copy > 0) {
    copy_ctx cc = {d, 0};
    if (mpt_rl_each_valid_block(log, copy_block, &cc) < 0 || cc.out != (hsize_t)n_copy) bad = 1;
  }
  if (d >= 0) H5Dclose(d);
  return bad;
}

/* /count: written in place after the records of every append; 0, or 1 when this failed */
static int write_count(hid_t f, int64_t n_copy) {
  int bad = 0;
  hid_t csp = H5Screate(H5S_SCALAR);
  hid_t cdcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_layout(cdcpl, H5D_CONTIGUOUS);
  H5Pset_alloc_time(cdcpl, H5D_ALLOC_TIME_EARLY);
  hid_t c = H5Dcreate2(f, "count", H5T_STD_I64LE, csp, H5P_DEFAULT, cdcpl, H5P_DEFAULT);
  int64_t nc = n_copy;
  if (c < 0 || H5Dwrite(c, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &nc) < 0) bad = 1;
  if (c >= 0) H5Dclose(c);
  H5Pclose(cdcpl);
  H5Sclose(csp);
  return bad;
}

/* closes the new file; when a write failed (bad) or the close does, removes it: 0 or an error */
static int close_new_file(mpt_runlog *log, hid_t f, int bad, mpt_error *err) {
  if (!bad && H5Fclose(f) >= 0) return 0;
  int rc = mpt_rl_h5err(err, log->path, "writing the file"); /* HDF5's message of the failure, not of a close */
  if (bad) {
    /* a write failed (a full disk, a quota): empty the new file first, or closing it would try to write
     * its metadata into the same lack of space, fail, and leave HDF5 to crash at exit */
    if (truncate(log->tmp, 0) != 0) { /* nothing more to do: the close below may fail */ }
    H5Fclose(f);
  }
  unlink(log->tmp);
  return rc;
}

/* the new file on disk, then renamed over the log (the old file, if open, replaced atomically) and
 * reopened with its n_copy records; 0 or an error */
static int replace_with_new_file(mpt_runlog *log, int64_t n_copy, mpt_error *err) {
  /* on disk before it takes the name, so a node failure never leaves the name on a file whose data had
   * not been written */
  if (mpt_rl_sync_path(log->tmp, 0) != 0) {
    mpt_error_set(err, MPT_ERR_IO, "run log %s: cannot sync %s to disk: %s%s", log->path, log->tmp, strerror(errno),
                  log->file >= 0 ? "; the log is unchanged" : "");
    unlink(log->tmp);
    return MPT_ERR_IO;
  }
  mpt_rl_close_handles(log);
  if (rename(log->tmp, log->path) != 0) {
    mpt_error_set(err, MPT_ERR_IO, "cannot rename %s to %s: %s", log->tmp, log->path, strerror(errno));
    unlink(log->tmp);
    return MPT_ERR_IO;
  }
  if (mpt_rl_sync_path(log->path, 1) != 0) /* the rename itself */
    return mpt_error_set(err, MPT_ERR_IO, "run log %s: cannot sync its directory: %s", log->path, strerror(errno));
  hid_t fapl = mpt_rl_fapl();
  log->file = H5Fopen(log->path, H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  if (log->file < 0 || mpt_rl_open_datasets(log) < 0) return mpt_rl_h5err(err, log->path, "reopening the file");
  log->count = log->end = n_copy;
  log->format = 0; /* this layout now (a legacy log's records were converted as they were copied) */
  return 0;
}

int mpt_rl_rewrite(mpt_runlog *log, int64_t n_copy, int64_t capacity, mpt_error *err) {
  if (capacity < n_copy) capacity = n_copy;
  if (capacity < 16) capacity = 16;
  hid_t f = -1;
  int rc = create_new_file(log, capacity, &f, err);
  if (rc) return rc;
  int bad = write_metadata(log, f);
  bad = write_evaluations(log, f, n_copy, capacity, bad);
  bad |= write_count(f, n_copy);
  if ((rc = close_new_file(log, f, bad, err)) != 0) return rc;
  return replace_with_new_file(log, n_copy, err);
}
