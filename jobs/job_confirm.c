/* jobs/job_confirm.c: rank 0's side of --confirm (see job_confirm.h). */
#include "jobs/job_confirm.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mpt_job_confirm_init(mpt_job_confirm *jc, int k) {
  memset(jc, 0, sizeof *jc);
  jc->k = k < 0 ? 0 : k > MPT_CONFIRM_MAX_K ? MPT_CONFIRM_MAX_K : k;
  jc->default_id = -1;
  jc->def.id = -1;
  jc->def.confirmed = NAN;
  jc->n_classes = 1;
}

void mpt_job_confirm_free(mpt_job_confirm *jc) {
  free(jc->logged);
  jc->logged = NULL;
  free(jc->others);
  jc->others = NULL;
  jc->n_classes = 1;
}

int mpt_job_confirm_classes(mpt_job_confirm *jc, int n, mpt_error *err) {
  if (n <= jc->n_classes) return 0;
  mpt_job_confirm *more = calloc((size_t)n - 1, sizeof *more);
  if (!more) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int c = 1; c < n; c++) {
    mpt_job_confirm *x = &more[c - 1];
    if (c < jc->n_classes) *x = jc->others[c - 1];
    else {
      mpt_job_confirm_init(x, jc->k);
      x->device_class = c;
      x->default_id = jc->default_id;
      x->logged = jc->logged, x->n_logged = jc->n_logged; /* borrowed: the first frees them */
    }
  }
  free(jc->others);
  jc->others = more;
  jc->n_classes = n;
  return 0;
}

mpt_job_confirm *mpt_job_confirm_of(mpt_job_confirm *jc, int32_t device_class) {
  if (device_class == 0) return jc;
  return device_class > 0 && device_class < jc->n_classes ? &jc->others[device_class - 1] : NULL;
}

static int by_search(const void *a, const void *b) {
  const mpt_job_finalist *x = a, *y = b;
  return (x->search > y->search) - (x->search < y->search);
}

/* the default's search measurement: its last one counts (as for the summary's default), cancelled and missing
 * ones are none */
static void see_default(mpt_job_confirm *jc, const mpt_obs *o) {
  if (o->id != jc->default_id || o->status == MPT_STATUS_CANCELLED || o->status == MPT_STATUS_MISSING) return;
  jc->default_valid = mpt_obs_valid(o);
  jc->def.id = o->id;
  jc->def.search = o->objective;
}

void mpt_job_confirm_see(mpt_job_confirm *first, const mpt_obs *o) {
  mpt_job_confirm *jc = o->cross_from > 0 ? NULL : mpt_job_confirm_of(first, o->device_class);
  if (!jc || jc->k == 0 || o->confirm) return;
  if (jc->default_id >= 0) see_default(jc, o);
  if (!mpt_obs_valid(o)) return;
  for (int i = 0; i < jc->n; i++)
    if (jc->f[i].id == o->id) {
      if (o->objective < jc->f[i].search) jc->f[i].search = o->objective;
      qsort(jc->f, (size_t)jc->n, sizeof *jc->f, by_search);
      return;
    }
  if (jc->n == jc->k && !(o->objective < jc->f[jc->n - 1].search)) return;
  int at = jc->n < jc->k ? jc->n++ : jc->n - 1; /* a new one, or in place of the worst */
  memset(&jc->f[at], 0, sizeof jc->f[at]);
  jc->f[at].id = o->id;
  jc->f[at].search = o->objective;
  jc->f[at].confirmed = NAN;
  qsort(jc->f, (size_t)jc->n, sizeof *jc->f, by_search);
}

static mpt_job_finalist *finalist(mpt_job_confirm *jc, int64_t id) {
  for (int i = 0; i < jc->n; i++)
    if (jc->f[i].id == id) return &jc->f[i];
  return NULL;
}

/* the default, when it is measured again apart from the finalists (valid in the search, no finalist) */
static mpt_job_finalist *default_apart(mpt_job_confirm *jc) {
  return jc->default_id >= 0 && jc->default_valid && !finalist(jc, jc->default_id) ? &jc->def : NULL;
}

/* a finalist, or the default measured again with them */
static mpt_job_finalist *measured_again(mpt_job_confirm *jc, int64_t id) {
  mpt_job_finalist *f = finalist(jc, id), *d = default_apart(jc);
  return f ? f : d && d->id == id ? d : NULL;
}

/* a re-measurement of one of jc's (its class's) */
static void take_one(mpt_job_confirm *jc, const mpt_obs *o) {
  mpt_job_finalist *f = measured_again(jc, o->id);
  if (!f || f->n_conf >= MPT_CONFIRM_ROUNDS) return;
  f->conf[f->n_conf++] = mpt_obs_valid(o) ? o->objective : NAN;
}

void mpt_job_confirm_take(mpt_job_confirm *jc, const mpt_obs *o) {
  mpt_job_confirm *x = mpt_job_confirm_of(jc, o->device_class);
  if (x) take_one(x, o);
}

/* the logged confirmations of jc's class count when each is of one of these finalists or of the default measured
 * again with them (a resumed confirmation; a stop may have come before every one was measured once: those without
 * one get all their rounds; a class whose rounds had not begun has none) */
static void take_logged(mpt_job_confirm *jc) {
  int same = 0, other = 0;
  for (int64_t i = 0; !other && i < jc->n_logged; i++)
    if (jc->logged[i].device_class == jc->device_class) {
      same = 1;
      other = measured_again(jc, jc->logged[i].id) == NULL;
    }
  jc->use_logged = same = same && !other;
  for (int64_t i = 0; same && i < jc->n_logged; i++)
    if (jc->logged[i].device_class == jc->device_class) take_one(jc, &jc->logged[i]);
}

static int finalists_cb(void *ctx, int64_t *ids, int k) {
  mpt_job_confirm *jc = ctx;
  take_logged(jc);
  int n = jc->n < k ? jc->n : k;
  for (int i = 0; i < n; i++) ids[i] = jc->f[i].id;
  return n;
}

static int64_t baseline_cb(void *ctx) {
  mpt_job_finalist *d = default_apart(ctx);
  return d ? d->id : -1;
}

static int logged_rounds_cb(void *ctx, int64_t id) {
  mpt_job_finalist *f = measured_again(ctx, id);
  return f ? f->n_conf : 0;
}

static int record_cb(void *ctx, const mpt_obs *o, mpt_error *err) {
  mpt_job_confirm *jc = ctx;
  int rc = jc->record(jc->record_ctx, o, err);
  if (rc == 0) take_one(jc, o), jc->made++;
  return rc;
}

static void *for_class_cb(void *ctx, int32_t device_class) { return mpt_job_confirm_of(ctx, device_class); }

mpt_coord_confirm mpt_job_confirm_plan(mpt_job_confirm *jc, int (*record)(void *, const mpt_obs *, mpt_error *),
                                       void *record_ctx) {
  for (int c = 0; c < jc->n_classes; c++) {
    mpt_job_confirm *x = mpt_job_confirm_of(jc, c);
    x->record = record;
    x->record_ctx = record_ctx;
  }
  mpt_coord_confirm c = {jc->k, MPT_CONFIRM_ROUNDS, finalists_cb, baseline_cb, logged_rounds_cb, record_cb, jc,
                         for_class_cb};
  return c;
}

static double median_finite(const double *x, int n) {
  double s[MPT_CONFIRM_ROUNDS];
  int m = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(x[i])) s[m++] = x[i];
  for (int i = 1; i < m; i++)
    for (int j = i; j > 0 && s[j - 1] > s[j]; j--) { double t = s[j]; s[j] = s[j - 1]; s[j - 1] = t; }
  return m == 0 ? NAN : m % 2 ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
}

const mpt_job_finalist *mpt_job_confirm_best(mpt_job_confirm *jc, int *reordered) {
  const mpt_job_finalist *best = NULL;
  *reordered = 0;
  for (int i = 0; i < jc->n; i++) {
    jc->f[i].confirmed = median_finite(jc->f[i].conf, jc->f[i].n_conf);
    if (isfinite(jc->f[i].confirmed) && (!best || jc->f[i].confirmed < best->confirmed)) best = &jc->f[i];
  }
  if (best) *reordered = best != &jc->f[0];
  return best;
}

double mpt_job_confirm_default(mpt_job_confirm *jc, int *n_conf) {
  mpt_job_finalist *d = jc->default_id >= 0 ? measured_again(jc, jc->default_id) : NULL;
  *n_conf = d ? d->n_conf : 0;
  if (d) d->confirmed = median_finite(d->conf, d->n_conf);
  return d ? d->confirmed : NAN;
}

int mpt_job_confirm_any(const mpt_job_confirm *jc) { return jc->made > 0 || jc->use_logged; }

void mpt_job_confirm_print(FILE *out, mpt_job_confirm *jc, const mpt_job_objective *jo, const mpt_space *s,
                           int64_t made, const char *indent) {
  int reordered;
  const mpt_job_finalist *best = mpt_job_confirm_best(jc, &reordered);
  if (!best) return;
  const mpt_objective_term *t = &jo->obj.t[0];
  mpt_job_finalist *d = default_apart(jc);
  if (d && d->n_conf > 0) d->confirmed = median_finite(d->conf, d->n_conf);
  else d = NULL;
  fprintf(out, "%sconfirmation: the %d best%s measured again %d times each, interleaved (%lld now%s; not counted "
          "against the budget)\n", indent, jc->n, d ? " and the default" : "", MPT_CONFIRM_ROUNDS, (long long)made,
          jc->use_logged ? ", the rest logged before" : "");
  for (int i = 0; i <= jc->n; i++) {
    const mpt_job_finalist *f = i < jc->n ? &jc->f[i] : d;
    if (!f) break;
    char cfg[512], rank[16] = "default";
    mpt_space_format(s, f->id, cfg, (int)sizeof cfg);
    if (i < jc->n) snprintf(rank, sizeof rank, "#%d", i + 1);
    fprintf(out, "%s  %s  search %.6g %s  confirmed %.6g %s  %s\n", indent, rank, mpt_objective_minimized(t, f->search),
            t->unit, mpt_objective_minimized(t, f->confirmed), t->unit, cfg);
  }
  if (reordered)
    fprintf(out, "%sconfirmation reorders the finalists: the search's #%d is the best confirmed\n", indent,
            (int)(best - jc->f) + 1);
  else
    fprintf(out, "%sconfirmation keeps the search's best\n", indent);
}
