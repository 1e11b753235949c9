/* jobs/output/summary_values.c: the parameter values of a summary (jobs/output/summary.h): the problem's when the
 * T1 text the log holds parses and matches the log's tables, else the tables' own; the problem's Default as
 * value indices; a value as text and as the value of a define. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/output/summary.h"
#include "jobs/output/summary_priv.h"
#include "jobs/runlog/runlog_priv.h"
#include "spaces/t1.h"

static int value_from_table(const mpt_runlog *log, int p, int i, mpt_value *out) {
  int64_t iv;
  switch (mpt_runlog_param_kind(log, p)) {
    case MPT_RL_INT:
      if (mpt_runlog_param_int(log, p, i, &iv) == 0) { *out = mpt_value_int(iv); break; }
      *out = mpt_value_float(mpt_runlog_param_number(log, p, i));
      break;
    case MPT_RL_BOOL: *out = mpt_value_bool(mpt_runlog_param_number(log, p, i) != 0); break;
    case MPT_RL_FLOAT: *out = mpt_value_float(mpt_runlog_param_number(log, p, i)); break;
    default: *out = mpt_value_str(mpt_runlog_param_string(log, p, i)); break;
  }
  return out->kind == MPT_V_STR && !out->u.s ? -1 : 0;
}

/* 1 when value v of the problem is the log's value i of parameter p (the tables keep str() or the number) */
static int same_value(const mpt_runlog *log, int p, int i, const mpt_value *v) {
  if (mpt_runlog_param_kind(log, p) == MPT_RL_STRING) {
    char b[512];
    const char *t = mpt_runlog_param_string(log, p, i);
    return mpt_value_str_repr(v, b, sizeof b) < (int)sizeof b && t && strcmp(b, t) == 0;
  }
  int ok = 0;
  double x = mpt_value_as_double(v, &ok);
  return ok && x == mpt_runlog_param_number(log, p, i);
}

/* 1 when problem pr has the log's parameters, values and order */
static int problem_matches(const mpt_runlog *log, const mpt_problem *pr) {
  if (pr->n_params != mpt_runlog_n_params(log)) return 0;
  for (int p = 0; p < pr->n_params; p++) {
    const mpt_param *mp = &pr->params[p];
    if (strcmp(mp->name, mpt_runlog_param_name(log, p)) != 0 || mp->n_values != mpt_runlog_param_n_values(log, p))
      return 0;
    for (int i = 0; i < mp->n_values; i++)
      if (!same_value(log, p, i, &mp->values[i])) return 0;
  }
  return 1;
}

/* the problem the log holds (its T1 text), when it parses and matches the tables; NULL otherwise */
static mpt_problem *logged_problem(mpt_runlog *log) {
  const char *text = mpt_runlog_meta(log, "problem_text"), *path = mpt_runlog_meta(log, "problem_path");
  mpt_problem *pr = NULL;
  mpt_error err;
  if (!text || !text[0] || mpt_problem_parse(text, path && path[0] ? path : "<run log>", &pr, &err) < 0) return NULL;
  if (problem_matches(log, pr)) return pr;
  mpt_problem_free(pr);
  return NULL;
}

/* the problem's Default as value indices, or NULL when a parameter has none */
static int32_t *default_config(const mpt_problem *pr) {
  int32_t *d = pr ? malloc(sizeof *d * (size_t)(pr->n_params > 0 ? pr->n_params : 1)) : NULL;
  for (int p = 0; d && p < pr->n_params; p++) {
    if (pr->params[p].default_index < 0) {
      free(d);
      return NULL;
    }
    d[p] = pr->params[p].default_index;
  }
  return d;
}

int mpt_summary_load_values(mpt_summary *s, mpt_error *err) {
  mpt_runlog *log = s->log;
  s->n_params = mpt_runlog_n_params(log);
  size_t np = (size_t)(s->n_params > 0 ? s->n_params : 1);
  s->names = calloc(np, sizeof *s->names);
  s->n_values = calloc(np, sizeof *s->n_values);
  s->values = calloc(np, sizeof *s->values);
  if (!s->names || !s->n_values || !s->values) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  mpt_problem *pr = logged_problem(log);
  s->default_config = default_config(pr);
  int rc = 0;
  for (int p = 0; p < s->n_params && rc == 0; p++) {
    s->names[p] = mpt_runlog_param_name(log, p);
    int n = s->n_values[p] = mpt_runlog_param_n_values(log, p);
    if (!(s->values[p] = calloc((size_t)(n > 0 ? n : 1), sizeof(mpt_value)))) rc = -1;
    for (int i = 0; rc == 0 && i < n; i++)
      rc = pr ? mpt_value_copy(&s->values[p][i], &pr->params[p].values[i]) : value_from_table(log, p, i, &s->values[p][i]);
  }
  if (pr) mpt_problem_free(pr);
  return rc ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
}

int mpt_summary_value_text(const mpt_summary *s, int p, int i, char *buf, int cap) {
  if (i < 0 || i >= s->n_values[p]) return snprintf(buf, (size_t)cap, "?");
  return mpt_value_str_repr(&s->values[p][i], buf, cap);
}

int mpt_summary_value_define(const mpt_summary *s, int p, int i, char *buf, int cap) {
  if (i >= 0 && i < s->n_values[p] && s->values[p][i].kind == MPT_V_BOOL)
    return snprintf(buf, (size_t)cap, "%d", (int)s->values[p][i].u.i);
  return mpt_summary_value_text(s, p, i, buf, cap);
}
