/* strategies/bo/bo_dist.h: bo with its model on the model ranks (--model-ranks): the GP's candidates sliced
 * over a communicator (gp/gp_slices.h), rank 0 keeping the observations only. The public part (the job
 * attaches the model ranks, a benchmark reads their memory); bo's own files call strategies/bo/bo_dist_hook.h. */
#ifndef MPT_BO_DIST_H
#define MPT_BO_DIST_H
#include <mpi.h>
#include <stdint.h>
#include "gp/gp_slices.h"
#include "strategies/strategy.h"

/* Rank 0, right after the strategy's creation (before any tell): bo's model moves to the ranks of comm
 * (rank 0 with them), whose other ranks sit in mpt_gp_slices_serve. Only `bo` with acquisition=ei, no local
 * picks (local_every=0) and stall_action=boost (the defaults) has this model; other settings are an error. */
int mpt_bo_use_model_ranks(mpt_strategy *s, MPI_Comm comm, mpt_error *err);
/* Rank 0: bytes of each model rank's GP and each one's peak RSS (KiB), comm size values each; an error when
 * the strategy has no model ranks */
int mpt_bo_model_memory(mpt_strategy *s, int64_t *bytes, int64_t *rss_kib, mpt_error *err);
/* Rank 0: the model ranks' critical-path clock into *seconds (gp/gp_slices.h, mpt_gp_slices_path_clock: rank 0's
 * thread CPU time, its time inside the model ranks' commands replaced by the largest compute of any rank in each),
 * so that the difference of two readings is what an ask takes on a machine with a core per rank; path (may be
 * NULL): the commands' totals so far. An error when the strategy has no model ranks. */
int mpt_bo_model_clock(mpt_strategy *s, double *seconds, mpt_gp_slices_path *path, mpt_error *err);

#endif
