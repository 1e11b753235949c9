/* strategies/bo/bo_options.c: the option table of the `bo` strategy (strategies/bo/bo.c, which registers it)
 * and the readers that copy the options of the model, the acquisition, the batches, the portfolios, the local
 * picks and the stall rule into bo's state (strategies/bo/bo_state.h). */
#include <string.h>
#include "gp/gp.h"
#include "strategies/bo/bo_internal.h"
#include "strategies/bo/bo_transfer.h"

const mpt_option_spec bo_options[] = {
    {"acquisition", MPT_OPT_STRING, "ei", "acquisition function or portfolio", "ei|poi|lcb|lcb-srinivas|multi|advanced-multi", 1, 0},
    {"kernel", MPT_OPT_STRING, "matern32", "GP covariance function", "matern12|matern32|matern52|se", 1, 0},
    {"lengthscale", MPT_OPT_DOUBLE, "2.0", "GP lengthscale on the [0,1]-encoded parameters (initial value when fitted)", NULL, 1e-3, 1e3},
    {"noise", MPT_OPT_DOUBLE, "0.0001", "observation-noise variance relative to the signal variance", NULL, 0, 10},
    {"initial_samples", MPT_OPT_INT, "10", "size of the initial sample (valid observations)", NULL, 1, 1e9},
    {"sampling", MPT_OPT_STRING, "lhs-valid", "initial sample method (maximin: the best of 20 LHS samples by minimum pairwise distance in index encoding; lhs-valid: each parameter stratified by its marginal among the valid configurations, points the nearest valid configurations; lhs-conditional: LHS of the uniform distribution over the valid configurations through conditional quantiles; pairs: lhs-valid, then exchanges for valid configurations that cover more value pairs, weighted by valid count^pair_weight; pairs-strata: the same keeping each value's count within its valid-share band; pairs-swap: exchanges of values between design points, every value's count kept)", "maximin|lhs|random|lhs-valid|lhs-conditional|pairs|pairs-strata|pairs-swap", 1, 0},
    {"pair_weight", MPT_OPT_DOUBLE, "1.0", "sampling=pairs/pairs-strata/pairs-swap: a value pair's weight is its count among the valid configurations to this power (0: every occurring pair alike)", NULL, 0, 4},
    {"pair_candidates", MPT_OPT_INT, "4096", "sampling=pairs/pairs-strata: candidates drawn per sweep when the space is larger", NULL, 1, 1e9},
    {"random_samples", MPT_OPT_INT, "0", "this many of the initial samples are uniform random valid configurations (distinct from the rest, drawn after them), the others by `sampling`", NULL, 0, 1e9},
    {"gp_memory_limit", MPT_OPT_DOUBLE, "0", "MB the objective's GP may hold (it grows with the observations times the candidates); an ask that needs more fails with the size it needs (0: no limit)", NULL, 0, 1e12},
    {"fit_hyperparameters", MPT_OPT_BOOL, "0", "fit lengthscales/variance/noise by maximizing the marginal likelihood with priors", NULL, 1, 0},
    {"ard", MPT_OPT_BOOL, "1", "one lengthscale per parameter when fitting", NULL, 1, 0},
    {"refit_interval", MPT_OPT_INT, "10", "refit the hyperparameters every this many valid observations", NULL, 1, 1e9},
    {"encoding", MPT_OPT_STRING, "index+onehot", "numeric encoding of parameter values for the GP (onehot: distance = number of differing parameters; index+onehot: both, the one-hot part weighted by onehot_weight)", "index|value|log2|onehot|index+onehot", 1, 0},
    {"onehot_weight", MPT_OPT_DOUBLE, "0.5", "encoding=index+onehot: each differing parameter adds onehot_weight^2 to the squared distance (a full-range step of one index-encoded parameter adds 1)", NULL, 0, 100},
    {"binary_weight", MPT_OPT_DOUBLE, "0.6", "encoding=index+onehot: the index code of two-valued parameters is scaled by this, so flipping one adds binary_weight^2 + onehot_weight^2 to the squared distance (1: as a full-range step of a many-valued parameter)", NULL, 0, 100},
    {"transform", MPT_OPT_STRING, "rank", "objective transform before modelling: log, none, rank (normal scores of the ranks), log-clip (log, clipped at the median)", "log|none|rank|log-clip", 1, 0},
    {"exploration", MPT_OPT_STRING, "cv", "exploration margin of EI/POI: contextual variance, fixed value, or none", "cv|fixed|none", 1, 0},
    {"exploration_factor", MPT_OPT_DOUBLE, "0.5", "multiplier of the contextual variance, or the fixed margin (standardized units)", NULL, 0, 100},
    {"lcb_kappa", MPT_OPT_DOUBLE, "2.0", "LCB: mean - kappa * sd", NULL, 0, 100},
    {"feasibility", MPT_OPT_STRING, "auto", "feasibility model of failed evaluations: on once a failure is seen (auto) or off", "auto|off", 1, 0},
    {"feasibility_threshold", MPT_OPT_DOUBLE, "0.85", "candidates with a lower probability of feasibility are not proposed", NULL, 0, 1},
    {"feasibility_exponent", MPT_OPT_DOUBLE, "16", "when no candidate reaches feasibility_threshold: the candidate of largest EI x (probability of feasibility)^this (0: the largest EI, feasibility ignored)", NULL, 0, 1000},
    {"feasibility_lengthscale", MPT_OPT_DOUBLE, "2.0", "lengthscale of the feasibility model (GP regression on 1 = ok / 0 = failed labels)", NULL, 1e-3, 1e3},
    {"batch", MPT_OPT_STRING, "quantile", "fantasy value for pending points in batched asks: posterior mean (kriging believer), worst observed (constant liar), or the pessimistic quantile mean + batch_quantile * sd (quantile)", "believer|liar|quantile", 1, 0},
    {"batch_pool", MPT_OPT_INT, "512", "batched asks: the picks after an ask's first come from a pool of this many candidates, the best by EI in one pass over every candidate, and only the pool's posterior takes the fantasies of the picks (an ask of 16 costs about one of 1; 0: every pick fantasized over every candidate, a pass each)", NULL, 0, 1e9},
    {"pending_pool", MPT_OPT_INT, "1", "asks with at least this many evaluations pending from earlier asks (asynchronous workers) fantasize them on the pool of batch_pool candidates (at least 2 per pending evaluation and 4 per pick), built from the GP without them, and take every pick from it, instead of fantasizing them over every candidate, a pass over V each (0: never; needs batch_pool > 0)", NULL, 0, 1e9},
    {"batch_normalization", MPT_OPT_STRING, "fixed", "batch_pool > 0: the output normalization of the pool's posterior stays the observations' (fixed: a fantasy changes other candidates only through the kernel) or includes the fantasies (as batch_pool=0)", "fixed|fantasies", 1, 0},
    {"batch_quantile", MPT_OPT_DOUBLE, "0.5", "batch=quantile: fantasy = posterior mean + this many posterior sd (worse than the mean: the objective is minimized)", NULL, -10, 10},
    {"local_every", MPT_OPT_INT, "0", "every this many picks, maximize the acquisition only over a local set (local_kind; 0: never)", NULL, 0, 1e6},
    {"stall_after", MPT_OPT_INT, "30", "after this many evaluations without a new best, switch to stall_action (0: never)", NULL, 0, 1e6},
    {"stall_action", MPT_OPT_STRING, "boost", "while stalled: multiply the exploration margin by stall_boost, or pick the candidate of largest posterior variance every other pick", "boost|variance", 1, 0},
    {"stall_boost", MPT_OPT_DOUBLE, "5.0", "multiplier of the exploration margin while stalled", NULL, 0, 1e6},
    {"local_radius", MPT_OPT_INT, "1", "neighbourhood of local picks (local_kind=box): every parameter within this many value indices of the incumbent", NULL, 1, 1e6},
    {"local_kind", MPT_OPT_STRING, "hamming", "neighbourhood of local picks", "box|hamming|adjacent|strictly-adjacent|elite|hamming+elite|cross|hamming+cross", 1, 0},
    {"local_children", MPT_OPT_INT, "8", "local_kind=cross: crossover children of the elite offered to the acquisition per local pick", NULL, 1, 1e6},
    {"elite_size", MPT_OPT_INT, "8", "local_kind=cross: parents are drawn from this many best valid observations", NULL, 2, 1e6},
    {"local_top", MPT_OPT_INT, "1", "local picks search the neighbourhoods of this many best observations (those with unevaluated neighbours)", NULL, 1, 1e6},
    {"local_when", MPT_OPT_STRING, "always", "local picks (local_every) always, or only while stalled (stall_after)", "always|stalled", 1, 0},
    {"skip_threshold", MPT_OPT_INT, "5", "portfolios: skip an acquisition function after this many duplicate/unimproving proposals", NULL, 1, 1e6},
    {"required_improvement", MPT_OPT_DOUBLE, "0.15", "advanced-multi: improvement (standardized) an acquisition function must bring to keep its turn", NULL, 0, 100},
    {"multi_discount", MPT_OPT_DOUBLE, "0.65", "multi: discount of the duplicate counter on a fresh proposal", NULL, 0, 1},
    {"advanced_discount", MPT_OPT_DOUBLE, "0.75", "advanced-multi: discount of past improvements in each function's score", NULL, 0, 1},
    {"model_share0", MPT_OPT_DOUBLE, "1", "--model-ranks: rank 0's slice of the candidates relative to each model rank's (rank 0 also merges the pools and marks the skipped candidates of the whole space, so a share below 1 evens the ranks' work)", NULL, 0.01, 1},
    {"working_set", MPT_OPT_INT, "32768", "on a space of more valid configurations than this, the GP holds this many candidates (every value of every parameter and random configurations at first, refreshed towards the neighbours of the best observations) instead of every one: an observation then costs O(working_set n_obs) instead of O(configurations n_obs); 0: every configuration (no working set; nor with model ranks)", NULL, 0, 1e9},
    {"working_set_refresh", MPT_OPT_INT, "64", "the working set is refreshed when the best objective improves and after this many observations", NULL, 1, 1e9},
    {"working_set_swap", MPT_OPT_INT, "128", "candidates of the working set replaced per refresh (those of the smallest EI; each costs O(n_obs^2))", NULL, 1, 1e9},
    {"working_set_bound", MPT_OPT_DOUBLE, "16777216", "observations x slots (default 2^24: 32768 slots up to 512 observations, 8192 at 2048, working_set_min from 4096): at a refresh of the working set, when the observations times its slots exceed this, it shrinks to this / observations slots (working_set_min at least), keeping the pending evaluations, the configurations just brought in, the incumbents' neighbours and the slots of the largest EI; each observation then costs O(bound) instead of O(working_set n_obs) (0: never shrinks)", NULL, 0, 1e15},
    {"working_set_min", MPT_OPT_INT, "4096", "working_set_bound: the working set never shrinks below this many slots", NULL, 1, 1e9},
    BO_TRANSFER_OPTIONS,
    {0},
};

/* the model and acquisition options: acquisition, GP, transform, exploration, feasibility, batch, portfolio */
void bo_read_model_options(bo_state *b, mpt_strategy *s) {
  const char *acq = mpt_strategy_opt_str(s, "acquisition");
  b->acq = strcmp(acq, "poi") == 0 ? ACQ_POI : strcmp(acq, "lcb") == 0 ? ACQ_LCB
         : strcmp(acq, "lcb-srinivas") == 0 ? ACQ_LCBS : strcmp(acq, "multi") == 0 ? ACQ_MULTI
         : strcmp(acq, "advanced-multi") == 0 ? ACQ_ADVANCED : ACQ_EI;
  mpt_gp_config_default(&b->gcfg);
  b->gcfg.kernel = mpt_gp_kernel_parse(mpt_strategy_opt_str(s, "kernel"));
  b->gcfg.lengthscale = mpt_strategy_opt_double(s, "lengthscale");
  b->gcfg.noise = mpt_strategy_opt_double(s, "noise");
  b->gcfg.max_bytes = (int64_t)(mpt_strategy_opt_double(s, "gp_memory_limit") * 1048576.0);
  b->n_init = (int)mpt_strategy_opt_int(s, "initial_samples");
  b->fit = mpt_strategy_opt_bool(s, "fit_hyperparameters");
  b->ard = mpt_strategy_opt_bool(s, "ard");
  b->refit_interval = (int)mpt_strategy_opt_int(s, "refit_interval");
  const char *tr = mpt_strategy_opt_str(s, "transform");
  b->transform_log = strcmp(tr, "none") != 0;
  b->post = strcmp(tr, "rank") == 0 ? 1 : strcmp(tr, "log-clip") == 0 ? 2 : 0;
  const char *ex = mpt_strategy_opt_str(s, "exploration");
  b->explore_cv = strcmp(ex, "cv") == 0;
  b->explore_factor = strcmp(ex, "none") == 0 ? 0.0 : mpt_strategy_opt_double(s, "exploration_factor");
  b->lcb_kappa = mpt_strategy_opt_double(s, "lcb_kappa");
  b->feas_mode = strcmp(mpt_strategy_opt_str(s, "feasibility"), "off") != 0;
  b->feas_threshold = mpt_strategy_opt_double(s, "feasibility_threshold");
  b->feas_exponent = mpt_strategy_opt_double(s, "feasibility_exponent");
  b->feas_ls = mpt_strategy_opt_double(s, "feasibility_lengthscale");
  b->batch_liar = strcmp(mpt_strategy_opt_str(s, "batch"), "liar") == 0;
  b->batch_quantile = strcmp(mpt_strategy_opt_str(s, "batch"), "quantile") == 0
                          ? mpt_strategy_opt_double(s, "batch_quantile") : 0.0;
  b->batch_pool = mpt_strategy_opt_int(s, "batch_pool");
  b->pending_pool = mpt_strategy_opt_int(s, "pending_pool");
  b->ws_size = mpt_strategy_opt_int(s, "working_set");
  b->ws_refresh = mpt_strategy_opt_int(s, "working_set_refresh");
  b->ws_swap = mpt_strategy_opt_int(s, "working_set_swap");
  b->ws_bound = (int64_t)mpt_strategy_opt_double(s, "working_set_bound");
  b->ws_min = mpt_strategy_opt_int(s, "working_set_min");
  b->batch_fixed_norm = strcmp(mpt_strategy_opt_str(s, "batch_normalization"), "fixed") == 0;
  b->skip_threshold = (int)mpt_strategy_opt_int(s, "skip_threshold");
  b->req_improvement = mpt_strategy_opt_double(s, "required_improvement");
  b->disc_multi = mpt_strategy_opt_double(s, "multi_discount");
  b->disc_adv = mpt_strategy_opt_double(s, "advanced_discount");
}

/* the options of local picks and of the stall rule */
void bo_read_local_options(bo_state *b, mpt_strategy *s) {
  b->local_every = (int)mpt_strategy_opt_int(s, "local_every");
  b->local_radius = (int)mpt_strategy_opt_int(s, "local_radius");
  const char *lk = mpt_strategy_opt_str(s, "local_kind");
  b->local_kind = strcmp(lk, "box") == 0 ? -1 : strcmp(lk, "elite") == 0 ? LOCAL_ELITE
                : strcmp(lk, "hamming+elite") == 0 ? LOCAL_ALTERNATE : strcmp(lk, "cross") == 0 ? LOCAL_CROSS
                : strcmp(lk, "hamming+cross") == 0 ? LOCAL_ALT_CROSS : mpt_neighbor_kind_parse(lk);
  b->local_children = (int)mpt_strategy_opt_int(s, "local_children");
  b->elite_size = (int)mpt_strategy_opt_int(s, "elite_size");
  b->local_top = (int)mpt_strategy_opt_int(s, "local_top");
  b->local_stalled = strcmp(mpt_strategy_opt_str(s, "local_when"), "stalled") == 0;
  b->stall_after = (int)mpt_strategy_opt_int(s, "stall_after");
  b->stall_variance = strcmp(mpt_strategy_opt_str(s, "stall_action"), "variance") == 0;
  b->stall_boost = mpt_strategy_opt_double(s, "stall_boost");
}
