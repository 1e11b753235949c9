/* jobs/output/summary_confirmed.c: the confirmation a run log holds (/confirmations, --confirm) in a summary
 * (jobs/output/summary.h), per device class as `mptune tune` reported it: the median of each configuration's valid
 * re-measurements, the best confirmed among the finalists, the default confirmed and the speed-up of the one
 * over the other. Each re-measurement is of the class its device_class names (the class whose search records
 * have that index); in a log of one class with records, all are that class's. The finalists are the K best of
 * the class's search; the default is one of them when fewer configurations than the others measured again were
 * better than it in the search, else it was measured again apart and is never the best confirmed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/output/summary_priv.h"

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* the median of id's valid re-measurements among c[0..n) (NAN: none); v has room for n */
static double median_of(const mpt_obs *c, int64_t n, int64_t id, double *v) {
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (c[i].id == id && mpt_obs_valid(&c[i])) v[m++] = c[i].objective;
  if (m == 0) return NAN;
  qsort(v, (size_t)m, sizeof *v, by_value);
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

/* the default's rank in the search (configurations better than it; n_top when it is not among the top) */
static int default_rank(const mpt_summary_device *d) {
  for (int t = 0; t < d->n_top; t++)
    if (d->top[t].id == d->default_id) return t;
  return d->n_top;
}

static void confirm_class(mpt_summary_device *d, const mpt_obs *c, int64_t n, double *v) {
  int64_t others = 0; /* configurations measured again besides the default */
  for (int64_t i = 0; i < n; i++) {
    int first = c[i].id != d->default_id;
    for (int64_t j = 0; first && j < i; j++) first = c[j].id != c[i].id;
    others += first;
  }
  int default_finalist = d->default_id >= 0 && default_rank(d) < others;
  d->confirmations = n;
  d->confirmed_default = d->default_id >= 0 ? median_of(c, n, d->default_id, v) : NAN;
  for (int64_t i = 0; i < n; i++) {
    if (c[i].id == d->default_id && !default_finalist) continue;
    double m = median_of(c, n, c[i].id, v);
    if (isfinite(m) && !(m >= d->confirmed_best)) d->confirmed_best = m, d->confirmed_best_id = c[i].id;
  }
  if (isfinite(d->confirmed_default) && d->confirmed_best > 0)
    d->confirmed_speedup = d->confirmed_default / d->confirmed_best;
  for (int t = 0; t < d->n_top && !d->confirmed_rank; t++)
    if (d->top[t].id == d->confirmed_best_id) d->confirmed_rank = t + 1;
}

int mpt_summary_note_log_class(mpt_summary *s, int32_t device_class, int cls) {
  if (device_class < 0 || device_class >= 4096) return 0; /* no class table holds it: shown nowhere */
  if (device_class >= s->n_log_classes) {
    int *m = realloc(s->log_class_device, sizeof *m * (size_t)(device_class + 1));
    if (!m) return -1;
    for (int k = s->n_log_classes; k <= device_class; k++) m[k] = -1;
    s->log_class_device = m, s->n_log_classes = device_class + 1;
  }
  if (s->log_class_device[device_class] < 0) s->log_class_device[device_class] = cls;
  return 0;
}

/* the class here of a re-measurement: the one whose search records have its device_class; with one class with
 * records, that one */
static int class_of(const mpt_summary *s, const mpt_obs *o, int only) {
  if (s->n_with_records == 1) return only;
  return o->device_class >= 0 && o->device_class < s->n_log_classes ? s->log_class_device[o->device_class] : -1;
}

int mpt_summary_read_confirmations(mpt_summary *s, mpt_error *err) {
  mpt_obs *c = NULL;
  int64_t n = 0;
  int rc = mpt_runlog_confirmations(s->log, &c, &n, err), only = -1;
  if (rc < 0 || n == 0) return rc;
  double *v = malloc(sizeof *v * (size_t)n);
  mpt_obs *mine = malloc(sizeof *mine * (size_t)n);
  if (!v || !mine) rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int k = 0; k < s->n_devices; k++)
    if (s->devices[k].evaluations + s->devices[k].cancelled + s->devices[k].cross_checks > 0 && only < 0) only = k;
  for (int k = 0; rc == 0 && k < s->n_devices; k++) {
    mpt_summary_device *d = &s->devices[k];
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
      if (class_of(s, &c[i], only) == k) mine[m++] = c[i];
    if (m > 0 && d->evaluations + d->cancelled + d->cross_checks > 0) confirm_class(d, mine, m, v);
  }
  free(mine);
  free(v);
  free(c);
  return rc;
}
