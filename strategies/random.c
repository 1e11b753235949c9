/* strategies/random.c: the `random` strategy: uniform random sampling without replacement, drawn from
 * a lazily shuffled permutation of the valid ids (sparse Fisher-Yates: only the swapped positions are
 * stored in a hash map, so memory grows with the number of draws, not with the size of the space).
 * Ids already told (warm start) or seen are skipped. */
#include <stdlib.h>
#include "strategies/strategy.h"

typedef struct random_state {
  int64_t next;          /* positions [0, next) of the permutation are drawn */
  int64_t size;
  int64_t *keys, *vals;  /* open addressing; key -1 = empty */
  int64_t cap, used;
} random_state;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
  return x;
}

static int64_t *slot(random_state *r, int64_t key) {
  uint64_t m = (uint64_t)r->cap - 1, h = mix((uint64_t)key) & m;
  while (r->keys[h] != -1 && r->keys[h] != key) h = (h + 1) & m;
  return &r->keys[h];
}

static int64_t get(random_state *r, int64_t pos) {
  int64_t *k = slot(r, pos);
  return *k == pos ? r->vals[k - r->keys] : pos;
}

static int grow(random_state *r) {
  int64_t oc = r->cap, *ok = r->keys, *ov = r->vals;
  int64_t nc = oc ? oc * 2 : 1024;
  int64_t *nk = malloc((size_t)nc * sizeof *nk), *nv = malloc((size_t)nc * sizeof *nv);
  if (!nk || !nv) { free(nk); free(nv); return -1; }
  for (int64_t i = 0; i < nc; i++) nk[i] = -1;
  r->keys = nk; r->vals = nv; r->cap = nc;
  for (int64_t i = 0; i < oc; i++)
    if (ok[i] != -1) { int64_t *k = slot(r, ok[i]); *k = ok[i]; r->vals[k - r->keys] = ov[i]; }
  free(ok); free(ov);
  return 0;
}

static int put(random_state *r, int64_t pos, int64_t val) {
  if ((r->used + 1) * 2 > r->cap && grow(r)) return -1;
  int64_t *k = slot(r, pos);
  if (*k != pos) { *k = pos; r->used++; }
  r->vals[k - r->keys] = val;
  return 0;
}

static int random_create(mpt_strategy *s, mpt_error *err) {
  random_state *r = calloc(1, sizeof *r);
  if (!r || grow(r)) { free(r); return mpt_error_set(err, MPT_ERR_NOMEM, "random: out of memory"); }
  r->size = mpt_space_size(s->space);
  s->data = r;
  return 0;
}

static int random_ask(mpt_strategy *s, int n, int64_t *ids) {
  random_state *r = s->data;
  int k = 0;
  while (k < n && r->next < r->size) {
    int64_t i = r->next++;
    int64_t j = i + (int64_t)mpt_rng_below(&s->rng, (uint64_t)(r->size - i));
    int64_t vj = get(r, j), vi = get(r, i);
    if (j != i && put(r, j, vi)) return MPT_ERR_NOMEM;
    /* position i is never read again: nothing to store for it */
    if (!mpt_strategy_is_seen(s, vj)) ids[k++] = vj;
  }
  return k;
}

static void random_destroy(mpt_strategy *s) {
  random_state *r = s->data;
  if (r) { free(r->keys); free(r->vals); free(r); }
  s->data = NULL;
}

static const mpt_option_spec random_options[] = {{0}};

const mpt_strategy_type mpt_strategy_random = {
  .name = "random",
  .summary = "uniform random sampling without replacement",
  .options = random_options,
  .create = random_create,
  .ask = random_ask,
  .tell = NULL,
  .destroy = random_destroy,
};
