/* jobs/campaign/campaign_plan.h: the plan of a campaign (`mptune campaign FILE --check`): every job's problem
 * read and its space built, what each job would run (strategy, options, classes, budget per class, seed, log),
 * nothing run and nothing written. */
#ifndef MPT_CAMPAIGN_PLAN_H
#define MPT_CAMPAIGN_PLAN_H
#include <stdio.h>
#include "jobs/campaign/campaign_file.h"

/* Checks c against the n device classes present (none: not checked) and each job's problem (a T1 error
 * names its file, line and column; a job without any budget is refused at its place), and prints the plan to
 * f. 0, or <0 with err (the jobs before the faulty one printed). */
int mpt_campaign_plan(const mpt_campaign *c, const char *const *classes, int n, FILE *f, mpt_error *err);

#endif
