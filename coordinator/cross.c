/* coordinator/cross.c: which portability evaluation comes next (coordinator/cross.h). */
#include "coordinator/cross.h"
#include <stdlib.h>
#include <string.h>

int mpt_cross_open(mpt_cross *x, int n) {
  x->n = n;
  x->done = malloc(sizeof *x->done * (size_t)(n * n));
  x->busy = calloc((size_t)(n * n), 1);
  if (!x->done || !x->busy) {
    mpt_cross_close(x);
    return -1;
  }
  for (int i = 0; i < n * n; i++) x->done[i] = -1;
  return 0;
}

void mpt_cross_close(mpt_cross *x) {
  free(x->done);
  free(x->busy);
  x->done = NULL;
  x->busy = NULL;
}

/* whether x's best is still to be measured on y (and is not in flight) */
static int wanted(const mpt_cross *x, const mpt_coord_search *S, const unsigned char *finished, int from, int y) {
  if (from == y || finished[from] != 1 || finished[y] != 1 || S[from].job != S[y].job || S[from].res.best_id < 0) return 0;
  int at = from * x->n + y;
  return !x->busy[at] && x->done[at] != S[from].res.best_id;
}

int mpt_cross_next(const mpt_cross *x, const mpt_coord_search *S, const unsigned char *finished, int y) {
  if (S[y].n_workers == 0) return -1;
  for (int from = 0; from < x->n; from++)
    if (wanted(x, S, finished, from, y)) return from;
  return -1;
}

int mpt_cross_pending(const mpt_cross *x, const mpt_coord_search *S, const unsigned char *finished) {
  for (int y = 0; y < x->n; y++)
    for (int from = 0; from < x->n; from++)
      if (S[y].n_workers > 0 && (wanted(x, S, finished, from, y) || x->busy[from * x->n + y])) return 1;
  return 0;
}

void mpt_cross_logged(mpt_cross *x, const mpt_coord_search *S, int32_t job, const mpt_obs *o) {
  if (o->cross_from <= 0 || o->status == MPT_STATUS_CANCELLED) return;
  for (int y = 0; y < x->n; y++)
    for (int from = 0; from < x->n; from++)
      if (S[y].device_class == o->device_class && S[from].device_class == o->cross_from - 1 && S[y].job == job &&
          S[from].job == job)
        x->done[from * x->n + y] = o->id;
}
