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
 * values (strategies/bo/bo_feasibility.c); local picks draw their candidate sets in strategies/bo/bo_local.c. On
 * a space of more than working_set valid configurations the GP holds a working set of that many, refreshed
 * towards the best observations (strategies/bo/bo_ws.c): "every candidate" above is then the working set's.
 *
 * Files. This file is the strategy's entry points (create, destroy, tell, tell_related, the type); its option
 * table and the readers of the options are in strategies/bo/bo_options.c, the ask (the initial sample, the
 * model-based picks of a batch, the pool, the pending evaluations) in strategies/bo/bo_ask.c, one model-based
 * pick (local picks, the portfolio's choice) in strategies/bo/bo_pick.c, the scan over the candidates in
 * strategies/bo/bo_scan.c and the fantasies in strategies/bo/bo_fantasy.c; strategies/bo/bo_internal.h is what
 * they call of one another. They sit on the model (strategies/bo/bo_model.c), the feasibility model
 * (strategies/bo/bo_feasibility.c) and the local candidate sets (strategies/bo/bo_local.c), which sit on the
 * encoding (strategies/bo/bo_encode.c); strategies/bo/bo_state.h is the state they share. With model ranks
 * (b->dist, --model-ranks) the first pick's scan, the pending fantasies' posterior, the pool of a batch (its
 * members' columns gathered to rank 0, whose pool then takes this ask's fantasies as here) and the exploration
 * margin's variance sum go to the candidates' slices on those ranks (strategies/bo/bo_dist.c) and b->gp keeps
 * the observations only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp_slices.h"
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_internal.h"
#include "strategies/bo/bo_dist.h"
#include "strategies/bo/bo_model.h"
#include "strategies/bo/bo_transfer.h"
#include "strategies/bo/bo_ws.h"
#include "gp/gp_pool.h"

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
  bo_read_model_options(b, s);
  bo_read_local_options(b, s);
  b->best_t = INFINITY;
  for (int a = 0; a < AF_N; a++) b->active[a] = 1;
  b->active[AF_LCBS] = 0; /* the portfolios use ei, poi, lcb (as Kernel Tuner's) */
  if (bo_encoding_init(b, s) != 0 || bo_transfer_create(b, s) != 0)
    return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory");
  int rc = alloc_scan_buffers(b, s, err);
  if (rc) return rc;
  if ((rc = bo_ws_init(b, s, err)) != 0) return rc;
  rc = mpt_gp_create_from(&b->gcfg, b->D, b->n_slots, bo_encode_slots, b, &b->gp, err);
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
  bo_ws_off(b);
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

static void bo_tell_related(mpt_strategy *s, int source, const mpt_obs *obs, int n) {
  bo_transfer_tell(s->data, source, obs, n);
}

/* with model ranks: the critical path of rank 0 and the model ranks (gp/gp_slices_path.c) */
static int bo_model_clock(mpt_strategy *s, double *seconds) {
  mpt_error e;
  return mpt_bo_model_clock(s, seconds, NULL, &e) == 0 ? 0 : -1;
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
    .clock = bo_model_clock,
};
