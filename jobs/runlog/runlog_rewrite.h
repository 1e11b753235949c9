/* jobs/runlog/runlog_rewrite.h: a log written whole as a new file and renamed over the old one
 * (jobs/runlog/runlog_rewrite.c). Private to the files of jobs/runlog/. */
#ifndef MPT_RUNLOG_REWRITE_H
#define MPT_RUNLOG_REWRITE_H
#include <stdint.h>
#include "jobs/runlog/runlog_state.h"

/* Writes the whole log (state in memory + the n_copy valid records of the open file, if any) as a new
 * file log->tmp with room for `capacity` records (at least n_copy and 16), then renames it over log->path
 * and reopens it; 0 or an error (the log unchanged when the new file could not be written) */
int mpt_rl_rewrite(mpt_runlog *log, int64_t n_copy, int64_t capacity, mpt_error *err);

#endif
