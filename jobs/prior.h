/* jobs/prior.h: `mptune tune --prior FILE` (jobs/prior.c): earlier measurements of the same problem on other
 * devices (a run log, or a brute-forced T4 or Kernel Tuner cache file) told to the strategy as related
 * observations before its first ask, one source per file. */
#ifndef MPT_PRIOR_H
#define MPT_PRIOR_H
#include <stddef.h>
#include "spaces/space.h"
#include "spaces/sys/error.h"
#include "strategies/strategy.h"

#define MPT_PRIOR_MAX 32
/* the source number of the i-th --prior file (those of a run's other device classes are small) */
#define MPT_PRIOR_SOURCE(i) (1000 + (i))

/* Loads each of paths[0..n) onto space (a run log: its records, the log checked to be of this problem; any other
 * file: read as a replayed brute-forced file, its configurations matched by parameter values) and tells its
 * records to s with mpt_strategy_tell_related, source MPT_PRIOR_SOURCE(i). desc (cap bytes) gets what was
 * used, "PATH: N records (V valid)[, device NAME]; ..." (for the log's "priors" attribute). 0, or an error
 * naming the file (and the field): nothing is told then. */
int mpt_prior_tell(const char *const *paths, int n, const mpt_space *space, mpt_strategy *s, char *desc, size_t cap,
                   mpt_error *err);

#endif
