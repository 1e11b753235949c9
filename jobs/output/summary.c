/* jobs/output/summary.c: a run log at a glance (jobs/output/summary.h): the parameter values, the device classes
 * and which of them evaluated each record, the best configurations per class with their times and speed-up,
 * the failures by status. Pass 1 counts every record and keeps (id, objective, record) of the valid ones;
 * pass 2 reads the chosen best records whole. */
#include "jobs/output/summary.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/runlog/runlog_priv.h"
#include "spaces/t1.h"

/* ---- parameter values: the problem's when it matches the log's tables, else the tables' ---- */

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

static int load_values(mpt_summary *s, mpt_error *err) {
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

void mpt_summary_reason_line(const char *reason, char *buf, int cap) {
  const char *r = reason;
  while (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r') r++; /* the first line with text */
  size_t n = strcspn(r, "\r\n");
  while (n > 0 && (r[n - 1] == ' ' || r[n - 1] == '\t')) n--;
  size_t max = (size_t)cap - 1 < MPT_SUMMARY_REASON_LEN ? (size_t)cap - 1 : MPT_SUMMARY_REASON_LEN;
  int cut = n > max;
  if (cut) {
    n = max - 3;
    while (n > 0 && ((unsigned char)r[n] & 0xC0) == 0x80) n--; /* not inside a UTF-8 character */
  }
  snprintf(buf, (size_t)cap, "%.*s%s", (int)n, r, cut ? "..." : "");
}

/* ---- device classes ---- */

static int same_class(const mpt_summary_device *d, const mpt_device_info *i) {
  return strcmp(d->vendor, i->vendor) == 0 && strcmp(d->name, i->name) == 0 && strcmp(d->arch, i->arch) == 0;
}

/* s->devices grown by one class (vendor, name, arch of info); its index or -1 */
static int add_class(mpt_summary *s, const mpt_device_info *info) {
  mpt_summary_device *d = realloc(s->devices, sizeof *d * (size_t)(s->n_devices + 1));
  if (!d) return -1;
  s->devices = d;
  d = &s->devices[s->n_devices];
  memset(d, 0, sizeof *d);
  snprintf(d->vendor, sizeof d->vendor, "%s", info->vendor);
  snprintf(d->name, sizeof d->name, "%s", info->name);
  snprintf(d->arch, sizeof d->arch, "%s", info->arch);
  d->default_objective = NAN;
  return s->n_devices++;
}

/* prefix, then text with its surrounding blanks stripped and every run of other characters than ASCII letters and
 * digits as one '_': Kernel Tuner's device names in its headers (re.sub('[^0-9a-zA-Z]+', '_', name.strip())) */
static void sanitized(char *out, size_t cap, const char *prefix, const char *text) {
  const unsigned char *c = (const unsigned char *)text, *end = c + strlen(text);
  while (*c && isspace(*c)) c++;
  while (end > c && isspace(end[-1])) end--;
  size_t n = (size_t)snprintf(out, cap, "%s", prefix);
  for (int gap = 0; c < end && n + 2 < cap; c++) {
    int keep = *c < 0x80 && isalnum(*c);
    if (!keep && !gap) out[n++] = '_';
    if (keep) out[n++] = (char)*c;
    gap = !keep;
  }
  out[n] = '\0';
}

/* TARGET_<name> for every class, told apart by their architecture and then their number where names agree */
static void name_targets(mpt_summary *s) {
  for (int c = 0; c < s->n_devices; c++) {
    mpt_summary_device *d = &s->devices[c];
    char both[200];
    sanitized(d->target, sizeof d->target, "TARGET_", d->name);
    for (int pass = 0; pass < 2; pass++) {
      int clash = 0;
      for (int e = 0; e < c; e++) clash |= strcmp(s->devices[e].target, d->target) == 0;
      if (!clash) break;
      if (pass == 0) {
        snprintf(both, sizeof both, "%s %s", d->name, d->arch);
        sanitized(d->target, sizeof d->target, "TARGET_", both);
      } else {
        size_t n = strlen(d->target);
        snprintf(d->target + n, sizeof d->target - n, "_%d", c + 1);
      }
    }
  }
}

typedef struct class_map {
  int n_sess, n_ranks;
  int *at;       /* at[session * n_ranks + rank]: class of that worker, -1 none */
  int *row_rank; /* per row of the device table: its rank and class (fallback for records outside at[]) */
  int *row_class;
  int n_rows;
  int unknown;   /* the class of records no row names, -1 until one is seen */
} class_map;

/* the classes of the device table, in its order, and which class each (session, rank) was bound to */
static int map_classes(mpt_summary *s, class_map *m) {
  memset(m, 0, sizeof *m);
  m->unknown = -1;
  m->n_rows = mpt_runlog_n_devices(s->log);
  m->row_rank = calloc((size_t)m->n_rows + 1, sizeof(int));
  m->row_class = calloc((size_t)m->n_rows + 1, sizeof(int));
  if (!m->row_rank || !m->row_class) return -1;
  for (int r = 0; r < m->n_rows; r++) {
    mpt_device_info info;
    int32_t sess;
    mpt_runlog_device(s->log, r, &info, &sess);
    int c = 0;
    while (c < s->n_devices && !same_class(&s->devices[c], &info)) c++;
    if (c == s->n_devices && add_class(s, &info) < 0) return -1;
    int seen = 0; /* a worker counted once per class, whatever its sessions */
    for (int q = 0; q < r; q++) seen |= m->row_class[q] == c && m->row_rank[q] == info.rank;
    if (!seen) s->devices[c].workers++;
    m->row_rank[r] = info.rank;
    m->row_class[r] = c;
    if (sess >= 0 && sess < 4096 && sess >= m->n_sess) m->n_sess = sess + 1;
    if (info.rank >= 0 && info.rank < 65536 && info.rank >= m->n_ranks) m->n_ranks = info.rank + 1;
  }
  m->at = malloc(sizeof(int) * (size_t)(m->n_sess * m->n_ranks + 1));
  if (!m->at) return -1;
  for (int k = 0; k < m->n_sess * m->n_ranks; k++) m->at[k] = -1;
  for (int r = 0; r < m->n_rows; r++) {
    mpt_device_info info;
    int32_t sess;
    mpt_runlog_device(s->log, r, &info, &sess);
    if (sess >= 0 && sess < m->n_sess && info.rank >= 0 && info.rank < m->n_ranks)
      m->at[sess * m->n_ranks + info.rank] = m->row_class[r];
  }
  return 0;
}

static void free_map(class_map *m) {
  free(m->at);
  free(m->row_rank);
  free(m->row_class);
}

/* the class of the worker that evaluated o: its session's row, else a row of its rank in another session,
 * else "unknown" (added once); -1 when out of memory */
static int class_of(mpt_summary *s, class_map *m, const mpt_obs *o, int32_t session) {
  if (session >= 0 && session < m->n_sess && o->rank >= 0 && o->rank < m->n_ranks) {
    int c = m->at[session * m->n_ranks + o->rank];
    if (c >= 0) return c;
  }
  for (int r = m->n_rows - 1; r >= 0; r--)
    if (m->row_rank[r] == o->rank) return m->row_class[r];
  if (m->unknown < 0) {
    mpt_device_info none;
    memset(&none, 0, sizeof none);
    snprintf(none.vendor, sizeof none.vendor, "unknown");
    snprintf(none.name, sizeof none.name, "unknown device");
    m->unknown = add_class(s, &none);
  }
  return m->unknown;
}

/* ---- pass 1: every record counted, the valid ones kept small ---- */

typedef struct candidate {
  int64_t id, record;
  double objective;
  int32_t cls;
} candidate;

typedef struct pass1 {
  mpt_summary *s;
  class_map map;
  candidate *c;
  int64_t n, cap, k;
  mpt_error *err;
} pass1;

static int is_default(const mpt_summary *s, const int32_t *config) {
  if (!s->default_config) return 0;
  for (int p = 0; p < s->n_params; p++)
    if (config[p] != s->default_config[p]) return 0;
  return 1;
}

/* the reason given to a record logged as ok whose objective is no number (counted as a runtime error) */
#define OK_WITHOUT_OBJECTIVE "logged as ok without a finite objective"

/* a failure of status st counted, its reason kept when it is one of the first distinct ones; 0 or -1 */
static int count_failure(mpt_summary_device *d, int st, const char *reason) {
  if (st < 0 || st >= MPT_STATUS_COUNT || st == MPT_STATUS_OK) st = MPT_STATUS_RUNTIME_ERROR;
  mpt_summary_failure *f = &d->failures[st];
  f->status = st;
  f->count++;
  if (f->n_reasons == MPT_SUMMARY_REASONS) return 0;
  char line[MPT_SUMMARY_REASON_LEN + 1];
  mpt_summary_reason_line(reason, line, sizeof line);
  if (!line[0]) return 0; /* none logged */
  for (int i = 0; i < f->n_reasons; i++)
    if (strcmp(f->reasons[i], line) == 0) return 0;
  if (!(f->reasons[f->n_reasons] = strdup(line))) return -1;
  f->n_reasons++;
  return 0;
}

static int keep_candidate(pass1 *b, const mpt_obs *o, int cls) {
  if (b->n == b->cap) {
    int64_t nc = b->cap ? 2 * b->cap : 1024;
    candidate *c = realloc(b->c, sizeof *c * (size_t)nc);
    if (!c) return -1;
    b->c = c, b->cap = nc;
  }
  b->c[b->n++] = (candidate){o->id, b->k, o->objective, cls};
  return 0;
}

static int count_record(void *ctx, const mpt_obs *o, const int32_t *config, int32_t session) {
  pass1 *b = ctx;
  mpt_summary *s = b->s;
  int cls = class_of(s, &b->map, o, session), rc = -1;
  mpt_summary_device *d = cls >= 0 ? &s->devices[cls] : NULL;
  if (d && o->cross_from > 0) { /* a portability check: no part of this class's search */
    if (o->status != MPT_STATUS_CANCELLED) d->cross_checks++;
    rc = 0;
  } else if (d && o->status == MPT_STATUS_CANCELLED) { /* in flight at a stop: not an evaluation */
    d->cancelled++;
    rc = count_failure(d, o->status, o->reason);
  } else if (d) {
    d->evaluations++;
    if (is_default(s, config)) { /* its last record counts, as for the run's own report */
      d->default_seen = 1;
      d->default_status = o->status;
      d->default_objective = mpt_obs_valid(o) ? o->objective : NAN;
    }
    if (mpt_obs_valid(o)) d->valid++, rc = keep_candidate(b, o, cls);
    else d->failed++, rc = count_failure(d, o->status, o->status == MPT_STATUS_OK ? OK_WITHOUT_OBJECTIVE : o->reason);
  }
  b->k++;
  return rc < 0 ? mpt_error_set(b->err, MPT_ERR_NOMEM, "out of memory") : 0;
}

/* ---- the best configurations of each class ---- */

static int by_class_id(const void *a, const void *b) {
  const candidate *x = a, *y = b;
  if (x->cls != y->cls) return x->cls < y->cls ? -1 : 1;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  if (x->objective != y->objective) return x->objective < y->objective ? -1 : 1;
  return x->record < y->record ? -1 : x->record > y->record;
}

static int by_class_objective(const void *a, const void *b) {
  const candidate *x = a, *y = b;
  if (x->cls != y->cls) return x->cls < y->cls ? -1 : 1;
  if (x->objective != y->objective) return x->objective < y->objective ? -1 : 1;
  return x->record < y->record ? -1 : x->record > y->record;
}

typedef struct wanted {
  int64_t record;
  mpt_summary_top *slot;
} wanted;

static int by_record(const void *a, const void *b) {
  const wanted *x = a, *y = b;
  return x->record < y->record ? -1 : x->record > y->record;
}

/* each configuration's best record per class (the candidates deduplicated, in place), then the first `top`
 * of each class by objective as the classes' top slots; *w: those records in append order (for pass 2) */
static int choose_top(pass1 *b, int top, wanted **w, int64_t *n_w) {
  mpt_summary *s = b->s;
  int64_t n = 0;
  if (b->n > 0) qsort(b->c, (size_t)b->n, sizeof *b->c, by_class_id); /* b->c is NULL without candidates */
  for (int64_t i = 0; i < b->n; i++)
    if (n == 0 || b->c[i].cls != b->c[n - 1].cls || b->c[i].id != b->c[n - 1].id) b->c[n++] = b->c[i];
  if (n > 0) qsort(b->c, (size_t)n, sizeof *b->c, by_class_objective);
  *w = malloc(sizeof **w * (size_t)(n > 0 ? n : 1));
  if (!*w) return -1;
  *n_w = 0;
  for (int64_t i = 0; i < n;) {
    mpt_summary_device *d = &s->devices[b->c[i].cls];
    int64_t j = i;
    while (j < n && b->c[j].cls == b->c[i].cls) j++;
    d->configs = j - i;
    d->n_top = (int)(j - i < top ? j - i : top);
    if (!(d->top = calloc((size_t)d->n_top + 1, sizeof *d->top))) return -1;
    for (int t = 0; t < d->n_top; t++) {
      const candidate *c = &b->c[i + t];
      d->top[t] = (mpt_summary_top){.id = c->id, .record = c->record, .objective = c->objective};
      (*w)[(*n_w)++] = (wanted){c->record, &d->top[t]};
    }
    i = j;
  }
  qsort(*w, (size_t)*n_w, sizeof **w, by_record);
  return 0;
}

/* ---- pass 2: the chosen records whole ---- */

typedef struct pass2 {
  const mpt_summary *s;
  wanted *w;
  int64_t n_w, at, k;
  mpt_error *err;
} pass2;

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void times_stats(mpt_summary_top *t, const mpt_obs *o) {
  int n = o->n_times < 0 ? 0 : o->n_times > MPT_OBS_MAX_TIMES ? MPT_OBS_MAX_TIMES : o->n_times;
  double v[MPT_OBS_MAX_TIMES], sum = 0, sq = 0;
  t->n_times = n;
  t->median = t->std = t->min = t->max = NAN;
  if (n == 0) return;
  memcpy(v, o->times, sizeof(double) * (size_t)n);
  qsort(v, (size_t)n, sizeof v[0], by_value);
  t->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  t->min = v[0], t->max = v[n - 1];
  for (int i = 0; i < n; i++) sum += v[i];
  double mean = sum / n;
  for (int i = 0; i < n; i++) sq += (v[i] - mean) * (v[i] - mean);
  if (n > 1) t->std = sqrt(sq / (n - 1));
}

static int read_top(void *ctx, const mpt_obs *o, const int32_t *config) {
  pass2 *b = ctx;
  if (b->at < b->n_w && b->w[b->at].record == b->k) {
    mpt_summary_top *t = b->w[b->at++].slot;
    size_t np = (size_t)(b->s->n_params > 0 ? b->s->n_params : 1);
    if (!(t->config = malloc(sizeof(int32_t) * np))) return mpt_error_set(b->err, MPT_ERR_NOMEM, "out of memory");
    memcpy(t->config, config, sizeof(int32_t) * (size_t)b->s->n_params);
    times_stats(t, o);
  }
  b->k++;
  return 0;
}

static void speedups(mpt_summary *s) {
  for (int c = 0; c < s->n_devices; c++) {
    mpt_summary_device *d = &s->devices[c];
    for (int t = 0; t < d->n_top; t++)
      d->top[t].speedup = isfinite(d->default_objective) && d->top[t].objective > 0
                              ? d->default_objective / d->top[t].objective : NAN;
    if (d->evaluations + d->cancelled + d->cross_checks > 0) s->n_with_records++;
  }
}

static int read_records(mpt_summary *s, int top, mpt_error *err) {
  pass1 b = {.s = s, .err = err};
  wanted *w = NULL;
  int64_t n_w = 0;
  int rc = map_classes(s, &b.map) < 0 ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
  if (rc == 0) rc = mpt_runlog_each_session(s->log, count_record, &b, err);
  s->records = b.k;
  if (rc == 0 && choose_top(&b, top, &w, &n_w) < 0) rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (rc == 0) {
    pass2 r = {s, w, n_w, 0, 0, err};
    rc = mpt_runlog_each(s->log, read_top, &r, err);
    if (rc == 0 && r.at != n_w) rc = mpt_error_set(err, MPT_ERR_IO, "the run log's records changed while read");
  }
  free(w);
  free(b.c);
  free_map(&b.map);
  return rc;
}

int mpt_summary_build(mpt_runlog *log, int top, mpt_summary **out, mpt_error *err) {
  *out = NULL;
  mpt_error_clear(err);
  mpt_summary *s = calloc(1, sizeof *s);
  if (!s) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  s->log = log;
  int rc = load_values(s, err);
  if (rc == 0) rc = read_records(s, top > 0 ? top : 1, err);
  if (rc < 0) {
    mpt_summary_free(s);
    return rc;
  }
  name_targets(s);
  speedups(s);
  *out = s;
  return 0;
}

void mpt_summary_free(mpt_summary *s) {
  if (!s) return;
  for (int c = 0; c < s->n_devices; c++) {
    mpt_summary_device *d = &s->devices[c];
    for (int t = 0; t < d->n_top; t++) free(d->top[t].config);
    free(d->top);
    for (int st = 0; st < MPT_STATUS_COUNT; st++)
      for (int i = 0; i < d->failures[st].n_reasons; i++) free(d->failures[st].reasons[i]);
  }
  free(s->devices);
  for (int p = 0; s->values && p < s->n_params; p++) {
    for (int i = 0; s->values[p] && i < s->n_values[p]; i++) mpt_value_free(&s->values[p][i]);
    free(s->values[p]);
  }
  free(s->values);
  free(s->n_values);
  free(s->names);
  free(s->default_config);
  free(s);
}

mpt_summary_objective mpt_summary_objective_of(mpt_runlog *log) {
  mpt_summary_objective o = {"time", MPT_SUMMARY_UNIT, 0};
  const char *spec = mpt_runlog_meta(log, "objective");
  if (!spec || !spec[0]) return o;
  size_t n = strcspn(spec, ":,");
  if (n == 0 || n >= sizeof o.name) return o;
  snprintf(o.name, sizeof o.name, "%.*s", (int)n, spec);
  o.maximized = strncmp(spec + n, ":max", 4) == 0;
  o.unit = strcmp(o.name, "time") == 0 ? MPT_SUMMARY_UNIT : strcmp(o.name, "energy") == 0 ? "J"
           : strcmp(o.name, "edp") == 0 ? "J*s" : "";
  return o;
}
