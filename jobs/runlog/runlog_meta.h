/* jobs/runlog/runlog_meta.h: the run log's metadata copy. What lives only in HDF5's metadata (the root attributes:
 * the run's settings) and the device and session tables, packed into one block of raw bytes with its own
 * CRC-32, stored as the dataset /metadata_copy, so that recovery (a log HDF5 can not read, jobs/runlog/runlog_recover.c)
 * finds them by that checksum as it finds the records. Private to the files of jobs/runlog/. */
#ifndef MPT_RUNLOG_META_H
#define MPT_RUNLOG_META_H
#include <stddef.h>
#include "jobs/runlog/runlog_records.h"
#include "spaces/sys/error.h"

/* the state a block holds: attribute i is keys[i] with value values[i] (NULL: absent) */
typedef struct mpt_rl_meta {
  int n_attrs;
  const char *const *keys;
  char **values;
  mpt_rl_dev *devs;
  int n_devs;
  mpt_rl_session *sess;
  int n_sess;
} mpt_rl_meta;

/* the block for m (malloc'd, *size bytes), NULL when out of memory */
unsigned char *mpt_rl_meta_pack(const mpt_rl_meta *m, size_t *size);

/* Reads a block into m, whose n_attrs and keys say which attributes to take (keys the block lacks, or
 * holds absent, stay NULL; keys it has beyond them are skipped): m->values[i] (malloc'd), m->devs and
 * m->sess (malloc'd). 0, or -1 when the block is damaged, not one, or out of memory (m then unchanged). */
int mpt_rl_meta_unpack(const unsigned char *blk, size_t size, mpt_rl_meta *m);

/* Looks for an intact block in the file open as fd (named path), from its start: *blk (malloc'd) and
 * *size when found (1), 0 when there is none, an error (< 0) when the file can not be read. */
int mpt_rl_meta_find(int fd, const char *path, unsigned char **blk, size_t *size, mpt_error *err);

#endif
