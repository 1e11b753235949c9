/* jobs/output/summary_records.c: the records of a summary (jobs/output/summary.h) in two passes over the log.
 * Pass 1 counts every record per device class (evaluations, valid, failed, cancelled, portability checks, the
 * default's last record, the failures by status with their first distinct reasons) and keeps (id, objective,
 * record) of the valid ones; the best record of each configuration per class is chosen from those, and pass 2
 * reads the chosen records whole (configuration, statistics of the per-iteration times). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/output/summary.h"
#include "jobs/output/summary_priv.h"

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

/* ---- pass 1: every record counted, the valid ones kept small ---- */

typedef struct candidate {
  int64_t id, record;
  double objective;
  int32_t cls;
} candidate;

typedef struct pass1 {
  mpt_summary *s;
  mpt_summary_class_map map;
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
  int cls = mpt_summary_class_of(s, &b->map, o, session), rc = -1;
  mpt_summary_device *d = cls >= 0 ? &s->devices[cls] : NULL;
  if (d && o->cross_from <= 0 && mpt_summary_note_log_class(s, o->device_class, cls) < 0) d = NULL;
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
      d->default_id = o->id;
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

void mpt_summary_speedups(mpt_summary *s) {
  for (int c = 0; c < s->n_devices; c++) {
    mpt_summary_device *d = &s->devices[c];
    for (int t = 0; t < d->n_top; t++)
      d->top[t].speedup = isfinite(d->default_objective) && d->top[t].objective > 0
                              ? d->default_objective / d->top[t].objective : NAN;
    if (d->evaluations + d->cancelled + d->cross_checks > 0) s->n_with_records++;
  }
}

int mpt_summary_read_records(mpt_summary *s, int top, mpt_error *err) {
  pass1 b = {.s = s, .err = err};
  wanted *w = NULL;
  int64_t n_w = 0;
  int rc = mpt_summary_map_classes(s, &b.map) < 0 ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
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
  mpt_summary_free_map(&b.map);
  return rc;
}
