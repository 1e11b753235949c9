/* jobs/job_t1.h: what a T1 problem's Search and Budget blocks give a tune job where the command line does
 * not (jobs/job.c): the strategy and its options, the evaluation and the time budget. Private to jobs/. */
#ifndef MPT_JOB_T1_H
#define MPT_JOB_T1_H
#include <stddef.h>
#include <stdint.h>
#include "jobs/job.h"
#include "spaces/t1.h"

/* Whether the run has a budget: --budget, --time, or the problem's Budget block */
int mpt_job_t1_has_budget(const mpt_job_options *o, const mpt_problem *p);

/* Without --strategy: the strategy Search.Name names (ours or Kernel Tuner's name; o->strategy becomes ours)
 * and its Attributes as options, put before the --option given (the last of a key wins: the command line).
 * note (cap bytes): what came from the file, for the run's first lines ("" when nothing did). A name no
 * strategy has, an Attribute the strategy does not take or cannot take (an object): "FILE:LINE:COL: FIELD:
 * why" with the known names or options. */
int mpt_job_t1_search(mpt_job_options *o, const mpt_problem *p, char *note, size_t cap, mpt_error *err);

/* The budget of the problem's Budget block where the command line gives none of its kind: ConfigurationCount
 * or ConfigurationFraction (of the space_size valid configurations, rounded up) without --budget, TuningDuration
 * (seconds) without --time. note (cap bytes): what came from the file ("" when nothing did). */
void mpt_job_t1_budget(mpt_job_options *o, const mpt_problem *p, int64_t space_size, char *note, size_t cap);

#endif
