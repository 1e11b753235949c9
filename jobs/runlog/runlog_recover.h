/* jobs/runlog/runlog_recover.h: a log HDF5 can not read, recovered from its records, and the copy of a
 * damaged or recovered log kept before a resume rewrites it (jobs/runlog/runlog_recover.c). Private to the
 * files of jobs/runlog/. */
#ifndef MPT_RUNLOG_RECOVER_H
#define MPT_RUNLOG_RECOVER_H
#include "jobs/runlog/runlog_state.h"

/* keeps the damaged or recovered file beside the log before a resume rewrites it; 0 or an error */
int mpt_rl_keep_damaged_copy(mpt_runlog *log, mpt_error *err);
/* a log from the records (and metadata copy) of path alone, after mpt_rl_load failed with err (unreadable
 * as mpt_rl_load set it); read-only, its records read where they were found (log->rec_off) */
int mpt_rl_recover_records(const char *path, const mpt_space *space, int unreadable, mpt_runlog **out, mpt_error *err);

#endif
