/* strategies/bo/bo_internal.h: internal to the files that make up the `bo` strategy itself (bo.c, bo_options.c,
 * bo_ask.c, bo_pick.c, bo_scan.c, bo_fantasy.c in strategies/bo/): what they call of one another, and the
 * result of a scan. Private to strategies/bo/: not for use outside it. */
#ifndef MPT_BO_INTERNAL_H
#define MPT_BO_INTERNAL_H
#include <stdint.h>
#include "strategies/bo/bo_state.h"

/* bo_options.c: the option table, and the options copied into the state at create */
extern const mpt_option_spec bo_options[];
void bo_read_model_options(bo_state *b, mpt_strategy *s);
void bo_read_local_options(bo_state *b, mpt_strategy *s);

/* bo_scan.c: the argmax of each acquisition function over the candidates of a scan */
typedef struct pick {
  double val[AF_N];
  int64_t id[AF_N];
  double val_any;        /* fallback when no candidate reaches the feasibility threshold: the best
                          * EI x p^feasibility_exponent (log domain), or the best EI without a model */
  int64_t id_any;
  double val_var;        /* largest posterior sd among feasible candidates (when asked for) */
  int64_t id_var;
} pick;
/* 1 when the scan multiplies by the probability of feasibility (its mean weights made ready), else 0 */
int bo_prepare_feasibility(bo_state *b);
/* one scan over the free candidates (local: 0 all, 1 the box, 2 the marked set) into *pk */
void bo_scan(bo_state *b, mpt_strategy *s, double xi, double kappa_s, int local, int need_var, pick *pk);

/* bo_pick.c: one model-based pick into *id (-1: nothing left), the proposing function into *af; 0 or an error */
int bo_pick_one(bo_state *b, mpt_strategy *s, double xi, double kappa_s, int stalled, int k, int *af,
                int64_t *id);

/* bo_fantasy.c: the constant liar's value; the pending evaluations from *from on into the GP; pick id into the
 * pool of a batch; 0 or an error */
double bo_fantasy_worst(const bo_state *b);
int bo_add_fantasies(bo_state *b, int64_t *from, double worst, mpt_error *err);
int bo_fantasy_on_pool(bo_state *b, int64_t id, double worst, mpt_error *err);

/* bo_ask.c: the strategy's ask (mpt_strategy_type.ask) */
int bo_ask(mpt_strategy *s, int n, int64_t *ids);

#endif
