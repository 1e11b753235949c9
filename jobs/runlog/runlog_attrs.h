/* jobs/runlog/runlog_attrs.h: a run log's root attributes as text (jobs/runlog/runlog_attrs.c), at the
 * bottom of jobs/runlog/ with the file (runlog_file.h). Private to the files of jobs/runlog/. */
#ifndef MPT_RUNLOG_ATTRS_H
#define MPT_RUNLOG_ATTRS_H
#include <hdf5.h>
#include <stddef.h>
#include "jobs/runlog/runlog_state.h"

#define MPT_RL_FORMAT_NAME "mptune-runlog"
#define MPT_RL_FORMAT_VERSION 4 /* 4: the power fields, the confirmation round and the device class in the records;
                                   3: fixed-length strings, HDF5 1.8 object format; 2 (variable-length strings) and
                                   3 are read too */
#define MPT_RL_FORMAT_OLDEST 2
/* entries of the metadata copy (/metadata_copy): the attributes, then the CRC of /parameters (mpt_rl_params_crc) */
#define MPT_RL_COPY_KEYS (MPT_RL_N_ATTRS + 1)

/* sets root attribute key (a copy of value, "" for NULL); -1 for an unknown key or no memory */
int mpt_rl_set_attr(mpt_runlog *log, const char *key, const char *value);
/* the same with the value formatted as printf does */
int mpt_rl_set_attr_num(mpt_runlog *log, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* root attribute key as text, NULL when absent or unknown (owned by log) */
const char *mpt_rl_get_attr(const mpt_runlog *log, const char *key);
/* the root attributes' names, in table order (MPT_RL_N_ATTRS) */
const char *const *mpt_rl_attr_keys(void);
/* the keys of the metadata copy's entries: the root attributes' and, in the copy only, "parameter_tables_crc" */
void mpt_rl_copy_keys(const char *keys[MPT_RL_COPY_KEYS]);
/* 1 when attribute i (table order) is stored as text (a number read back comes reformatted) */
int mpt_rl_attr_is_text(int i);
/* every attribute the log has, written to file f with its HDF5 type; 0, or nonzero when a write failed */
int mpt_rl_attrs_write(const mpt_runlog *log, hid_t f);
/* every attribute of log->file read as text into log->attr (NULL where absent) */
void mpt_rl_attrs_read(mpt_runlog *log);
/* the settings of the run (mpt_run_meta) as attributes. missing_only: 0 all of them, 1 those the log lacks,
 * 2 those it lacks and the settings a resume may replace; 0, or nonzero when out of memory */
int mpt_rl_set_run_attrs(mpt_runlog *log, const mpt_run_meta *meta, int missing_only);
/* what every log says of itself and of its problem (problem_path/problem_text NULL: the problem's own); 0 or nonzero */
int mpt_rl_set_log_attrs(mpt_runlog *log, const mpt_space *space, const char *problem_path, const char *problem_text);
/* the finished, stop_reason and finish_time attributes: finished for reason at when, or (reason NULL) not
 * finished; 0, or nonzero when out of memory */
int mpt_rl_set_finished(mpt_runlog *log, const char *reason, const char *when);
/* t (Unix seconds) as the logs write times: "2026-11-22T10:00:00.000000Z" */
void mpt_rl_iso_time(double t, char *buf, size_t cap);

#endif
