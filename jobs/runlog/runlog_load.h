/* jobs/runlog/runlog_load.h: an existing log opened and read into the log object (jobs/runlog/runlog_load.c).
 * Private to the files of jobs/runlog/. */
#ifndef MPT_RUNLOG_LOAD_H
#define MPT_RUNLOG_LOAD_H
#include "jobs/runlog/runlog_state.h"

/* Opens path (readonly or read-write) and reads the state. *unreadable: set when it failed on the file's
 * contents, where its records may still be recovered (mpt_runlog_recover): 2 when HDF5 failed reading it
 * (damaged, cut short), 1 when it is not HDF5 or not a log; 0 for a missing or inaccessible file or a log
 * of another format version. 0 or an error */
int mpt_rl_load(const char *path, int readonly, mpt_runlog **out, int *unreadable, mpt_error *err);

#endif
