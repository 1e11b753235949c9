/* jobs/runlog/runlog_records.h: the rows of the run log (jobs/runlog/runlog.h): an evaluation record as it lies in memory
 * and in /evaluations, the rows of /devices and /sessions, their HDF5 types; records made from and read into
 * observations, checked (CRC), and found in the raw bytes of a file HDF5 can not read. Private to
 * the files of jobs/runlog/. */
#ifndef MPT_RUNLOG_RECORDS_H
#define MPT_RUNLOG_RECORDS_H
#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>
#include "spaces/sys/error.h"
#include "spaces/sys/obs.h"
#include "spaces/space.h"

/* one evaluation: these fields, then the value indices (int32 per parameter) at sizeof(mpt_rl_rec), and the
 * config id last (an int64 at mpt_rl_rec_size(dims) - 8): a write torn by a kill stops at a page boundary with
 * the later bytes unwritten, so a record whose id reads >= 0 was written up to its end (the CRC double-checks) */
typedef struct mpt_rl_rec {
  int32_t status, rank, device, session, n_times;
  uint32_t crc; /* CRC-32 of the whole record with this field 0 */
  double objective, median, times[MPT_OBS_MAX_TIMES];
  double compile_ms, benchmark_ms, framework_ms, t_start, t_end;
  char reason[MPT_OBS_REASON];
  /* since format 4: the power observer's (NAN: none) */
  int32_t n_power, confirm;
  double energy_j, power_w, clock_mhz, temp_c;
  int32_t device_class; /* the index of the run's class table (format 4; 0 in records of older logs) */
  int32_t cross_from;   /* mpt_obs.cross_from: k + 1 for a portability evaluation of class k's best (format 4) */
} mpt_rl_rec;

/* the fields of a record of formats 2 and 3: those before n_power */
#define MPT_RL_REC_V3_FIELDS offsetof(mpt_rl_rec, n_power)

typedef struct mpt_rl_dev {
  int32_t session, rank, index, pad_;
  double memory_gib;
  char host[64], vendor[32], name[128], arch[32], evaluator[16];
} mpt_rl_dev;

typedef struct mpt_rl_session {
  double start_unix;
  int32_t pid, pad_;
  char host[64];
  char start_time[40];
} mpt_rl_session;

/* CRC-32 (zlib) of the size bytes at b with the 4-byte CRC field at crc_at taken as 0, b only read (it may lie
 * in a read-only mapping): the checksum of a record and of the metadata copy (jobs/runlog/runlog_meta.c) */
uint32_t mpt_rl_crc(const unsigned char *b, size_t size, size_t crc_at);

size_t mpt_rl_rec_size(int dims); /* bytes of a record of a problem with dims parameters */
int64_t mpt_rl_rec_id(const unsigned char *rec, size_t size);
void mpt_rl_rec_set_id(unsigned char *rec, size_t size, int64_t id);
static inline const int32_t *mpt_rl_rec_config(const unsigned char *rec) {
  return (const int32_t *)(rec + sizeof(mpt_rl_rec));
}

/* the HDF5 types (memory = file) */
hid_t mpt_rl_rec_type(int dims);
/* a record of formats 2 and 3 (without the power fields): its size and type, and the record of the current
 * format it reads as (dst, mpt_rl_rec_size(dims) bytes; the power fields NAN; valid, blank or torn as src was) */
size_t mpt_rl_rec_size_v3(int dims);
hid_t mpt_rl_rec_type_v3(int dims);
void mpt_rl_rec_from_v3(const unsigned char *src, unsigned char *dst, int dims);
hid_t mpt_rl_dev_type(void);
hid_t mpt_rl_session_type(void);

int mpt_rl_rec_valid(const unsigned char *rec, size_t size); /* written completely: id >= 0 and its CRC right */
int mpt_rl_rec_blank(const unsigned char *rec, size_t size); /* never written: the fill value */

/* the record of observation o, written in session; its value indices from space (-1 without one) */
void mpt_rl_rec_from_obs(unsigned char *dst, size_t size, const mpt_obs *o, int32_t session, const mpt_space *space,
                         int dims);
void mpt_rl_rec_to_obs(const unsigned char *src, size_t size, mpt_obs *o);

/* Finds the complete records of space's configurations in the file open as fd (one pass, mapped, dropped
 * behind the cursor): *off (malloc'd) the offsets of the *count records found, in file order. 0 or an error. */
int mpt_rl_recs_find(int fd, const char *path, const mpt_space *space, int dims, int64_t **off, int64_t *count,
                     mpt_error *err);

#endif
