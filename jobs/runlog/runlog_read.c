/* jobs/runlog/runlog_read.c: what an open log holds: its records in append order (read in blocks, with their
 * session where asked), how many and how many damaged, whether its run finished, and the parameter tables
 * the T4 export reads (jobs/runlog/runlog_priv.h). */
#include "jobs/runlog/runlog_priv.h"
#include "jobs/runlog/runlog_file.h"
#include "jobs/runlog/runlog_h5.h"
#include <math.h>
#include <stdlib.h>

int64_t mpt_runlog_count(const mpt_runlog *log) { return log ? log->count : 0; }

int64_t mpt_runlog_measured(const mpt_runlog *log) { return log ? log->count - log->unmeasured : 0; }
int64_t mpt_runlog_measured_class(const mpt_runlog *log) { return log ? log->class_most : 0; }
int64_t mpt_runlog_damaged(const mpt_runlog *log) { return log ? log->damaged : 0; }
const char *mpt_runlog_damaged_copy(const mpt_runlog *log) { return log ? log->damaged_copy : NULL; }

typedef struct each_ctx {
  int (*fn)(void *ctx, const mpt_obs *o, const int32_t *config);
  int (*fn_session)(void *ctx, const mpt_obs *o, const int32_t *config, int32_t session); /* instead of fn */
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
    e->fn_rc = e->fn_session ? e->fn_session(e->ctx, &o, mpt_rl_rec_config(src), ((const mpt_rl_rec *)src)->session)
                             : e->fn(e->ctx, &o, mpt_rl_rec_config(src));
    if (e->fn_rc < 0) return -1;
  }
  return 0;
}

static int each_record(mpt_runlog *log, each_ctx *e, mpt_error *err) {
  mpt_h5_quiet();
  int rc = mpt_rl_each_valid_block(log, each_block, e);
  if (e->fn_rc < 0) return e->fn_rc;
  if (rc < 0 || e->k != log->count) return mpt_rl_h5err(err, log->path, "reading evaluations");
  return 0;
}

int mpt_runlog_each(mpt_runlog *log, int (*fn)(void *ctx, const mpt_obs *o, const int32_t *config), void *ctx,
                    mpt_error *err) {
  each_ctx e = {fn, NULL, ctx, 0, 0};
  return each_record(log, &e, err);
}

int mpt_runlog_each_session(mpt_runlog *log,
                            int (*fn)(void *ctx, const mpt_obs *o, const int32_t *config, int32_t session), void *ctx,
                            mpt_error *err) {
  each_ctx e = {NULL, fn, ctx, 0, 0};
  return each_record(log, &e, err);
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

int mpt_runlog_is_finished(mpt_runlog *log) { return log ? log->finished : 0; }
int mpt_runlog_extended(const mpt_runlog *log) { return log ? log->extended : 0; }

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

int mpt_runlog_confirmations(mpt_runlog *log, mpt_obs **out, int64_t *n, mpt_error *err) {
  *out = NULL;
  *n = 0;
  if (log->n_confirms <= 0) return 0;
  mpt_obs *o = malloc(sizeof *o * (size_t)log->n_confirms);
  if (!o) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < log->n_confirms; i++) {
    const unsigned char *rec = log->confirms + log->rec_size * (size_t)i;
    if (mpt_rl_rec_valid(rec, log->rec_size)) mpt_rl_rec_to_obs(rec, log->rec_size, &o[(*n)++]);
  }
  *out = o;
  return 0;
}
