/* strategies/bo/bo.c: the `bo` strategy, discrete Bayesian optimization after Willemsen et al. (PMBS 2021,
 * Kernel Tuner's bayes_opt): a GP (gp/) over the numeric encodings of every valid configuration
 * (parameters with one value pruned), an initial Latin-hypercube sample with the marginals of the valid
 * configurations (sampling=lhs-valid; or maximin, lhs, random, lhs-conditional; random_samples), acquisition maximized
 * exhaustively over every unevaluated valid configuration (EI, POI, LCB, LCB-Srinivas, the `multi`
 * and `advanced-multi` portfolios), the contextual-variance exploration factor, a feasibility model
 * learned from failed evaluations (BaCO-style hidden constraints: probability of feasibility times EI,
 * minimum-feasibility threshold), and batched asks by fantasizing pending and already chosen points
 * (batch=quantile, the default: the pessimistic quantile mean + batch_quantile * sd, which spreads a
 * batch a little further than the kriging believer, +0.025 at ask(16): docs/PERFORMANCE.md, batched
 * bo; or batch=believer, batch=liar).
 *
 * Model. By default the objective is replaced by the normal scores of its ranks among the valid
 * observations (transform=rank: robust to the heavy tail of kernel times; the GP keeps its factor and
 * only its outputs change, gp/gp.h mpt_gp_set_outputs); transform=log models log(objective) (falls
 * back to the raw value when a non-positive objective is seen). Failed evaluations are never put into
 * the objective's GP: they feed the feasibility model only, a second GP regressing 1 (ok) / 0 (failed)
 * labels, created at the first failure; its mean is the probability of feasibility that multiplies EI
 * and POI, and candidates below feasibility_threshold are not proposed; when none reaches it, the
 * candidate of largest EI x p^feasibility_exponent is (feasible_fallback).
 *
 * Inputs. Each configuration is the index encoding of its active parameters on [0, 1] plus a one-hot
 * code of every active parameter (encoding=index+onehot, onehot_weight 0.5: each differing parameter
 * adds 0.25 to the squared distance), so the Matern 3/2 kernel sees both the order of the values and
 * the Hamming distance; with the index encoding alone configurations one parameter apart are nearly
 * the same point and their often large differences (block sizes that must be powers of two, options
 * that only pay off together) are never explored. The index code of a two-valued parameter (a flag,
 * whose one-hot code already says everything) is scaled by binary_weight 0.6: a flip then adds
 * 0.36 + 0.25 to the squared distance instead of 1.25, so the model carries what it learned about one
 * flag setting over to configurations that differ in other flags too (optima that need several flags
 * changed together, A100: +0.05, docs/PERFORMANCE.md, "flags closer"). The feasibility model uses the
 * index part only.
 *
 * Defaults tuned on the six convolution spaces (docs/PERFORMANCE.md, bo section): lengthscale 2.0,
 * exploration factor 0.5, feasibility threshold 0.85, 10 initial samples (not Kernel Tuner's 20: the
 * first score term at k = 20 is then model-based) stratified by the valid marginals (sampling=lhs-valid:
 * +0.013 over the index-range maximin LHS at ask(1), +0.051 at ask(16), seeds 36..315:
 * docs/PERFORMANCE.md, "initial design with the valid marginals"), and a stall rule: after stall_after = 30
 * evaluations without a new best valid objective the exploration margin is multiplied by stall_boost
 * (5) until the next improvement (stall_action=variance instead alternates EI picks with
 * largest-posterior-variance picks). The stall test reads only the told sequence (resume-exact).
 *
 * Local picks (off by default; local_every = n > 0): every n-th pick maximizes the acquisition only
 * over a local set: the Hamming (or adjacent, strictly-adjacent, box) neighbourhood of the best
 * local_top observations, the elite subspace (every recombination of the best local_top), or crossover
 * children of the elite (drawn from a generator seeded by the told count, so resume stays exact).
 *
 * Portfolios (mptune's reading of Kernel Tuner's): `multi` takes ei, poi, lcb in turn and drops a
 * function after skip_threshold proposals that duplicate another function's (the counter is multiplied
 * by multi_discount on a fresh proposal); `advanced-multi` lets the function with the best discounted
 * record of observed improvements (advanced_discount) propose, and benches one whose record falls
 * below required_improvement for skip_threshold picks.
 *
 * Resume: the initial sample is drawn at creation from the seed, and observations enter the model in
 * the order they are told, so telling a run's log before the first ask continues it: with the same picks (test_bo's
 * test_resume), but for near-ties, since the run of logged observations is taken in as one batch, which equals
 * single adds to rounding (with fit_hyperparameters=1 too: refits happen at fixed counts of valid observations,
 * n_init + j * refit_interval, each on exactly the observations up to that count).
 *
 * Work per ask. tell() only queues observations; ask() adds the queued ones to the GP incrementally
 * (O(n_cand * n_obs) each, a run of them in one pass over V: gp/gp.h mpt_gp_add_many), then scans all
 * candidates for the first pick; the later picks of a batch scan the pool of the best batch_pool candidates
 * (strategies/bo/bo_pool.c), whose posterior alone takes the fantasies (batch_pool=0: a scan of all
 * candidates and a fantasy over all of them per pick); evaluations pending from earlier asks (asynchronous
 * workers) are fantasized on that pool too, and then every pick comes from it (pending_pool); the
 * feasibility probability is computed only for candidates whose EI could win, from cached kernel
 * values (strategies/bo/bo_feasibility.c); local picks draw their candidate sets in strategies/bo/bo_local.c.
 *
 * Files. This file is the strategy (options, create, tell, ask, the scans); it sits on the model
 * (strategies/bo/bo_model.c), the feasibility model (strategies/bo/bo_feasibility.c) and the local
 * candidate sets (strategies/bo/bo_local.c), which sit on the encoding (strategies/bo/bo_encode.c);
 * strategies/bo/bo_state.h is the state they share. With model ranks (b->dist, --model-ranks) the first
 * pick's scan, the pending fantasies' posterior, the pool of a batch (its members' columns gathered to rank 0,
 * whose pool then takes this ask's fantasies as here) and the exploration margin's variance sum go to the
 * candidates' slices on those ranks (strategies/bo/bo_dist.c) and b->gp keeps the observations only. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_slices.h"
#include "strategies/bo/bo_dist_hook.h"
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_feasibility.h"
#include "strategies/bo/bo_local.h"
#include "strategies/bo/bo_model.h"
#include "strategies/bo/bo_transfer.h"
#include "strategies/bo/bo_pool.h"
#include "gp/gp_pool.h"

static const mpt_option_spec bo_options[] = {
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
    BO_TRANSFER_OPTIONS,
    {0},
};

/* ---------------------------------------------------------------- helpers */

static double norm_cdf(double z) { return 0.5 * erfc(-z / M_SQRT2); }
static double log_norm_pdf(double z) { return -0.5 * z * z - 0.9189385332046727; }

/* an upper bound of log(q) for finite q > 0, from its binary exponent: q < 2^e, so log q < e ln 2
 * (plus a margin for rounding in libm's log) */
static double log_upper(double q) {
  uint64_t u;
  memcpy(&u, &q, sizeof u);
  int e = (int)((u >> 52) & 0x7ff) - 1022;
  return e * 0.6931471805599453 + 1e-9;
}

static double log_poi(double z) {
  if (z > -6) return log(norm_cdf(z));
  return log_norm_pdf(z) - log(-z) + log1p(-1.0 / (z * z));
}

/* ---------------------------------------------------------------- create/destroy */

/* random_samples: init_ids[keep, n) are replaced by uniform random valid configurations not among
 * init_ids[0, keep) nor drawn before (from the run's generator, after the design: resume-exact) */
static int mix_random(bo_state *b, mpt_strategy *s, int64_t keep, int64_t n) {
  int64_t *r = malloc(sizeof(int64_t) * (size_t)n);
  if (!r) return MPT_ERR_NOMEM;
  int64_t got = mpt_space_sample_random(s->space, &s->rng, n, r), w = keep;
  if (got < 0) { free(r); return (int)got; }
  for (int64_t i = 0; i < got && w < n; i++) {
    int dup = 0;
    for (int64_t j = 0; j < keep && !dup; j++) dup = b->init_ids[j] == r[i];
    if (!dup) b->init_ids[w++] = r[i];
  }
  free(r);
  return 0;
}

/* the model and acquisition options: acquisition, GP, transform, exploration, feasibility, batch, portfolio */
static void read_model_options(bo_state *b, mpt_strategy *s) {
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
  b->batch_fixed_norm = strcmp(mpt_strategy_opt_str(s, "batch_normalization"), "fixed") == 0;
  b->skip_threshold = (int)mpt_strategy_opt_int(s, "skip_threshold");
  b->req_improvement = mpt_strategy_opt_double(s, "required_improvement");
  b->disc_multi = mpt_strategy_opt_double(s, "multi_discount");
  b->disc_adv = mpt_strategy_opt_double(s, "advanced_discount");
}

/* the options of local picks and of the stall rule */
static void read_local_options(bo_state *b, mpt_strategy *s) {
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

/* the scratch of the scans: the encoding's point, the taken marks, the prediction blocks, the deferred
 * contenders, the incumbent's value indices; 0 or an error */
static int alloc_scan_buffers(bo_state *b, mpt_strategy *s, mpt_error *err) {
  int dims = mpt_space_dims(s->space);
  b->inc_idx = malloc(sizeof(int) * (size_t)(dims > 0 ? dims : 1));
  if (!b->inc_idx) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory");
  b->xq = malloc(sizeof(double) * (size_t)b->D);
  b->taken = calloc((size_t)(b->N > 0 ? b->N : 1), 1);
  b->mbuf = malloc(sizeof(double) * BO_BLOCK);
  b->sbuf = malloc(sizeof(double) * BO_BLOCK);
  b->fq[0] = malloc(sizeof(bo_ranked) * BO_BLOCK);
  b->fq[1] = malloc(sizeof(bo_ranked) * BO_BLOCK);
  b->run_x = malloc(sizeof(double) * 16 * (size_t)b->D);
  b->run_y = malloc(sizeof(double) * 16);
  if (!b->run_x || !b->run_y || !b->xq || !b->taken || !b->mbuf || !b->sbuf || !b->fq[0] || !b->fq[1])
    return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for %lld candidates", (long long)b->N);
  return 0;
}

/* the initial sample (option sampling, random_samples), fixed by the seed so that a resumed run continues
 * the same sample; 0 or an error */
static int draw_initial_sample(bo_state *b, mpt_strategy *s, mpt_error *err) {
  const mpt_space *sp = s->space;
  int64_t ni = b->n_init < b->N ? b->n_init : b->N;
  b->init_ids = malloc(sizeof(int64_t) * (size_t)(ni > 0 ? ni : 1));
  if (!b->init_ids) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory");
  const char *sm = mpt_strategy_opt_str(s, "sampling");
  int64_t got;
  if (ni <= 0) got = 0;
  else if (strcmp(sm, "random") == 0) got = mpt_space_sample_random(sp, &s->rng, ni, b->init_ids);
  else if (strcmp(sm, "lhs") == 0) got = mpt_space_sample_lhs(sp, &s->rng, ni, b->init_ids);
  else if (strcmp(sm, "lhs-valid") == 0) got = mpt_space_sample_lhs_valid(sp, b->act, b->n_act, &s->rng, ni, b->init_ids);
  else if (strcmp(sm, "lhs-conditional") == 0) got = mpt_space_sample_lhs_conditional(sp, b->act, b->n_act, &s->rng, ni, b->init_ids);
  else if (strncmp(sm, "pairs", 5) == 0)
    got = mpt_space_sample_pairs(sp, b->act, b->n_act, &s->rng, ni, mpt_strategy_opt_double(s, "pair_weight"),
                                 strcmp(sm, "pairs-strata") == 0 ? 1 : strcmp(sm, "pairs-swap") == 0 ? 2 : 0, mpt_strategy_opt_int(s, "pair_candidates"), b->init_ids);
  else got = mpt_space_sample_maximin(sp, &s->rng, ni, 20, b->init_ids);
  if (got < 0) return mpt_error_set(err, (int)got, "bo: initial sample failed");
  if (got > 0 && strcmp(sm, "random") != 0 && mpt_strategy_opt_int(s, "random_samples") > 0) {
    int64_t nr = mpt_strategy_opt_int(s, "random_samples");
    if (nr > got) nr = got;
    int rc = mix_random(b, s, got - nr, got);
    if (rc != 0) return mpt_error_set(err, rc, "bo: out of memory");
  }
  b->n_init_ids = got;
  return 0;
}

static int bo_create(mpt_strategy *s, mpt_error *err) {
  bo_state *b = calloc(1, sizeof *b);
  if (!b) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory");
  s->data = b;
  b->N = mpt_space_size(s->space);
  read_model_options(b, s);
  read_local_options(b, s);
  b->best_t = INFINITY;
  for (int a = 0; a < AF_N; a++) b->active[a] = 1;
  b->active[AF_LCBS] = 0; /* the portfolios use ei, poi, lcb (as Kernel Tuner's) */
  if (bo_encoding_init(b, s) != 0 || bo_transfer_create(b, s) != 0)
    return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory");
  int rc = alloc_scan_buffers(b, s, err);
  if (rc) return rc;
  rc = mpt_gp_create_from(&b->gcfg, b->D, b->N, bo_encode_rows, b, &b->gp, err);
  if (rc) return rc;
  return draw_initial_sample(b, s, err);
}

static void bo_destroy(mpt_strategy *s) {
  bo_state *b = s->data;
  if (!b) return;
  mpt_gp_slices_free(b->dist);
  mpt_gp_free(b->gp);
  free(b->ty); free(b->act); free(b->inc_idx); free(b->enc_cfg); free(b->enc_full); free(b->xq); free(b->fs_x);
  free(b->obs_id); free(b->obs_y); free(b->obs_ok); mpt_gp_free(b->fgp); free(b->falpha);
  free(b->init_ids); free(b->pend); free(b->fslot); free(b->fs_id); free(b->fs_n); free(b->fs_k); free(b->nbmark); free(b->nblist); free(b->taken); free(b->mbuf); free(b->sbuf);
  free(b->fq[0]); free(b->fq[1]); free(b->ranked); free(b->run_x); free(b->run_y);
  mpt_gp_pool_free(b->pool); free(b->pool_top); free(b->pool_ids); free(b->pool_x);
  bo_transfer_free(b);
  free(b);
  s->data = NULL;
}

/* ---------------------------------------------------------------- tell */

static void bo_tell(mpt_strategy *s, const mpt_obs *obs, int n) {
  bo_state *b = s->data;
  for (int i = 0; i < n; i++) {
    const mpt_obs *o = &obs[i];
    int af = -1, asked = 0;
    for (int64_t k = 0; k < b->n_pend; k++)
      if (b->pend[k].id == o->id) {
        af = b->pend[k].af;
        b->pend[k] = b->pend[--b->n_pend];
        asked = 1;
        break;
      }
    if (o->status == MPT_STATUS_CANCELLED) continue; /* not a measurement */
    /* one not asked (the default configuration a run measures first, the logged ones a resumed run is
     * told) counts towards the initial phase as an ask of it would have: a resumed run leaves the
     * initial phase where the uninterrupted run did */
    if (!asked && b->n_ok + b->n_pend < b->n_init && (b->init_asked < 3 * (int64_t)b->n_init || b->n_ok < 2))
      b->init_asked++;
    int ok = mpt_obs_valid(o);
    /* advanced-multi credit: improvement over the best objective so far, in standard deviations of the
     * objectives told (log ones with the log transform). Not against best_t: with the rank transform (the
     * default) that is a normal score, and every improvement came out negative */
    if (ok && af >= 0 && b->n_ok >= 2) {
      int lg = b->transform_log && o->objective > 0;
      double t = lg ? log(o->objective) : o->objective, k = (double)b->n_ok;
      double var = (b->told_sum2[lg] - b->told_sum[lg] * b->told_sum[lg] / k) / (k - 1);
      double imp = var > 0 ? (b->told_best[lg] - t) / sqrt(var) : 0;
      b->score[af] = b->disc_adv * b->score[af] + (imp > 0 ? imp : 0);
    }
    for (int d = 0; ok && d < 2; d++) {
      double v = d && o->objective > 0 ? log(o->objective) : o->objective;
      if (b->n_ok == 0 || v < b->told_best[d]) b->told_best[d] = v;
      b->told_sum[d] += v;
      b->told_sum2[d] += v * v;
    }
    if (bo_push_obs(b, o->id, ok ? o->objective : NAN, ok)) return; /* out of memory: observation lost */
    if (ok) b->n_ok++;
    else b->n_fail++;
  }
}

/* ---------------------------------------------------------------- ask */

static int add_pending(bo_state *b, int64_t id, int af) {
  if (b->n_pend == b->cap_pend) {
    int64_t nc = b->cap_pend ? b->cap_pend * 2 : 64;
    bo_pending *p = realloc(b->pend, sizeof *p * (size_t)nc);
    if (!p) return MPT_ERR_NOMEM;
    b->pend = p;
    b->cap_pend = nc;
  }
  b->pend[b->n_pend].id = id;
  b->pend[b->n_pend].af = af;
  b->n_pend++;
  return 0;
}

typedef struct pick {
  double val[AF_N];
  int64_t id[AF_N];
  double val_any;        /* fallback when no candidate reaches the feasibility threshold: the best
                          * EI x p^feasibility_exponent (log domain), or the best EI without a model */
  int64_t id_any;
  double val_var;        /* largest posterior sd among feasible candidates (when asked for) */
  int64_t id_var;
} pick;

/* The candidates a scan visits, in blocks: every candidate in blocks of BO_BLOCK, or with local == 2 only
 * the marked neighbourhood (b->nblist), one candidate per block; in a batch's pool (b->in_pool) its
 * members, one per block. */
static inline int64_t cand_blocks(const bo_state *b, int local) {
  return b->in_pool ? mpt_gp_pool_size(b->pool) : local == 2 ? b->n_nb : (b->N + BO_BLOCK - 1) / BO_BLOCK;
}
static inline void cand_block(const bo_state *b, int local, int64_t bi, int64_t *b0, int64_t *b1) {
  *b0 = b->in_pool ? mpt_gp_pool_id(b->pool, bi) : local == 2 ? b->nblist[bi] : bi * BO_BLOCK;
  *b1 = b->in_pool || local == 2 ? *b0 + 1 : *b0 + BO_BLOCK < b->N ? *b0 + BO_BLOCK : b->N;
}
/* the posterior of block bi ([b0, b1)) into b->mbuf, b->sbuf (normalized variances) */
static inline void cand_predict(bo_state *b, int64_t bi, int64_t b0, int64_t b1) {
  if (b->in_pool) mpt_gp_pool_predict_var(b->pool, bi, bi + 1, b->mbuf, b->sbuf);
  else mpt_gp_predict_block_var(b->gp, b0, b1, b->mbuf, b->sbuf);
  bo_transfer_shift(b, b0, b1, b->mbuf);
}
static inline void cand_normalization(const bo_state *b, double *m, double *sc) {
  if (b->in_pool) mpt_gp_pool_normalization(b->pool, m, sc);
  else mpt_gp_normalization(b->gp, m, sc);
}
/* candidate c may be proposed: not seen, not taken in this ask, and inside the box when local == 1 (in
 * the marked neighbourhood when local == 2 and the scan goes over a pool) */
static inline int cand_free(const bo_state *b, const mpt_strategy *s, int local, int64_t c) {
  return !b->taken[c] && !s->seen[c] && (local != 1 || bo_in_local(b, s->space, c)) &&
         (local != 2 || !b->in_pool || b->nbmark[c]);
}

/* When no candidate reaches the feasibility threshold: the free candidate of largest
 * log EI + feasibility_exponent log p, i.e. EI x p^exponent (BaCO's EI x p leans on the threshold; without
 * it, a high power keeps the search near configurations that run while letting a much larger EI win).
 * Since p <= 1 the value is at most log EI: the candidates go by log EI, largest first (ties by id: a
 * heap, popped only as far as needed), and p (a kernel sum over the failure observations) is computed only
 * until log EI falls to the best value found. Without memory for the ordering the scan's fallback (the
 * largest EI) stays. */
static void feasible_fallback(bo_state *b, mpt_strategy *s, double xi, int local, pick *pk) {
  double m, sc;
  cand_normalization(b, &m, &sc);
  double fb = (b->best_t - m) / sc;
  int64_t n_blocks = cand_blocks(b, local), n = 0, need = b->in_pool ? n_blocks : local == 2 ? b->n_nb : b->N;
  if (need > b->cap_ranked) {
    bo_ranked *r = realloc(b->ranked, sizeof *r * (size_t)need);
    if (!r) return;
    b->ranked = r;
    b->cap_ranked = need;
  }
  bo_ranked *cand = b->ranked;
  for (int64_t bi = 0; bi < n_blocks; bi++) {
    int64_t b0, b1;
    cand_block(b, local, bi, &b0, &b1);
    cand_predict(b, bi, b0, b1);
    for (int64_t c = b0; c < b1; c++) {
      if (!cand_free(b, s, local, c)) continue;
      double mu = (b->mbuf[c - b0] - m) / sc, var = b->sbuf[c - b0];
      double sd = sqrt(var > 0 ? var : 0.0);
      if (sd < 1e-12) sd = 1e-12;
      double z = (fb - xi - mu) / sd;
      /* log EI: log sd + log(z Phi(z) + phi(z)), through the asymptotic form below z = -6 (as scan) */
      double le = z > -6 ? log(sd * (z * norm_cdf(z) + exp(log_norm_pdf(z)))) : log(sd / (z * z)) + log_norm_pdf(z);
      if (!(le > -INFINITY)) le = -DBL_MAX; /* EI 0: still a candidate, the last ones */
      cand[n].key = le;
      cand[n++].id = c;
    }
  }
  bo_ranked_heapify(cand, n);
  double best = -INFINITY;
  int64_t best_id = -1;
  while (n > 0 && cand[0].key > best) {
    bo_ranked r = bo_ranked_pop(cand, &n);
    double v = r.key + b->feas_exponent * log(bo_feas_p(b, r.id));
    if (v > best) { best = v; best_id = r.id; }
  }
  if (best_id >= 0) { pk->id_any = best_id; pk->val_any = best; }
}

/* The feasibility model's mean weights for this scan, and the cached candidates extended by the newest
 * observations: 1 when the scan multiplies by the probability of feasibility, 0 without a feasibility model
 * (or, out of memory, without one for this pick) */
static int prepare_feasibility(bo_state *b) {
  if (!b->fgp) return 0;
  int nf = mpt_gp_n_obs(b->fgp);
  if (nf + 1 != b->falpha_n) { /* the model grew since the weights were computed (the picks of a batch share them) */
    double *fa = realloc(b->falpha, sizeof(double) * (size_t)(nf + 1));
    if (!fa) return 0;
    b->falpha = fa;
    mpt_gp_mean_weights(b->fgp, b->falpha, &b->fm0);
    b->falpha_n = nf + 1;
  }
  bo_feas_extend(b);
  return 1;
}

/* EI alone (the default): 1 when a candidate with u = fb - xi - mu and normalized variance var cannot change
 * the pick, by bounds from the variance without square roots and divisions (margins far above the rounding
 * of sd and of the squares): EI <= sd (max(z, 0) + phi(0)) = max(u, 0) + phi(0) sd cannot beat the best
 * feasible EI so far (lin0); or z = u / sd < -6, where only the log EI of candidates before the first with
 * z > -6 counts (any_lin_id < 0), and log EI = log q - z^2 / 2 - log sqrt(2 pi) with
 * log q = 1.5 log sd^2 - log u^2 <= W (binary exponents) cannot beat the best feasible log EI so far (lg0)
 * when u^2 / 2 >= (W - log sqrt(2 pi) - lg0) sd^2. Such candidates change nothing: the same picks. */
static inline int ei_cannot_win(double u, double var, double lin0, double lg0, int64_t any_lin_id) {
  double vr = var > 1e-24 ? var : 1e-24, r = lin0 * (1 - 1e-12) - (u > 0 ? u : 0.0);
  if (r > 0 && vr * 0.15915494309189535 <= r * r * (1 - 1e-9)) return 1;
  if (u < 0 && u * u > 36 * vr * (1 + 1e-9)) {
    if (any_lin_id >= 0) return 1;
    if (lg0 > -INFINITY) {
      double w = 1.5 * log_upper(vr) - (log_upper(u * u) - 0.6931471805599453 - 2e-9) + 1e-9 -
                 0.9189385332046727 - lg0;
      if (w <= 0 || 0.5 * u * u >= w * vr * (1 + 1e-9)) return 1;
    }
  }
  return 0;
}

/* One scan over all free candidates: the argmax of every acquisition function the mode needs.
 * EI and POI are compared in the linear domain while some candidate has z > -6 (a linear-domain
 * candidate always beats one with z <= -6), and through their logarithms (asymptotic forms) only
 * while none has: this keeps log/erfc off the hot path. Feasibility multiplies EI and POI; candidates
 * under the threshold are skipped. When none reaches it, feasible_fallback picks the candidate.
 * With EI alone (the default) p is not computed candidate by candidate: a block's contenders (EI above
 * the best feasible EI x p so far) are queued and resolved at the block's end by EI, largest first,
 * until EI alone cannot win (bo_feas_resolve). In index order p would be computed for every contender
 * that beats the best so far, and where failures cluster in a region the GP rates high that is most
 * candidates (docs/PERFORMANCE.md, "bo: clustered failures"); the choice is the same (the largest
 * EI x p among feasible candidates, the smallest id among equal ones). */
static void scan(bo_state *b, mpt_strategy *s, double xi, double kappa_s, int local, int need_var, pick *pk) {
  double m, sc;
  cand_normalization(b, &m, &sc);
  double fb = (b->best_t - m) / sc;
  double lin[2] = {-INFINITY, -INFINITY}, lg[2] = {-INFINITY, -INFINITY};
  int64_t lin_id[2] = {-1, -1}, lg_id[2] = {-1, -1};
  double any_lin = -INFINITY, any_lg = -INFINITY;
  int64_t any_lin_id = -1, any_lg_id = -1;
  for (int a = 0; a < AF_N; a++) { pk->val[a] = -INFINITY; pk->id[a] = -1; }
  pk->val_var = -INFINITY;
  pk->id_var = -1;
  int multi = b->acq == ACQ_MULTI || b->acq == ACQ_ADVANCED;
  int need_ei = 1, need_poi = multi || b->acq == ACQ_POI; /* EI also serves as the fallback */
  int need_lcb = multi || b->acq == ACQ_LCB, need_lcbs = b->acq == ACQ_LCBS;
  int ei_only = !need_poi && !need_lcb && !need_lcbs && !need_var;
  int use_feas = prepare_feasibility(b), defer = use_feas && ei_only;
  /* local == 2: only the marked neighbourhood (one candidate per block), else every candidate */
  int64_t n_blocks = cand_blocks(b, local);
  for (int64_t bi = 0; bi < n_blocks; bi++) {
    int64_t b0, b1;
    cand_block(b, local, bi, &b0, &b1);
    cand_predict(b, bi, b0, b1); /* sbuf: normalized variances */
    for (int64_t c = b0; c < b1; c++) {
      if (!cand_free(b, s, local, c)) continue;
      double mu = (b->mbuf[c - b0] - m) / sc, var = b->sbuf[c - b0];
      if (ei_only && ei_cannot_win(fb - xi - mu, var, lin[0], lg[0], any_lin_id)) continue;
      double sd = sc * sqrt(var) / sc; /* = mpt_gp_predict_block's sd / sc */
      if (sd < 1e-12) sd = 1e-12;
      double z = (fb - xi - mu) / sd;
      double p = -1; /* probability of feasibility, computed on demand (p <= 1 bounds every product) */
#define FEAS_OK() (!use_feas || (p < 0 ? (p = bo_feas_p(b, c)) : p) >= b->feas_threshold)
      if (z > -6) {
        /* EI = sd (z Phi(z) + phi(z)) <= sd (max(z, 0) + phi(0)): when that cannot beat the best
         * feasible EI so far (lin[0] <= any_lin) the candidate changes nothing; skips erfc and exp */
        if (!need_poi && sd * ((z > 0 ? z : 0.0) + 0.3989422804014328) * (1 + 1e-12) <= lin[0]) goto rest;
        double cdf = norm_cdf(z);
        double ei = sd * (z * cdf + exp(log_norm_pdf(z)));
        if (ei > any_lin) { any_lin = ei; any_lin_id = c; }
        if (ei > lin[0] && defer) b->fq[0][b->n_fq[0]++] = (bo_ranked){ei, c};
        else if (ei > lin[0] && FEAS_OK()) {
          double v = use_feas ? ei * p : ei;
          if (v > lin[0]) { lin[0] = v; lin_id[0] = c; }
        }
        if (need_poi && cdf > lin[1] && FEAS_OK()) {
          double v = use_feas ? cdf * p : cdf;
          if (v > lin[1]) { lin[1] = v; lin_id[1] = c; }
        }
      } else if (any_lin_id < 0 || (need_poi && lin_id[1] < 0)) {
        /* log EI for z <= -6: log sd + log phi(z) - 2 log|z| (+ log1p(-3/z^2) < 0.09, dropped); with
         * a bound that cannot beat the best feasible value so far (lg[0] <= any_lg) the log is skipped */
        double q = sd / (z * z);
        if (!need_poi && log_upper(q) - 0.5 * z * z - 0.9189385332046727 <= lg[0]) goto rest;
        double le = log(q) - 0.5 * z * z - 0.9189385332046727;
        if (le > any_lg) { any_lg = le; any_lg_id = c; }
        if (lin_id[0] < 0 && le > lg[0] && defer) b->fq[1][b->n_fq[1]++] = (bo_ranked){le, c};
        else if (lin_id[0] < 0 && le > lg[0] && FEAS_OK()) {
          double v = use_feas ? le + log(p) : le;
          if (v > lg[0]) { lg[0] = v; lg_id[0] = c; }
        }
        if (need_poi && lin_id[1] < 0) {
          double lq = log_poi(z);
          if (lq > lg[1] && FEAS_OK()) {
            double v = use_feas ? lq + log(p) : lq;
            if (v > lg[1]) { lg[1] = v; lg_id[1] = c; }
          }
        }
      }
    rest:
      if (need_lcb) {
        double v = -(mu - b->lcb_kappa * sd);
        if (v > pk->val[AF_LCB] && FEAS_OK()) { pk->val[AF_LCB] = v; pk->id[AF_LCB] = c; }
      }
      if (need_var && sd > pk->val_var && FEAS_OK()) { pk->val_var = sd; pk->id_var = c; }
      if (need_lcbs) {
        double v = -(mu - kappa_s * sd);
        if (v > pk->val[AF_LCBS] && FEAS_OK()) { pk->val[AF_LCBS] = v; pk->id[AF_LCBS] = c; }
      }
#undef FEAS_OK
    }
    if (defer) {
      bo_feas_resolve(b, 0, 0, &lin[0], &lin_id[0]);
      bo_feas_resolve(b, 1, 1, &lg[0], &lg_id[0]);
    }
  }
  (void)need_ei;
  pk->id[AF_EI] = lin_id[0] >= 0 ? lin_id[0] : lg_id[0];
  pk->id[AF_POI] = lin_id[1] >= 0 ? lin_id[1] : lg_id[1];
  /* fallback when every candidate is under the feasibility threshold: the best EI x p^exponent (the best
   * EI alone spends most of the budget on failures on spaces with large infeasible regions:
   * docs/PERFORMANCE.md, "bo: the fallback under the feasibility threshold") */
  pk->id_any = any_lin_id >= 0 ? any_lin_id : any_lg_id;
  pk->val_any = any_lin_id >= 0 ? any_lin : any_lg;
  if (use_feas && pk->id[AF_EI] < 0 && pk->id_any >= 0 && b->feas_exponent > 0) feasible_fallback(b, s, xi, local, pk);
}

/* contextual variance (Willemsen et al.): mean posterior variance over the free candidates divided by
 * the magnitude of the best standardized observation (the GP keeps the sum over all candidates) */
static double exploration(bo_state *b, mpt_strategy *s) {
  if (b->explore_factor == 0) return 0;
  if (!b->explore_cv) return b->explore_factor;
  double m, sc;
  int64_t cnt = 0;
  mpt_gp_normalization(b->gp, &m, &sc);
  double sum = 0;
  if (!b->dist) sum = mpt_gp_variance_sum(b->gp, s->seen, &cnt);
  else if (bo_dist_variance_sum(b, s, &sum, &cnt, &s->ask_error) != 0) return 0; /* model ranks (the pick reports it) */
  if (cnt == 0) return 0;
  double fb = fabs((b->best_t - m) / sc);
  if (fb < 0.1) fb = 0.1;
  return b->explore_factor * (sum / (double)cnt) / fb;
}

/* chooses the acquisition function of this pick and returns its candidate */
static int64_t choose(bo_state *b, const pick *pk, int *af_out) {
  int af;
  switch (b->acq) {
  case ACQ_POI: af = AF_POI; break;
  case ACQ_LCB: af = AF_LCB; break;
  case ACQ_LCBS: af = AF_LCBS; break;
  case ACQ_MULTI: {
    /* round robin over the active functions; one that keeps proposing what another already proposes
     * is skipped after skip_threshold duplicates (the counter decays on a fresh proposal) */
    int n_act = 0;
    for (int a = 0; a < AF_LCBS; a++) n_act += b->active[a];
    af = -1;
    for (int t = 0; t < AF_LCBS && af < 0; t++) {
      int a = (b->rr + t) % AF_LCBS;
      if (b->active[a]) af = a;
    }
    b->rr = (af + 1) % AF_LCBS;
    int dup = 0;
    for (int a = 0; a < AF_LCBS; a++)
      if (a != af && b->active[a] && pk->id[a] == pk->id[af]) dup = 1;
    if (dup) b->dup_count[af]++;
    else b->dup_count[af] = (int)(b->dup_count[af] * b->disc_multi);
    if (b->dup_count[af] >= b->skip_threshold && n_act > 1) b->active[af] = 0;
    break;
  }
  case ACQ_ADVANCED: {
    /* the function with the best discounted record of improvements; one whose record falls below the
     * required improvement sits out skip_threshold picks; ties and the first picks go round robin */
    af = -1;
    double best = -1;
    for (int t = 0; t < AF_LCBS; t++) {
      int a = (b->rr + t) % AF_LCBS;
      if (b->dup_count[a] > 0) { b->dup_count[a]--; continue; }
      if (b->score[a] > best) { best = b->score[a]; af = a; }
    }
    if (af < 0) af = AF_EI;
    b->rr = (b->rr + 1) % AF_LCBS;
    if (b->iter >= 3 * AF_LCBS && b->score[af] < b->req_improvement) {
      b->dup_count[af] = b->skip_threshold;
      b->score[af] = b->req_improvement; /* comes back with a clean slate */
    }
    break;
  }
  default: af = AF_EI;
  }
  *af_out = af;
  int64_t id = pk->id[af];
  if (id < 0) id = pk->id_any;
  return id;
}

/* a uniformly random configuration neither seen nor taken in this ask, or -1 after 64 draws (an ask
 * that gives nothing is then topped up by the base layer's scan, strategy.c). The generator is seeded
 * from the run's seed and the number of observations told and pending (as the elite's children,
 * strategies/bo/bo_local.c), so a resumed run draws what the uninterrupted run drew at that point. */
static int64_t random_unseen(bo_state *b, mpt_strategy *s) {
  mpt_rng r;
  mpt_rng_seed(&r, s->seed * 0xD1B54A32D192ED03ull + (uint64_t)(b->n_obs + b->n_pend) * 0x94D049BB133111EBull + 2);
  return mpt_strategy_random_free(&r, b->N, s->seen, b->taken, 64, 0);
}

/* The initial sample until n_init valid observations (failed ones replaced by uniform random unseen ones),
 * into ids[*k, n); 0 or an error */
static int ask_initial(bo_state *b, mpt_strategy *s, int n, int64_t *ids, int *k) {
  while (*k < n && b->n_ok + b->n_pend < b->n_init && (b->init_asked < 3 * (int64_t)b->n_init || b->n_ok < 2)) {
    int64_t id = -1;
    while (b->init_pos < b->n_init_ids && id < 0) {
      int64_t c = b->init_ids[b->init_pos++];
      if (!mpt_strategy_is_seen(s, c) && !b->taken[c]) id = c;
    }
    if (id < 0 && (id = random_unseen(b, s)) < 0) break; /* replacements: uniform random unseen */
    b->taken[id] = 1;
    ids[(*k)++] = id;
    if (add_pending(b, id, -1))
      return mpt_error_set(&s->ask_error, MPT_ERR_NOMEM, "bo: out of memory for pending evaluations");
    b->init_asked++;
  }
  return 0;
}

/* No valid observation yet: no model to ask. A first ask(n) with n > initial_samples gets the initial
 * sample only (filling the round with random configurations scores 0.02 less at ask(16):
 * docs/PERFORMANCE.md, "flags closer"). But when the whole sample is in flight and nothing else is left
 * to give (*k == 0: an asynchronous caller with more workers than initial samples whose first result was a
 * failure), answering 0 would leave all but one of the idle workers waiting (the base layer tops an empty
 * ask up with a single random configuration): each gets a random unseen one. 0 or an error */
static int ask_without_model(bo_state *b, mpt_strategy *s, int n, int64_t *ids, int *k) {
  int64_t id;
  int fill = *k == 0;
  while (fill && *k < n && (id = random_unseen(b, s)) >= 0) {
    b->taken[id] = 1;
    ids[(*k)++] = id;
    if (add_pending(b, id, -1))
      return mpt_error_set(&s->ask_error, MPT_ERR_NOMEM, "bo: out of memory for pending evaluations");
  }
  return 0;
}

/* the constant liar's fantasy: the worst output the GP holds (transformed as the GP sees it) */
static double fantasy_worst(const bo_state *b) {
  int base = mpt_gp_n_obs(b->gp);
  double worst = -INFINITY;
  if (b->post && b->ty && base >= 2) {
    for (int i = 0; i < base; i++) if (b->ty[i] > worst) worst = b->ty[i];
  } else {
    for (int64_t i = 0; i < b->n_processed; i++)
      if (b->obs_ok[i]) {
        double t = bo_transform(b, b->obs_y[i]);
        if (t > worst) worst = t;
      }
  }
  return worst;
}

/* stall: 1 when stall_after evaluations have passed since the last new best valid objective, from the told
 * sequence only (so a resumed run decides the same) */
static int stalled_now(const bo_state *b) {
  if (b->stall_after <= 0) return 0;
  double bv = INFINITY;
  int64_t last = 0;
  for (int64_t i = 0; i < b->n_obs; i++)
    if (b->obs_ok[i] && b->obs_y[i] < bv) { bv = b->obs_y[i]; last = i; }
  return b->n_obs - 1 - last >= b->stall_after;
}

/* the pending evaluations from *from on (earlier asks, and this ask's picks) enter the GP as fantasies:
 * the pessimistic quantile (batch=quantile), the posterior mean (believer) or worst (liar); 0 or an error */
static int add_fantasies(bo_state *b, int64_t *from, double worst, mpt_error *err) {
  int rc = 0;
  for (; *from < b->n_pend && rc == 0; (*from)++) {
    const double *x = bo_point(b, b->pend[*from].id);
    double mu, sdq;
    if (!b->dist) mpt_gp_predict_block(b->gp, b->pend[*from].id, b->pend[*from].id + 1, &mu, &sdq);
    else if ((rc = bo_dist_predict(b, b->pend[*from].id, &mu, &sdq, err)) != 0) break; /* model ranks */
    if (b->batch_quantile != 0) mu += b->batch_quantile * sdq; /* batch=quantile */
    rc = mpt_gp_add(b->gp, x, b->batch_liar ? worst - bo_transfer_offset(b, b->pend[*from].id) : mu, err);
    if (rc) mpt_error_prefix(err, "bo: cannot extend the GP to %d observations (pending evaluations as fantasies)",
                             mpt_gp_n_obs(b->gp) + 1);
  }
  return rc;
}

/* One model-based pick (the k-th of this ask): a local or global scan, then the acquisition function
 * that proposes (*af); *id is -1 when nothing is left. 0 or an error */
static int pick_one(bo_state *b, mpt_strategy *s, double xi, double kappa_s, int stalled, int k, int *af,
                    int64_t *id) {
  pick pk;
  int local = 0;
  if (b->dist && !b->in_pool) { /* model ranks: the pool pass on their slices (acquisition=ei, no local picks) */
    *af = AF_EI;
    return bo_dist_pick(b, s, xi, prepare_feasibility(b), id);
  }
  if (b->local_every > 0 && b->iter % b->local_every == b->local_every - 1 && b->inc_idx &&
      (!b->local_stalled || stalled)) {
    local = bo_mark_local(b, s);
    if (local < 0) return mpt_error_set(&s->ask_error, MPT_ERR_NOMEM, "bo: out of memory for a local candidate set");
  }
  int var_pick = stalled && b->stall_variance && (b->n_obs + k) % 2 == 0;
  scan(b, s, xi, kappa_s, local, var_pick, &pk);
  for (int64_t q = 0; q < b->n_nb; q++) b->nbmark[b->nblist[q]] = 0;
  b->n_nb = 0;
  /* neighbourhood exhausted, or none of it likely feasible: a global pick instead */
  if (local && (pk.id_any < 0 || (b->fgp && pk.id[AF_EI] < 0))) scan(b, s, xi, kappa_s, 0, var_pick, &pk);
  *id = choose(b, &pk, af);
  if (var_pick && pk.id_var >= 0) *id = pk.id_var;
  return 0;
}

/* the fantasy output of a pick (posterior at candidate id: the pool's when it is a member of the pool
 * in use, else the GP's): the pessimistic quantile (batch=quantile), the mean (believer) or worst (liar) */
static int fantasy_value(bo_state *b, int64_t id, double worst, int64_t *member, double *y, mpt_error *err) {
  double mu = 0, sdq = 0;
  int rc = 0;
  int64_t j = -1;
  for (int64_t q = 0; b->in_pool && q < mpt_gp_pool_size(b->pool) && j < 0; q++)
    if (mpt_gp_pool_id(b->pool, q) == id) j = q;
  if (member) *member = j;
  if (b->batch_liar) { *y = worst; return 0; }
  if (j >= 0) {
    double m, sc, var;
    mpt_gp_pool_predict_var(b->pool, j, j + 1, &mu, &var);
    mpt_gp_pool_normalization(b->pool, &m, &sc);
    sdq = sc * sqrt(var);
  } else if (!b->dist) {
    mpt_gp_predict_block(b->gp, id, id + 1, &mu, &sdq);
  } else {
    rc = bo_dist_predict(b, id, &mu, &sdq, err); /* model ranks */
  }
  *y = b->batch_quantile != 0 ? mu + b->batch_quantile * sdq : mu;
  return rc;
}

/* the fantasy of pick id into the pool: at a member's column when it is one (the picks after the first) */
static int pool_fantasy(bo_state *b, int64_t id, double worst, mpt_error *err) {
  int64_t j;
  double y;
  int rc = fantasy_value(b, id, worst, &j, &y, err);
  if (rc) return rc;
  return j >= 0 ? mpt_gp_pool_add_member(b->pool, j, y, err) : mpt_gp_pool_add(b->pool, bo_point(b, id), y, err);
}

/* After an ask's first pick with `left` more to come (batch_pool > 0), or before it with `pending` evaluations
 * pending (pending_pool): the pool of the best candidates by EI from one pass over every candidate (the picks
 * so far and the pending ones left out; with model ranks the pass runs on their slices); the later picks come
 * from it (b->in_pool), and the fantasies of the pending evaluations and of the picks condition it alone. 0 or an
 * error */
static int enter_pool(bo_state *b, mpt_strategy *s, double xi, int left, int64_t pending) {
  int64_t P = 4 * (int64_t)left + 2 * pending;
  if (P < b->batch_pool) P = b->batch_pool;
  int rc = b->dist ? bo_dist_pool_build(b, s->seen, xi, P, &s->ask_error) : bo_pool_build(b, s->seen, xi, P, &s->ask_error);
  if (rc) return mpt_error_prefix(&s->ask_error, "bo: cannot build the pool of a batch");
  mpt_gp_pool_fix_normalization(b->pool, b->batch_fixed_norm);
  b->in_pool = 1;
  return 0;
}

/* 1 when this ask (k picks so far, from the initial sample) fantasizes the pending evaluations on a pool: at
 * least pending_pool of them from earlier asks */
static int pending_on_pool(const bo_state *b, int k) {
  return b->pending_pool > 0 && b->batch_pool > 0 && !b->dist && b->n_pend - k >= b->pending_pool;
}

/* Model-based picks into ids[*k, n): fantasize the pending evaluations, pick, repeat; the fantasies leave
 * the GP afterwards. With batch_pool > 0 the picks after the first come from a pool (enter_pool) whose
 * posterior alone takes the fantasies of this ask's picks; with pending_pool the pending evaluations of
 * earlier asks go on the pool too, and the first pick comes from it. 0 or an error */
static int ask_from_model(bo_state *b, mpt_strategy *s, int n, int64_t *ids, int *k) {
  mpt_error *err = &s->ask_error;
  int base = mpt_gp_n_obs(b->gp);
  double worst = fantasy_worst(b);
  int64_t n_fant_from = 0;
  double xi = exploration(b, s);
  int stalled = stalled_now(b);
  if (stalled && !b->stall_variance) xi = (xi > 0 ? xi : 0.01) * b->stall_boost;
  double d = (double)b->D, t = (double)(b->n_ok + 1);
  double kappa_s = sqrt(2.0 * log(d * t * t * M_PI * M_PI / (6.0 * 0.1)) / 5.0);
  int rc = 0;
  if (pending_on_pool(b, *k) && (rc = enter_pool(b, s, xi, n - *k, b->n_pend)) == 0) {
    rc = bo_pool_add_pending(b, 0, b->n_pend, worst, err);
    n_fant_from = b->n_pend;
  }
  while (*k < n && rc == 0) {
    if (!b->in_pool) rc = add_fantasies(b, &n_fant_from, worst, err);
    for (; b->in_pool && n_fant_from < b->n_pend && rc == 0; n_fant_from++) /* this ask's picks */
      rc = pool_fantasy(b, b->pend[n_fant_from].id, worst, err);
    if (rc) break;
    int af = -1;
    int64_t id = -1;
    if ((rc = pick_one(b, s, xi, kappa_s, stalled, *k, &af, &id)) != 0) break;
    if (id < 0) break; /* nothing left */
    b->taken[id] = 1;
    ids[(*k)++] = id;
    b->iter++;
    if (add_pending(b, id, af)) { rc = mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory for pending evaluations"); break; }
    if (!b->in_pool && b->batch_pool > 0 && *k < n) {
      rc = enter_pool(b, s, xi, n - *k, 0);
    }
  }
  b->in_pool = 0;
  mpt_error terr;
  mpt_gp_truncate(b->gp, base, &terr);
  return rc;
}

static int bo_ask(mpt_strategy *s, int n, int64_t *ids) {
  bo_state *b = s->data;
  mpt_error *err = &s->ask_error;
  int k = 0;
  int rc = bo_transfer_before(b, s, err);
  if (rc == 0) rc = bo_process_queue(b, s, err);
  if (rc == 0) rc = bo_transfer_after(b, err);
  if (rc) return err->code ? err->code : mpt_error_set(err, rc, "bo: cannot update the model (error %d)", rc);
  if ((rc = ask_initial(b, s, n, ids, &k)) != 0) return rc;
  if (k < n) {
    rc = b->n_ok < 1 ? ask_without_model(b, s, n, ids, &k) : ask_from_model(b, s, n, ids, &k);
    if (rc) return rc;
  }
  for (int i = 0; i < k; i++) b->taken[ids[i]] = 0;
  return k;
}

static void bo_tell_related(mpt_strategy *s, int source, const mpt_obs *obs, int n) {
  bo_transfer_tell(s->data, source, obs, n);
}

const mpt_strategy_type mpt_strategy_bo = {
    .name = "bo",
    .summary = "Bayesian optimization (GP, exhaustive acquisition over valid configurations, feasibility model, batched asks)",
    .options = bo_options,
    .create = bo_create,
    .ask = bo_ask,
    .tell = bo_tell,
    .destroy = bo_destroy,
    .tell_related = bo_tell_related,
};
