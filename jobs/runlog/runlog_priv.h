/* jobs/runlog/runlog_priv.h: what the T4 export (jobs/output/export_t4.c) and the summary of a log
 * (jobs/output/summary.c) need from a run log beyond jobs/runlog/runlog.h: the stored parameter tables (the
 * value indices of each record come with mpt_runlog_each). Private to the files of jobs/runlog/ and those two. */
#ifndef MPT_RUNLOG_PRIV_H
#define MPT_RUNLOG_PRIV_H
#include <stdint.h>
#include "jobs/runlog/runlog.h"

typedef enum mpt_runlog_vkind { MPT_RL_INT, MPT_RL_FLOAT, MPT_RL_BOOL, MPT_RL_STRING } mpt_runlog_vkind;

int mpt_runlog_n_params(const mpt_runlog *log);
const char *mpt_runlog_param_name(const mpt_runlog *log, int p);
int mpt_runlog_param_n_values(const mpt_runlog *log, int p);
mpt_runlog_vkind mpt_runlog_param_kind(const mpt_runlog *log, int p);
/* value i of parameter p: numeric (int/float/bool) or string (string kind) */
double mpt_runlog_param_number(const mpt_runlog *log, int p, int i);
/* value i of an int parameter p exactly (*v): 0, or -1 when p is of another kind */
int mpt_runlog_param_int(const mpt_runlog *log, int p, int i, int64_t *v);
const char *mpt_runlog_param_string(const mpt_runlog *log, int p, int i);

#endif
