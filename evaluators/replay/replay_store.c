/* evaluators/replay/replay_store.c: packs observations into compact records (times pooled, reasons interned
 * through a small open-addressing hash) and unpacks them on demand. */
#include "evaluators/replay/replay_store.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct replay_rec {
  double objective, median, compile_ms, benchmark_ms, framework_ms;
  int64_t times_at; /* first of its n_times in the pool */
  int32_t reason;   /* index into reasons, -1: none */
  int16_t status, n_times;
};

static uint32_t fnv1a(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* doubles the hash table and re-inserts every reason; -1 when out of memory */
static int rehash(replay_store *s) {
  int32_t cap = s->hash_cap ? 2 * s->hash_cap : 64;
  int32_t *h = malloc(sizeof *h * (size_t)cap);
  if (!h) return -1;
  for (int32_t i = 0; i < cap; i++) h[i] = -1;
  for (int32_t k = 0; k < s->n_reasons; k++) {
    uint32_t i = fnv1a(s->reasons[k], strlen(s->reasons[k])) & (uint32_t)(cap - 1);
    while (h[i] >= 0) i = (i + 1) & (uint32_t)(cap - 1);
    h[i] = k;
  }
  free(s->hash);
  s->hash = h;
  s->hash_cap = cap;
  return 0;
}

/* the index of the reason text[0..len) (added if new), -1 for an empty one, -2 when out of memory */
static int32_t intern(replay_store *s, const char *text, size_t len) {
  if (len == 0) return -1;
  if (2 * (s->n_reasons + 1) > s->hash_cap && rehash(s) < 0) return -2;
  uint32_t mask = (uint32_t)(s->hash_cap - 1), i = fnv1a(text, len) & mask;
  for (; s->hash[i] >= 0; i = (i + 1) & mask) {
    const char *r = s->reasons[s->hash[i]];
    if (strncmp(r, text, len) == 0 && r[len] == '\0') return s->hash[i];
  }
  if (s->n_reasons == s->cap_reasons) {
    int32_t cap = s->cap_reasons ? 2 * s->cap_reasons : 16;
    char **nr = realloc(s->reasons, sizeof *nr * (size_t)cap);
    if (!nr) return -2;
    s->reasons = nr;
    s->cap_reasons = cap;
  }
  char *copy = malloc(len + 1);
  if (!copy) return -2;
  memcpy(copy, text, len);
  copy[len] = '\0';
  s->reasons[s->n_reasons] = copy;
  s->hash[i] = s->n_reasons;
  return s->n_reasons++;
}

int64_t replay_store_put(replay_store *s, int64_t at, const mpt_obs *o, int64_t max_records) {
  if (at < 0) {
    if (s->n >= max_records) return -1;
    if (s->n == s->cap) {
      int64_t cap = s->cap ? 2 * s->cap : 1024;
      if (cap > max_records) cap = max_records;
      if (cap <= s->n) return -1;
      replay_rec *nr = realloc(s->rec, sizeof *nr * (size_t)cap);
      if (!nr) return -1;
      s->rec = nr;
      s->cap = cap;
    }
    at = s->n++;
  }
  int n_times = o->n_times < 0 ? 0 : o->n_times > MPT_OBS_MAX_TIMES ? MPT_OBS_MAX_TIMES : o->n_times;
  if (s->n_times + n_times > s->cap_times) {
    int64_t cap = s->cap_times ? 2 * s->cap_times : 4096;
    while (cap < s->n_times + n_times) cap *= 2;
    double *nt = realloc(s->times, sizeof *nt * (size_t)cap);
    if (!nt) return -1;
    s->times = nt;
    s->cap_times = cap;
  }
  /* the reason as far as its NUL (the whole buffer at most, in case it has none) */
  int32_t ri = intern(s, o->reason, strnlen(o->reason, sizeof o->reason - 1));
  if (ri == -2) return -1;
  replay_rec *d = &s->rec[at];
  d->objective = o->objective;
  d->median = o->median;
  d->compile_ms = o->compile_ms;
  d->benchmark_ms = o->benchmark_ms;
  d->framework_ms = o->framework_ms;
  d->status = (int16_t)o->status;
  d->n_times = (int16_t)n_times;
  d->times_at = s->n_times;
  if (n_times > 0) memcpy(s->times + s->n_times, o->times, sizeof(double) * (size_t)n_times);
  s->n_times += n_times;
  d->reason = ri;
  return at;
}

void replay_store_get(const replay_store *s, int64_t i, int64_t id, mpt_obs *out) {
  const replay_rec *d = &s->rec[i];
  mpt_obs_init(out, id);
  out->status = d->status;
  out->objective = d->objective;
  out->median = d->median;
  out->compile_ms = d->compile_ms;
  out->benchmark_ms = d->benchmark_ms;
  out->framework_ms = d->framework_ms;
  out->n_times = d->n_times;
  if (d->n_times > 0) memcpy(out->times, s->times + d->times_at, sizeof(double) * (size_t)d->n_times);
  if (d->reason >= 0) strcpy(out->reason, s->reasons[d->reason]);
}

int replay_store_valid(const replay_store *s, int64_t i, double *objective) {
  const replay_rec *d = &s->rec[i];
  if (d->status != MPT_STATUS_OK || !isfinite(d->objective)) return 0;
  *objective = d->objective;
  return 1;
}

void replay_store_free(replay_store *s) {
  for (int32_t k = 0; k < s->n_reasons; k++) free(s->reasons[k]);
  free(s->reasons);
  free(s->hash);
  free(s->rec);
  free(s->times);
  memset(s, 0, sizeof *s);
}
