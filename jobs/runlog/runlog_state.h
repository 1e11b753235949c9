/* jobs/runlog/runlog_state.h: the run log's in-memory state (struct mpt_runlog) and what jobs/runlog/runlog.c and
 * jobs/runlog/runlog_recover.c share of it. Private to those two files; the contract is jobs/runlog/runlog.h. */
#ifndef MPT_RUNLOG_STATE_H
#define MPT_RUNLOG_STATE_H
#include <hdf5.h>
#include <stdint.h>
#include "jobs/runlog/runlog.h"
#include "jobs/runlog/runlog_params.h"
#include "jobs/runlog/runlog_records.h"

#define MPT_RL_N_ATTRS 22       /* root attributes (their table: ATTRS in jobs/runlog/runlog.c) */
#define MPT_RL_COPY_BLOCK 1024  /* records read or written at a time */

struct mpt_runlog {
  char *path, *tmp;
  hid_t file, evals, countd;
  hid_t rec_type, dev_type, ses_type; /* memory = file types */
  int readonly, finished;
  int extended;            /* finished, reopened by mpt_runlog_open_to to go on to a larger budget */
  int session_pending;     /* opened by mpt_runlog_open_checked: nothing written until begin_session */
  double synced_at;        /* monotonic time of the last fdatasync of the appends (jobs/runlog/runlog.c) */
  int dims;
  size_t rec_size;
  int64_t count, capacity;
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

/* a log object for path with nothing read (every handle closed), or NULL when out of memory */
mpt_runlog *mpt_rl_new_log(const char *path);
/* closes and frees everything, the writer's lock last */
void mpt_rl_free_log(mpt_runlog *log);
/* the HDF5 types and the record size for log->dims parameters */
void mpt_rl_make_types(mpt_runlog *log);
/* sets root attribute key (a copy of value, "" for NULL); -1 for an unknown key or no memory */
int mpt_rl_set_attr(mpt_runlog *log, const char *key, const char *value);
/* the finished, stop_reason and finish_time attributes: finished for reason at when, or (reason NULL) not
 * finished; 0, or nonzero when out of memory */
int mpt_rl_set_finished(mpt_runlog *log, const char *reason, const char *when);
/* what every log says of itself and of its problem (problem_path/problem_text NULL: the problem's own); 0 or nonzero */
int mpt_rl_set_log_attrs(mpt_runlog *log, const mpt_space *space, const char *problem_path, const char *problem_text);
/* 0 when the log's "space_size" setting (when it has one) is the number of valid configurations of space;
 * else MPT_ERR_VALUE: the log belongs to another problem (jobs/runlog/runlog.c) */
int mpt_rl_check_space_size(mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err);
/* the root attributes' names, in table order (MPT_RL_N_ATTRS) */
const char *const *mpt_rl_attr_keys(void);
/* opens path and reads the state; *unreadable as documented at its definition (jobs/runlog/runlog.c) */
int mpt_rl_load(const char *path, int readonly, mpt_runlog **out, int *unreadable, mpt_error *err);

/* jobs/runlog/runlog_recover.c: */
/* keeps the damaged or recovered file beside the log before a resume rewrites it; 0 or an error */
int mpt_rl_keep_damaged_copy(mpt_runlog *log, mpt_error *err);
/* a log from the records (and metadata copy) of path alone, after mpt_rl_load failed with err */
int mpt_rl_recover_records(const char *path, const mpt_space *space, int unreadable, mpt_runlog **out, mpt_error *err);
/* each valid block of a recovered log (log->rec_off set), read where its records lie */
int mpt_rl_each_recovered_block(mpt_runlog *log, int (*fn)(mpt_runlog *, hsize_t, void *), void *ctx);
#endif
