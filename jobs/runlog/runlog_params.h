/* jobs/runlog/runlog_params.h: the run log's parameter tables (/parameters: each parameter's name, kind and values,
 * in the problem's order): built from a problem, written to and read from a log, compared. Private to
 * the files of jobs/runlog/. */
#ifndef MPT_RUNLOG_PARAMS_H
#define MPT_RUNLOG_PARAMS_H
#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>
#include "jobs/runlog/runlog_priv.h"
#include "spaces/t1.h"

typedef struct mpt_rl_param {
  char *name;
  mpt_runlog_vkind kind;
  int n;
  double *num; /* int, float and bool kinds */
  int64_t *ival; /* int kind: the exact values (num has them as doubles, rounded past 2**53) */
  char **str;  /* string kind */
} mpt_rl_param;

void mpt_rl_params_free(mpt_rl_param *params, int dims);
/* the tables of a problem's parameters (pr->n_params of them); NULL when out of memory */
mpt_rl_param *mpt_rl_params_from_problem(const mpt_problem *pr);
/* writes group /parameters of file; 0 or -1 */
int mpt_rl_params_write(const mpt_rl_param *params, int dims, hid_t file);
/* reads group /parameters of file into *params (*dims tables, freed with mpt_rl_params_free also on failure);
 * 0 or -1 */
int mpt_rl_params_read(hid_t file, mpt_rl_param **params, int *dims);
/* CRC-32 of the tables (names, kinds, values), as kept in the log's metadata copy: HDF5 does not checksum
 * raw data, so damage to /parameters is found by it */
uint32_t mpt_rl_params_crc(const mpt_rl_param *params, int dims);
/* the differences between a log's tables (have) and a problem's (want), or "" */
void mpt_rl_params_diff(const mpt_rl_param *have, int nh, const mpt_rl_param *want, int nw, char *msg, size_t cap);

#endif
