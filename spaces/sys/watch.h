/* spaces/sys/watch.h: how the caller of a long piece of work (a space build, an evaluation, an ask)
 * watches it: a {function, context} pair handed over where the work is opened or started, never a
 * process-wide hook. The work calls it every so often; the watcher draws progress and says whether to
 * stop. */
#ifndef MPT_WATCH_H
#define MPT_WATCH_H

typedef struct mpt_watch {
  /* doing: what the work is at (may be NULL); done: the fraction done in [0, 1], or -1 when unknown.
   * Returns nonzero when the work is to stop (the run is stopping). */
  int (*fn)(void *ctx, const char *doing, double done);
  void *ctx;
} mpt_watch;

/* calls w (0 when w or its function is NULL) */
static inline int mpt_watch_call(const mpt_watch *w, const char *doing, double done) {
  return w && w->fn ? w->fn(w->ctx, doing, done) : 0;
}

#endif
