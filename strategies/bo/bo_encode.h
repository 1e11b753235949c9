/* strategies/bo/bo_encode.h: the GP inputs of bo's candidates (strategies/bo/bo_encode.c), the bottom of
 * strategies/bo/: the model (bo_model.c), the feasibility model (bo_feasibility.c) and the strategy (bo.c)
 * encode candidates through it. Private to the files of strategies/bo/. */
#ifndef MPT_BO_ENCODE_H
#define MPT_BO_ENCODE_H
#include <stdint.h>
#include "strategies/bo/bo_state.h"

/* Sets up the encoding from the strategy's options (encoding, onehot_weight, binary_weight) and its space:
 * b->enc, use_index, use_onehot, ohw, binw, sp, the active parameters (act, n_act: those with more than one
 * value), n_oh, D, feas_dims, and the scratch enc_cfg and enc_full (b->xq, D doubles, is the caller's).
 * 0 or MPT_ERR_NOMEM. */
int bo_encoding_init(bo_state *b, mpt_strategy *s);
/* the D GP inputs of candidate c (the active parameters' encodings, two-valued ones scaled by binw,
 * and/or their one-hot codes, ohw / sqrt 2 per set bit), the same doubles for the same c every time */
void bo_encode(bo_state *b, int64_t c, double *x);
/* bo_encode into the scratch b->xq (valid until the next bo_point) */
const double *bo_point(bo_state *b, int64_t c);
/* an mpt_gp_cand_fn (ctx: the bo_state) for mpt_gp_create_from: candidates first .. first + n - 1 */
void bo_encode_rows(void *b, int64_t first, int64_t n, double *rows);

#endif
