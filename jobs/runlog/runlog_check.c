/* jobs/runlog/runlog_check.c: whether a log belongs to the problem a run gives: the same parameters and
 * values (its parameter tables), and the same valid set, so that its configuration ids name the same
 * configurations (Conditions changed since the log was written shift the ids): the logged size of the space,
 * and every record's configuration against the one its id names. */
#include "jobs/runlog/runlog_check.h"
#include "jobs/runlog/runlog_attrs.h"
#include "jobs/runlog/runlog_file.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mpt_rl_check_params(const mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err) {
  const mpt_problem *pr = mpt_space_problem(space);
  mpt_rl_param *want = mpt_rl_params_from_problem(pr);
  if (!want) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  char diff[1024];
  int rc = 0;
  mpt_rl_params_diff(log->params, log->dims, want, pr->n_params, diff, sizeof diff);
  if (diff[0]) rc = mpt_error_set(err, MPT_ERR_VALUE, "%s belongs to another problem: %s", path, diff);
  mpt_rl_params_free(want, pr->n_params);
  return rc;
}

/* mpt_rl_each_valid_block callback of mpt_rl_check_same_space: the first record whose configuration (its parameters'
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

int mpt_rl_check_space_size(const mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err) {
  const char *logged = mpt_rl_get_attr(log, "space_size");
  long long n_log = logged && logged[0] ? strtoll(logged, NULL, 10) : -1, n_now = (long long)mpt_space_size(space);
  if (n_log >= 0 && n_log != n_now)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s belongs to another problem: its space has %lld valid configurations, "
                         "this problem's %lld (are the Conditions the same?)", path, n_log, n_now);
  return 0;
}

/* The parameters being the same, a log belongs to the problem only when its configuration ids mean the
 * same configurations: the same valid set (Conditions changed since the log was written shift the ids).
 * Checks the logged size of the space, then that every record's configuration is the one its id names. */
int mpt_rl_check_same_space(mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err) {
  int rc = mpt_rl_check_space_size(log, space, path, err);
  if (rc) return rc;
  int64_t n_now = mpt_space_size(space);
  space_check c = {space, -1, -1, 0, ""};
  if (mpt_rl_each_valid_block(log, check_block, &c) < 0) return mpt_rl_h5err(err, path, "reading the evaluations");
  if (c.at >= 0) {
    char cfg[512] = "?";
    if (c.id >= 0 && c.id < n_now) mpt_space_format(space, c.id, cfg, sizeof cfg);
    return mpt_error_set(err, MPT_ERR_VALUE, "%s belongs to another problem: its record %lld is configuration %lld, %s, "
                         "but configuration %lld of this problem is %s (are the Conditions the same?)",
                         path, (long long)c.at, (long long)c.id, c.logged, (long long)c.id, cfg);
  }
  return 0;
}
