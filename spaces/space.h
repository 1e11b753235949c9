/* spaces/space.h: the search space, i.e. the set of valid configurations of a problem, enumerated once
 * and stored compactly, with O(1) id <-> configuration, neighbours, sampling and numeric encodings.
 * A configuration is written as value indices, one per parameter (idx[p] in [0, n_values(p))). A config
 * id is an index into the valid set, 0..size-1; a configuration that violates a constraint has no id. */
#ifndef MPT_SPACE_H
#define MPT_SPACE_H
#include <stdint.h>
#include "spaces/t1.h"
#include "spaces/sys/rng.h"
#include "spaces/sys/error.h"
#include "spaces/sys/watch.h"

typedef struct mpt_space mpt_space;

typedef struct mpt_space_stats {
  double cartesian;      /* product of the numbers of values (may exceed 2^63: double) */
  int64_t valid;
  double seconds;        /* construction time */
  int64_t bytes;         /* memory held by the valid set and its index */
  int64_t eval_errors;   /* evaluations of a condition that raised a run-time error (each makes invalid every
                            configuration it stands for: a condition over few parameters is evaluated once
                            per combination of their values, not once per configuration) */
} mpt_space_stats;

/* Enumerates the valid set without walking the Cartesian product. A run-time error in a constraint
 * makes that configuration invalid; the first such error is kept in warnings (reported once). The
 * space keeps a pointer to the problem, which must outlive it. */
int mpt_space_build(const mpt_problem *p, mpt_space **out, mpt_error *err);
/* The same, watched: watch (NULL: none) is called every 2^20 steps of the enumeration (about a second of
 * a large one) with doing "building the search space" and the share of the enumeration walked so far (an
 * estimate from its first levels); a nonzero return stops the build, which then fails with MPT_ERR_STATE
 * ("FILE: building the search space was stopped"). */
int mpt_space_build_watched(const mpt_problem *p, const mpt_watch *watch, mpt_space **out, mpt_error *err);
void mpt_space_free(mpt_space *s);

const mpt_problem *mpt_space_problem(const mpt_space *s);
int64_t mpt_space_size(const mpt_space *s);          /* number of valid configurations */
int mpt_space_dims(const mpt_space *s);              /* number of parameters */
int mpt_space_n_values(const mpt_space *s, int param);
void mpt_space_stats_get(const mpt_space *s, mpt_space_stats *st);
/* First run-time error met in a constraint during construction, or NULL */
const char *mpt_space_eval_warning(const mpt_space *s);

/* id -> value indices (idx has dims entries). O(1). */
void mpt_space_config(const mpt_space *s, int64_t id, int *idx);
/* value index of one parameter of id. O(1). */
int mpt_space_value_index(const mpt_space *s, int64_t id, int param);
/* value indices -> id, or -1 when the configuration is not valid (or an index is out of range). O(1). */
int64_t mpt_space_lookup(const mpt_space *s, const int *idx);
/* checks a configuration against the constraints directly (no index); 1 valid, 0 not */
int mpt_space_check(const mpt_space *s, const int *idx);
/* id of the problem's Default configuration, or -1 when it is not valid */
int64_t mpt_space_default_id(const mpt_space *s);
/* writes "name=value,name=value" (Python str of values) for id; returns length needed */
int mpt_space_format(const mpt_space *s, int64_t id, char *buf, int cap);

/* Neighbourhoods, as Kernel Tuner defines them. The centre may be any configuration, valid or not
 * (given as value indices); it is never in its own result. Results are valid ids, ascending. */
typedef enum mpt_neighbor_kind {
  MPT_NB_STRICTLY_ADJACENT, /* every parameter index moves by at most one */
  MPT_NB_ADJACENT,          /* per parameter: nearest value index above/below present among the valid
                               configurations (or unchanged) */
  MPT_NB_HAMMING,           /* exactly one parameter differs */
  MPT_NB_INDEX_DISTANCE,    /* the valid configurations at the smallest positive sum of absolute index
                               differences: never empty when another valid configuration exists */
} mpt_neighbor_kind;

/* Writes up to cap ids and returns how many neighbours exist (may exceed cap), or <0 on error. */
int64_t mpt_space_neighbors(const mpt_space *s, const int *idx, mpt_neighbor_kind kind, int64_t *ids,
                            int64_t cap);
/* The same into a buffer grown as needed (*ids may be NULL with *cap 0; the caller frees it):
 * returns the count, every neighbour written, or <0 on error. */
int64_t mpt_space_neighbors_grow(const mpt_space *s, const int *idx, mpt_neighbor_kind kind, int64_t **ids,
                                 int64_t *cap);
const char *mpt_neighbor_kind_name(mpt_neighbor_kind k);
int mpt_neighbor_kind_parse(const char *name); /* -1 when unknown */

/* Uniform random valid ids without replacement (n <= size). Returns n or <0. */
int64_t mpt_space_sample_random(const mpt_space *s, mpt_rng *rng, int64_t n, int64_t *ids);
/* Latin-hypercube sample of n valid configurations: per parameter the value-index range is cut into
 * n strata and each stratum is used once where the valid set allows; distinct ids. Returns count. */
int64_t mpt_space_sample_lhs(const mpt_space *s, mpt_rng *rng, int64_t n, int64_t *ids);
/* Maximin LHS: the best of `tries` LHS samples by minimum pairwise distance in index encoding. */
int64_t mpt_space_sample_maximin(const mpt_space *s, mpt_rng *rng, int64_t n, int tries, int64_t *ids);
/* LHS with the marginals of the valid configurations (space_sample_valid.c), over the parameters
 * params[0..np): each parameter is stratified by its value shares among the valid configurations (a
 * value taking a fraction f of them gets about f n of the n strata); each point draws per parameter an
 * unused stratum and a quantile in it, and is the unused valid configuration matching most of these
 * target values (ties: least total index distance, then at random). Returns the count (<= n) or <0. */
int64_t mpt_space_sample_lhs_valid(const mpt_space *s, const int *params, int np, mpt_rng *rng, int64_t n,
                                   int64_t *ids);
/* LHS of the uniform distribution over the valid configurations through conditional quantiles
 * (Rosenblatt transform): parameter d of point j takes the stratified quantile u[j][d] of its
 * distribution among the valid configurations agreeing with the point's earlier parameters, so each
 * point is a uniform valid configuration; a repeated one is replaced as in lhs_valid. Count or <0. */
int64_t mpt_space_sample_lhs_conditional(const mpt_space *s, const int *params, int np, mpt_rng *rng,
                                         int64_t n, int64_t *ids);
/* Pairwise-coverage design: an lhs_valid design, then first-improvement sweeps (at most 8) over the
 * valid configurations (max_candidates > 0 and below the size: that many drawn at random per sweep),
 * each exchanging a design point for the candidate when that raises the covered weight of value pairs:
 * cell (value a of params[p], value b of params[q]) weighs (its count among the valid configurations)
 * ^ power, normalized so each parameter pair sums to 1 (power 1: by valid frequency, rare pairs count
 * less; 0: every occurring pair the same). keep_strata: no exchange moves a value's count further
 * outside [floor(f n), ceil(f n)] (f its valid share); keep_strata 2: instead of candidates, exchanges
 * of one or two parameters' values between two design points (both results valid and new), so every
 * value keeps lhs_valid's count. Deterministic for the rng. Count or <0. */
int64_t mpt_space_sample_pairs(const mpt_space *s, const int *params, int np, mpt_rng *rng, int64_t n,
                               double power, int keep_strata, int64_t max_candidates, int64_t *ids);

/* Numeric encodings for models: one double per parameter. */
typedef enum mpt_encoding {
  MPT_ENC_INDEX,   /* value index scaled to [0,1] (index / (n_values-1); 0 for one value) */
  MPT_ENC_VALUE,   /* numeric value scaled to [0,1] by the parameter's min/max */
  MPT_ENC_LOG2,    /* log2 of the value scaled to [0,1] (falls back to VALUE for values <= 0) */
} mpt_encoding;
void mpt_space_encode(const mpt_space *s, int64_t id, mpt_encoding enc, double *x);
/* same for value indices (any configuration, valid or not) */
void mpt_space_encode_idx(const mpt_space *s, const int *idx, mpt_encoding enc, double *x);

#endif
