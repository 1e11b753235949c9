/* jobs/campaign/campaign_job.h: one entry of a campaign file's "jobs" (campaign_job.c), private to
 * jobs/campaign/. */
#ifndef MPT_CAMPAIGN_JOB_H
#define MPT_CAMPAIGN_JOB_H
#include <cjson/cJSON.h>
#include "jobs/campaign/campaign_file.h"

/* Reads jobs[index] (the object o) into c->jobs[index], after the campaign's shared settings are read (its
 * defaults come from them) and jobs[0..index-1] (names must differ). 0, or <0 with err at the field. */
int camp_read_job(mpt_campaign *c, int index, const cJSON *o, mpt_error *err);

#endif
