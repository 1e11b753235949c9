/* evaluators/replay/replay.h: a brute-forced space loaded into memory (T4 results or Kernel Tuner cache
 * files, plain or gzip-compressed), mapped onto the config ids of a space. Used by the `sim`
 * evaluator and by `mptune bench`. */
#ifndef MPT_REPLAY_H
#define MPT_REPLAY_H
#include <stddef.h>
#include <stdint.h>
#include "spaces/space.h"
#include "spaces/sys/obs.h"
#include "spaces/sys/error.h"

typedef struct mpt_replay mpt_replay;

/* Loads `path` and matches its configurations to `space` by parameter values. Errors: missing or
 * unreadable file, malformed JSON ("FILE:LINE:COL: malformed JSON ...", text after the document
 * included; a Kernel Tuner cache that ends before its closing braces is read up to its last complete
 * record instead: mpt_replay_in_progress), unknown format, parameters that do not match the problem's (named). Every valid config of
 * the space should be present; use mpt_replay_get to find out which are not. */
int mpt_replay_load(const char *path, const mpt_space *space, mpt_replay **out, mpt_error *err);
void mpt_replay_free(mpt_replay *r);
/* The recorded observation for id (status, objective, times, compile/benchmark ms) written to *buf
 * (records are stored compactly: replay_store.h), and buf; NULL when the file has no record of that
 * configuration. */
const mpt_obs *mpt_replay_get(const mpt_replay *r, int64_t id, mpt_obs *buf);
/* The recorded observation for id in *out, or, when the file has none, a failed evaluation
 * (runtime_error, "no record in the replay file"): how bench scores a gap in a brute-forced file. */
void mpt_replay_obs(const mpt_replay *r, int64_t id, mpt_obs *out);
/* 1 and *objective when id has a record that is a valid measurement, else 0 (no copy) */
int mpt_replay_valid(const mpt_replay *r, int64_t id, double *objective);
/* number of config ids of the space with a record */
int64_t mpt_replay_count(const mpt_replay *r);
/* best (lowest) valid objective among all records, NAN if none */
double mpt_replay_optimum(const mpt_replay *r);
/* device the file was measured on: Kernel Tuner's device_name, else the file's base name */
const char *mpt_replay_device_name(const mpt_replay *r);
/* "FILE: the cache ends before its closing braces (a Kernel Tuner run still in progress?): read N complete
 * records, the rest ignored" for a Kernel Tuner cache still being written, read up to its last complete
 * record (a file cut anywhere else is malformed: mpt_replay_load refuses it); "" otherwise */
const char *mpt_replay_in_progress(const mpt_replay *r);
/* records of the file whose configuration is not a valid configuration of the space (skipped) */
int64_t mpt_replay_unmatched(const mpt_replay *r);
/* 1 and a one-line description in msg when the file does not cover the space exactly (valid
 * configurations without a record, records that are not valid configurations, records marked valid
 * without a usable objective: failed), else 0; missing_note says what becomes of a configuration without a
 * record ("they count as failed evaluations") */
int mpt_replay_coverage(const mpt_replay *r, const char *missing_note, char *msg, size_t cap);

#endif
