/* jobs/runlog.c: the HDF5 run log (jobs/runlog.h, layout in docs/RUNLOG.md). One file per run, written by
 * rank 0 with serial HDF5 calls. Crash safety: the file is created complete (all groups, datasets and
 * attributes) under NAME.tmp and renamed, then reopened in SWMR-write mode (latest file format), in
 * which HDF5 orders its metadata writes so that the file on disk is readable at every moment; every
 * append extends the chunked datasets, writes and H5Fflush-es before returning. A record not yet
 * written when the process died reads as the fill value (id -1) and is dropped. Reopening a file whose
 * writer was killed clears the superblock's "open for writing" mark (what h5clear -s does). */
#include "jobs/runlog_priv.h"
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FORMAT_NAME "mptune-runlog"
#define FORMAT_VERSION 1
#define CHUNK_RECORDS 64
#define REASON_LEN MPT_OBS_REASON
#define STOP_LEN 64

/* one evaluation in memory; the value indices (int32 per parameter) follow at sizeof(rec_fixed) */
typedef struct rec_fixed {
  int64_t id;
  int32_t status, rank, device, session, n_times, pad_;
  double objective, median, times[MPT_OBS_MAX_TIMES];
  double compile_ms, benchmark_ms, framework_ms, t_start, t_end;
  char reason[REASON_LEN];
} rec_fixed;

typedef struct dev_rec {
  int32_t session, rank, index, pad_;
  double memory_gib;
  char host[64], vendor[32], name[128], arch[32], evaluator[16];
} dev_rec;

typedef struct session_rec {
  double start_unix;
  int32_t pid, pad_;
  char host[64];
  char start_time[40];
} session_rec;

typedef struct meta_cache {
  char *key, *value;
} meta_cache;

typedef struct param_table {
  char *name;
  mpt_runlog_vkind kind;
  int n;
  double *num;
  char **str;
} param_table;

struct mpt_runlog {
  char *path;
  hid_t file, evals, devices, sessions;
  hid_t rec_type, dev_type, ses_type; /* memory types */
  int readonly, swmr, finished;
  int dims;
  size_t rec_size;
  int64_t count;
  int32_t session;
  const mpt_space *space;
  param_table *params;
  meta_cache *meta;
  int n_meta;
  unsigned char *buf; /* scratch records */
  size_t buf_cap;
};

/* ---- small helpers ---- */

static void quiet_hdf5(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

static double now_unix(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void iso_time(double t, char *buf, size_t cap) {
  time_t s = (time_t)t;
  struct tm tm;
  gmtime_r(&s, &tm);
  char b[32];
  strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf, cap, "%s.%06dZ", b, (int)((t - (double)s) * 1e6));
}

static int h5err(mpt_error *err, const char *path, const char *what) {
  return mpt_error_set(err, MPT_ERR_IO, "run log %s: HDF5 error while %s", path, what);
}

static hid_t vlstr_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

static hid_t fixstr_type(size_t n) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, n);
  H5Tset_strpad(t, H5T_STR_NULLTERM);
  return t;
}

static int attr_str(hid_t obj, const char *name, const char *value) {
  hid_t t = vlstr_type(), sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  const char *v = value ? value : "";
  herr_t rc = a < 0 ? -1 : H5Awrite(a, t, &v);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? -1 : 0;
}

static int attr_fixstr(hid_t obj, const char *name, size_t len, const char *value) {
  hid_t t = fixstr_type(len), sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  char *v = calloc(1, len);
  if (v && value) snprintf(v, len, "%s", value);
  herr_t rc = (a < 0 || !v) ? -1 : H5Awrite(a, t, v);
  free(v);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? -1 : 0;
}

static int attr_num(hid_t obj, const char *name, hid_t type, const void *value) {
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, type, value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return rc < 0 ? -1 : 0;
}

/* rewrites an existing attribute in place (same type and size) */
static int attr_rewrite(hid_t obj, const char *name, hid_t memtype, const void *value) {
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  herr_t rc = H5Awrite(a, memtype, value);
  H5Aclose(a);
  return rc < 0 ? -1 : 0;
}

/* reads a string attribute (fixed or variable length); malloc'd, NULL when absent or not a string */
static char *attr_read_str(hid_t obj, const char *name) {
  if (H5Aexists(obj, name) <= 0) return NULL;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return NULL;
  hid_t ft = H5Aget_type(a);
  char *out = NULL;
  H5T_class_t cls = H5Tget_class(ft);
  if (cls == H5T_STRING) {
    if (H5Tis_variable_str(ft) > 0) {
      hid_t mt = vlstr_type();
      char *v = NULL;
      if (H5Aread(a, mt, &v) >= 0 && v) {
        out = strdup(v);
        H5free_memory(v);
      }
      H5Tclose(mt);
    } else {
      size_t n = H5Tget_size(ft);
      hid_t mt = fixstr_type(n + 1);
      out = calloc(1, n + 1);
      if (out && H5Aread(a, mt, out) < 0) { free(out); out = NULL; }
      H5Tclose(mt);
    }
  } else if (cls == H5T_INTEGER) {
    char b[64];
    if (H5Tget_sign(ft) == H5T_SGN_NONE) {
      uint64_t v = 0;
      if (H5Aread(a, H5T_NATIVE_UINT64, &v) >= 0) { snprintf(b, sizeof b, "%llu", (unsigned long long)v); out = strdup(b); }
    } else {
      int64_t v = 0;
      if (H5Aread(a, H5T_NATIVE_INT64, &v) >= 0) { snprintf(b, sizeof b, "%lld", (long long)v); out = strdup(b); }
    }
  } else if (cls == H5T_FLOAT) {
    double v = 0;
    char b[64];
    if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0) { snprintf(b, sizeof b, "%.17g", v); out = strdup(b); }
  }
  H5Tclose(ft);
  H5Aclose(a);
  return out;
}

static int attr_read_int(hid_t obj, const char *name, int64_t *v) {
  if (H5Aexists(obj, name) <= 0) return -1;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  herr_t rc = H5Aread(a, H5T_NATIVE_INT64, v);
  H5Aclose(a);
  return rc < 0 ? -1 : 0;
}

/* ---- types ---- */

static hid_t status_enum(void) {
  hid_t t = H5Tenum_create(H5T_NATIVE_INT32);
  for (int32_t s = 0; s < MPT_STATUS_COUNT; s++) H5Tenum_insert(t, mpt_status_name(s), &s);
  return t;
}

static size_t rec_size_for(int dims) {
  size_t sz = sizeof(rec_fixed) + sizeof(int32_t) * (size_t)(dims > 0 ? dims : 1);
  return (sz + 7) & ~(size_t)7;
}

static hid_t make_rec_type(int dims) {
  hid_t t = H5Tcreate(H5T_COMPOUND, rec_size_for(dims));
  hid_t st = status_enum();
  hsize_t nt = MPT_OBS_MAX_TIMES, nd = (hsize_t)(dims > 0 ? dims : 1);
  hid_t times_t = H5Tarray_create2(H5T_NATIVE_DOUBLE, 1, &nt);
  hid_t cfg_t = H5Tarray_create2(H5T_NATIVE_INT32, 1, &nd);
  hid_t reason_t = fixstr_type(REASON_LEN);
  H5Tinsert(t, "id", HOFFSET(rec_fixed, id), H5T_NATIVE_INT64);
  H5Tinsert(t, "config", sizeof(rec_fixed), cfg_t);
  H5Tinsert(t, "status", HOFFSET(rec_fixed, status), st);
  H5Tinsert(t, "objective", HOFFSET(rec_fixed, objective), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "median", HOFFSET(rec_fixed, median), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "n_times", HOFFSET(rec_fixed, n_times), H5T_NATIVE_INT32);
  H5Tinsert(t, "times", HOFFSET(rec_fixed, times), times_t);
  H5Tinsert(t, "compile_ms", HOFFSET(rec_fixed, compile_ms), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "benchmark_ms", HOFFSET(rec_fixed, benchmark_ms), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "framework_ms", HOFFSET(rec_fixed, framework_ms), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "rank", HOFFSET(rec_fixed, rank), H5T_NATIVE_INT32);
  H5Tinsert(t, "device", HOFFSET(rec_fixed, device), H5T_NATIVE_INT32);
  H5Tinsert(t, "session", HOFFSET(rec_fixed, session), H5T_NATIVE_INT32);
  H5Tinsert(t, "t_start", HOFFSET(rec_fixed, t_start), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "t_end", HOFFSET(rec_fixed, t_end), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "reason", HOFFSET(rec_fixed, reason), reason_t);
  H5Tclose(st);
  H5Tclose(times_t);
  H5Tclose(cfg_t);
  H5Tclose(reason_t);
  return t;
}

static hid_t make_dev_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(dev_rec));
  hid_t s64 = fixstr_type(64), s32 = fixstr_type(32), s128 = fixstr_type(128), s16 = fixstr_type(16);
  H5Tinsert(t, "session", HOFFSET(dev_rec, session), H5T_NATIVE_INT32);
  H5Tinsert(t, "rank", HOFFSET(dev_rec, rank), H5T_NATIVE_INT32);
  H5Tinsert(t, "index", HOFFSET(dev_rec, index), H5T_NATIVE_INT32);
  H5Tinsert(t, "host", HOFFSET(dev_rec, host), s64);
  H5Tinsert(t, "vendor", HOFFSET(dev_rec, vendor), s32);
  H5Tinsert(t, "name", HOFFSET(dev_rec, name), s128);
  H5Tinsert(t, "arch", HOFFSET(dev_rec, arch), s32);
  H5Tinsert(t, "memory_gib", HOFFSET(dev_rec, memory_gib), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "evaluator", HOFFSET(dev_rec, evaluator), s16);
  H5Tclose(s64); H5Tclose(s32); H5Tclose(s128); H5Tclose(s16);
  return t;
}

static hid_t make_ses_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(session_rec));
  hid_t s64 = fixstr_type(64), s40 = fixstr_type(40);
  H5Tinsert(t, "start_unix", HOFFSET(session_rec, start_unix), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "start_time", HOFFSET(session_rec, start_time), s40);
  H5Tinsert(t, "host", HOFFSET(session_rec, host), s64);
  H5Tinsert(t, "pid", HOFFSET(session_rec, pid), H5T_NATIVE_INT32);
  H5Tclose(s64); H5Tclose(s40);
  return t;
}

static hid_t make_fapl(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  H5Pset_file_locking(fapl, 1, 1); /* lock against a second writer; go on where the file system cannot */
  return fapl;
}

/* an extensible 1-D dataset of `type`, chunked, with a fill value */
static hid_t create_ext(hid_t file, const char *name, hid_t ftype, hid_t mtype, hsize_t chunk, const void *fill) {
  hsize_t dim = 0, maxdim = H5S_UNLIMITED;
  hid_t sp = H5Screate_simple(1, &dim, &maxdim);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  if (fill) H5Pset_fill_value(dcpl, mtype, fill);
  hid_t d = H5Dcreate2(file, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(sp);
  return d;
}

/* appends n records of memtype at the end of 1-D dataset d (current extent *cur) */
static int append_rows(hid_t d, hid_t memtype, const void *rows, hsize_t n, hsize_t cur) {
  hsize_t newdim = cur + n;
  if (H5Dset_extent(d, &newdim) < 0) return -1;
  hid_t fs = H5Dget_space(d);
  hsize_t start = cur, count = n;
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
  hid_t ms = H5Screate_simple(1, &count, NULL);
  herr_t rc = H5Dwrite(d, memtype, ms, fs, H5P_DEFAULT, rows);
  H5Sclose(ms);
  H5Sclose(fs);
  return rc < 0 ? -1 : 0;
}

static hsize_t extent_of(hid_t d) {
  hid_t fs = H5Dget_space(d);
  hsize_t dim = 0;
  H5Sget_simple_extent_dims(fs, &dim, NULL);
  H5Sclose(fs);
  return dim;
}

/* ---- parameter tables ---- */

static void free_params(mpt_runlog *log) {
  if (!log->params) return;
  for (int p = 0; p < log->dims; p++) {
    free(log->params[p].name);
    free(log->params[p].num);
    if (log->params[p].str)
      for (int i = 0; i < log->params[p].n; i++) free(log->params[p].str[i]);
    free(log->params[p].str);
  }
  free(log->params);
  log->params = NULL;
}

static const char *kind_name(mpt_runlog_vkind k) {
  return k == MPT_RL_INT ? "int" : k == MPT_RL_FLOAT ? "float" : k == MPT_RL_BOOL ? "bool" : "string";
}

/* parameter tables of a problem */
static int params_from_problem(mpt_runlog *log, const mpt_problem *pr) {
  log->dims = pr->n_params;
  log->params = calloc((size_t)(pr->n_params > 0 ? pr->n_params : 1), sizeof *log->params);
  if (!log->params) return -1;
  for (int p = 0; p < pr->n_params; p++) {
    const mpt_param *mp = &pr->params[p];
    param_table *t = &log->params[p];
    t->name = strdup(mp->name);
    t->n = mp->n_values;
    int all_num = 1, all_int = 1, all_bool = 1;
    for (int i = 0; i < mp->n_values; i++) {
      mpt_vkind k = mp->values[i].kind;
      if (k != MPT_V_INT && k != MPT_V_FLOAT && k != MPT_V_BOOL) all_num = 0;
      if (k != MPT_V_INT && k != MPT_V_BOOL) all_int = 0;
      if (k != MPT_V_BOOL) all_bool = 0;
    }
    t->kind = !all_num ? MPT_RL_STRING : (all_bool && mp->type == MPT_P_BOOL) ? MPT_RL_BOOL
              : (all_int && mp->type != MPT_P_FLOAT) ? MPT_RL_INT : MPT_RL_FLOAT;
    if (t->kind == MPT_RL_STRING) {
      t->str = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(char *));
      if (!t->str || !t->name) return -1;
      for (int i = 0; i < t->n; i++) {
        int need = mpt_value_str_repr(&mp->values[i], NULL, 0);
        t->str[i] = malloc((size_t)need + 1);
        if (!t->str[i]) return -1;
        mpt_value_str_repr(&mp->values[i], t->str[i], need + 1);
      }
    } else {
      t->num = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(double));
      if (!t->num || !t->name) return -1;
      for (int i = 0; i < t->n; i++) {
        int ok = 0;
        t->num[i] = mpt_value_as_double(&mp->values[i], &ok);
      }
    }
  }
  return 0;
}

static int write_params(mpt_runlog *log, hid_t file) {
  hid_t g = H5Gcreate2(file, "parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  int rc = 0;
  /* the order of the parameters: a string array attribute of the group */
  {
    hid_t t = vlstr_type();
    hsize_t n = (hsize_t)log->dims;
    hid_t sp = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_NULL);
    const char **names = calloc(n ? n : 1, sizeof(char *));
    for (int p = 0; p < log->dims && names; p++) names[p] = log->params[p].name;
    hid_t a = H5Acreate2(g, "names", t, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || !names || (n && H5Awrite(a, t, names) < 0)) rc = -1;
    if (a >= 0) H5Aclose(a);
    free(names);
    H5Sclose(sp);
    H5Tclose(t);
  }
  for (int p = 0; p < log->dims && rc == 0; p++) {
    param_table *t = &log->params[p];
    if (strchr(t->name, '/') || strcmp(t->name, ".") == 0) { rc = -2; break; }
    hsize_t n = (hsize_t)t->n;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ft, mt;
    const void *data;
    int64_t *iv = NULL;
    int8_t *bv = NULL;
    if (t->kind == MPT_RL_STRING) { ft = vlstr_type(); mt = H5Tcopy(ft); data = t->str; }
    else if (t->kind == MPT_RL_FLOAT) { ft = H5Tcopy(H5T_IEEE_F64LE); mt = H5Tcopy(H5T_NATIVE_DOUBLE); data = t->num; }
    else if (t->kind == MPT_RL_BOOL) {
      ft = H5Tcopy(H5T_STD_I8LE); mt = H5Tcopy(H5T_NATIVE_INT8);
      bv = calloc(n ? n : 1, 1);
      for (hsize_t i = 0; bv && i < n; i++) bv[i] = t->num[i] != 0;
      data = bv;
    } else {
      ft = H5Tcopy(H5T_STD_I64LE); mt = H5Tcopy(H5T_NATIVE_INT64);
      iv = calloc(n ? n : 1, sizeof(int64_t));
      for (hsize_t i = 0; iv && i < n; i++) iv[i] = (int64_t)llround(t->num[i]);
      data = iv;
    }
    hid_t d = H5Dcreate2(g, t->name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0 || !data || H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) rc = -1;
    if (d >= 0) {
      if (attr_str(d, "type", kind_name(t->kind)) < 0) rc = -1;
      int32_t idx = p;
      if (attr_num(d, "index", H5T_NATIVE_INT32, &idx) < 0) rc = -1;
      H5Dclose(d);
    }
    free(iv);
    free(bv);
    H5Tclose(ft);
    H5Tclose(mt);
    H5Sclose(sp);
  }
  H5Gclose(g);
  return rc;
}

static int read_params(mpt_runlog *log) {
  hid_t g = H5Gopen2(log->file, "parameters", H5P_DEFAULT);
  if (g < 0) return -1;
  int rc = 0;
  hid_t a = H5Aopen(g, "names", H5P_DEFAULT);
  if (a < 0) { H5Gclose(g); return -1; }
  hid_t sp = H5Aget_space(a);
  hssize_t n = H5Sget_simple_extent_npoints(sp);
  if (H5Sget_simple_extent_type(sp) == H5S_NULL) n = 0;
  H5Sclose(sp);
  log->dims = (int)n;
  log->params = calloc((size_t)(n > 0 ? n : 1), sizeof *log->params);
  char **names = calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
  hid_t vt = vlstr_type();
  if (!log->params || !names || (n > 0 && H5Aread(a, vt, names) < 0)) rc = -1;
  H5Aclose(a);
  for (int p = 0; p < log->dims && rc == 0; p++) {
    param_table *t = &log->params[p];
    t->name = strdup(names[p]);
    hid_t d = H5Dopen2(g, names[p], H5P_DEFAULT);
    if (d < 0) { rc = -1; break; }
    char *kind = attr_read_str(d, "type");
    t->kind = !kind ? MPT_RL_STRING : strcmp(kind, "int") == 0 ? MPT_RL_INT : strcmp(kind, "float") == 0 ? MPT_RL_FLOAT
              : strcmp(kind, "bool") == 0 ? MPT_RL_BOOL : MPT_RL_STRING;
    free(kind);
    t->n = (int)extent_of(d);
    if (t->kind == MPT_RL_STRING) {
      t->str = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(char *));
      char **tmp = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(char *));
      if (!t->str || !tmp || (t->n && H5Dread(d, vt, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp) < 0)) rc = -1;
      for (int i = 0; tmp && i < t->n; i++) {
        if (rc == 0) t->str[i] = strdup(tmp[i] ? tmp[i] : "");
        if (tmp[i]) H5free_memory(tmp[i]);
      }
      free(tmp);
    } else {
      t->num = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(double));
      if (!t->num || (t->n && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->num) < 0)) rc = -1;
    }
    H5Dclose(d);
  }
  for (int p = 0; p < n; p++)
    if (names[p]) H5free_memory(names[p]);
  free(names);
  H5Tclose(vt);
  H5Gclose(g);
  return rc;
}

/* describes the first difference between the log's parameter tables and the problem's, or "" */
static void params_diff(const mpt_runlog *log, const mpt_runlog *want, char *msg, size_t cap) {
  msg[0] = '\0';
  size_t len = 0;
  for (int p = 0; p < want->dims; p++) {
    int q = -1;
    for (int j = 0; j < log->dims; j++)
      if (strcmp(log->params[j].name, want->params[p].name) == 0) q = j;
    if (q < 0) { snprintf(msg + len, cap - len, "%sparameter '%s' is not in the log", len ? "; " : "", want->params[p].name); len = strlen(msg); continue; }
    if (q != p) { snprintf(msg + len, cap - len, "%sparameter '%s' is at position %d in the log, %d in the problem", len ? "; " : "", want->params[p].name, q, p); len = strlen(msg); continue; }
    const param_table *a = &log->params[q], *b = &want->params[p];
    int same = a->n == b->n && (a->kind == MPT_RL_STRING) == (b->kind == MPT_RL_STRING);
    for (int i = 0; same && i < a->n; i++)
      same = a->kind == MPT_RL_STRING ? strcmp(a->str[i], b->str[i]) == 0 : a->num[i] == b->num[i];
    if (!same) { snprintf(msg + len, cap - len, "%sthe values of parameter '%s' differ", len ? "; " : "", b->name); len = strlen(msg); }
  }
  for (int j = 0; j < log->dims; j++) {
    int found = 0;
    for (int p = 0; p < want->dims; p++) found |= strcmp(log->params[j].name, want->params[p].name) == 0;
    if (!found) { snprintf(msg + len, cap - len, "%sparameter '%s' of the log is not in the problem", len ? "; " : "", log->params[j].name); len = strlen(msg); }
  }
}

/* ---- open/close ---- */

static void close_handles(mpt_runlog *log) {
  if (log->evals >= 0) H5Dclose(log->evals);
  if (log->devices >= 0) H5Dclose(log->devices);
  if (log->sessions >= 0) H5Dclose(log->sessions);
  if (log->file >= 0) H5Fclose(log->file);
  log->evals = log->devices = log->sessions = log->file = -1;
}

static mpt_runlog *new_log(const char *path) {
  mpt_runlog *log = calloc(1, sizeof *log);
  if (!log) return NULL;
  log->path = strdup(path);
  log->file = log->evals = log->devices = log->sessions = -1;
  log->rec_type = log->dev_type = log->ses_type = -1;
  if (!log->path) { free(log); return NULL; }
  return log;
}

static void free_log(mpt_runlog *log) {
  if (!log) return;
  close_handles(log);
  if (log->rec_type >= 0) H5Tclose(log->rec_type);
  if (log->dev_type >= 0) H5Tclose(log->dev_type);
  if (log->ses_type >= 0) H5Tclose(log->ses_type);
  free_params(log);
  for (int i = 0; i < log->n_meta; i++) { free(log->meta[i].key); free(log->meta[i].value); }
  free(log->meta);
  free(log->buf);
  free(log->path);
  free(log);
}

static int ensure_buf(mpt_runlog *log, size_t n) {
  size_t need = n * log->rec_size;
  if (need <= log->buf_cap) return 0;
  unsigned char *b = realloc(log->buf, need);
  if (!b) return -1;
  log->buf = b;
  log->buf_cap = need;
  return 0;
}

static int open_datasets(mpt_runlog *log) {
  log->evals = H5Dopen2(log->file, "evaluations", H5P_DEFAULT);
  log->devices = H5Dopen2(log->file, "devices", H5P_DEFAULT);
  log->sessions = H5Dopen2(log->file, "sessions", H5P_DEFAULT);
  return (log->evals < 0 || log->devices < 0 || log->sessions < 0) ? -1 : 0;
}

/* opens the file, clearing the "open for writing" superblock mark a killed writer leaves */
static hid_t open_file(const char *path, unsigned flags) {
  hid_t fapl = make_fapl();
  hid_t f = H5Fopen(path, flags, fapl);
  if (f < 0) {
    hbool_t clear = 1;
    if (H5Pexist(fapl, "clear_status_flags") > 0 && H5Pset(fapl, "clear_status_flags", &clear) >= 0)
      f = H5Fopen(path, flags, fapl);
  }
  H5Pclose(fapl);
  return f;
}

/* checks the format mark; 0 when this is an mptune log */
static int check_format(mpt_runlog *log, mpt_error *err) {
  char *fmt = attr_read_str(log->file, "mptune_format");
  int ok = fmt && strcmp(fmt, FORMAT_NAME) == 0;
  free(fmt);
  int64_t ver = 0;
  if (!ok || attr_read_int(log->file, "format_version", &ver) < 0 || H5Lexists(log->file, "evaluations", H5P_DEFAULT) <= 0)
    return mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log", log->path);
  if (ver > FORMAT_VERSION)
    return mpt_error_set(err, MPT_ERR_STATE, "%s is an mptune run log of a newer format (%lld; this mptune reads %d)",
                         log->path, (long long)ver, FORMAT_VERSION);
  return 0;
}

static int read_state(mpt_runlog *log, mpt_error *err) {
  int64_t fin = 0;
  attr_read_int(log->file, "finished", &fin);
  log->finished = fin != 0;
  if (read_params(log) < 0) return h5err(err, log->path, "reading the parameter tables");
  log->rec_size = rec_size_for(log->dims);
  log->rec_type = make_rec_type(log->dims);
  log->dev_type = make_dev_type();
  log->ses_type = make_ses_type();
  if (open_datasets(log) < 0) return mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log (datasets missing)", log->path);
  log->count = (int64_t)extent_of(log->evals);
  log->session = (int32_t)extent_of(log->sessions) - 1;
  return 0;
}

static int is_hdf5(const char *path) {
  quiet_hdf5();
  return H5Fis_hdf5(path) > 0;
}

int mpt_runlog_create(const char *path, const mpt_space *space, const mpt_run_meta *meta, mpt_runlog **out,
                      mpt_error *err) {
  *out = NULL;
  quiet_hdf5();
  const mpt_problem *pr = mpt_space_problem(space);
  mpt_runlog *log = new_log(path);
  char *tmp = malloc(strlen(path) + 8);
  if (!log || !tmp) { free(tmp); free_log(log); return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); }
  sprintf(tmp, "%s.tmp", path);
  log->space = space;
  if (params_from_problem(log, pr) < 0) { free(tmp); free_log(log); return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); }
  log->rec_size = rec_size_for(log->dims);
  log->rec_type = make_rec_type(log->dims);
  log->dev_type = make_dev_type();
  log->ses_type = make_ses_type();

  hid_t fapl = make_fapl();
  hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (f < 0) {
    mpt_error_set(err, MPT_ERR_IO, "cannot create run log %s (is the directory writable?)", tmp);
    free(tmp); free_log(log);
    return MPT_ERR_IO;
  }
  int bad = 0;
  double t0 = now_unix();
  char start[40], host[64] = "";
  iso_time(t0, start, sizeof start);
  gethostname(host, sizeof host);
  host[sizeof host - 1] = '\0';
  const mpt_run_meta empty = {0};
  if (!meta) meta = &empty;
  int32_t fv = FORMAT_VERSION, fin = 0;
  bad |= attr_str(f, "mptune_format", FORMAT_NAME);
  bad |= attr_num(f, "format_version", H5T_NATIVE_INT32, &fv);
  bad |= attr_str(f, "mptune_version", MPT_VERSION);
  bad |= attr_str(f, "mode", meta->mode ? meta->mode : "tune");
  bad |= attr_str(f, "problem_path", meta->problem_path ? meta->problem_path : pr->path);
  bad |= attr_str(f, "problem_name", pr->name);
  bad |= attr_str(f, "problem_text", meta->problem_text ? meta->problem_text : pr->text);
  bad |= attr_str(f, "strategy", meta->strategy);
  bad |= attr_str(f, "options", meta->options);
  bad |= attr_str(f, "evaluator", meta->evaluator);
  bad |= attr_str(f, "simulate", meta->simulate);
  bad |= attr_num(f, "seed", H5T_NATIVE_UINT64, &meta->seed);
  bad |= attr_num(f, "budget", H5T_NATIVE_INT64, &meta->budget);
  bad |= attr_num(f, "time_budget", H5T_NATIVE_DOUBLE, &meta->time_budget);
  bad |= attr_str(f, "command_line", meta->command_line);
  bad |= attr_str(f, "start_time", start);
  bad |= attr_num(f, "start_unix", H5T_NATIVE_DOUBLE, &t0);
  bad |= attr_str(f, "host", host);
  int64_t size = mpt_space_size(space);
  bad |= attr_num(f, "space_size", H5T_NATIVE_INT64, &size);
  bad |= attr_num(f, "finished", H5T_NATIVE_INT32, &fin);
  bad |= attr_fixstr(f, "stop_reason", STOP_LEN, "");
  bad |= attr_fixstr(f, "finish_time", 40, "");
  int prc = write_params(log, f);
  if (prc == -2) {
    H5Fclose(f); unlink(tmp); free(tmp); free_log(log);
    return mpt_error_set(err, MPT_ERR_VALUE, "run log %s: a parameter name contains '/'", path);
  }
  bad |= prc;
  /* the extensible datasets, fill value marks records never written */
  unsigned char *fill = calloc(1, log->rec_size);
  if (fill) ((rec_fixed *)fill)->id = -1;
  hid_t ftype = H5Tcopy(log->rec_type);
  H5Tpack(ftype);
  hid_t d1 = fill ? create_ext(f, "evaluations", ftype, log->rec_type, CHUNK_RECORDS, fill) : -1;
  H5Tclose(ftype);
  free(fill);
  hid_t dt = H5Tcopy(log->dev_type), stt = H5Tcopy(log->ses_type);
  H5Tpack(dt);
  H5Tpack(stt);
  hid_t d2 = create_ext(f, "devices", dt, log->dev_type, 16, NULL);
  hid_t d3 = create_ext(f, "sessions", stt, log->ses_type, 8, NULL);
  H5Tclose(dt);
  H5Tclose(stt);
  if (d1 < 0 || d2 < 0 || d3 < 0) bad = 1;
  session_rec s0;
  memset(&s0, 0, sizeof s0);
  s0.start_unix = t0;
  s0.pid = (int32_t)getpid();
  snprintf(s0.host, sizeof s0.host, "%s", host);
  snprintf(s0.start_time, sizeof s0.start_time, "%s", start);
  if (d3 >= 0 && append_rows(d3, log->ses_type, &s0, 1, 0) < 0) bad = 1;
  if (d1 >= 0) H5Dclose(d1);
  if (d2 >= 0) H5Dclose(d2);
  if (d3 >= 0) H5Dclose(d3);
  if (H5Fclose(f) < 0) bad = 1;
  if (bad) {
    unlink(tmp); free(tmp); free_log(log);
    return h5err(err, path, "creating the file");
  }
  if (rename(tmp, path) != 0) {
    mpt_error_set(err, MPT_ERR_IO, "cannot rename %s to %s", tmp, path);
    unlink(tmp); free(tmp); free_log(log);
    return MPT_ERR_IO;
  }
  free(tmp);
  log->file = open_file(path, H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE);
  if (log->file < 0 || open_datasets(log) < 0) { free_log(log); return h5err(err, path, "reopening the new file for writing"); }
  log->swmr = 1;
  log->count = 0;
  log->session = 0;
  *out = log;
  return 0;
}

int mpt_runlog_open(const char *path, const mpt_space *space, mpt_runlog **out, mpt_error *err) {
  *out = NULL;
  if (access(path, F_OK) != 0) return mpt_error_set(err, MPT_ERR_IO, "cannot open run log %s: no such file", path);
  if (access(path, R_OK | W_OK) != 0) return mpt_error_set(err, MPT_ERR_IO, "cannot open run log %s for writing: permission denied", path);
  if (!is_hdf5(path)) return mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log", path);
  mpt_runlog *log = new_log(path);
  if (!log) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  log->space = space;
  log->file = open_file(path, H5F_ACC_RDWR);
  if (log->file < 0) {
    free_log(log);
    return mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log (or is open in another process)", path);
  }
  int rc = check_format(log, err);
  if (rc == 0) rc = read_state(log, err);
  if (rc == 0 && log->finished) {
    char *why = attr_read_str(log->file, "stop_reason");
    const char *w = why ? why : "";
    const char *text = strcmp(w, "budget") == 0 ? "budget reached" : strcmp(w, "time") == 0 ? "time budget reached"
                       : strcmp(w, "exhausted") == 0 ? "space exhausted" : w;
    rc = mpt_error_set(err, MPT_ERR_STATE, "%s is finished (%s); nothing to resume", path, text);
    free(why);
  }
  if (rc == 0) {
    mpt_runlog want = {0};
    want.path = log->path;
    if (params_from_problem(&want, mpt_space_problem(space)) < 0) rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    if (rc == 0) {
      char diff[1024];
      params_diff(log, &want, diff, sizeof diff);
      if (diff[0])
        rc = mpt_error_set(err, MPT_ERR_VALUE, "%s belongs to another problem: %s", path, diff);
    }
    free_params(&want);
  }
  if (rc == 0) {
    /* count the records written; those allocated but never written (a kill between extend and write)
     * are dropped below */
    mpt_obs *all = NULL;
    int64_t n = 0;
    rc = mpt_runlog_read(log, &all, &n, err); /* sets log->count */
    free(all);
  }
  if (rc < 0) { free_log(log); return rc; }
  /* switch to SWMR writing and start a new session */
  close_handles(log);
  log->file = open_file(path, H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE);
  if (log->file < 0 || open_datasets(log) < 0) { free_log(log); return h5err(err, path, "reopening for writing"); }
  log->swmr = 1;
  hsize_t ext = extent_of(log->evals);
  if ((int64_t)ext != log->count) {
    hsize_t c = (hsize_t)log->count;
    if (H5Dset_extent(log->evals, &c) < 0) { free_log(log); return h5err(err, path, "dropping unwritten records"); }
  }
  session_rec s;
  memset(&s, 0, sizeof s);
  s.start_unix = now_unix();
  s.pid = (int32_t)getpid();
  gethostname(s.host, sizeof s.host);
  s.host[sizeof s.host - 1] = '\0';
  iso_time(s.start_unix, s.start_time, sizeof s.start_time);
  hsize_t ns = extent_of(log->sessions);
  if (append_rows(log->sessions, log->ses_type, &s, 1, ns) < 0 || H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0) {
    free_log(log);
    return h5err(err, path, "starting a new session");
  }
  log->session = (int32_t)ns;
  *out = log;
  return 0;
}

int mpt_runlog_open_readonly(const char *path, mpt_runlog **out, mpt_error *err) {
  *out = NULL;
  if (access(path, F_OK) != 0) return mpt_error_set(err, MPT_ERR_IO, "cannot open run log %s: no such file", path);
  if (access(path, R_OK) != 0) return mpt_error_set(err, MPT_ERR_IO, "cannot read run log %s: permission denied", path);
  if (!is_hdf5(path)) return mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log", path);
  mpt_runlog *log = new_log(path);
  if (!log) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  log->readonly = 1;
  /* SWMR read works both on closed files and on files a killed writer left open */
  log->file = open_file(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ);
  log->swmr = log->file >= 0;
  if (log->file < 0) log->file = open_file(path, H5F_ACC_RDONLY);
  if (log->file < 0) { free_log(log); return mpt_error_set(err, MPT_ERR_STATE, "%s is not an mptune run log (HDF5 cannot open it)", path); }
  int rc = check_format(log, err);
  if (rc == 0) rc = read_state(log, err);
  if (rc == 0) {
    mpt_obs *all = NULL;
    int64_t n = 0;
    rc = mpt_runlog_read(log, &all, &n, err); /* exact count of written records */
    free(all);
  }
  if (rc < 0) { free_log(log); return rc; }
  *out = log;
  return 0;
}

/* ---- records ---- */

static void obs_to_rec(const mpt_runlog *log, const mpt_obs *o, unsigned char *dst) {
  memset(dst, 0, log->rec_size);
  rec_fixed *r = (rec_fixed *)dst;
  r->id = o->id;
  r->status = o->status;
  r->rank = o->rank;
  r->device = o->device;
  r->session = log->session;
  r->n_times = o->n_times < 0 ? 0 : o->n_times > MPT_OBS_MAX_TIMES ? MPT_OBS_MAX_TIMES : o->n_times;
  r->objective = o->objective;
  r->median = o->median;
  memcpy(r->times, o->times, sizeof r->times);
  r->compile_ms = o->compile_ms;
  r->benchmark_ms = o->benchmark_ms;
  r->framework_ms = o->framework_ms;
  r->t_start = o->t_start;
  r->t_end = o->t_end;
  memcpy(r->reason, o->reason, REASON_LEN);
  r->reason[REASON_LEN - 1] = '\0';
  int32_t *cfg = (int32_t *)(dst + sizeof(rec_fixed));
  if (log->space && o->id >= 0 && o->id < mpt_space_size(log->space) && log->dims > 0) {
    int idx[log->dims];
    mpt_space_config(log->space, o->id, idx);
    for (int p = 0; p < log->dims; p++) cfg[p] = idx[p];
  } else {
    for (int p = 0; p < log->dims; p++) cfg[p] = -1;
  }
}

static void rec_to_obs(const unsigned char *src, mpt_obs *o) {
  const rec_fixed *r = (const rec_fixed *)src;
  memset(o, 0, sizeof *o);
  o->id = r->id;
  o->status = r->status;
  o->rank = r->rank;
  o->device = r->device;
  o->n_times = r->n_times < 0 ? 0 : r->n_times > MPT_OBS_MAX_TIMES ? MPT_OBS_MAX_TIMES : r->n_times;
  o->objective = r->objective;
  o->median = r->median;
  memcpy(o->times, r->times, sizeof o->times);
  o->compile_ms = r->compile_ms;
  o->benchmark_ms = r->benchmark_ms;
  o->framework_ms = r->framework_ms;
  o->t_start = r->t_start;
  o->t_end = r->t_end;
  memcpy(o->reason, r->reason, REASON_LEN);
  o->reason[REASON_LEN - 1] = '\0';
}

int mpt_runlog_append(mpt_runlog *log, const mpt_obs *obs, int n, mpt_error *err) {
  quiet_hdf5();
  if (n <= 0) return 0;
  if (log->readonly) return mpt_error_set(err, MPT_ERR_STATE, "run log %s is open read-only", log->path);
  if (ensure_buf(log, (size_t)n) < 0) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    if (obs[i].id < 0) return mpt_error_set(err, MPT_ERR_VALUE, "run log %s: observation with id %lld", log->path, (long long)obs[i].id);
    obs_to_rec(log, &obs[i], log->buf + (size_t)i * log->rec_size);
  }
  if (append_rows(log->evals, log->rec_type, log->buf, (hsize_t)n, (hsize_t)log->count) < 0)
    return h5err(err, log->path, "appending evaluations");
  if (H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0) return h5err(err, log->path, "flushing");
  log->count += n;
  return 0;
}

int64_t mpt_runlog_count(const mpt_runlog *log) { return log ? log->count : 0; }

int mpt_runlog_read_full(mpt_runlog *log, mpt_obs **obs, int32_t **config, int64_t *n, mpt_error *err) {
  quiet_hdf5();
  *obs = NULL;
  if (config) *config = NULL;
  *n = 0;
  if (log->swmr && log->readonly) H5Drefresh(log->evals);
  hsize_t ext = extent_of(log->evals);
  mpt_obs *o = malloc(sizeof(mpt_obs) * (size_t)(ext ? ext : 1));
  int32_t *cfg = config ? malloc(sizeof(int32_t) * (size_t)(ext ? ext : 1) * (size_t)(log->dims ? log->dims : 1)) : NULL;
  if (!o || (config && !cfg) || ensure_buf(log, ext > CHUNK_RECORDS ? CHUNK_RECORDS * 16 : (ext ? ext : 1)) < 0) {
    free(o); free(cfg);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory reading %s", log->path);
  }
  /* read in blocks; keep records that were written (id >= 0), in append order */
  hsize_t block = log->buf_cap / log->rec_size, k = 0;
  hid_t fs = H5Dget_space(log->evals);
  for (hsize_t start = 0; start < ext; start += block) {
    hsize_t cnt = ext - start < block ? ext - start : block;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL);
    hid_t ms = H5Screate_simple(1, &cnt, NULL);
    herr_t rc = H5Dread(log->evals, log->rec_type, ms, fs, H5P_DEFAULT, log->buf);
    H5Sclose(ms);
    if (rc < 0) {
      H5Sclose(fs); free(o); free(cfg);
      return h5err(err, log->path, "reading evaluations");
    }
    for (hsize_t i = 0; i < cnt; i++) {
      const unsigned char *src = log->buf + i * log->rec_size;
      if (((const rec_fixed *)src)->id < 0) continue;
      rec_to_obs(src, &o[k]);
      if (cfg) memcpy(cfg + k * (hsize_t)log->dims, src + sizeof(rec_fixed), sizeof(int32_t) * (size_t)log->dims);
      k++;
    }
  }
  H5Sclose(fs);
  log->count = (int64_t)k;
  *obs = o;
  if (config) *config = cfg;
  *n = (int64_t)k;
  return 0;
}

int mpt_runlog_read(mpt_runlog *log, mpt_obs **obs, int64_t *n, mpt_error *err) {
  return mpt_runlog_read_full(log, obs, NULL, n, err);
}

int mpt_runlog_set_devices(mpt_runlog *log, const mpt_device_info *devs, int n, mpt_error *err) {
  quiet_hdf5();
  if (n <= 0) return 0;
  if (log->readonly) return mpt_error_set(err, MPT_ERR_STATE, "run log %s is open read-only", log->path);
  dev_rec *rows = calloc((size_t)n, sizeof *rows);
  if (!rows) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    rows[i].session = log->session;
    rows[i].rank = devs[i].rank;
    rows[i].index = devs[i].index;
    rows[i].memory_gib = devs[i].memory_gib;
    snprintf(rows[i].host, sizeof rows[i].host, "%.*s", (int)sizeof rows[i].host - 1, devs[i].host);
    snprintf(rows[i].vendor, sizeof rows[i].vendor, "%.*s", (int)sizeof rows[i].vendor - 1, devs[i].vendor);
    snprintf(rows[i].name, sizeof rows[i].name, "%.*s", (int)sizeof rows[i].name - 1, devs[i].name);
    snprintf(rows[i].arch, sizeof rows[i].arch, "%.*s", (int)sizeof rows[i].arch - 1, devs[i].arch);
    snprintf(rows[i].evaluator, sizeof rows[i].evaluator, "%.*s", (int)sizeof rows[i].evaluator - 1, devs[i].evaluator);
  }
  int rc = append_rows(log->devices, log->dev_type, rows, (hsize_t)n, extent_of(log->devices));
  free(rows);
  if (rc < 0) return h5err(err, log->path, "writing the device table");
  if (H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0) return h5err(err, log->path, "flushing");
  return 0;
}

const char *mpt_runlog_meta(mpt_runlog *log, const char *key) {
  quiet_hdf5();
  for (int i = 0; i < log->n_meta; i++)
    if (strcmp(log->meta[i].key, key) == 0) return log->meta[i].value;
  char *v = attr_read_str(log->file, key);
  if (!v) return NULL;
  meta_cache *m = realloc(log->meta, sizeof *m * (size_t)(log->n_meta + 1));
  char *k = strdup(key);
  if (!m || !k) { free(v); free(k); if (m) log->meta = m; return NULL; }
  log->meta = m;
  m[log->n_meta].key = k;
  m[log->n_meta].value = v;
  log->n_meta++;
  return v;
}

int mpt_runlog_finish(mpt_runlog *log, const char *reason, mpt_error *err) {
  quiet_hdf5();
  if (log->readonly) return mpt_error_set(err, MPT_ERR_STATE, "run log %s is open read-only", log->path);
  if (!reason) reason = "";
  if (strcmp(reason, "signal") == 0) {
    /* a stopped run stays resumable: just make sure everything is on disk */
    return H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0 ? h5err(err, log->path, "flushing") : 0;
  }
  /* attributes can not be written in SWMR mode: close, reopen normally, rewrite in place */
  close_handles(log);
  log->swmr = 0;
  log->file = open_file(log->path, H5F_ACC_RDWR);
  if (log->file < 0 || open_datasets(log) < 0) return h5err(err, log->path, "reopening to mark it finished");
  int32_t one = 1;
  char stop[STOP_LEN] = "", when[40] = "";
  snprintf(stop, sizeof stop, "%s", reason);
  iso_time(now_unix(), when, sizeof when);
  hid_t st = fixstr_type(STOP_LEN), wt = fixstr_type(40);
  int bad = attr_rewrite(log->file, "stop_reason", st, stop) | attr_rewrite(log->file, "finish_time", wt, when) |
            attr_rewrite(log->file, "finished", H5T_NATIVE_INT32, &one);
  H5Tclose(st);
  H5Tclose(wt);
  if (bad || H5Fflush(log->file, H5F_SCOPE_LOCAL) < 0) return h5err(err, log->path, "marking it finished");
  log->finished = 1;
  for (int i = 0; i < log->n_meta; i++) { free(log->meta[i].key); free(log->meta[i].value); }
  log->n_meta = 0;
  return 0;
}

int mpt_runlog_is_finished(mpt_runlog *log) { return log ? log->finished : 0; }

void mpt_runlog_close(mpt_runlog *log) {
  quiet_hdf5();
  if (!log) return;
  if (log->file >= 0 && !log->readonly) H5Fflush(log->file, H5F_SCOPE_LOCAL);
  free_log(log);
}

/* ---- parameter tables for the export ---- */

int mpt_runlog_n_params(const mpt_runlog *log) { return log->dims; }
const char *mpt_runlog_param_name(const mpt_runlog *log, int p) { return log->params[p].name; }
int mpt_runlog_param_n_values(const mpt_runlog *log, int p) { return log->params[p].n; }
mpt_runlog_vkind mpt_runlog_param_kind(const mpt_runlog *log, int p) { return log->params[p].kind; }
double mpt_runlog_param_number(const mpt_runlog *log, int p, int i) {
  return log->params[p].num ? log->params[p].num[i] : NAN;
}
const char *mpt_runlog_param_string(const mpt_runlog *log, int p, int i) {
  return log->params[p].str ? log->params[p].str[i] : NULL;
}
