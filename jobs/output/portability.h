/* jobs/output/portability.h: the portability table at the end of a run of several device classes: the
 * best configuration of each class (rows) measured on every class (columns), each cell the time in ms and
 * its ratio to that column's class's own best; taken from the run log's portability evaluations (records
 * with cross_from, coordinator/cross.h) of each class's final best configuration. */
#ifndef MPT_PORTABILITY_H
#define MPT_PORTABILITY_H
#include <stdio.h>
#include "coordinator/coordinator.h"
#include "jobs/runlog/runlog.h"

/* Prints the table of searches[0..n) (one per class) from log on f; 0 or an error reading the log. */
int mpt_portability_print(FILE *f, mpt_runlog *log, const mpt_coord_search *searches, int n, mpt_error *err);

#endif
