/* strategies/bo/bo_feasibility.h: the probability of feasibility of bo's candidates and the order in which
 * the scan asks for it (strategies/bo/bo_feasibility.c). Private to the files of strategies/bo/. */
#ifndef MPT_BO_FEASIBILITY_H
#define MPT_BO_FEASIBILITY_H
#include <stdint.h>
#include "strategies/bo/bo_state.h"

/* the probability of feasibility of candidate c (the feasibility GP's mean, clipped to [1e-12, 1], from
 * cached kernel values), and the cached values extended by the newest observations */
double bo_feas_p(bo_state *b, int64_t c);
void bo_feas_extend(bo_state *b);
/* a binary heap of n bo_ranked, largest key on top (ties: smaller id): made in O(n), popped in O(log n) */
void bo_ranked_heapify(bo_ranked *h, int64_t n);
bo_ranked bo_ranked_pop(bo_ranked *h, int64_t *n);
/* The best contender of queue q (key: EI, or log EI when log_domain), after *best / *best_id: visits
 * the queue by key, largest first, and computes p only until the key (EI alone, since p <= 1) falls
 * under *best; a contender with p >= feasibility_threshold and value EI x p (log EI + log p) above *best,
 * or equal to it with a smaller id, replaces it. Empties the queue. The result is the contender a visit
 * in any order would choose: the largest value, the smallest id among equal ones. */
void bo_feas_resolve(bo_state *b, int q, int log_domain, double *best, int64_t *best_id);

#endif
