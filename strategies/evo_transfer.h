/* strategies/evo_transfer.h: the evolutionary strategies' transfer from related observations
 * (strategies/evo_transfer.c): other device classes of the run and --prior files seed initial and restart
 * populations and the start points of trajectories with their elites. Private to strategies/. */
#ifndef MPT_EVO_TRANSFER_H
#define MPT_EVO_TRANSFER_H
#include <stdint.h>
#include "strategies/evo_common.h"

/* the option row of every strategy built on evo (read when the first related observation is told) */
#define EVO_TRANSFER_OPTION \
  {"transfer", MPT_OPT_DOUBLE, "0.5", "this share of every initial or restart population (and every start point of a " \
   "trajectory) is the best configurations of the related observations (other device classes of the run, --prior " \
   "files; by their mean standardized log-time) that this search has not proposed (0: related observations are " \
   "ignored)", NULL, 0, 1}

/* ids[0..n) (a population just drawn, distinct): the first round(transfer * n) replaced by the best related
 * configurations neither proposed by this search nor among ids, as far as there are such */
void evo_transfer_seed(evo *e, int64_t *ids, int64_t n);
/* a start point: the best related configuration not proposed by this search (with transfer > 0), else
 * evo_random_unseen; -1 when none is left */
int64_t evo_transfer_start(evo *e);

#endif
