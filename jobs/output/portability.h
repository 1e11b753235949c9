/* jobs/output/portability.h: the portability table at the end of a run of several device classes: the
 * best configuration of each class (rows) measured on every class (columns), each cell the objective in its
 * unit (a maximized one as measured) and how many times worse than that column's class's own best it is (for
 * the time: its ratio to that best, "0.906 ms (1.25x)"; for a rate to maximize: the best's over it); taken from the run log's portability evaluations (records
 * with cross_from, coordinator/cross.h) of each class's final best configuration. */
#ifndef MPT_PORTABILITY_H
#define MPT_PORTABILITY_H
#include <stdio.h>
#include "coordinator/coordinator.h"
#include "jobs/job_objective.h"
#include "jobs/runlog/runlog.h"

/* Prints the table of searches[0..n) (one per class) from log on f, in the unit and direction of objective's first
 * term (NULL: the time in ms); 0 or an error reading the log. */
int mpt_portability_print(FILE *f, mpt_runlog *log, const mpt_coord_search *searches, int n,
                          const mpt_job_objective *objective, mpt_error *err);

#endif
