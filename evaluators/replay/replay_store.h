/* evaluators/replay/replay_store.h: the records of a replayed space, compact: an mpt_obs is 1,368 bytes (most
 * of it the reason string), a stored record 56, with its times in one pool and each distinct reason
 * kept once. Records go in as mpt_obs and come out as mpt_obs. Used by replay.c only. */
#ifndef MPT_REPLAY_STORE_H
#define MPT_REPLAY_STORE_H
#include <stdint.h>
#include "spaces/sys/obs.h"

typedef struct replay_rec replay_rec;

typedef struct replay_store {
  replay_rec *rec;
  int64_t n, cap;
  double *times; /* every record's times, one after the other */
  int64_t n_times, cap_times;
  char **reasons; /* distinct reason strings */
  int32_t n_reasons, cap_reasons;
  int32_t *hash; /* open addressing over reasons, -1 empty */
  int32_t hash_cap;
} replay_store;

/* stores o as record `at` (overwriting it) or, with at = -1, as a new record of at most max_records;
 * returns the record's index, or -1 when out of memory */
int64_t replay_store_put(replay_store *s, int64_t at, const mpt_obs *o, int64_t max_records);
/* record i as the observation of config id */
void replay_store_get(const replay_store *s, int64_t i, int64_t id, mpt_obs *out);
/* 1 and *objective when record i is a valid measurement (mpt_obs_valid), else 0 */
int replay_store_valid(const replay_store *s, int64_t i, double *objective);
void replay_store_free(replay_store *s);

#endif
