/* jobs/runlog/runlog_file.h: the log object and its open HDF5 file (jobs/runlog/runlog_file.c), at the bottom
 * of jobs/runlog/ with the attributes (runlog_attrs.h). Private to the files of jobs/runlog/. */
#ifndef MPT_RUNLOG_FILE_H
#define MPT_RUNLOG_FILE_H
#include <hdf5.h>
#include <stddef.h>
#include "jobs/runlog/runlog_state.h"

#define MPT_RL_SYNC_INTERVAL_S 1.0 /* appends reach stable storage at least this often (and at close) */

/* err set to "run log PATH: HDF5 error while WHAT" (with HDF5's reason when it gave one); MPT_ERR_IO */
int mpt_rl_h5err(mpt_error *err, const char *path, const char *what);
/* the file access properties of every log file (no sieve buffer, no HDF5 file lock); the caller closes it */
hid_t mpt_rl_fapl(void);
/* the open log's data on stable storage (fdatasync of HDF5's sec2 descriptor); 0, or -1 with errno */
int mpt_rl_sync_log(mpt_runlog *log);
/* fsync of a closed file, or with dir != 0 of the directory holding it (a rename made durable); 0 or -1 */
int mpt_rl_sync_path(const char *path, int dir);

/* a log object for path with nothing read (every handle closed), or NULL when out of memory */
mpt_runlog *mpt_rl_new_log(const char *path);
/* closes and frees everything, the writer's lock last */
void mpt_rl_free_log(mpt_runlog *log);
/* closes the file and its datasets (the handles -1) */
void mpt_rl_close_handles(mpt_runlog *log);
/* the HDF5 types and the record size for log->dims parameters */
void mpt_rl_make_types(mpt_runlog *log);
/* opens /evaluations and /count of log->file and reads the capacity; 0 or -1 */
int mpt_rl_open_datasets(mpt_runlog *log);

/* log->buf holds at least n records; 0 or -1 (out of memory) */
int mpt_rl_ensure_buf(mpt_runlog *log, size_t n);
/* reads (write = 0) or writes records [start, start+n) of dataset d from / to log->buf; 0 or -1 */
int mpt_rl_block_io(mpt_runlog *log, hid_t d, hsize_t start, hsize_t n, int write);
/* reads records [start, start+n) of the open log into log->buf; 0 or -1 */
int mpt_rl_read_block(mpt_runlog *log, hsize_t start, hsize_t n);
/* Calls fn for each valid record of the log in append order, in blocks: fn(log, k, ctx) with the k valid
 * records of a block moved to the front of log->buf; a log recovered from its records (log->rec_off) is
 * read where they were found. 0 or -1 (HDF5 error, or fn's). */
int mpt_rl_each_valid_block(mpt_runlog *log, int (*fn)(mpt_runlog *, hsize_t, void *), void *ctx);

#endif
