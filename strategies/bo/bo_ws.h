/* strategies/bo/bo_ws.h: bo's working set of candidates on huge spaces (strategies/bo/bo_ws.c): the GP holds a
 * sample of the valid configurations instead of every one, refreshed towards the best observations. Private to
 * the files of strategies/bo/. */
#ifndef MPT_BO_WS_H
#define MPT_BO_WS_H
#include "strategies/bo/bo_state.h"

/* The initial working set where the space has more than b->ws_size valid configurations (b->ws_size > 0):
 * every value of every active parameter, then uniform random configurations, from a generator seeded by the
 * run's seed; sets b->n_slots (b->N without a working set). 0 or an error. */
int bo_ws_init(bo_state *b, mpt_strategy *s, mpt_error *err);
/* no working set any more (the model ranks hold every configuration): b->n_slots = b->N */
void bo_ws_off(bo_state *b);
/* an mpt_gp_cand_fn (ctx: the bo_state): the inputs of slots first .. first + n - 1 */
void bo_encode_slots(void *b, int64_t first, int64_t n, double *rows);
/* At an ask, the model up to date and no fantasy in the GP: the pending evaluations given slots, and, when the
 * best objective improved or working_set_refresh observations came since the last refresh, the working set
 * refreshed: the working_set_swap slots of the smallest EI (seen ones first, never a pending one) take the
 * Hamming neighbours of the best observations and random configurations (mpt_gp_replace_candidates); then, when
 * the GP's observations times the slots exceed working_set_bound, the set shrinks to bound / observations slots
 * (working_set_min at least: the pending ones, the incumbents' neighbours, those just brought in and those of the
 * largest EI kept; mpt_gp_keep_candidates). 0 or an error. */
int bo_ws_update(bo_state *b, mpt_strategy *s, mpt_error *err);
/* the seen mask by slot (b->ws_mask) for the variance sum; NULL without a working set (s->seen serves) */
const uint8_t *bo_ws_seen(bo_state *b, const mpt_strategy *s);

#endif
