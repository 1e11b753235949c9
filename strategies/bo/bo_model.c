/* strategies/bo/bo_model.c: the data side of `bo` (strategies/bo/bo.c): the told observations, the output
 * transform (log, rank -> normal scores, clip at the median), putting queued observations into the GP
 * (with the hyperparameter refit schedule) and into the feasibility model, and rebuilding the GP when
 * the transform changes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategies/bo/bo_encode.h"
#include "strategies/bo/bo_model.h"
#include "strategies/bo/bo_transfer.h"
#include "strategies/bo/bo_dist_hook.h"
#include "strategies/bo/bo_ws.h"

int bo_push_obs(bo_state *b, int64_t id, double y, int ok) {
  if (b->n_obs == b->cap_obs) {
    int64_t nc = b->cap_obs ? b->cap_obs * 2 : 256;
    int64_t *ni = realloc(b->obs_id, sizeof(int64_t) * (size_t)nc);
    if (ni) b->obs_id = ni;
    double *ny = realloc(b->obs_y, sizeof(double) * (size_t)nc);
    if (ny) b->obs_y = ny;
    uint8_t *no = realloc(b->obs_ok, (size_t)nc);
    if (no) b->obs_ok = no;
    if (!ni || !ny || !no) return MPT_ERR_NOMEM;
    b->cap_obs = nc;
  }
  b->obs_id[b->n_obs] = id;
  b->obs_y[b->n_obs] = y;
  b->obs_ok[b->n_obs] = (uint8_t)ok;
  b->n_obs++;
  return 0;
}

double bo_transform(const bo_state *b, double y) { return b->transform_log ? log(y) : y; }

/* (re)creates the GP from every processed valid observation (after a transform change) */
static int rebuild_gp(bo_state *b, mpt_error *err) {
  double ls[64], *lsp = ls, var = b->gcfg.variance, noise = b->gcfg.noise;
  int have = 0;
  if (b->gp) {
    if (b->D > 64) lsp = malloc(sizeof(double) * (size_t)b->D);
    if (!lsp) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory rebuilding the GP");
    mpt_gp_get_hyper(b->gp, lsp, &var, &noise);
    have = 1;
    mpt_gp_free(b->gp);
    b->gp = NULL;
  }
  int rc = mpt_gp_create_from(&b->gcfg, b->D, b->dist ? 0 : b->n_slots, bo_encode_slots, b, &b->gp, err);
  if (rc == 0 && b->dist) bo_dist_adopt(b); /* model ranks: the candidates are theirs */
  if (rc == 0 && have) rc = mpt_gp_set_hyper(b->gp, lsp, var, noise, err);
  b->best_t = INFINITY;
  for (int64_t i = 0; rc == 0 && i < b->n_processed; i++) {
    if (!b->obs_ok[i]) continue;
    double t = bo_transform(b, b->obs_y[i]);
    rc = mpt_gp_add(b->gp, bo_point(b, b->obs_id[i]), t - bo_transfer_offset(b, b->obs_id[i]), err);
    if (t < b->best_t) b->best_t = t;
  }
  if (lsp != ls) free(lsp);
  return rc;
}

/* inverse standard normal CDF (Acklam's rational approximation, relative error < 1.2e-9) */
static double norm_inv(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549671010366142e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  if (p < 0.02425) {
    double q = sqrt(-2 * log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - 0.02425) return -norm_inv(1 - p);
  double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

static int cmp_idx(const void *x, const void *y, void *by) {
  const double *base = by;
  double a = base[*(const int *)x], c = base[*(const int *)y];
  return a < c ? -1 : a > c ? 1 : (*(const int *)x - *(const int *)y);
}

/* non-incremental output transforms (rank -> normal scores, clip at the median) over all valid
 * observations: the GP keeps its factor and only its outputs change */
/* fills b->ty with the transformed outputs of the first n valid observations among obs [0, upto) */
static int compute_ty(bo_state *b, int n, int64_t upto, mpt_error *err) {
  double *ty = realloc(b->ty, sizeof(double) * (size_t)n * 2);
  int *idx = malloc(sizeof(int) * (size_t)n);
  if (!ty || !idx) { free(idx); if (ty) b->ty = ty; return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory"); }
  b->ty = ty;
  double *base = ty + n;
  int k = 0;
  for (int64_t i = 0; i < upto && k < n; i++)
    if (b->obs_ok[i]) base[k++] = bo_transform(b, b->obs_y[i]);
  for (int i = 0; i < n; i++) idx[i] = i;
  qsort_r(idx, (size_t)n, sizeof(int), cmp_idx, base);
  if (b->post == 1) {
    for (int r = 0; r < n;) { /* ties share their average rank */
      int e = r;
      while (e + 1 < n && base[idx[e + 1]] == base[idx[r]]) e++;
      double z = norm_inv((0.5 * (r + e) + 0.5) / n);
      for (int q = r; q <= e; q++) ty[idx[q]] = z;
      r = e + 1;
    }
  } else {
    double med = base[idx[n / 2]];
    for (int i = 0; i < n; i++) ty[i] = base[i] < med ? base[i] : med;
  }
  free(idx);
  b->best_t = INFINITY;
  for (int i = 0; i < n; i++) if (ty[i] < b->best_t) b->best_t = ty[i];
  return 0;
}

static int retransform(bo_state *b, mpt_error *err) {
  int n = mpt_gp_n_obs(b->gp);
  if (b->post == 0 || n < 2) return 0;
  int rc = compute_ty(b, n, b->n_processed, err);
  return rc ? rc : mpt_gp_set_outputs(b->gp, bo_transfer_residuals(b, b->ty, n, b->n_processed, b->ty + n), err);
}

int bo_model_reoffset(bo_state *b, mpt_error *err) {
  int n = mpt_gp_n_obs(b->gp);
  if (n == 0) return 0;
  if (b->post && n >= 2) return retransform(b, err);
  double *y = malloc(sizeof(double) * (size_t)n);
  if (!y) return mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory");
  int k = 0;
  for (int64_t i = 0; i < b->n_processed && k < n; i++)
    if (b->obs_ok[i]) { y[k++] = bo_transform(b, b->obs_y[i]) - bo_transfer_offset(b, b->obs_id[i]); }
  int rc = mpt_gp_set_outputs(b->gp, y, err);
  free(y);
  return rc;
}

/* whether the taking in of queued observations (at observation i of n_obs) is to give up: asks s's tick
 * every 16 observations once there are more than 64 to take in (the first ask of a resumed run: minutes
 * for a few thousand on a large space), and after every hyperparameter refit (`after_refit`: a refit
 * refactors the whole GP, so with refit_interval=1 16 observations took minutes past a --time), saying
 * how far it is */
static int queue_stops(bo_state *b, mpt_strategy *s, int64_t i, int64_t from, const char *what, int after_refit) {
  if (b->n_obs - from <= 64 || ((i - from) % 16 != 0 && !after_refit)) return 0;
  char doing[128];
  snprintf(doing, sizeof doing, "bo: %s %lld of %lld logged observations", what, (long long)(i - from),
           (long long)(b->n_obs - from));
  return mpt_strategy_ticks(s, doing);
}

/* the valid observations of a run of queued ones into the GP in one pass over the candidates
 * (mpt_gp_add_many: the GP one add each would give, to rounding): from b->n_processed to the next multiple of 16 told
 * since `from` (where queue_stops looks), ending early after the last valid one (`last_ok`: every output
 * re-transformed with it) or one a refit follows (*refit_here); *k valid ones taken in. 0 or an error */
static int take_in_run(bo_state *b, mpt_gp_ahead *ahead, int64_t from, int64_t last_ok, int *k, int *refit_here,
                       int *post_done, mpt_error *err) {
  int64_t i = b->n_processed, end = from + ((i - from) / 16 + 1) * 16;
  if (end > b->n_obs) end = b->n_obs;
  int n0 = mpt_gp_n_obs(b->gp), outputs = 0;
  for (; i < end && !*refit_here && !outputs; i++) {
    if (!b->obs_ok[i]) continue;
    int n1 = n0 + *k + 1;
    /* refits happen when the GP reaches n_init, n_init + refit_interval, ... valid observations, on
     * exactly those observations: the schedule depends only on the told sequence, so a resumed run
     * (all logged observations processed at once) refits at the same points as the original */
    *refit_here = b->fit && n1 >= 2 && n1 >= b->n_init && (n1 - b->n_init) % b->refit_interval == 0;
    const double *x = bo_point(b, b->obs_id[i]);
    memcpy(b->run_x + (size_t)*k * (size_t)b->D, x, sizeof(double) * (size_t)b->D);
    double t = bo_transform(b, b->obs_y[i]);
    b->run_y[*k] = t - bo_transfer_offset(b, b->obs_id[i]);
    /* the last new one (and one a refit follows) re-transforms every output in the same pass over the
     * candidates (last_ok is set only with a non-incremental transform) */
    outputs = n1 >= 2 && (i == last_ok || (*refit_here && b->post));
    if (outputs && i == last_ok) *post_done = 1;
    /* the incumbent in the GP's outputs: t itself without a rank transform, and also with one while
     * the GP holds a single observation (the transform starts at two; with best_t infinite every EI
     * would be infinite and the first free configuration, id 0, would be picked) */
    if (!outputs && t < b->best_t && (!b->post || n1 == 1)) b->best_t = t;
    (*k)++;
  }
  int n = n0 + *k, rc = outputs ? compute_ty(b, n, i, err) : 0;
  const double *y_all = outputs && rc == 0 ? bo_transfer_residuals(b, b->ty, n, i, b->ty + n) : NULL;
  if (rc == 0) rc = mpt_gp_add_many_ahead(b->gp, ahead, *k, b->run_x, b->run_y, y_all, err);
  if (rc) mpt_error_prefix(err, "bo: cannot extend the GP to %d observation%s", n0 + *k, n0 + *k == 1 ? "" : "s");
  else b->n_processed = i;
  return rc;
}

/* More than one run of queued observations to take in: their rows of the factor solved ahead over the
 * observations in the model now (into *ahead, created here; gp/gp.h mpt_gp_ahead), one pass over L per 64
 * instead of one per run of 16, with the same bits. The points: those of obs [from, b->n_obs) (the valid ones only
 * when valid_only), their leading dims inputs. 0, or an error (out of memory: the ask fails with it) */
static int solve_ahead(bo_state *b, const mpt_gp *gp, int64_t from, int valid_only, int dims, mpt_gp_ahead **ahead,
                       mpt_error *err) {
  int64_t k = 0;
  for (int64_t i = from; i < b->n_obs; i++) k += !valid_only || b->obs_ok[i];
  if (k <= 16 || mpt_gp_n_obs(gp) == 0 || k * (int64_t)mpt_gp_n_obs(gp) > ((int64_t)1 << 25)) return 0;
  double *X = malloc(sizeof(double) * (size_t)k * (size_t)dims);
  int rc = X ? mpt_gp_ahead_create(ahead, err) : mpt_error_set(err, MPT_ERR_NOMEM, "bo: out of memory");
  for (int64_t i = from, j = 0; rc == 0 && i < b->n_obs; i++)
    if (!valid_only || b->obs_ok[i]) memcpy(X + (size_t)(j++) * (size_t)dims, bo_point(b, b->obs_id[i]), sizeof(double) * (size_t)dims);
  if (rc == 0) rc = mpt_gp_ahead_solve(*ahead, gp, (int)k, X, err);
  free(X);
  return rc;
}

static int process_queue(bo_state *b, mpt_strategy *s, mpt_gp_ahead **ahead, mpt_error *err);

/* puts queued observations into the GP and the feasibility model; MPT_ERR_STOPPED when the run is stopping
 * (s's tick), the model as far as it got (a later call goes on from there) */
int bo_process_queue(bo_state *b, mpt_strategy *s, mpt_error *err) {
  mpt_gp_ahead *ahead = NULL;
  int rc = process_queue(b, s, &ahead, err);
  mpt_gp_ahead_free(ahead);
  return rc;
}

static int process_queue(bo_state *b, mpt_strategy *s, mpt_gp_ahead **ahead, mpt_error *err) {
  int rc = 0;
  /* a non-positive objective cannot be log-transformed: switch to the raw objective once */
  if (b->transform_log)
    for (int64_t i = b->n_processed; i < b->n_obs; i++)
      if (b->obs_ok[i] && !(b->obs_y[i] > 0)) {
        b->transform_log = 0;
        rc = rebuild_gp(b, err);
        if (rc) return rc;
        break;
      }
  int64_t new_ok = 0, last_ok = -1, from = b->n_processed;
  int post_done = 0, refitted = 0;
  if (b->post)
    for (int64_t i = b->n_processed; i < b->n_obs; i++)
      if (b->obs_ok[i]) last_ok = i;
  if (!b->dist && (rc = solve_ahead(b, b->gp, b->n_processed, 1, b->D, ahead, err)) != 0) return rc;
  while (b->n_processed < b->n_obs) {
    int64_t i = b->n_processed;
    if (queue_stops(b, s, i, from, "model from", refitted))
      return mpt_error_set(err, MPT_ERR_STOPPED, "bo: stopped taking in logged observations (%lld of %lld)",
                           (long long)(i - from), (long long)(b->n_obs - from));
    refitted = 0;
    int refit_here = 0, k = 0;
    rc = take_in_run(b, *ahead, from, last_ok, &k, &refit_here, &post_done, err);
    if (rc == 0 && refit_here) {
      mpt_gp_fit_options fo;
      mpt_gp_fit_options_default(&fo);
      fo.ard = b->ard;
      rc = mpt_gp_fit(b->gp, &fo, NULL, err);
      refitted = 1;
    }
    if (rc) return rc;
    new_ok += k;
  }
  if (new_ok > 0 && b->post && !post_done && (rc = retransform(b, err)) != 0) return rc;
  if (b->feas_mode && b->n_fail > 0) {
    if (!b->fgp) {
      mpt_gp_config fc = b->gcfg;
      fc.lengthscale = b->feas_ls;
      fc.max_bytes = 0; /* gp_memory_limit bounds the objective's GP */
      fc.noise = 0.1;
      fc.normalize_scale = 0;
      fc.mean = MPT_GP_MEAN_OBSERVED;
      /* no candidate block: probabilities are computed on demand for the few contenders */
      /* inputs: the leading feas_dims of bo_encode's inputs (the index encoding when there is one: the
       * one-hot codes would multiply the cost of every probability without improving it) */
      if ((rc = mpt_gp_create(&fc, b->feas_dims, 0, NULL, &b->fgp, err)) != 0) return rc;
      b->feas_processed = 0;
    }
    mpt_gp_ahead_free(*ahead);
    *ahead = NULL;
    if ((rc = solve_ahead(b, b->fgp, b->feas_processed, 0, b->feas_dims, ahead, err)) != 0) return rc;
    while (b->feas_processed < b->n_obs) { /* in runs of up to 16, one pass each (mpt_gp_add_many) */
      int k = 0;
      for (; k < 16 && b->feas_processed + k < b->n_obs; k++) {
        int64_t i = b->feas_processed + k;
        memcpy(b->run_x + (size_t)k * (size_t)b->feas_dims, bo_point(b, b->obs_id[i]), sizeof(double) * (size_t)b->feas_dims);
        b->run_y[k] = b->obs_ok[i] ? 1.0 : 0.0;
      }
      rc = mpt_gp_add_many_ahead(b->fgp, *ahead, k, b->run_x, b->run_y, NULL, err);
      int n1 = mpt_gp_n_obs(b->fgp) + k;
      if (rc) return mpt_error_prefix(err, "bo: cannot extend the feasibility model to %d observation%s", n1, n1 == 1 ? "" : "s");
      b->feas_processed += k;
    }
  }
  return 0;
}

int bo_model_stalled(const bo_state *b) {
  if (b->stall_after <= 0) return 0;
  double best = INFINITY;
  int64_t last = 0;
  for (int64_t i = 0; i < b->n_obs; i++)
    if (b->obs_ok[i] && b->obs_y[i] < best) { best = b->obs_y[i]; last = i; }
  return b->n_obs - 1 - last >= b->stall_after;
}
