/* jobs/runlog/runlog_lock.h: one writer per run log (jobs/runlog/runlog.h). Private to the files of jobs/runlog/. */
#ifndef MPT_RUNLOG_LOCK_H
#define MPT_RUNLOG_LOCK_H
#include "spaces/sys/error.h"

/* Takes the writer's lock of the log at path: an open-file-description lock on PATH.lock, which says who
 * holds it (pid, host, since when). A log is rewritten by renaming a new file over it, so the lock can
 * not be on the log itself. Returns 0 with *fd the lock's descriptor, or -1 when the directory or file
 * system offers no lock (the log is then written unlocked, as before); or MPT_ERR_STATE with a message
 * naming the holder when another process (or another open log of this one) writes the log. The kernel
 * drops the lock when its holder dies. */
int mpt_runlog_lock(const char *path, int *fd, mpt_error *err);
/* Releases a lock taken by mpt_runlog_lock (fd < 0: nothing) and removes PATH.lock. */
void mpt_runlog_unlock(const char *path, int fd);

#endif
