/* jobs/campaign/campaign_run.h: running a campaign (`mptune campaign FILE`) in one allocation, on every rank of
 * MPI_COMM_WORLD: each job opened as a `tune` of it is (jobs/job.h: problem, space, strategy, evaluator per worker,
 * its log created or resumed), one coordinator run over every (job, device class) search (a worker serves its class
 * in every job and takes another job's work when its own has none left), and each job's summary. */
#ifndef MPT_CAMPAIGN_RUN_H
#define MPT_CAMPAIGN_RUN_H
#include "jobs/campaign/campaign_file.h"

/* what the command line adds to the file */
typedef struct mpt_campaign_run_options {
  const char *class_ranks[MPT_JOB_MAX_CLASSES]; /* --class-ranks CLASS=R1,R2,... (as tune's) */
  int n_class_ranks;
  int no_cross;                 /* --no-cross: no portability evaluations */
  mpt_progress_mode progress;
  int argc;                     /* the command line, logged in each job's log */
  char **argv;
} mpt_campaign_run_options;

/* Runs campaign c (collective). A job whose log is finished is reported and not run again; a job whose log
 * exists is resumed. Returns the exit status (0; 128 + the signal that stopped it; 1 on an error, said on rank
 * 0's standard error). */
int mpt_campaign_run(const mpt_campaign *c, const mpt_campaign_run_options *ro);

#endif
