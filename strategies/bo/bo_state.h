/* strategies/bo/bo_state.h: the state of the `bo` strategy (strategies/bo/bo.c and the files
 * of the strategy itself, strategies/bo/bo_internal.h), shared with the files that
 * hold parts of it: the GP inputs (strategies/bo/bo_encode.c), the local candidate sets of local picks
 * (strategies/bo/bo_local.c), the cached feasibility means (strategies/bo/bo_feasibility.c), and the
 * observations and output transforms (strategies/bo/bo_model.c). The state only: each of those files
 * declares its functions in its own header. Private to the files of strategies/bo/. */
#ifndef MPT_BO_STATE_H
#define MPT_BO_STATE_H
#include <stdint.h>
#include "gp/gp.h"
#include "strategies/strategy.h"

enum { AF_EI = 0, AF_POI, AF_LCB, AF_LCBS, AF_N };
enum { ACQ_EI = 0, ACQ_POI, ACQ_LCB, ACQ_LCBS, ACQ_MULTI, ACQ_ADVANCED };

typedef struct bo_pending {
  int64_t id;
  int af;                /* acquisition function that proposed it (-1: initial sample / random) */
} bo_pending;

/* a candidate with a sort key (EI or log EI), ordered by key, largest first, ties by id */
typedef struct bo_ranked {
  double key;
  int64_t id;
} bo_ranked;

typedef struct bo_state {
  int64_t N;             /* candidates = valid configurations */
  int D;                 /* GP inputs per candidate (bo_encode) */
  /* the encoding (strategies/bo/bo_encode.c): no N x D table is kept, a candidate is encoded when it is needed */
  const mpt_space *sp;
  mpt_encoding enc;
  int use_index, use_onehot, n_oh; /* index part (n_act columns) and/or one-hot part (n_oh columns) */
  double ohw, binw;      /* one-hot weight, index scale of two-valued parameters */
  int *enc_cfg;          /* scratch: value indices (all dims) */
  double *enc_full;      /* scratch: encoding of every parameter (all dims) */
  double *xq;            /* scratch: one candidate's D inputs (bo_point) */
  mpt_gp *gp;            /* with model ranks: the observations only (no candidates) */
  struct mpt_gp_slices *dist; /* the model ranks' slices of the candidates (strategies/bo/bo_dist.c), or NULL */
  mpt_gp_config gcfg;
  /* options */
  int post;              /* 0: none, 1: rank -> normal scores, 2: clip at the median */
  double *ty;            /* transformed outputs of the GP's observations (scratch) */
  double batch_quantile;  /* batch=quantile: fantasy = posterior mean + batch_quantile * sd */
  int acq, batch_liar, transform_log, fit, ard, refit_interval, feas_mode, n_init, skip_threshold;
  int explore_cv;
  double explore_factor, lcb_kappa, noise, feas_threshold, feas_exponent, feas_ls, req_improvement, disc_multi, disc_adv;
  /* observations in order of tell */
  int64_t n_obs, cap_obs;
  int64_t *obs_id;
  double *obs_y;         /* raw objective (NAN for failures) */
  uint8_t *obs_ok;
  int64_t n_processed;   /* observations already put into the models */
  double *run_x, *run_y; /* 16 x D, 16: a run of queued observations taken in together (bo_model.c) */
  int64_t n_ok;
  int64_t n_fail;
  double best_t;         /* best transformed objective among processed ok observations */
  /* feasibility model (allocated at the first failure) */
  mpt_gp *fgp;           /* GP regression on feasibility labels (1 ok, 0 failed), no candidate block */
  double *falpha, fm0;   /* its mean weights (refreshed before a scan when the model has grown) */
  int falpha_n;          /* 1 + the feasibility observations falpha was computed from (0: none yet) */
  int64_t feas_processed;
  /* initial sample */
  int64_t *init_ids;
  int64_t n_init_ids, init_pos, init_asked;
  /* pending (asked, not told) */
  bo_pending *pend;
  int64_t n_pend, cap_pend;
  uint8_t *taken;        /* N: chosen within the current ask */
  /* portfolio */
  int rr;
  int active[AF_N];
  int dup_count[AF_N];
  double score[AF_N];
  /* advanced-multi's scale: the objectives told so far, raw [0] and logged (when > 0) [1]: best, sum, sum of
   * squares (updated per observation, strategies/bo/bo.c, bo_tell) */
  double told_best[2], told_sum[2], told_sum2[2];
  int64_t iter;          /* model-based picks so far */
  int *act, n_act;       /* active parameter indices */
  int local_every;       /* every local_every-th pick is restricted to the incumbent's neighbourhood */
  int stall_after, stall_variance;
  double stall_boost;
  int local_radius;      /* neighbourhood: every parameter within this many value indices */
  int local_kind;        /* -1: box of local_radius around the incumbent, else an mpt_neighbor_kind */
  int local_top;         /* neighbourhoods of this many best observations with free neighbours */
  int local_stalled;     /* 1: local picks only while stalled */
  int local_children, elite_size;
  uint8_t *nbmark;       /* N: candidate in the current local set */
  int64_t *nblist, n_nb, cap_nb; /* the marked ids (to clear) */
  int *inc_idx;          /* value indices of the incumbent (scratch, all dims) */
  double *mbuf, *sbuf;   /* prediction block buffers */
  int feas_dims;         /* inputs of the feasibility model: the first feas_dims of bo_encode's D */
  int32_t *fslot;        /* N: cache slot of a candidate's kernel values to the feasibility observations, or -1 */
  int64_t *fs_id;        /* FEAS_SLOTS: candidate of each slot (-1: free); then the slots' last uses and means'
                          * model (bo_feasibility.c) */
  int *fs_n, fs_stride;  /* values cached per slot, row length */
  double *fs_k;          /* FEAS_SLOTS x fs_stride kernel values */
  double *fs_x;          /* FEAS_SLOTS x D: the inputs (bo_encode) of each slot's candidate; then their means */
  bo_ranked *fq[2];      /* BO_BLOCK each: a block's contenders whose p is deferred (EI, log EI) */
  int64_t n_fq[2];
  bo_ranked *ranked;     /* the fallback's candidates by log EI (grown to the free candidates) */
  /* the pool of a batch (strategies/bo/bo_pool.c): picks after an ask's first come from it */
  int64_t batch_pool;    /* option batch_pool: its size (0: every pick fantasized over every candidate) */
  struct mpt_gp_pool *pool;
  int in_pool;           /* 1: scans go over the pool's members, predicted by the pool */
  int batch_fixed_norm;  /* option batch_normalization=fixed */
  int64_t pending_pool;  /* option pending_pool: this many pending evaluations or more go on the pool (0: never) */
  bo_ranked *pool_top;
  int64_t *pool_ids, cap_pool;
  double *pool_x;        /* cap_pool x D */
  int64_t cap_ranked;
  /* transfer from related observations (strategies/bo/bo_transfer.c): the GP models objective - prior mean,
   * the prior mean of candidate c being xfer_beta * xfer_pz[c] (xfer_pz NULL: none) */
  struct bo_transfer *xfer;
  double *xfer_pz, xfer_beta;
  /* the working set (strategies/bo/bo_ws.c): on a space of more than ws_size valid configurations (and without
   * model ranks) the GP holds n_slots = ws_size candidate slots, slot c being configuration ws_id[c]; else
   * ws_id is NULL and the GP holds every configuration, slot = id (bo_slot_id, bo_id_slot) */
  int64_t ws_size;       /* option working_set (0: every configuration) */
  int64_t ws_refresh;    /* option working_set_refresh: refreshed after this many observations (and on a new best) */
  int64_t ws_swap;       /* option working_set_swap: slots replaced per refresh */
  int64_t n_slots;       /* the GP's candidates */
  int64_t *ws_id;        /* n_slots: the configuration in each slot, or NULL */
  int32_t *ws_slot;      /* N: the slot of each configuration, -1 outside the working set */
  uint8_t *ws_mask;      /* n_slots: scratch by slot (seen, for the variance sum; pending, at a refresh) */
  int64_t ws_at;         /* observations told at the last refresh */
  double ws_best;        /* the best valid objective at the last refresh */
  int64_t ws_bound;      /* option working_set_bound: at a refresh the set shrinks to ws_bound / observations slots
                          * (0: never) */
  int64_t ws_min;        /* option working_set_min: never below this many slots */
} bo_state;

/* the configuration in GP slot c, and the slot of configuration id (-1: not in the working set) */
static inline int64_t bo_slot_id(const bo_state *b, int64_t c) { return b->ws_id ? b->ws_id[c] : c; }
static inline int64_t bo_id_slot(const bo_state *b, int64_t id) { return b->ws_id ? (int64_t)b->ws_slot[id] : id; }

#define BO_BLOCK 4096
enum { LOCAL_ELITE = 100, LOCAL_ALTERNATE, LOCAL_CROSS, LOCAL_ALT_CROSS };

#endif
