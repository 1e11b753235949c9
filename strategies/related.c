/* strategies/related.c: the related observations of a strategy and their summary per configuration
 * (strategies/related.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/related.h"
#include "spaces/sys/error.h"

typedef struct related_source {
  double *logt;          /* per id: log of the last valid objective, NAN none */
  uint8_t *fail;         /* per id: 1 when the last observation failed */
  double n, sum, sum2;   /* over the valid entries of logt */
} related_source;

struct mpt_related {
  int64_t n;
  int standardize;       /* 1: z per source, 0: the log-times as they are */
  int n_src;
  int source_id[MPT_RELATED_MAX_SOURCES];
  related_source src[MPT_RELATED_MAX_SOURCES];
  int64_t count, version, summarized; /* summarized: the version the summary is of (-1 none) */
  double *z;
  uint8_t *all_failed;
  int64_t *order, n_order;
};

mpt_related *mpt_related_new(int64_t n, int standardize) {
  mpt_related *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->n = n;
  r->standardize = standardize;
  r->summarized = -1;
  return r;
}

void mpt_related_free(mpt_related *r) {
  if (!r) return;
  for (int i = 0; i < r->n_src; i++) { free(r->src[i].logt); free(r->src[i].fail); }
  free(r->z); free(r->all_failed); free(r->order);
  free(r);
}

/* the slot of source (a new one while there is room, else the last); NULL when out of memory */
static related_source *source_slot(mpt_related *r, int source) {
  for (int i = 0; i < r->n_src; i++)
    if (r->source_id[i] == source) return &r->src[i];
  if (r->n_src == MPT_RELATED_MAX_SOURCES) return &r->src[r->n_src - 1];
  related_source *s = &r->src[r->n_src];
  size_t n = (size_t)(r->n > 0 ? r->n : 1);
  s->logt = malloc(n * sizeof *s->logt);
  s->fail = calloc(n, 1);
  if (!s->logt || !s->fail) { free(s->logt); free(s->fail); memset(s, 0, sizeof *s); return NULL; }
  for (size_t i = 0; i < n; i++) s->logt[i] = NAN;
  r->source_id[r->n_src++] = source;
  return s;
}

int mpt_related_add(mpt_related *r, int source, const mpt_obs *obs, int n) {
  related_source *s = source_slot(r, source);
  if (!s) return MPT_ERR_NOMEM;
  for (int i = 0; i < n; i++) {
    const mpt_obs *o = &obs[i];
    if (o->id < 0 || o->id >= r->n || o->status == MPT_STATUS_CANCELLED || o->status == MPT_STATUS_MISSING) continue;
    double old = s->logt[o->id];
    if (old == old) { s->n -= 1; s->sum -= old; s->sum2 -= old * old; r->count--; }
    int ok = mpt_obs_valid(o) && o->objective > 0;
    s->logt[o->id] = ok ? log(o->objective) : NAN;
    s->fail[o->id] = (uint8_t)!ok;
    if (ok) { double v = s->logt[o->id]; s->n += 1; s->sum += v; s->sum2 += v * v; r->count++; }
  }
  r->version++;
  return 0;
}

int64_t mpt_related_count(const mpt_related *r) { return r ? r->count : 0; }
int64_t mpt_related_version(const mpt_related *r) { return r ? r->version : 0; }

/* the offset and scale that standardize source k's log-times (0 and 1 without standardize) */
static void source_scale(const mpt_related *r, int k, double *mean, double *sd) {
  const related_source *s = &r->src[k];
  double m = s->n > 0 ? s->sum / s->n : 0, var = s->n > 1 ? (s->sum2 - s->sum * m) / (s->n - 1) : 0;
  *mean = r->standardize ? m : 0;
  *sd = var > 1e-12 && r->standardize ? sqrt(var) : 1;
}

int mpt_related_sources(const mpt_related *r) { return r ? r->n_src : 0; }

double mpt_related_source_coverage(const mpt_related *r, int k) {
  return r->n > 0 ? r->src[k].n / (double)r->n : 0;
}

void mpt_related_source_z(const mpt_related *r, int k, double *out) {
  double mean, sd;
  source_scale(r, k, &mean, &sd);
  for (int64_t id = 0; id < r->n; id++) out[id] = (r->src[k].logt[id] - mean) / sd;
}

/* the summary z and all_failed from every source */
static int summarize(mpt_related *r) {
  size_t n = (size_t)(r->n > 0 ? r->n : 1);
  if (!r->z) r->z = malloc(n * sizeof *r->z);
  if (!r->all_failed) r->all_failed = malloc(n);
  if (!r->z || !r->all_failed) return MPT_ERR_NOMEM;
  double mean[MPT_RELATED_MAX_SOURCES], sd[MPT_RELATED_MAX_SOURCES];
  for (int k = 0; k < r->n_src; k++) source_scale(r, k, &mean[k], &sd[k]);
  for (int64_t id = 0; id < r->n; id++) {
    double sum = 0;
    int n_ok = 0, n_fail = 0;
    for (int k = 0; k < r->n_src; k++) {
      double v = r->src[k].logt[id];
      if (v == v) { sum += (v - mean[k]) / sd[k]; n_ok++; }
      else n_fail += r->src[k].fail[id];
    }
    r->z[id] = n_ok ? sum / n_ok : NAN;
    r->all_failed[id] = (uint8_t)(n_ok == 0 && n_fail > 0);
  }
  return 0;
}

static int cmp_by_z(const void *a, const void *b, void *ctx) {
  const double *z = ctx;
  int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
  return z[i] < z[j] ? -1 : z[i] > z[j] ? 1 : (i > j) - (i < j);
}

/* the ids with a summary, sorted by it */
static int sort_order(mpt_related *r) {
  free(r->order);
  r->order = malloc((size_t)(r->n > 0 ? r->n : 1) * sizeof *r->order);
  if (!r->order) return MPT_ERR_NOMEM;
  r->n_order = 0;
  for (int64_t id = 0; id < r->n; id++)
    if (r->z[id] == r->z[id]) r->order[r->n_order++] = id;
  qsort_r(r->order, (size_t)r->n_order, sizeof *r->order, cmp_by_z, r->z);
  return 0;
}

static int refresh(mpt_related *r) {
  if (r->summarized == r->version) return 0;
  if (summarize(r) || sort_order(r)) return MPT_ERR_NOMEM;
  r->summarized = r->version;
  return 0;
}

const double *mpt_related_mean_z(mpt_related *r, const uint8_t **failed) {
  if (refresh(r)) return NULL;
  if (failed) *failed = r->all_failed;
  return r->z;
}

const int64_t *mpt_related_order(mpt_related *r, int64_t *n) {
  *n = 0;
  if (refresh(r)) return NULL;
  *n = r->n_order;
  return r->order;
}
