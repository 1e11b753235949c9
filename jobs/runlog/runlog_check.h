/* jobs/runlog/runlog_check.h: whether a log belongs to a problem (jobs/runlog/runlog_check.c): the same
 * parameters and values, and configuration ids that name the same configurations. Private to the files of
 * jobs/runlog/. */
#ifndef MPT_RUNLOG_CHECK_H
#define MPT_RUNLOG_CHECK_H
#include "jobs/runlog/runlog_state.h"

/* 0 when the log's parameter tables are the problem's of space; else MPT_ERR_VALUE naming the difference
 * (path: the log's name in the message), or MPT_ERR_NOMEM */
int mpt_rl_check_params(const mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err);
/* 0 when the log's "space_size" setting (when it has one) is the number of valid configurations of space;
 * else MPT_ERR_VALUE: the log belongs to another problem */
int mpt_rl_check_space_size(const mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err);
/* mpt_rl_check_space_size, then that every record's configuration is the one its id names in space; 0 or
 * an error (MPT_ERR_VALUE naming the first record that differs) */
int mpt_rl_check_same_space(mpt_runlog *log, const mpt_space *space, const char *path, mpt_error *err);

#endif
