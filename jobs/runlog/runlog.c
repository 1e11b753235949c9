/* jobs/runlog/runlog.c: the HDF5 run log (jobs/runlog/runlog.h, layout in docs/RUNLOG.md). One file per run, written by
 * rank 0 with serial HDF5 calls.
 *
 * Crash safety without trusting HDF5's metadata writes: a SIGKILL can interrupt a large write() between
 * pages, so any HDF5 metadata update in flight may be torn (SWMR included). So the hot path never changes
 * HDF5 metadata: /evaluations is a contiguous dataset allocated up front (capacity records, fill id -1)
 * and an append only overwrites raw bytes in place: the records (each carrying a CRC-32), then the
 * 8-byte /count, then H5Fflush. Everything that changes metadata (new log, more capacity, devices, a new
 * session, finishing) writes a complete new file NAME.tmp from the in-memory state plus the records, and
 * renames it over NAME, which is atomic. So the file under the real name is always a complete HDF5 file,
 * and its records are those acknowledged plus at most a torn one, which the CRC rejects.
 *
 * A log HDF5 can not read is recovered from its records by jobs/runlog/runlog_recover.c; the state both share:
 * jobs/runlog/runlog_state.h. */
#include "jobs/runlog/runlog_priv.h"
#include "jobs/runlog/runlog_state.h"
#include "jobs/runlog/runlog_h5.h"
#include "jobs/runlog/runlog_params.h"
#include "jobs/runlog/runlog_records.h"
#include "jobs/runlog/runlog_meta.h"
#include "jobs/runlog/runlog_lock.h"
#include "jobs/output/outfile.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stddef.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "spaces/sys/clock.h"

#define FORMAT_NAME "mptune-runlog"
#define FORMAT_VERSION 3 /* 3: fixed-length strings, HDF5 1.8 object format; 2 (variable-length strings) is read too */
#define FORMAT_OLDEST 2

/* the root attributes, their HDF5 types, in the order written */
typedef enum { A_STR, A_I32, A_I64, A_U64, A_F64 } attr_kind;
static const struct { const char *key; attr_kind kind; } ATTRS[] = {
  {"mptune_format", A_STR}, {"format_version", A_I32}, {"mptune_version", A_STR}, {"mode", A_STR},
  {"problem_path", A_STR}, {"problem_name", A_STR}, {"problem_text", A_STR}, {"strategy", A_STR},
  {"options", A_STR}, {"evaluator", A_STR}, {"simulate", A_STR}, {"seed", A_U64}, {"budget", A_I64},
  {"time_budget", A_F64}, {"command_line", A_STR}, {"start_time", A_STR}, {"start_unix", A_F64},
  {"host", A_STR}, {"space_size", A_I64}, {"finished", A_I32}, {"stop_reason", A_STR},
  {"finish_time", A_STR},
};
_Static_assert(sizeof ATTRS / sizeof ATTRS[0] == MPT_RL_N_ATTRS, "runlog_state.h: MPT_RL_N_ATTRS");

/* ---- small helpers ---- */

static void iso_time(double t, char *buf, size_t cap) {
  time_t s = (time_t)t;
  struct tm tm;
  gmtime_r(&s, &tm);
  char b[32];
  strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf, cap, "%s.%06dZ", b, (int)((t - (double)s) * 1e6));
}

static int h5err(mpt_error *err, const char *path, const char *what) {
  const char *why = mpt_h5_last_error();
  if (why[0]) return mpt_error_set(err, MPT_ERR_IO, "run log %s: HDF5 error while %s (%s)", path, what, why);
  return mpt_error_set(err, MPT_ERR_IO, "run log %s: HDF5 error while %s", path, what);
}

static int attr_index(const char *key) {
  for (int i = 0; i < MPT_RL_N_ATTRS; i++)
    if (strcmp(ATTRS[i].key, key) == 0) return i;
  return -1;
}

int mpt_rl_set_attr(mpt_runlog *log, const char *key, const char *value) {
  int i = attr_index(key);
  if (i < 0) return -1;
  char *v = strdup(value ? value : "");
  if (!v) return -1;
  free(log->attr[i]);
  log->attr[i] = v;
  return 0;
}

static int set_attr_num(mpt_runlog *log, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int set_attr_num(mpt_runlog *log, const char *key, const char *fmt, ...) {
  char b[64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  return mpt_rl_set_attr(log, key, b);
}

/* the settings of the run (mpt_run_meta) as attributes. missing_only: 0 all of them, 1 those the log lacks,
 * 2 those it lacks and the settings a resume may replace */
static int set_run_attrs(mpt_runlog *log, const mpt_run_meta *meta, int missing_only) {
  char seed[32], budget[32], time_budget[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)meta->seed);
  snprintf(budget, sizeof budget, "%lld", (long long)meta->budget);
  snprintf(time_budget, sizeof time_budget, "%.17g", meta->time_budget);
  const char *kv[][2] = {{"mode", meta->mode ? meta->mode : "tune"}, {"strategy", meta->strategy},
                         {"options", meta->options}, {"evaluator", meta->evaluator}, {"simulate", meta->simulate},
                         {"seed", seed}, {"budget", budget}, {"time_budget", time_budget},
                         {"command_line", meta->command_line}};
  static const char *const replaceable[] = {"strategy", "options", "seed", "budget", "time_budget"};
  int bad = 0;
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
    int set = !missing_only || !log->attr[attr_index(kv[i][0])];
    for (size_t r = 0; missing_only == 2 && !set && r < sizeof replaceable / sizeof replaceable[0]; r++)
      set = strcmp(kv[i][0], replaceable[r]) == 0;
    if (set) bad |= mpt_rl_set_attr(log, kv[i][0], kv[i][1]);
  }
  return bad;
}

/* what every log says of itself and of its problem (a new log, and one rebuilt from its records):
 * problem_path and problem_text default to the problem's own */
int mpt_rl_set_log_attrs(mpt_runlog *log, const mpt_space *space, const char *problem_path, const char *problem_text) {
  const mpt_problem *pr = mpt_space_problem(space);
  int bad = mpt_rl_set_attr(log, "mptune_format", FORMAT_NAME);
  bad |= set_attr_num(log, "format_version", "%d", FORMAT_VERSION);
  bad |= mpt_rl_set_attr(log, "mptune_version", MPT_VERSION);
  bad |= mpt_rl_set_attr(log, "problem_path", problem_path ? problem_path : pr->path);
  bad |= mpt_rl_set_attr(log, "problem_name", pr->name);
  bad |= mpt_rl_set_attr(log, "problem_text", problem_text ? problem_text : pr->text);
  bad |= set_attr_num(log, "space_size", "%lld", (long long)mpt_space_size(space));
  bad |= mpt_rl_set_attr(log, "finished", "0");
  return bad;
}

int mpt_rl_set_finished(mpt_runlog *log, const char *reason, const char *when) {
  return mpt_rl_set_attr(log, "finished", reason ? "1" : "0") || mpt_rl_set_attr(log, "stop_reason", reason) ||
         mpt_rl_set_attr(log, "finish_time", reason ? when : "");
}

static const char *get_attr(const mpt_runlog *log, const char *key) {
  int i = attr_index(key);
  return i < 0 ? NULL : log->attr[i];
}

/* ---- types ---- */

static hid_t make_fapl(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_sieve_buf_size(fapl, 0);  /* raw data straight to the file, in the order written */
  /* no HDF5 file lock: the writer would lock readers out (h5py, mptune export) for the whole run. A reader
   * needs none: appends change no metadata, and every other change comes as a new file by rename */
  H5Pset_file_locking(fapl, 0, 1);
  return fapl;
}

/* ---- durability: what a node failure (power, kernel panic) leaves, not only a killed process ---- */

#define SYNC_INTERVAL_S 1.0 /* appends reach stable storage at least this often (and at close) */

/* the open log's data on stable storage (fdatasync of HDF5's sec2 descriptor); 0, or -1 with errno */
static int sync_log(mpt_runlog *log) {
  void *h = NULL;
  if (H5Fget_vfd_handle(log->file, H5P_DEFAULT, &h) < 0 || !h) return errno = EIO, -1;
  if (fdatasync(*(int *)h) != 0 && errno != EINVAL) return -1; /* EINVAL: a file that cannot be synced (a pipe) */
  log->synced_at = mpt_clock_mono_s();
  return 0;
}

/* fsync of a closed file, or with dir != 0 of the directory holding it (a rename made durable) */
static int sync_path(const char *path, int dir) {
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

/* ---- records ---- */

static int ensure_buf(mpt_runlog *log, size_t n) {
  size_t need = n * log->rec_size;
  if (need <= log->buf_cap) return 0;
  unsigned char *b = realloc(log->buf, need);
  if (!b) return -1;
  log->buf = b;
  log->buf_cap = need;
  return 0;
}

/* reads (write = 0) or writes records [start, start+n) of dataset d from / to log->buf */
static int block_io(mpt_runlog *log, hid_t d, hsize_t start, hsize_t n, int write) {
  hid_t fs = H5Dget_space(d);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &n, NULL);
  hid_t ms = H5Screate_simple(1, &n, NULL);
  herr_t rc = write ? H5Dwrite(d, log->rec_type, ms, fs, H5P_DEFAULT, log->buf)
                    : H5Dread(d, log->rec_type, ms, fs, H5P_DEFAULT, log->buf);
  H5Sclose(ms);
  H5Sclose(fs);
  return rc < 0 ? -1 : 0;
}

/* reads records [start, start+n) of the open log into log->buf */
static int read_block(mpt_runlog *log, hsize_t start, hsize_t n) { return block_io(log, log->evals, start, n, 0); }

/* Counts the records written completely (log->count) and where the last of them ends (log->end). The
 * records before /count were complete when /count was written and are never written again, so an
 * invalid one there is damage to the file (log->damaged; the valid records after it are kept). From
 * /count on, records may still be in flight (a reader beside the writer) or torn by a kill: the scan
 * ends at the first blank record, and invalid written ones count as damage only when a valid record
 * follows them (else they are the torn tail). */
static int scan_records(mpt_runlog *log) {
  log->count = log->end = log->damaged = 0;
  int64_t settled = 0;
  if (H5Dread(log->countd, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &settled) < 0) return -1;
  /* a damaged /count: no record is known to be settled, so the whole dataset is read; the invalid
   * records before the last valid one are damage, the invalid ones after it a torn tail (with an
   * intact /count the tail starts at the first invalid record past it) */
  int count_ok = settled >= 0 && settled <= log->capacity;
  if (!count_ok) settled = 0;
  int64_t unsettled_bad = 0; /* invalid, not blank, past settled and since the last valid record */
  if (ensure_buf(log, MPT_RL_COPY_BLOCK) < 0) return -1;
  for (hsize_t start = 0; start < (hsize_t)log->capacity; start += MPT_RL_COPY_BLOCK) {
    hsize_t n = (hsize_t)log->capacity - start < MPT_RL_COPY_BLOCK ? (hsize_t)log->capacity - start : MPT_RL_COPY_BLOCK;
    if (read_block(log, start, n) < 0) return -1;
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
      log->end = at + 1;
    }
  }
  return 0;
}

/* Calls fn for each valid record of the open log in append order, in blocks: fn(log->buf, k, ctx) with
 * the k valid records of a block moved to the front of log->buf; 0 or -1 (HDF5 error, or fn's). */
static int each_valid_block(mpt_runlog *log, int (*fn)(mpt_runlog *, hsize_t, void *), void *ctx) {
  if (ensure_buf(log, MPT_RL_COPY_BLOCK) < 0) return -1;
  if (log->rec_off) return mpt_rl_each_recovered_block(log, fn, ctx);
  for (hsize_t start = 0; start < (hsize_t)log->end; start += MPT_RL_COPY_BLOCK) {
    hsize_t n = (hsize_t)log->end - start < MPT_RL_COPY_BLOCK ? (hsize_t)log->end - start : MPT_RL_COPY_BLOCK;
    if (read_block(log, start, n) < 0) return -1;
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

/* ---- the log object ---- */

static void close_handles(mpt_runlog *log) {
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
  if (!log->path || !log->tmp) { free(log->path); free(log->tmp); free(log); return NULL; }
  return log;
}

void mpt_rl_free_log(mpt_runlog *log) {
  if (!log) return;
  close_handles(log);
  mpt_runlog_unlock(log->path, log->lock_fd); /* after the file's last write */
  if (log->rec_type >= 0) H5Tclose(log->rec_type);
  if (log->dev_type >= 0) H5Tclose(log->dev_type);
  if (log->ses_type >= 0) H5Tclose(log->ses_type);
  mpt_rl_params_free(log->params, log->dims);
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) free(log->attr[i]);
  free(log->devs);
  free(log->sess);
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

static int open_datasets(mpt_runlog *log) {
  log->evals = H5Dopen2(log->file, "evaluations", H5P_DEFAULT);
  log->countd = H5Dopen2(log->file, "count", H5P_DEFAULT);
  if (log->evals < 0 || log->countd < 0) return -1;
  log->capacity = (int64_t)mpt_h5_extent(log->evals);
  return 0;
}

typedef struct copy_ctx { hid_t d; hsize_t out; } copy_ctx;

static int copy_block(mpt_runlog *log, hsize_t k, void *ctx) {
  copy_ctx *c = ctx;
  if (block_io(log, c->d, c->out, k, 1) < 0) return -1;
  c->out += k;
  return 0;
}

/* Writes the whole log (state in memory + the n_copy valid records of the open file, if any) as a new
 * file log->tmp with room for `capacity` records, then renames it over log->path and reopens it. */
/* An upper bound of the size of the file rewrite() writes: the records, the text it stores, the tables, and
 * room for HDF5's own structures. */
static off_t file_size_bound(const mpt_runlog *log, int64_t capacity) {
  off_t n = (off_t)capacity * (off_t)log->rec_size + 48 * 1024;
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) n += log->attr[i] ? (off_t)strlen(log->attr[i]) + 64 : 64;
  for (int p = 0; p < log->dims; p++) {
    const mpt_rl_param *t = &log->params[p];
    n += 512 + (off_t)strlen(t->name);
    for (int i = 0; i < t->n; i++) n += t->str && t->str[i] ? (off_t)strlen(t->str[i]) + 1 : 8;
  }
  off_t tables = (off_t)log->n_devs * (off_t)sizeof(mpt_rl_dev) + (off_t)log->n_sess * (off_t)sizeof(mpt_rl_session);
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) /* the metadata copy repeats the attributes and the tables */
    tables += (off_t)strlen(ATTRS[i].key) + (log->attr[i] ? (off_t)strlen(log->attr[i]) : 0) + 8;
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

const char *const *mpt_rl_attr_keys(void) {
  static const char *keys[MPT_RL_N_ATTRS];
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) keys[i] = ATTRS[i].key;
  return keys;
}

/* /metadata_copy: the attributes and the tables once more as one checksummed block of raw bytes, which
 * recovery finds when HDF5 can not read the file (jobs/runlog/runlog_meta.h); written before /evaluations, so it
 * lies before the records and survives a file cut short in them. 0 or -1 */
#define COPY_KEYS (MPT_RL_N_ATTRS + 1) /* the attributes, then the CRC of /parameters (mpt_rl_params_crc) */

/* the keys of the copy's entries: the root attributes' and, in the copy only, "parameter_tables_crc" */
static void copy_keys(const char *keys[COPY_KEYS]) {
  memcpy(keys, mpt_rl_attr_keys(), sizeof(char *) * MPT_RL_N_ATTRS);
  keys[MPT_RL_N_ATTRS] = "parameter_tables_crc";
}

static int write_meta_copy(mpt_runlog *log, hid_t f) {
  const char *keys[COPY_KEYS];
  char *vals[COPY_KEYS], crc[16];
  copy_keys(keys);
  memcpy(vals, log->attr, sizeof(char *) * MPT_RL_N_ATTRS);
  snprintf(crc, sizeof crc, "%u", (unsigned)mpt_rl_params_crc(log->params, log->dims));
  vals[MPT_RL_N_ATTRS] = crc;
  mpt_rl_meta m = {COPY_KEYS, keys, vals, log->devs, log->n_devs, log->sess, log->n_sess};
  size_t size;
  unsigned char *blk = mpt_rl_meta_pack(&m, &size);
  if (!blk) return -1;
  int rc = mpt_h5_write_table(f, "metadata_copy", H5T_NATIVE_UINT8, blk, (hsize_t)size);
  free(blk);
  return rc;
}

static int rewrite(mpt_runlog *log, int64_t n_copy, int64_t capacity, mpt_error *err) {
  if (capacity < n_copy) capacity = n_copy;
  if (capacity < 16) capacity = 16;
  unlink(log->tmp);
  off_t need = file_size_bound(log, capacity);
  if (check_room(log->tmp, need) < 0)
    return mpt_error_set(err, MPT_ERR_IO, "run log %s: no room for %s (%.1f MB): %s%s", log->path, log->tmp,
                         (double)need / 1e6, strerror(errno), log->file >= 0 ? "; the log is unchanged" : "");
  hid_t fapl = make_fapl();
  /* the HDF5 1.8 object format: object headers, attributes and the superblock carry checksums, so damaged
   * metadata is an error, not a crash (no 1.10 format: its superblock would mark the file open for
   * writing, and a killed run's log would then not open) */
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18);
  hid_t f = H5Fcreate(log->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (f < 0) {
    const char *why = mpt_h5_last_error(); /* the system's reason, e.g. "No such file or directory" */
    return mpt_error_set(err, MPT_ERR_IO, "cannot create run log %s: %s", log->tmp, why[0] ? why : "is the directory writable?");
  }
  int bad = set_attr_num(log, "format_version", "%d", FORMAT_VERSION); /* a resumed older log: now this layout */
  for (int i = 0; i < MPT_RL_N_ATTRS; i++) {
    const char *v = log->attr[i];
    if (!v) continue; /* lost (a recovered log): absent until a run gives it (mpt_runlog_adopt_meta) */
    switch (ATTRS[i].kind) {
      case A_STR: bad |= mpt_h5_attr_write_str(f, ATTRS[i].key, v); break;
      case A_I32: { int32_t x = (int32_t)strtol(v, NULL, 10); bad |= mpt_h5_attr_write_num(f, ATTRS[i].key, H5T_NATIVE_INT32, &x); break; }
      case A_I64: { long long x = strtoll(v, NULL, 10); bad |= mpt_h5_attr_write_num(f, ATTRS[i].key, H5T_NATIVE_LLONG, &x); break; }
      case A_U64: { unsigned long long x = strtoull(v, NULL, 10); bad |= mpt_h5_attr_write_num(f, ATTRS[i].key, H5T_NATIVE_ULLONG, &x); break; }
      case A_F64: { double x = strtod(v, NULL); bad |= mpt_h5_attr_write_num(f, ATTRS[i].key, H5T_NATIVE_DOUBLE, &x); break; }
    }
  }
  bad |= mpt_rl_params_write(log->params, log->dims, f);
  bad |= mpt_h5_write_table(f, "devices", log->dev_type, log->devs, (hsize_t)log->n_devs);
  bad |= mpt_h5_write_table(f, "sessions", log->ses_type, log->sess, (hsize_t)log->n_sess);
  bad |= write_meta_copy(log, f);
  /* /evaluations: contiguous, allocated now, never-written records have id -1 */
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
  /* copy the valid records, side by side (without a torn tail or damaged ones) */
  if (!bad && n_copy > 0) {
    copy_ctx cc = {d, 0};
    if (each_valid_block(log, copy_block, &cc) < 0 || cc.out != (hsize_t)n_copy) bad = 1;
  }
  if (d >= 0) H5Dclose(d);
  /* /count: written in place after the records of every append */
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
  if (bad || H5Fclose(f) < 0) {
    int rc = h5err(err, log->path, "writing the file"); /* HDF5's message of the failure, not of a close */
    if (bad) {
      /* a write failed (a full disk, a quota): empty the new file first, or closing it would try to write
       * its metadata into the same lack of space, fail, and leave HDF5 to crash at exit */
      if (truncate(log->tmp, 0) != 0) { /* nothing more to do: the close below may fail */ }
      H5Fclose(f);
    }
    unlink(log->tmp);
    return rc;
  }
  /* the new file on disk before it takes the name, so a node failure never leaves the name on a file
   * whose data had not been written */
  if (sync_path(log->tmp, 0) != 0) {
    mpt_error_set(err, MPT_ERR_IO, "run log %s: cannot sync %s to disk: %s%s", log->path, log->tmp, strerror(errno),
                  log->file >= 0 ? "; the log is unchanged" : "");
    unlink(log->tmp);
    return MPT_ERR_IO;
  }
  /* the old file (if open) is replaced atomically */
  close_handles(log);
  if (rename(log->tmp, log->path) != 0) {
    mpt_error_set(err, MPT_ERR_IO, "cannot rename %s to %s: %s", log->tmp, log->path, strerror(errno));
    unlink(log->tmp);
    return MPT_ERR_IO;
  }
  if (sync_path(log->path, 1) != 0) /* the rename itself */
    return mpt_error_set(err, MPT_ERR_IO, "run log %s: cannot sync its directory: %s", log->path, strerror(errno));
  fapl = make_fapl();
  log->file = H5Fopen(log->path, H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  if (log->file < 0 || open_datasets(log) < 0) return h5err(err, log->path, "reopening the file");
  log->count = log->end = n_copy;
  return 0;
}

static mpt_rl_session this_session(void) {
  mpt_rl_session s;
  memset(&s, 0, sizeof s);
  s.start_unix = mpt_clock_unix_s();
  s.pid = (int32_t)getpid();
  gethostname(s.host, sizeof s.host);
  s.host[sizeof s.host - 1] = '\0';
  iso_time(s.start_unix, s.start_time, sizeof s.start_time);
  return s;
}

static int create_at(const char *path, const mpt_space *space, const mpt_run_meta *meta, mpt_runlog **out,
                     mpt_error *err) {
  *out = NULL;
  mpt_h5_quiet();
  const mpt_problem *pr = mpt_space_problem(space);
  mpt_runlog *log = mpt_rl_new_log(path);
  if (!log) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = mpt_runlog_lock(path, &log->lock_fd, err); /* never replace a log another run is writing */
  if (rc < 0) { mpt_rl_free_log(log); return rc; }
  log->space = space;
  log->dims = pr->n_params;
  log->params = mpt_rl_params_from_problem(pr);
  if (!log->params) { mpt_rl_free_log(log); return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); }
  for (int p = 0; p < log->dims; p++)
    if (strchr(log->params[p].name, '/') || strcmp(log->params[p].name, ".") == 0) {
      mpt_rl_free_log(log);
      return mpt_error_set(err, MPT_ERR_VALUE, "run log %s: parameter name '%s' can not be stored", path, pr->params[p].name);
    }
  mpt_rl_make_types(log);
  const mpt_run_meta empty = {0};
  if (!meta) meta = &empty;
  mpt_rl_session s = this_session();
  log->sess = malloc(sizeof s);
  if (!log->sess) { mpt_rl_free_log(log); return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); }
  log->sess[0] = s;
  log->n_sess = 1;
  log->session = 0;
  int bad = mpt_rl_set_log_attrs(log, space, meta->problem_path, meta->problem_text);
  bad |= set_run_attrs(log, meta, 0);
  bad |= mpt_rl_set_attr(log, "start_time", s.start_time);
  bad |= set_attr_num(log, "start_unix", "%.17g", s.start_unix);
  bad |= mpt_rl_set_attr(log, "host", s.host);
  bad |= mpt_rl_set_attr(log, "stop_reason", "");
  bad |= mpt_rl_set_attr(log, "finish_time", "");
  if (bad) { mpt_rl_free_log(log); return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); }
  /* room for the whole run when its size is known, else grown by doubling */
  int64_t size = mpt_space_size(space), cap = 1024;
  if (meta->budget > 0) cap = meta->budget + 16;
  if (cap > size + 16) cap = size + 16;
  if (cap > 16384) cap = 16384; /* 23 MB; a longer run grows by doubling */
  rc = rewrite(log, 0, cap, err);
  if (rc < 0) { mpt_rl_free_log(log); return rc; }
  *out = log;
  return 0;
}

static int hdf5_failed;

int mpt_runlog_hdf5_failed(void) { return hdf5_failed; }

static int is_hdf5(const char *path) {
  mpt_h5_quiet();
  return H5Fis_hdf5(path) > 0;
}

/* What HDF5 does not checksum (the raw data of /parameters, text attributes stored as heap objects such
 * as problem_text) compared with the log's checksummed metadata copy: "" when they agree or there is no
 * copy (format 2), else what is damaged: what differs, or the copy itself (then nothing can be checked:
 * with its tables damaged too such a log exported wrong configurations with exit 0) */
static const char *differs_from_copy(mpt_runlog *log) {
  if (H5Lexists(log->file, "metadata_copy", H5P_DEFAULT) <= 0) return "";
  int n = 0;
  unsigned char *blk = mpt_h5_read_table(log->file, "metadata_copy", H5T_NATIVE_UINT8, 1, &n);
  const char *keys[COPY_KEYS];
  char *vals[COPY_KEYS] = {0};
  copy_keys(keys);
  mpt_rl_meta m = {COPY_KEYS, keys, vals, NULL, 0, NULL, 0};
  int ok = blk && mpt_rl_meta_unpack(blk, (size_t)n, &m) == 0;
  free(blk);
  static char what[200];
  what[0] = '\0';
  if (!ok)
    snprintf(what, sizeof what, "its metadata copy (/metadata_copy) is damaged itself, so its parameter tables cannot be checked");
  for (int i = 0; i < MPT_RL_N_ATTRS && !what[0]; i++) /* text attributes: numbers read back reformatted */
    if (ATTRS[i].kind == A_STR && vals[i] && log->attr[i] && strcmp(vals[i], log->attr[i]) != 0)
      snprintf(what, sizeof what, "its attribute %s differs from its checksummed metadata copy", ATTRS[i].key);
  if (!what[0] && vals[MPT_RL_N_ATTRS] &&
      strtoul(vals[MPT_RL_N_ATTRS], NULL, 10) != (unsigned long)mpt_rl_params_crc(log->params, log->dims))
    snprintf(what, sizeof what, "its parameter tables (/parameters) differ from its checksummed metadata copy");
  for (int i = 0; i <= MPT_RL_N_ATTRS; i++) free(vals[i]);
  free(m.devs);
  free(m.sess);
  return what;
}

/* opens path and reads the state; readonly or read-write. *unreadable: set when it failed on the file's
 * contents, where its records may still be recovered (mpt_runlog_recover): 2 when HDF5 failed reading it
 * (damaged, cut short), 1 when it is not HDF5 or not a log; 0 for a missing or inaccessible file or a log
 * of another format version. */
int mpt_rl_load(const char *path, int readonly, mpt_runlog **out, int *unreadable, mpt_error *err) {
  *out = NULL;
  *unreadable = 0;
  mpt_h5_quiet();
  if (access(path, F_OK) != 0) return mpt_error_set(err, MPT_ERR_IO, "cannot open run log %s: no such file", path);
  if (access(path, readonly ? R_OK : R_OK | W_OK) != 0)
    return mpt_error_set(err, MPT_ERR_IO, "cannot open run log %s%s: permission denied", path, readonly ? "" : " for writing");
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) /* a pipe would block the reader, a device be replaced */
    return mpt_error_set(err, MPT_ERR_IO, "run log %s is not a regular file", path);
  *unreadable = 1;
  if (!is_hdf5(path)) return mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log", path);
  mpt_runlog *log = mpt_rl_new_log(path);
  if (!log) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  log->readonly = readonly;
  hid_t fapl = make_fapl();
  log->file = H5Fopen(path, readonly ? H5F_ACC_RDONLY : H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  int rc = 0;
  const char *why = mpt_h5_last_error(); /* HDF5's last failure, kept up to date as the mpt_rl_load goes on */
  if (log->file < 0)
    rc = mpt_error_set(err, MPT_ERR_STATE, "%s is damaged or not an mptune run log: HDF5 can not open it%s%s%s", path,
                       why[0] ? " (" : "", why, why[0] ? ")" : "");
  char *fmt = rc ? NULL : mpt_h5_attr_read_text(log->file, "mptune_format");
  int ok = fmt && strcmp(fmt, FORMAT_NAME) == 0;
  free(fmt);
  char *ver = ok ? mpt_h5_attr_read_text(log->file, "format_version") : NULL;
  if (rc == 0 && why[0]) rc = h5err(err, path, "reading its attributes (the file is damaged)");
  if (rc == 0 && (!ok || !ver || H5Lexists(log->file, "evaluations", H5P_DEFAULT) <= 0))
    rc = why[0] ? h5err(err, path, "looking for its records (the file is damaged)")
                    : mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log", path);
  int v = ver ? atoi(ver) : 0;
  free(ver);
  if (rc == 0 && (v < FORMAT_OLDEST || v > FORMAT_VERSION)) {
    *unreadable = 0; /* a log, of another version */
    rc = mpt_error_set(err, MPT_ERR_STATE, "%s is an mptune run log of format %d; this mptune (%s) reads formats %d to %d",
                       path, v, MPT_VERSION, FORMAT_OLDEST, FORMAT_VERSION);
  }
  for (int i = 0; rc == 0 && i < MPT_RL_N_ATTRS; i++) log->attr[i] = mpt_h5_attr_read_text(log->file, ATTRS[i].key);
  if (rc == 0 && why[0]) rc = h5err(err, path, "reading its attributes (the file is damaged)");
  const char *fin = rc ? NULL : get_attr(log, "finished");
  log->finished = fin && atoi(fin) != 0;
  if (rc == 0 && mpt_rl_params_read(log->file, &log->params, &log->dims) < 0) rc = h5err(err, path, "reading the parameter tables (the file is damaged)");
  if (rc == 0) {
    mpt_rl_make_types(log);
    log->devs = mpt_h5_read_table(log->file, "devices", log->dev_type, sizeof(mpt_rl_dev), &log->n_devs);
    log->sess = mpt_h5_read_table(log->file, "sessions", log->ses_type, sizeof(mpt_rl_session), &log->n_sess);
    if (why[0]) rc = h5err(err, path, "reading the device and session tables (the file is damaged)");
  }
  const char *differs = rc == 0 ? differs_from_copy(log) : "";
  if (differs[0]) { /* read as damaged: recovery from the records and the copy (given the problem) */
    rc = mpt_error_set(err, MPT_ERR_STATE, "%s is damaged: %s", path, differs);
    hdf5_failed = 1;
  }
  if (rc == 0 && open_datasets(log) < 0)
    rc = why[0] ? h5err(err, path, "opening its records (the file is damaged)")
                    : mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log (datasets missing)", path);
  log->session = log->n_sess > 0 ? log->n_sess - 1 : 0;
  if (rc == 0 && scan_records(log) < 0) rc = h5err(err, path, "reading the evaluations (the file is damaged)");
  if (rc < 0) { /* the message is set before closing: closing a damaged file can fail too */
    if (why[0] || differs[0]) hdf5_failed = 1, *unreadable = 2;
    mpt_rl_free_log(log);
    return rc;
  }
  *out = log;
  return 0;
}

int mpt_runlog_adopt_meta(mpt_runlog *log, const mpt_run_meta *meta, mpt_error *err) {
  return set_run_attrs(log, meta, 1) ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
}

int mpt_runlog_resume_meta(mpt_runlog *log, const mpt_run_meta *meta, mpt_error *err) {
  return set_run_attrs(log, meta, 2) ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
}

/* each_valid_block callback of check_same_space: the first record whose configuration (its parameters'
 * value indices) is not the one its id names in the space */
typedef struct space_check {
  const mpt_space *space;
  int64_t at, id; /* the record (its place among the valid ones) and its id; at = -1: none */
  int64_t seen;
  char logged[512]; /* its configuration as logged: "a=3,b=2" */
} space_check;

/* "name=value,..." of a logged configuration (value indices cfg), "?" for an index out of range */
static void format_logged(const mpt_problem *pr, const int32_t *cfg, int dims, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int p = 0; p < dims && p < pr->n_params && len < cap; p++) {
    char v[128] = "?";
    if (cfg[p] >= 0 && cfg[p] < pr->params[p].n_values) mpt_value_repr(&pr->params[p].values[cfg[p]], v, sizeof v);
    len += (size_t)snprintf(buf + len, cap - len, "%s%s=%s", p ? "," : "", pr->params[p].name, v);
  }
}

static int check_block(mpt_runlog *log, hsize_t k, void *ctx) {
  space_check *c = ctx;
  int64_t n_space = mpt_space_size(c->space);
  int idx[log->dims > 0 ? log->dims : 1];
  for (hsize_t i = 0; i < k && c->at < 0; i++, c->seen++) {
    const unsigned char *rec = log->buf + i * log->rec_size;
    int64_t id = mpt_rl_rec_id(rec, log->rec_size);
    const int32_t *cfg = mpt_rl_rec_config(rec);
    int same = id >= 0 && id < n_space;
    if (same) mpt_space_config(c->space, id, idx);
    for (int p = 0; same && p < log->dims; p++) same = cfg[p] == idx[p];
    if (!same) {
      c->at = c->seen, c->id = id;
      format_logged(mpt_space_problem(c->space), cfg, log->dims, c->logged, sizeof c->logged);
    }
  }
  return 0;
}

/* The parameters being the same, a log belongs to the problem only when its configuration ids mean the
 * same configurations: the same valid set (Conditions changed since the log was written shift the ids).
 * Checks the logged size of the space, then that every record's configuration is the one its id names. */
int mpt_rl_check_space_size(mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err) {
  const char *logged = get_attr(log, "space_size");
  long long n_log = logged && logged[0] ? strtoll(logged, NULL, 10) : -1, n_now = (long long)mpt_space_size(space);
  if (n_log >= 0 && n_log != n_now)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s belongs to another problem: its space has %lld valid configurations, "
                         "this problem's %lld (are the Conditions the same?)", path, n_log, n_now);
  return 0;
}

static int check_same_space(mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err) {
  int rc = mpt_rl_check_space_size(log, space, path, err);
  if (rc) return rc;
  int64_t n_now = mpt_space_size(space);
  space_check c = {space, -1, -1, 0, ""};
  if (each_valid_block(log, check_block, &c) < 0) return h5err(err, path, "reading the evaluations");
  if (c.at >= 0) {
    char cfg[512] = "?";
    if (c.id >= 0 && c.id < n_now) mpt_space_format(space, c.id, cfg, sizeof cfg);
    return mpt_error_set(err, MPT_ERR_VALUE, "%s belongs to another problem: its record %lld is configuration %lld, %s, "
                         "but configuration %lld of this problem is %s (are the Conditions the same?)",
                         path, (long long)c.at, (long long)c.id, c.logged, (long long)c.id, cfg);
  }
  return 0;
}

static int begin_session(mpt_runlog *log, mpt_error *err);

/* begin = 0: the log is locked and read and checked, nothing written (mpt_runlog_begin_session writes).
 * extend_to > 0: a log finished by its budget (or by a time budget, as logs written before session 19
 * were) is reopened to go on to extend_to evaluations when that is more than it holds: not finished now.
 * mode (NULL: any): the command resuming it; a log of the other command is refused before it is found
 * finished (a finished tune log resumed by collect was said to be extended by a larger budget) */
static int open_at(const char *path, const mpt_space *space, int64_t extend_to, const char *mode, int begin,
                   mpt_runlog **out, mpt_error *err) {
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
  const char *logged_mode = get_attr(log, "mode"); /* absent only when lost with damaged metadata */
  if (mode && logged_mode && logged_mode[0] && strcmp(logged_mode, mode) != 0)
    rc = mpt_error_set(err, MPT_ERR_STATE, "%s is the log of an `mptune %s` run: resume it with mptune %s --resume",
                       path, logged_mode, logged_mode);
  else if (log->finished) {
    const char *w = get_attr(log, "stop_reason");
    w = w ? w : "";
    int by_budget = strcmp(w, "budget") == 0 || strcmp(w, "time") == 0;
    const char *text = strcmp(w, "budget") == 0 ? "budget reached" : strcmp(w, "time") == 0 ? "time budget reached"
                       : strcmp(w, "exhausted") == 0 ? "space exhausted" : w;
    if (by_budget && extend_to > log->count) {
      if (mpt_rl_set_finished(log, NULL, NULL)) rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
      else log->finished = 0, log->extended = 1;
    } else if (by_budget && extend_to > 0) {
      rc = mpt_error_set(err, MPT_ERR_STATE, "%s is finished (%s) with %lld evaluations; a budget of %lld does not extend it",
                         path, text, (long long)log->count, (long long)extend_to);
    } else {
      rc = mpt_error_set(err, MPT_ERR_STATE, "%s is finished (%s); nothing to resume%s", path, text,
                         by_budget ? " (a larger budget extends it)" : "");
    }
  }
  if (rc == 0) {
    const mpt_problem *pr = mpt_space_problem(space);
    mpt_rl_param *want = mpt_rl_params_from_problem(pr);
    if (!want) rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    else {
      char diff[1024];
      mpt_rl_params_diff(log->params, log->dims, want, pr->n_params, diff, sizeof diff);
      if (diff[0]) rc = mpt_error_set(err, MPT_ERR_VALUE, "%s belongs to another problem: %s", path, diff);
      mpt_rl_params_free(want, pr->n_params);
    }
  }
  if (rc == 0) rc = check_same_space(log, space, path, err);
  if (rc == 0 && begin) rc = begin_session(log, err);
  else if (rc == 0) log->session_pending = 1;
  if (rc < 0) { mpt_rl_free_log(log); return rc; }
  *out = log;
  return 0;
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
  if ((rc = rewrite(log, log->count, log->capacity, err)) < 0) return rc;
  if (log->rec_off) { /* recovered: from now on the new file */
    close(log->rec_fd);
    log->rec_fd = -1;
    free(log->rec_off);
    log->rec_off = NULL;
  }
  log->session_pending = 0;
  return 0;
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
    int rc = rewrite(log, log->count, cap, err);
    if (rc < 0) return rc;
  }
  if (ensure_buf(log, (size_t)n) < 0) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) mpt_rl_rec_from_obs(log->buf + (size_t)i * log->rec_size, log->rec_size, &obs[i], log->session, log->space, log->dims);
  /* the records, then the count: raw bytes in place, no HDF5 metadata changes */
  if (block_io(log, log->evals, (hsize_t)log->end, (hsize_t)n, 1) < 0) return h5err(err, log->path, "appending evaluations");
  int64_t c = log->count + n;
  if (H5Dwrite(log->countd, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &c) < 0)
    return h5err(err, log->path, "updating the count");
  if (H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0) return h5err(err, log->path, "flushing");
  if (mpt_clock_mono_s() - log->synced_at >= SYNC_INTERVAL_S && sync_log(log) != 0)
    return mpt_error_set(err, MPT_ERR_IO, "run log %s: cannot sync the evaluations to disk: %s", log->path, strerror(errno));
  log->count = c;
  log->end += n;
  return 0;
}

int64_t mpt_runlog_count(const mpt_runlog *log) { return log ? log->count : 0; }
int64_t mpt_runlog_damaged(const mpt_runlog *log) { return log ? log->damaged : 0; }
const char *mpt_runlog_damaged_copy(const mpt_runlog *log) { return log ? log->damaged_copy : NULL; }

typedef struct each_ctx {
  int (*fn)(void *ctx, const mpt_obs *o, const int32_t *config);
  void *ctx;
  int64_t k;
  int fn_rc; /* fn's error, told apart from HDF5's */
} each_ctx;

static int each_block(mpt_runlog *log, hsize_t k, void *ctx) {
  each_ctx *e = ctx;
  if (e->k + (int64_t)k > log->count) return -1; /* the file changed under a reader */
  for (hsize_t i = 0; i < k; i++, e->k++) {
    const unsigned char *src = log->buf + i * log->rec_size;
    mpt_obs o;
    mpt_rl_rec_to_obs(src, log->rec_size, &o);
    if ((e->fn_rc = e->fn(e->ctx, &o, mpt_rl_rec_config(src))) < 0) return -1;
  }
  return 0;
}

int mpt_runlog_each(mpt_runlog *log, int (*fn)(void *ctx, const mpt_obs *o, const int32_t *config), void *ctx,
                    mpt_error *err) {
  mpt_h5_quiet();
  each_ctx e = {fn, ctx, 0, 0};
  int rc = each_valid_block(log, each_block, &e);
  if (e.fn_rc < 0) return e.fn_rc;
  if (rc < 0 || e.k != log->count) return h5err(err, log->path, "reading evaluations");
  return 0;
}

typedef struct read_ctx { mpt_obs *o; int64_t k; } read_ctx;

static int read_one(void *ctx, const mpt_obs *o, const int32_t *config) {
  (void)config;
  read_ctx *r = ctx;
  r->o[r->k++] = *o;
  return 0;
}

int mpt_runlog_read(mpt_runlog *log, mpt_obs **obs, int64_t *n, mpt_error *err) {
  *obs = NULL;
  *n = 0;
  read_ctx r = {malloc(sizeof(mpt_obs) * (size_t)(log->count ? log->count : 1)), 0};
  if (!r.o) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory reading %s", log->path);
  int rc = mpt_runlog_each(log, read_one, &r, err);
  if (rc < 0) {
    free(r.o);
    return rc;
  }
  *obs = r.o;
  *n = r.k;
  return 0;
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
  return rewrite(log, log->count, log->capacity, err);
}

const char *mpt_runlog_meta(mpt_runlog *log, const char *key) { return get_attr(log, key); }

int mpt_runlog_finish(mpt_runlog *log, const char *reason, mpt_error *err) {
  mpt_h5_quiet();
  if (not_writable(log, err)) return err->code;
  if (!reason) reason = "";
  /* a stopped run stays resumable: everything is on disk already */
  if (strcmp(reason, "signal") == 0 || strcmp(reason, "time") == 0)
    return H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0 ? h5err(err, log->path, "flushing") : 0;
  char when[40];
  iso_time(mpt_clock_unix_s(), when, sizeof when);
  if (mpt_rl_set_finished(log, reason, when)) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = rewrite(log, log->count, log->count, err); /* no spare room left in a finished log */
  if (rc == 0) log->finished = 1;
  return rc;
}

int mpt_runlog_is_finished(mpt_runlog *log) { return log ? log->finished : 0; }
int mpt_runlog_extended(const mpt_runlog *log) { return log ? log->extended : 0; }

void mpt_runlog_close(mpt_runlog *log) {
  mpt_h5_quiet();
  if (!log) return;
  if (log->file >= 0 && !log->readonly && H5Fflush(log->file, H5F_SCOPE_LOCAL) >= 0) sync_log(log);
  mpt_rl_free_log(log);
}

/* ---- parameter tables for the export ---- */

int mpt_runlog_n_params(const mpt_runlog *log) { return log->dims; }
const char *mpt_runlog_param_name(const mpt_runlog *log, int p) { return log->params[p].name; }
int mpt_runlog_param_n_values(const mpt_runlog *log, int p) { return log->params[p].n; }
mpt_runlog_vkind mpt_runlog_param_kind(const mpt_runlog *log, int p) { return log->params[p].kind; }
double mpt_runlog_param_number(const mpt_runlog *log, int p, int i) {
  return log->params[p].num ? log->params[p].num[i] : NAN;
}
int mpt_runlog_param_int(const mpt_runlog *log, int p, int i, int64_t *v) {
  if (!log->params[p].ival) return -1;
  *v = log->params[p].ival[i];
  return 0;
}
const char *mpt_runlog_param_string(const mpt_runlog *log, int p, int i) {
  return log->params[p].str ? log->params[p].str[i] : NULL;
}
