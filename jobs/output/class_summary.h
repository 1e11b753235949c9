/* jobs/output/class_summary.h: the end of a run of several device classes, per class: its evaluations, its
 * best configuration, that one's time and its speed-up over the default configuration as measured on the
 * same class. */
#ifndef MPT_CLASS_SUMMARY_H
#define MPT_CLASS_SUMMARY_H
#include <stdio.h>
#include "coordinator/coordinator.h"

/* Prints one block per search (its class) of searches[0..n) on f. */
void mpt_class_summary_print(FILE *f, const mpt_space *space, const mpt_coord_search *searches, int n);

#endif
