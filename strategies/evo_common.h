/* strategies/evo_common.h: shared machinery of the population/trajectory strategies (ga, de, pso,
 * firefly, sa, mls): a fitness cache per config id, the generation driver that turns "evaluate this
 * generation" into batched asks (cached ids are free, pending ids are waited for), stall detection
 * and restarts, rounding of continuous positions to value indices, and constraint-aware repair of
 * invalid configurations to valid neighbours (strictly-adjacent, then adjacent, then Hamming, then
 * index-distance). Private to strategies/. */
#ifndef MPT_EVO_COMMON_H
#define MPT_EVO_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include "strategies/strategy.h"

/* fitness of failed measurements and of invalid candidates in the penalty variants (lower is better) */
#define EVO_PENALTY 1e30
/* consecutive generations that propose nothing new before a strategy restarts */
#define EVO_STALL_LIMIT 25

typedef struct evo evo;
/* builds the next generation with evo_gen_begin/evo_gen_add/evo_gen_end; called when every id of the
 * current generation has a fitness. Returns 0 or <0 on error. */
typedef int (*evo_step_fn)(mpt_strategy *s, evo *e);

struct evo {
  mpt_strategy *s;
  evo_step_fn step;      /* the strategy's generation step (evo_state_new; evo_strategy_ask drives it) */
  const mpt_space *sp;
  int dims;              /* parameters */
  int free_dims;         /* parameters with more than one value */
  int64_t size;
  int *nv;               /* values per parameter */
  double *fit;           /* per id: NAN unknown, objective, or EVO_PENALTY */
  uint8_t *mine;         /* per id: proposed by this strategy (drives stall detection, not tells) */
  int64_t *need;         /* ids of the current generation, each once */
  int n_need, cap_need;
  int gen_new;           /* ids in the current generation not proposed before */
  int free_gens;         /* consecutive generations with nothing new */
  int want;              /* candidates the current ask still wants (a hint for step functions) */
  int64_t generations;
  int64_t *nb;           /* neighbour scratch */
  int64_t nb_cap;
  int *idx_tmp;          /* dims ints of scratch */
  uint8_t *dim_mark;     /* dims bytes of scratch, all 0 between calls */
  int64_t best_id;
  double best;
  int burn_invalid;      /* penalty variants: an invalid candidate costs one evaluation (see evo_gen_add) */
  int init_kind;         /* initial population (option init): EVO_INIT_LHS, _RANDOM or _CONDITIONAL */
  int fresh;             /* constraint-aware placement never lands on a configuration proposed before
                            (evo_place, evo_place_unit; option fresh) */
  struct mpt_related *rel; /* related observations (strategies/evo_transfer.c), NULL until the first */
  double transfer;       /* option transfer: share of a population seeded from them */
};

enum { EVO_INIT_LHS = 0, EVO_INIT_RANDOM, EVO_INIT_CONDITIONAL };

/* the option rows shared by the constraint-aware strategies (ga, de, pso, firefly); INIT is the default of
 * option init */
#define EVO_AWARE_OPTIONS_INIT(INIT) \
  {"constraint_aware", MPT_OPT_BOOL, "1", "LHS of valid configs and repair (1) or penalty for invalid (0)", NULL, 1, 0}, \
  {"init", MPT_OPT_STRING, INIT, "initial population of valid configurations: Latin hypercube of each parameter's " \
   "values among the valid configurations, each point repaired to the nearest valid one (lhs), Latin hypercube of " \
   "the uniform distribution over the valid configurations by conditional quantiles (lhs-conditional: no bias " \
   "towards configurations with many valid neighbours), or uniformly random (random; the penalty variant always " \
   "starts uniformly random)", "lhs|lhs-conditional|random", 1, 0}, \
  {"invalid_costs", MPT_OPT_BOOL, "1", "penalty variant: an invalid candidate costs one evaluation (a random " \
   "configuration whose result the search does not use) as before constraint-awareness (1), or nothing (0)", NULL, 1, 0}
#define EVO_AWARE_OPTIONS EVO_AWARE_OPTIONS_INIT("lhs")

/* the option row of the strategies whose constraint-aware placement can avoid configurations already
 * proposed (de, pso, firefly); read with evo_read_fresh */
#define EVO_FRESH_OPTION \
  {"fresh", MPT_OPT_BOOL, "1", "constraint-aware: a candidate that lands (rounded, repaired) on a configuration " \
   "this search already proposed moves to the nearest valid " \
   "configuration it has not proposed (repair chain, smallest index distance, ties at random) instead of " \
   "re-proposing a known one", NULL, 1, 0}

int evo_init(evo *e, mpt_strategy *s, mpt_error *err);
/* a strategy's state: s->data = a zeroed struct of size bytes whose FIRST member is its evo, evo_init'ed
 * with the strategy's generation step (freed again on error; name goes in the out-of-memory message). 0 or <0 */
int evo_state_new(mpt_strategy *s, size_t size, const char *name, evo_step_fn step, mpt_error *err);
/* frees what evo_state_new made (the evo and the state struct; the strategy frees its own arrays first) and
 * sets s->data to NULL; nothing when s->data is NULL */
void evo_state_free(mpt_strategy *s);

/* the ask, tell and tell_related of every strategy whose state starts with its evo: evo_ask with the step
 * given to evo_state_new, evo_tell, and the related observations (strategies/evo_transfer.c) */
int evo_strategy_ask(mpt_strategy *s, int n, int64_t *ids);
void evo_strategy_tell(mpt_strategy *s, const mpt_obs *obs, int n);
void evo_strategy_tell_related(mpt_strategy *s, int source, const mpt_obs *obs, int n);
/* the mpt_strategy_type of such a strategy */
#define EVO_STRATEGY_TYPE(NAME, SUMMARY, OPTIONS, CREATE, DESTROY) \
  { .name = (NAME), .summary = (SUMMARY), .options = (OPTIONS), .create = (CREATE), .ask = evo_strategy_ask, \
    .tell = evo_strategy_tell, .tell_related = evo_strategy_tell_related, .destroy = (DESTROY) }
/* reads the EVO_AWARE_OPTIONS of e->s into e (burn_invalid, init_kind); returns constraint_aware */
int evo_read_aware(evo *e);
/* reads EVO_FRESH_OPTION into e->fresh (only for a constraint-aware strategy: aware != 0) */
void evo_read_fresh(evo *e, int aware);
/* the option `neighbor` of the local searches (sa, mls): Hamming, adjacent or strictly-adjacent as an
 * mpt_neighbor_kind */
mpt_neighbor_kind evo_read_neighbor(const mpt_strategy *s);
void evo_free(evo *e);

/* fitness cache */
void evo_tell(evo *e, const mpt_obs *obs, int n);
double evo_fitness(const evo *e, int64_t id); /* NAN unknown; EVO_PENALTY for id < 0 */
static inline int evo_known(const evo *e, int64_t id) { return id < 0 || e->fit[id] == e->fit[id]; }

/* generation bookkeeping */
void evo_gen_begin(evo *e);
/* adds id to the current generation (once). id < 0 is an invalid candidate of a penalty variant: it
 * keeps its penalty fitness in the population and, with burn_invalid, costs one evaluation as it did
 * before constraint-awareness: a random unseen configuration is evaluated in its place and its result
 * is not used by the population (only cached). 0 or NOMEM. */
int evo_gen_add(evo *e, int64_t id);
void evo_gen_end(evo *e);
/* one whole generation: evo_gen_begin, evo_gen_add of ids[0..n), evo_gen_end. 0 or NOMEM */
int evo_submit(evo *e, const int64_t *ids, int n);
/* the driver: emits unseen ids of the current generation, advances with step when it is complete,
 * explores around the best while it waits for pending evaluations */
int evo_ask(evo *e, int n, int64_t *ids, evo_step_fn step);

/* positions */
int64_t evo_lookup(evo *e, const int *idx);            /* -1 when not valid */
void evo_round_index(const evo *e, const double *x, int *idx);  /* x in index units, clamped */
void evo_round_unit(const evo *e, const double *x, int *idx);   /* x in [0,1] per parameter */
void evo_to_unit(const evo *e, const int *idx, double *x);      /* idx -> [0,1] per parameter */
/* a valid id close to idx: idx itself when valid, else a random neighbour by strictly-adjacent, then
 * adjacent, then Hamming, then index-distance (index_distance_only: index-distance at once, as DE) */
int64_t evo_repair(evo *e, const int *idx, int index_distance_only);
/* the same chain, but within the first non-empty neighbourhood only the neighbours at the smallest index
 * distance from idx (one of them uniformly at random): the minimal repair (LHS points) */
int64_t evo_repair_nearest(evo *e, const int *idx);
/* the valid configuration nearest to idx (value indices, valid or not) that this search has not proposed:
 * the first neighbourhood of the repair chain (DE: index-distance first) that has one, smallest index
 * distance, ties at random; -1 when none */
int64_t evo_fresh(evo *e, const int *idx, int index_distance_only);
/* a proposal at idx: constraint-aware, evo_repair'ed (with e->fresh: moved on by evo_fresh when the result
 * was proposed before) and idx set to that configuration (left as is when no valid neighbour exists: -1);
 * otherwise evo_lookup (-1 when invalid) */
int64_t evo_place(evo *e, int *idx, int aware, int index_distance_only);
/* the same for a position x in [0,1] per parameter (rounded into e->idx_tmp); when aware and repaired, x
 * moves to the repaired configuration */
int64_t evo_place_unit(evo *e, double *x, int aware);
/* a random valid Hamming neighbour of idx (any configuration), or -1 when there is none */
int64_t evo_random_hamming(evo *e, const int *idx);
/* the same, drawn gene-wise: a parameter uniformly at random among those that have a valid other value
 * (the others fixed), then one of those values uniformly; evo_random_hamming instead draws uniformly over
 * the neighbours, so parameters with many values are changed more often */
int64_t evo_random_hamming_gene(evo *e, const int *idx);
/* n neighbours of kind around idx into e->nb; returns the count (<0 on error) */
int64_t evo_neighbors(evo *e, const int *idx, mpt_neighbor_kind kind);
/* ids of up to n valid configurations by LHS (distinct); returns the count */
int64_t evo_sample_lhs(evo *e, int64_t n, int64_t *ids);
/* a random id not yet proposed by this strategy (-1 when none) */
int64_t evo_random_unseen(evo *e);
/* the id with the lowest known fitness among ids[0..n) (ids < 0 skipped), -1 when none */
int64_t evo_best_of(const evo *e, const int64_t *ids, int n);
/* the initial population: n valid configurations, by LHS (constraint-aware) or uniformly at random
 * (penalty variants, as Kernel Tuner's get_random_sample): both start from n evaluations, so the
 * variants differ only in how invalid offspring and moves are handled. A restart (generations > 0)
 * draws configurations this search has not proposed yet instead. */
int64_t evo_sample_init(evo *e, int aware, int64_t n, int64_t *ids);
/* the initial or restart population of a swarm (pso, firefly): ids[0..P) and unit positions x (P x dims)
 * from evo_sample_init, repeated when fewer than P; a restart keeps the best old member in slot 0.
 * Returns 0, 1 when a restart found nothing untried (population kept), or <0 on error. */
int evo_unit_population(evo *e, int aware, int P, int64_t *ids, double *x);
/* the neighbours of kind around id, shuffled, into *list (grown as needed, *cap entries); *n = count */
int evo_shuffled_neighbors(evo *e, int64_t id, mpt_neighbor_kind kind, int64_t **list, int64_t *cap, int64_t *n);
/* the proposal of prop[0..n) with the lowest fitness below that of cur, -1 when none improves */
int64_t evo_first_improvement(const evo *e, int64_t cur, const int64_t *prop, int n);
/* beta(1, b) variate, for rank-based selection */
double evo_beta1(mpt_rng *r, double b);
/* an index in [0, n) drawn as floor(Beta(1, b) * n): rank-based selection of a sorted population */
int evo_beta1_index(mpt_rng *r, double b, int n);

#endif
