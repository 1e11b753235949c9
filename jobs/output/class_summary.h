/* jobs/output/class_summary.h: the end of a run of several device classes, per class: its evaluations, its
 * best configuration, that one's objective (in its unit, a maximized one as measured: as the one-class summary
 * words it, jobs/job_objective.h) and its speed-up (improvement) over the default configuration as measured on
 * the same class; with a confirmation (--confirm), the class's confirmation table, whether it keeps or reorders
 * the finalists, the best confirmed and the speed-up over the class's confirmed default. */
#ifndef MPT_CLASS_SUMMARY_H
#define MPT_CLASS_SUMMARY_H
#include <stdio.h>
#include "coordinator/coordinator.h"
#include "jobs/job_confirm.h"

/* Prints one block per search (its class) of searches[0..n) on f; confirm: the run's confirmation (each class's
 * mpt_job_confirm_of it; NULL: none), objective its objective (the values' units and direction; NULL: the time
 * in ms). */
void mpt_class_summary_print(FILE *f, const mpt_space *space, const mpt_coord_search *searches, int n,
                             mpt_job_confirm *confirm, const mpt_job_objective *objective);

#endif
