/* jobs/runlog/runlog_state.h: the run log's in-memory state (struct mpt_runlog), shared by the files of
 * jobs/runlog/ (each declares its functions in its own header; the layers: docs/RUNLOG.md). Private to
 * jobs/runlog/; the contract is jobs/runlog/runlog.h. */
#ifndef MPT_RUNLOG_STATE_H
#define MPT_RUNLOG_STATE_H
#include <hdf5.h>
#include <stdint.h>
#include "jobs/runlog/runlog.h"
#include "jobs/runlog/runlog_params.h"
#include "jobs/runlog/runlog_records.h"

#define MPT_RL_N_ATTRS 27       /* root attributes (their table: ATTRS in jobs/runlog/runlog_attrs.c) */
#define MPT_RL_COPY_BLOCK 1024  /* records read or written at a time */

struct mpt_runlog {
  char *path, *tmp;
  hid_t file, evals, countd;
  hid_t rec_type, dev_type, ses_type; /* memory = file types */
  int readonly, finished;
  int extended;            /* finished, reopened by mpt_runlog_open_to to go on to a larger budget */
  int session_pending;     /* opened by mpt_runlog_open_checked: nothing written until begin_session */
  double synced_at;        /* monotonic time of the last fdatasync of the appends (jobs/runlog/runlog_file.c) */
  int dims;
  size_t rec_size;
  int file_format;         /* the format of the file open now (its records read as the current one's) */
  int64_t count, capacity;
  int64_t unmeasured;      /* of the count records read at open, those cancelled or missing: no measurement, not
                              counted against a budget (0 for a log recovered from its records) */
  int64_t class_most;      /* of the measurements read at open, those of the device class that has most (portability
                              evaluations left out): what a class's budget is compared with */
  int64_t end;             /* records [0, end) of the file hold the count valid ones: end > count when some are damaged */
  int64_t damaged;         /* invalid records before the last valid one (storage damage, not a torn tail) */
  char *damaged_copy;      /* where mpt_runlog_open kept the file with damaged records, or NULL */
  int32_t session;
  const mpt_space *space;
  mpt_rl_param *params;
  char *attr[MPT_RL_N_ATTRS];     /* root attributes as text */
  mpt_rl_dev *devs;
  int n_devs;
  mpt_rl_session *sess;
  int n_sess;
  unsigned char *confirms; /* /confirmations: the re-measurements of the finalists (--confirm), n_confirms records
                              of rec_size bytes (jobs/runlog/runlog_confirm.c) */
  int n_confirms;
  unsigned char *buf;      /* scratch records */
  size_t buf_cap;
  /* a log recovered from its records alone (mpt_runlog_recover): HDF5's reason, the file and where the
   * records lie in it (until mpt_runlog_open has rewritten it) */
  char *recovered;
  int meta_recovered;      /* its settings and tables came from its metadata copy (jobs/runlog/runlog_meta.c) */
  int rec_fd;
  int64_t *rec_off;
  int lock_fd;             /* the writer's lock (PATH.lock, jobs/runlog/runlog_lock.c), -1 for a reader */
};

#endif
