/* strategies/bo/bo_local.h: the candidate sets of bo's local picks (strategies/bo/bo_local.c). Private to
 * the files of strategies/bo/. */
#ifndef MPT_BO_LOCAL_H
#define MPT_BO_LOCAL_H
#include <stdint.h>
#include "strategies/bo/bo_state.h"

/* the candidate set of a local pick (see bo_local.c) */
int bo_mark_local(bo_state *b, mpt_strategy *s);
/* 1 when candidate c lies in the box around the incumbent (local_kind=box) */
int bo_in_local(const bo_state *b, const mpt_space *sp, int64_t c);

#endif
