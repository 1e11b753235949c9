/* strategies/ga_internal.h: the state of the genetic algorithms `ga` and `ga_memetic` (strategies/ga.c) and the
 * functions its files share: the breeding of children (ga_breed.c) and the memetic local search (ga_memetic.c).
 * Private to those files. */
#ifndef MPT_GA_INTERNAL_H
#define MPT_GA_INTERNAL_H
#include <stdint.h>
#include "strategies/evo_common.h"

typedef struct ga_state {
  evo e;
  int P, aware, elitism, method; /* method: 0 single_point, 1 two_point, 2 uniform */
  int64_t mut;
  double immig, pressure;
  int repair, steady, memetic, n_child, gene_mutation;
  int64_t climb;                 /* memetic: the configuration being improved, -1 none */
  int64_t *list, n_list, lpos, cap_list; /* its untried Hamming neighbours, shuffled */
  int64_t *prop;
  int n_prop;
  uint8_t *climbed;              /* memetic: per member, already improved by local search */
  double local;
  int stag_limit, stag;
  double best_seen;
  int n_pop;
  int *pop, *npop;               /* P x dims value indices */
  int64_t *pid, *npid;           /* ids (-1: invalid, penalty variant only) */
  int *order;
  double *f;
} ga_state;

/* f[] = each member's fitness, order[] = member indices by ascending fitness (ga_breed.c) */
void ga_rank(ga_state *g);
/* the member of the worst fitness (the first of equals); *in: 1 when config id (>= 0) is a member */
int ga_worst_member(const ga_state *g, int64_t id, int *in);
/* fills npop/npid[m0..target) with distinct children of the ranked population (order[]), each also
 * distinct from avoid[0..n_avoid) (ids); *m_out = members written in total. 0 or <0 */
int ga_breed(ga_state *g, int m0, int target, const int64_t *avoid, int n_avoid, int *m_out);
/* memetic mode: one step of the first-improvement Hamming local search of a child or the best member
 * (ga_memetic.c). 0 or <0 */
int ga_memetic_step(ga_state *g);

#endif
