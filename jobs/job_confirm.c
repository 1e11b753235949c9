/* jobs/job_confirm.c: rank 0's side of --confirm (see job_confirm.h). */
#include "jobs/job_confirm.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mpt_job_confirm_init(mpt_job_confirm *jc, int k) {
  memset(jc, 0, sizeof *jc);
  jc->k = k < 0 ? 0 : k > MPT_CONFIRM_MAX_K ? MPT_CONFIRM_MAX_K : k;
}

void mpt_job_confirm_free(mpt_job_confirm *jc) {
  free(jc->logged);
  jc->logged = NULL;
}

static int by_search(const void *a, const void *b) {
  const mpt_job_finalist *x = a, *y = b;
  return (x->search > y->search) - (x->search < y->search);
}

void mpt_job_confirm_see(mpt_job_confirm *jc, const mpt_obs *o) {
  if (jc->k == 0 || !mpt_obs_valid(o) || o->confirm) return;
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

void mpt_job_confirm_take(mpt_job_confirm *jc, const mpt_obs *o) {
  mpt_job_finalist *f = finalist(jc, o->id);
  if (!f || f->n_conf >= MPT_CONFIRM_ROUNDS) return;
  f->conf[f->n_conf++] = mpt_obs_valid(o) ? o->objective : NAN;
}

/* the logged confirmations count when each is of one of these finalists (a resumed confirmation; a stop may have
 * come before every finalist was measured once: those without one get all their rounds) */
static void take_logged(mpt_job_confirm *jc) {
  int same = jc->n_logged > 0;
  for (int64_t i = 0; same && i < jc->n_logged; i++) same = finalist(jc, jc->logged[i].id) != NULL;
  jc->use_logged = same;
  for (int64_t i = 0; same && i < jc->n_logged; i++) mpt_job_confirm_take(jc, &jc->logged[i]);
}

static int finalists_cb(void *ctx, int64_t *ids, int k) {
  mpt_job_confirm *jc = ctx;
  take_logged(jc);
  int n = jc->n < k ? jc->n : k;
  for (int i = 0; i < n; i++) ids[i] = jc->f[i].id;
  return n;
}

static int logged_rounds_cb(void *ctx, int64_t id) {
  mpt_job_finalist *f = finalist(ctx, id);
  return f ? f->n_conf : 0;
}

static int record_cb(void *ctx, const mpt_obs *o, mpt_error *err) {
  mpt_job_confirm *jc = ctx;
  int rc = jc->record(jc->record_ctx, o, err);
  if (rc == 0) mpt_job_confirm_take(jc, o);
  return rc;
}

mpt_coord_confirm mpt_job_confirm_plan(mpt_job_confirm *jc, int (*record)(void *, const mpt_obs *, mpt_error *),
                                       void *record_ctx) {
  jc->record = record;
  jc->record_ctx = record_ctx;
  mpt_coord_confirm c = {jc->k, MPT_CONFIRM_ROUNDS, finalists_cb, logged_rounds_cb, record_cb, jc};
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

void mpt_job_confirm_print(mpt_job_confirm *jc, const mpt_job_objective *jo, const mpt_space *s, int64_t made) {
  int reordered;
  const mpt_job_finalist *best = mpt_job_confirm_best(jc, &reordered);
  if (!best) return;
  const mpt_objective_term *t = &jo->obj.t[0];
  printf("confirmation: the %d best measured again %d times each, interleaved (%lld now%s; not counted against the "
         "budget)\n", jc->n, MPT_CONFIRM_ROUNDS, (long long)made, jc->use_logged ? ", the rest logged before" : "");
  for (int i = 0; i < jc->n; i++) {
    char cfg[512];
    mpt_space_format(s, jc->f[i].id, cfg, (int)sizeof cfg);
    printf("  #%d  search %.6g %s  confirmed %.6g %s  %s\n", i + 1, mpt_objective_minimized(t, jc->f[i].search),
           t->unit, mpt_objective_minimized(t, jc->f[i].confirmed), t->unit, cfg);
  }
  if (reordered)
    printf("confirmation reorders the finalists: the search's #%d is the best confirmed\n", (int)(best - jc->f) + 1);
  else
    printf("confirmation keeps the search's best\n");
}
