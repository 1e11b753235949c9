/* evaluators/ahead_cache.h: the run's cache of compile artifacts by key (evaluators/ahead.h), first in, first out;
 * the entry taken last is pinned (never dropped while a run may use it). Internal to evaluators/ahead.c. */
#ifndef MPT_AHEAD_CACHE_H
#define MPT_AHEAD_CACHE_H
#include "evaluators/ahead.h"

typedef struct mpt_ahead_entry {
  mpt_ahead_key key;
  char *blob;          /* owned by the cache */
  size_t len;
  double compile_ms;
  int64_t for_id;      /* the configuration it was compiled for */
  int taken;           /* it has been taken once */
} mpt_ahead_entry;

typedef struct mpt_ahead_cache {
  mpt_ahead_entry *e;  /* oldest first */
  int n, max;
  int pinned;          /* -1: none */
} mpt_ahead_cache;

typedef void (*mpt_ahead_forget_fn)(void *ctx, const char *blob, size_t len);

int mpt_ahead_cache_init(mpt_ahead_cache *c, int max);
/* the index of key's entry, -1 when none */
int mpt_ahead_cache_find(const mpt_ahead_cache *c, const mpt_ahead_key *key);
/* adds e (the cache owns its blob); when full, the oldest entry not pinned is dropped (forget called first) */
void mpt_ahead_cache_put(mpt_ahead_cache *c, const mpt_ahead_entry *e, mpt_ahead_forget_fn forget, void *ctx);
void mpt_ahead_cache_pin(mpt_ahead_cache *c, int i);
/* drops every entry (forget for each) and frees the cache */
void mpt_ahead_cache_clear(mpt_ahead_cache *c, mpt_ahead_forget_fn forget, void *ctx);

#endif
