/* evaluators/ahead.h: compile-ahead and the run's compile cache. An evaluator whose work splits into a compile
 * (CPU cores only) and a run on its device hands the compile to this pipeline: each compile runs in a forked
 * child of the worker (its own process group, killed with the worker), at most `jobs` at a time, started as soon
 * as the worker knows the configuration is coming (mpt_ahead_prepare), so that upcoming candidates compile while
 * the device times the current one. Results are kept for the run by the key of the compile (source, defines,
 * options, architecture: the same key never compiles twice). The pipeline moves opaque artifacts (bytes): what
 * one holds (a cubin, the path of a shared object) is the evaluator's business. */
#ifndef MPT_AHEAD_H
#define MPT_AHEAD_H
#include <stddef.h>
#include <stdint.h>
#include "spaces/sys/error.h"
#include "spaces/sys/watch.h"

/* The identity of a compile: two 64-bit FNV-1a hashes with different seeds over everything it depends on. */
typedef struct mpt_ahead_key {
  uint64_t h[2];
} mpt_ahead_key;
void mpt_ahead_key_init(mpt_ahead_key *k);
/* adds n bytes and a separator (so "ab","c" and "a","bc" differ) */
void mpt_ahead_key_add(mpt_ahead_key *k, const void *bytes, size_t n);
void mpt_ahead_key_str(mpt_ahead_key *k, const char *s);
/* the key as 32 hex digits (out: at least 33 bytes) */
void mpt_ahead_key_hex(const mpt_ahead_key *k, char *out);

/* What an evaluator supplies; ctx is its own (handed back to every call). */
typedef struct mpt_ahead_ops {
  /* the key of configuration id's compile; <0 when it has none (its launch cannot be computed): not compiled ahead */
  int (*key)(void *ctx, int64_t id, mpt_ahead_key *key);
  /* runs in the forked child: compiles id, its artifact (malloc'd) in *blob, *len; <0 when out of memory */
  int (*compile)(void *ctx, int64_t id, const mpt_ahead_key *key, char **blob, size_t *len);
  /* the longest a compile may take before it is killed (seconds) */
  double (*timeout)(void *ctx);
  /* a cached artifact is dropped at the end of the run (the cpu evaluator removes its shared object); may be NULL */
  void (*forget)(void *ctx, const char *blob, size_t len);
  /* whether an artifact may be kept for the run (not one of a compile that was cancelled or could not run: a
   * second request compiles again); NULL: every one */
  int (*cacheable)(void *ctx, const char *blob, size_t len);
} mpt_ahead_ops;

/* In the compile process: 1 once the worker asked it to stop (SIGTERM: the run stops, or the configuration was
 * dropped). A compile function that runs a compiler watches this, kills the compiler and cleans up; one that
 * does not is killed a few seconds later. */
int mpt_ahead_cancelled(void);

typedef enum mpt_ahead_outcome {
  MPT_AHEAD_DONE = 0,  /* the artifact is there (a failed compile is the artifact's business) */
  MPT_AHEAD_CRASHED,   /* the compile process died (reason says how) */
  MPT_AHEAD_TIMEOUT,   /* killed after ops->timeout */
  MPT_AHEAD_CANCELLED, /* killed when the watch said stop */
} mpt_ahead_outcome;

typedef struct mpt_ahead_result {
  int outcome;         /* mpt_ahead_outcome */
  char *blob;          /* DONE: the artifact (malloc'd copy; the caller frees it) */
  size_t len;
  double compile_ms;   /* wall time of the compile process (the original one for a cache hit) */
  double waited_ms;    /* how long mpt_ahead_take waited for it (0: compiled ahead, or cached) */
  int cached;          /* compiled earlier in the run for another request of the same key */
  char reason[256];
} mpt_ahead_result;

typedef struct mpt_ahead_stats {
  int64_t compiles;    /* compile processes started */
  int64_t cache_hits;  /* takes answered from the cache */
  int64_t ahead;       /* takes whose compile had finished before they were asked for */
  double waited_ms;    /* total time takes waited for a compile */
} mpt_ahead_stats;

typedef struct mpt_ahead mpt_ahead;

/* jobs: compiles at once (>= 1); cache_max: artifacts kept (oldest dropped first). NULL when out of memory. */
mpt_ahead *mpt_ahead_create(const mpt_ahead_ops *ops, void *ctx, int jobs, int cache_max);
/* kills what still compiles, drops the cache (ops->forget for each artifact) */
void mpt_ahead_destroy(mpt_ahead *a);
/* id will be evaluated soon: its compile starts when a job is free (nothing when it is cached or known) */
void mpt_ahead_prepare(mpt_ahead *a, int64_t id);
/* id will not be evaluated: its compile is killed, or its result dropped (a cached artifact stays) */
void mpt_ahead_discard(mpt_ahead *a, int64_t id);
/* reads what the compiles sent, reaps finished ones and starts queued ones; never waits */
void mpt_ahead_pump(mpt_ahead *a);
/* the artifact of id: from the cache, a compile started ahead, or one started now; waits (asking watch at least
 * every 100 ms: a stop kills the compile, MPT_AHEAD_CANCELLED). 0, or <0 (out of memory, fork failed). */
int mpt_ahead_take(mpt_ahead *a, int64_t id, const mpt_watch *watch, mpt_ahead_result *res, mpt_error *err);
/* stops (SIGSTOP) or resumes (SIGCONT) every running compile: the cpu evaluator times on the cores they use */
void mpt_ahead_pause(mpt_ahead *a, int paused);
void mpt_ahead_get_stats(const mpt_ahead *a, mpt_ahead_stats *out);

#endif
