/* evaluators/ahead_cache.c: the keys of compiles (two FNV-1a hashes) and the run's cache of compile artifacts,
 * first in, first out, the artifact taken last never dropped (a run may be using it). Used by evaluators/ahead.c
 * only; the interface is in evaluators/ahead_cache.h. */
#include "evaluators/ahead_cache.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FNV_PRIME 0x100000001b3ULL

void mpt_ahead_key_init(mpt_ahead_key *k) {
  k->h[0] = 0xcbf29ce484222325ULL; /* FNV-1a's offset basis */
  k->h[1] = 0x84222325cbf29ce4ULL; /* another seed: a second, independent hash */
}

void mpt_ahead_key_add(mpt_ahead_key *k, const void *bytes, size_t n) {
  const unsigned char *p = bytes;
  for (size_t i = 0; i <= n; i++) {
    unsigned char c = i < n ? p[i] : 0xff; /* the separator */
    k->h[0] = (k->h[0] ^ c) * FNV_PRIME;
    k->h[1] = (k->h[1] ^ (unsigned char)(c + 0x5b)) * FNV_PRIME;
  }
}

void mpt_ahead_key_str(mpt_ahead_key *k, const char *s) { mpt_ahead_key_add(k, s ? s : "", s ? strlen(s) : 0); }

void mpt_ahead_key_hex(const mpt_ahead_key *k, char *out) {
  snprintf(out, 33, "%016llx%016llx", (unsigned long long)k->h[0], (unsigned long long)k->h[1]);
}

static int same_key(const mpt_ahead_key *a, const mpt_ahead_key *b) { return a->h[0] == b->h[0] && a->h[1] == b->h[1]; }

int mpt_ahead_cache_init(mpt_ahead_cache *c, int max) {
  memset(c, 0, sizeof *c);
  c->max = max > 1 ? max : 2;
  c->e = calloc((size_t)c->max, sizeof *c->e);
  c->pinned = -1;
  return c->e ? 0 : -1;
}

int mpt_ahead_cache_find(const mpt_ahead_cache *c, const mpt_ahead_key *key) {
  for (int i = c->n - 1; i >= 0; i--)
    if (same_key(&c->e[i].key, key)) return i;
  return -1;
}

static void drop(mpt_ahead_cache *c, int i, mpt_ahead_forget_fn forget, void *ctx) {
  if (forget) forget(ctx, c->e[i].blob, c->e[i].len);
  free(c->e[i].blob);
  memmove(&c->e[i], &c->e[i + 1], (size_t)(c->n - i - 1) * sizeof *c->e);
  c->n--;
  if (c->pinned == i) c->pinned = -1;
  else if (c->pinned > i) c->pinned--;
}

void mpt_ahead_cache_put(mpt_ahead_cache *c, const mpt_ahead_entry *e, mpt_ahead_forget_fn forget, void *ctx) {
  if (c->n == c->max) drop(c, c->pinned == 0 ? 1 : 0, forget, ctx); /* the oldest one not in use */
  c->e[c->n++] = *e;
}

void mpt_ahead_cache_pin(mpt_ahead_cache *c, int i) { c->pinned = i; }

void mpt_ahead_cache_clear(mpt_ahead_cache *c, mpt_ahead_forget_fn forget, void *ctx) {
  while (c->n > 0) drop(c, c->n - 1, forget, ctx);
  free(c->e);
  c->e = NULL;
}
