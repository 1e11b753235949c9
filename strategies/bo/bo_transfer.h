/* strategies/bo/bo_transfer.h: what bo learns from related observations (strategies/bo/bo_transfer.c): other
 * device classes of the run and --prior files, told through mpt_strategy_tell_related. Private to the files of
 * strategies/bo/. */
#ifndef MPT_BO_TRANSFER_H
#define MPT_BO_TRANSFER_H
#include <stdint.h>
#include "strategies/bo/bo_state.h"

/* the option rows of transfer (in bo's option table) */
#define BO_TRANSFER_OPTIONS \
  {"transfer", MPT_OPT_BOOL, "1", "learn from related observations (other device classes of the run, --prior files): " \
   "each source's standardized log-times (configurations it did not measure: the mean of the sources that did; " \
   "those no source measured: a GP over at most transfer_sample of them) weighted by a ridge regression on this " \
   "device's observations are the GP's prior mean, and the initial sample starts with the transfer_init best " \
   "related configurations; related observations never enter the GP (0: they are ignored)", NULL, 1, 0}, \
  {"transfer_init", MPT_OPT_INT, "10", "transfer: this many of the initial samples are the best configurations of the " \
   "related observations", NULL, 0, 1e9}, \
  {"transfer_weight", MPT_OPT_DOUBLE, "1.0", "transfer: the sources' weights in the prior mean are shrunk towards equal " \
   "weights summing to this, each times the share of the space its source measured (standard deviations of the " \
   "modelled objective per standard deviation of a source)", \
   NULL, 0, 100}, \
  {"transfer_shrink", MPT_OPT_DOUBLE, "2.0", "transfer: strength of that shrinkage against this device's observations " \
   "(the ridge penalty, in units of squared source deviation)", NULL, 0, 1e9}, \
  {"transfer_sample", MPT_OPT_INT, "128", "transfer: the GP that predicts the summary where no source measured a " \
   "configuration holds at most this many related configurations (the best quarter, the rest evenly over their order)", \
   NULL, 2, 1e6}, \
  {"transfer_stall", MPT_OPT_BOOL, "1", "transfer: while the search is stalled (stall_after evaluations without a new " \
   "best) the prior mean is off: where the related devices' best region is not this device's, bo explores as without " \
   "them", NULL, 1, 0}, \
  {"transfer_every", MPT_OPT_INT, "1", "transfer: the prior mean is on in every this many asks (counted by " \
   "observations told and pending), off in the others (a hedge: those asks explore as without related observations)", \
   NULL, 1, 1e6}, \
  {"transfer_select", MPT_OPT_STRING, "always", "transfer: the prior mean is used in every ask (always), or only when " \
   "the GP's observations are likelier with it than without it (evidence: log marginal likelihood, the GP's " \
   "normalization undone; measured worse online: docs/PERFORMANCE.md), or only while it predicts this device's " \
   "observations, each left out, at least as well as the GP without it (loo: leave-one-out log predictive density, " \
   "checked when the observations have grown by a sixteenth; loo-corr: the correlation of the leave-one-out means " \
   "with the observations instead)", "always|evidence|loo|loo-corr", 1, 0}, \
  {"transfer_model", MPT_OPT_STRING, "auto", "transfer: the prior mean is the weighted columns (ridge), or those pooled " \
   "as the other task of a two-task intrinsic coregionalization model (icm: k((x,s),(x',s')) = B[s,s'] k(x,x'), the " \
   "correlation in B fitted by marginal likelihood on this device's observations given a sample of the related " \
   "configurations; the prior mean is the correlation times the pooled column); auto: icm while every source " \
   "measured at least half of the space (brute-forced --prior files: measured better), ridge otherwise (the other " \
   "classes of a run: measured better online)", "auto|ridge|icm", 1, 0}

/* reads the options; the related store is allocated at the first related observation. 0 or MPT_ERR_NOMEM */
int bo_transfer_create(bo_state *b, mpt_strategy *s);
void bo_transfer_free(bo_state *b);
/* takes in related observations (ignored with transfer=0) */
void bo_transfer_tell(bo_state *b, int source, const mpt_obs *obs, int n);
/* at the start of an ask, before the queued observations enter the model: the summary brought up to date with
 * the related observations, and the first ask's initial sample seeded from it. 0 or an error in err */
int bo_transfer_before(bo_state *b, mpt_strategy *s, mpt_error *err);
/* after they entered: the coefficient refitted, the GP's outputs re-offset when it or the summary changed */
int bo_transfer_after(bo_state *b, mpt_error *err);
/* the prior mean of candidate id in the GP's output units (0 without transfer) */
static inline double bo_transfer_offset(const bo_state *b, int64_t id) {
  return b->xfer_pz ? b->xfer_beta * b->xfer_pz[id] : 0.0;
}
/* mean[c - b0] += the prior mean of the configuration in the GP's slot c, for b0 <= c < b1 (after
 * mpt_gp_predict_block*; a slot is the configuration id itself without a working set, strategies/bo/bo_ws.h) */
void bo_transfer_shift(const bo_state *b, int64_t b0, int64_t b1, double *mean);
/* out[k] = t[k] - prior mean of the k-th valid observation among obs [0, upto), k < n: the GP's outputs for the
 * transformed objectives t; returns out, or t itself without transfer */
const double *bo_transfer_residuals(const bo_state *b, const double *t, int n, int64_t upto, double *out);

#endif
