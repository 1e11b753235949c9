/* strategies/bo/bo_model.h: the data side of bo (strategies/bo/bo_model.c): the told observations, the
 * output transforms, and the GP and feasibility model they are put into. Private to the files of
 * strategies/bo/. */
#ifndef MPT_BO_MODEL_H
#define MPT_BO_MODEL_H
#include <stdint.h>
#include "strategies/bo/bo_state.h"

/* appends a told observation (ok: valid) to obs_*; 0 or MPT_ERR_NOMEM */
int bo_push_obs(bo_state *b, int64_t id, double y, int ok);
/* the objective as the GP sees it before the rank/clip transforms (log when transform_log) */
double bo_transform(const bo_state *b, double y);
/* puts the queued observations (n_processed .. n_obs) into the GP and the feasibility model */
int bo_process_queue(bo_state *b, mpt_strategy *s, mpt_error *err);
/* gives every observation in the GP its output again (after the prior mean of transfer changed:
 * strategies/bo/bo_transfer.c); 0 or an error */
int bo_model_reoffset(bo_state *b, mpt_error *err);

/* 1 when stall_after evaluations have passed since the last new best valid objective, from the told sequence
 * only (so a resumed run decides the same); 0 with stall_after <= 0 */
int bo_model_stalled(const bo_state *b);

#endif
