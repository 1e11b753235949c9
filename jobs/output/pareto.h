/* jobs/output/pareto.h: the Pareto front of a multi-objective run (`--objective time,energy`): the
 * configurations no other one beats in every objective, kept as observations arrive, sorted by the first
 * objective and printed in the summary. */
#ifndef MPT_PARETO_H
#define MPT_PARETO_H
#include <stdint.h>
#include <stdio.h>
#include "evaluators/objective.h"
#include "spaces/space.h"

typedef struct mpt_pareto_point {
  int64_t id;
  double v[MPT_OBJECTIVE_MAX_TERMS]; /* each objective in its unit */
} mpt_pareto_point;

typedef struct mpt_pareto {
  const mpt_objective *obj;  /* borrowed */
  int n, cap;
  mpt_pareto_point *p;
} mpt_pareto;

void mpt_pareto_init(mpt_pareto *f, const mpt_objective *obj);
void mpt_pareto_free(mpt_pareto *f);
/* Takes a valid observation of configuration ob->id in: every objective's value (one that cannot be had keeps
 * it out), then kept unless a point dominates it, dropping the points it dominates; a configuration seen
 * again replaces its point. 0, or MPT_ERR_NOMEM. */
int mpt_pareto_add(mpt_pareto *f, const mpt_space *s, const mpt_obs *ob);
/* 1 when a is at least as good as b in every objective and better in one */
int mpt_pareto_dominates(const mpt_objective *obj, const double *a, const double *b);
/* sorts the front by the first objective (best first) */
void mpt_pareto_sort(mpt_pareto *f);
/* "pareto front (time ms, energy J): N configurations" and one line per point */
void mpt_pareto_print(mpt_pareto *f, const mpt_space *s, FILE *out);

#endif
