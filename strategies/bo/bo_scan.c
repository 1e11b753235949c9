/* strategies/bo/bo_scan.c: bo's scan over the candidates (every candidate, a local set, or the members of a
 * batch's pool): the argmax of every acquisition function the mode needs in one pass, EI and POI times the
 * probability of feasibility, the bounds that skip candidates which cannot win, and the fallback when no
 * candidate reaches the feasibility threshold (EI x p^feasibility_exponent). Called for one pick by
 * strategies/bo/bo_pick.c; the state is strategies/bo/bo_state.h. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/bo/bo_feasibility.h"
#include "strategies/bo/bo_internal.h"
#include "strategies/bo/bo_local.h"
#include "strategies/bo/bo_transfer.h"
#include "gp/gp_pool.h"

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

/* The candidates a scan visits, in blocks of the GP's slots (strategies/bo/bo_ws.h: the configuration ids
 * themselves without a working set): every slot in blocks of BO_BLOCK, or with local == 2 only the marked
 * neighbourhood (b->nblist; with a working set, those in it), one candidate per block; in a batch's pool
 * (b->in_pool) its members, one per block. */
static inline int64_t cand_blocks(const bo_state *b, int local) {
  return b->in_pool ? mpt_gp_pool_size(b->pool) : local == 2 ? b->n_nb : (b->n_slots + BO_BLOCK - 1) / BO_BLOCK;
}
static inline void cand_block(const bo_state *b, int local, int64_t bi, int64_t *b0, int64_t *b1) {
  *b0 = b->in_pool ? mpt_gp_pool_id(b->pool, bi) : local == 2 ? bo_id_slot(b, b->nblist[bi]) : bi * BO_BLOCK;
  if (*b0 < 0) { *b0 = *b1 = 0; return; } /* a neighbour outside the working set */
  *b1 = b->in_pool || local == 2 ? *b0 + 1 : *b0 + BO_BLOCK < b->n_slots ? *b0 + BO_BLOCK : b->n_slots;
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
  int64_t n_blocks = cand_blocks(b, local), n = 0, need = b->in_pool ? n_blocks : local == 2 ? b->n_nb : b->n_slots;
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
      int64_t id = bo_slot_id(b, c);
      if (!cand_free(b, s, local, id)) continue;
      double mu = (b->mbuf[c - b0] - m) / sc, var = b->sbuf[c - b0];
      double sd = sqrt(var > 0 ? var : 0.0);
      if (sd < 1e-12) sd = 1e-12;
      double z = (fb - xi - mu) / sd;
      /* log EI: log sd + log(z Phi(z) + phi(z)), through the asymptotic form below z = -6 (as scan) */
      double le = z > -6 ? log(sd * (z * norm_cdf(z) + exp(log_norm_pdf(z)))) : log(sd / (z * z)) + log_norm_pdf(z);
      if (!(le > -INFINITY)) le = -DBL_MAX; /* EI 0: still a candidate, the last ones */
      cand[n].key = le;
      cand[n++].id = id;
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
int bo_prepare_feasibility(bo_state *b) {
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
void bo_scan(bo_state *b, mpt_strategy *s, double xi, double kappa_s, int local, int need_var, pick *pk) {
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
  int use_feas = bo_prepare_feasibility(b), defer = use_feas && ei_only;
  /* local == 2: only the marked neighbourhood (one candidate per block), else every candidate */
  int64_t n_blocks = cand_blocks(b, local);
  for (int64_t bi = 0; bi < n_blocks; bi++) {
    int64_t b0, b1;
    cand_block(b, local, bi, &b0, &b1);
    cand_predict(b, bi, b0, b1); /* sbuf: normalized variances */
    for (int64_t sl = b0; sl < b1; sl++) {
      int64_t c = bo_slot_id(b, sl); /* the configuration in slot sl */
      if (!cand_free(b, s, local, c)) continue;
      double mu = (b->mbuf[sl - b0] - m) / sc, var = b->sbuf[sl - b0];
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
