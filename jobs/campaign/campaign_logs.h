/* jobs/campaign/campaign_logs.h: a campaign's job logs as rank 0 finds them before anything is opened, private to
 * jobs/campaign/ (campaign_logs.c): whether each job's log exists and whether it stays finished or is reopened
 * (a finished log is reopened when one of the job's (job, class) searches has budget left under the file: its
 * class holds fewer evaluations than the file's budget for it), the classes it logged, and the classes each job
 * names checked against those present and those its log knows. Only reads: no log is written here. */
#ifndef MPT_CAMPAIGN_LOGS_H
#define MPT_CAMPAIGN_LOGS_H
#include <stdint.h>
#include "jobs/campaign/campaign_file.h"

enum { MPT_CAMP_LOG_NEW = 0, MPT_CAMP_LOG_RESUME = 1, MPT_CAMP_LOG_FINISHED = 2 };

typedef struct mpt_camp_log {
  int state;                  /* MPT_CAMP_LOG_NEW, _RESUME or _FINISHED */
  int reopen;                 /* a finished log reopened: a class of the job has budget left */
  char classes[MPT_JOB_MAX_CLASSES][64]; /* the log's class table (its names), n_classes of them */
  int n_classes;
} mpt_camp_log;

/* The budget a job's strategy and log get: the largest of its classes' (-1 when the file gives none: the
 * problem's Budget block). */
int64_t mpt_camp_largest_budget(const mpt_campaign *c, const mpt_campaign_job *j);

/* Rank 0: logs[j] for every job of c (n_jobs entries); a job that stays finished is said on standard output
 * ("job NAME: finished (LOG, N evaluations); not run again"), one reopened too, with its classes that have
 * budget left. */
void mpt_camp_read_logs(const mpt_campaign *c, mpt_camp_log *logs);

/* Rank 0: every class a job that runs (not finished) names, in "classes" or "budget", is among present[0..n) or
 * in its own log's class table (such a class waits for its workers); else the error of
 * mpt_campaign_check_classes, at that job's field. */
int mpt_camp_check_job_classes(const mpt_campaign *c, const mpt_camp_log *logs, const char *const *present, int n,
                               mpt_error *err);

#endif
