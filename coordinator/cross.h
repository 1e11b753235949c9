/* coordinator/cross.h: the portability evaluations at the end of a run of several device classes: the best
 * configuration of each class measured once on every other class of its job (on that class's workers, once
 * both searches are finished). They are logged (mpt_obs.cross_from) but no search hears of them and no
 * budget counts them; a resume knows the ones already logged. */
#ifndef MPT_COORD_CROSS_H
#define MPT_COORD_CROSS_H
#include <stdint.h>
#include "coordinator/search.h"

typedef struct mpt_cross {
  int n;                 /* searches */
  int64_t *done;         /* n * n: [x * n + y] the configuration of x measured on y's class (-1: none yet) */
  unsigned char *busy;   /* n * n: in flight now */
} mpt_cross;

int mpt_cross_open(mpt_cross *x, int n);
void mpt_cross_close(mpt_cross *x);
/* The search x whose best configuration is to be measured on search y's class next (finished[i] 1: search i is
 * finished by its budget or space; both must be, in one job; 2: out of its time budget, it takes no part), -1 when
 * none is. */
int mpt_cross_next(const mpt_cross *x, const mpt_coord_search *S, const unsigned char *finished, int y);
/* 1 while a portability evaluation is left among searches that all have finished (finished as above) */
int mpt_cross_pending(const mpt_cross *x, const mpt_coord_search *S, const unsigned char *finished);
/* A logged portability evaluation o of job (o->cross_from: 1 + the device class of the search whose best it
 * measures) noted as done. */
void mpt_cross_logged(mpt_cross *x, const mpt_coord_search *S, int32_t job, const mpt_obs *o);

#endif
