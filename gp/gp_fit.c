/* gp/gp_fit.c: the GP's hyperparameters fitted by maximizing the log marginal likelihood plus log
 * priors (Gamma on the lengthscales, keeping them away from 0 as BaCO does; log-normal on the signal
 * variance and the noise) with Nelder-Mead in log space, through gp.h's public interface only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gp/gp.h"

void mpt_gp_fit_options_default(mpt_gp_fit_options *o) {
  o->ard = 1;
  o->fit_variance = 1;
  o->fit_noise = 1;
  o->max_evals = 150;
  o->ls_prior_shape = 2.0;   /* Gamma(2, 2): mode 0.5, density 0 at 0 */
  o->ls_prior_rate = 2.0;
  o->ls_min = 0.01;
  o->ls_max = 100.0;
  o->noise_min = 1e-6;
  o->noise_max = 1.0;
}

typedef struct fit_ctx {
  const mpt_gp *gp;
  const mpt_gp_fit_options *o;
  int dim;
  int nls;               /* 1 or dim */
  double variance, noise; /* fixed values when not fitted */
  double *ls;            /* dim scratch */
} fit_ctx;

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* decodes theta (log space) into ls/variance/noise */
static void fit_decode(fit_ctx *f, const double *th, double *variance, double *noise) {
  const mpt_gp_fit_options *o = f->o;
  for (int d = 0; d < f->dim; d++)
    f->ls[d] = clampd(exp(th[f->nls == 1 ? 0 : d]), o->ls_min, o->ls_max);
  int k = f->nls;
  *variance = o->fit_variance ? clampd(exp(th[k++]), 1e-3, 1e3) : f->variance;
  *noise = o->fit_noise ? clampd(exp(th[k]), o->noise_min, o->noise_max) : f->noise;
}

/* negative log posterior of the hyperparameters */
static double fit_objective(fit_ctx *f, const double *th) {
  double variance, noise, lml;
  fit_decode(f, th, &variance, &noise);
  mpt_error e;
  if (mpt_gp_log_marginal(f->gp, f->ls, variance, noise, &lml, &e) != 0) return 1e300;
  double lp = 0;
  const mpt_gp_fit_options *o = f->o;
  for (int d = 0; d < f->nls; d++) {
    double l = f->ls[d];
    lp += (o->ls_prior_shape - 1) * log(l) - o->ls_prior_rate * l;
  }
  if (o->fit_variance) lp += -0.5 * log(variance) * log(variance);           /* log-normal(0, 1) */
  if (o->fit_noise) {
    double t = (log(noise) - log(1e-3)) / 3.0;                                /* log-normal around 1e-3 */
    lp += -0.5 * t * t;
  }
  return -(lml + lp);
}

int mpt_gp_fit(mpt_gp *gp, const mpt_gp_fit_options *o, double *best_objective, mpt_error *err) {
  if (mpt_gp_n_obs(gp) < 2) {
    if (best_objective) *best_objective = 0;
    return 0;
  }
  int dim = mpt_gp_dim(gp);
  fit_ctx f = {gp, o, dim, o->ard ? dim : 1, 0, 0, NULL};
  int np = f.nls + (o->fit_variance ? 1 : 0) + (o->fit_noise ? 1 : 0);
  f.ls = malloc(sizeof(double) * (size_t)dim);
  double *S = malloc(sizeof(double) * (size_t)(np + 1) * (size_t)np); /* simplex */
  double *F = malloc(sizeof(double) * (size_t)(np + 1));
  double *c = malloc(sizeof(double) * (size_t)np * 4);
  if (!f.ls || !S || !F || !c) {
    free(f.ls); free(S); free(F); free(c);
    return mpt_error_set(err, MPT_ERR_NOMEM, "gp: out of memory fitting");
  }
  mpt_gp_get_hyper(gp, f.ls, &f.variance, &f.noise); /* the start, and the values not fitted */
  double *xr = c + np, *xe = c + 2 * np, *xc = c + 3 * np;
  /* start: geometric mean of the current lengthscales when shared */
  double *x0 = S;
  if (f.nls == 1) {
    double s = 0;
    for (int d = 0; d < dim; d++) s += log(f.ls[d]);
    x0[0] = s / dim;
  } else {
    for (int d = 0; d < dim; d++) x0[d] = log(f.ls[d]);
  }
  int k = f.nls;
  if (o->fit_variance) x0[k++] = log(f.variance);
  if (o->fit_noise) x0[k] = log(clampd(f.noise, o->noise_min, o->noise_max));
  for (int i = 1; i <= np; i++) {
    memcpy(S + (size_t)i * np, x0, sizeof(double) * (size_t)np);
    S[(size_t)i * np + (i - 1)] += (i - 1 < f.nls) ? -0.7 : 1.0;
  }
  int evals = 0;
  for (int i = 0; i <= np; i++, evals++) F[i] = fit_objective(&f, S + (size_t)i * np);
  while (evals < o->max_evals) {
    /* order: best first (insertion sort of rows) */
    for (int i = 1; i <= np; i++)
      for (int j = i; j > 0 && F[j] < F[j - 1]; j--) {
        double t = F[j]; F[j] = F[j - 1]; F[j - 1] = t;
        for (int q = 0; q < np; q++) {
          double u = S[(size_t)j * np + q];
          S[(size_t)j * np + q] = S[(size_t)(j - 1) * np + q];
          S[(size_t)(j - 1) * np + q] = u;
        }
      }
    if (fabs(F[np] - F[0]) < 1e-7 * (1 + fabs(F[0]))) break;
    for (int q = 0; q < np; q++) {
      double s = 0;
      for (int i = 0; i < np; i++) s += S[(size_t)i * np + q];
      c[q] = s / np;
    }
    double *w = S + (size_t)np * np;
    for (int q = 0; q < np; q++) xr[q] = c[q] + (c[q] - w[q]);
    double fr = fit_objective(&f, xr); evals++;
    if (fr < F[0]) {
      for (int q = 0; q < np; q++) xe[q] = c[q] + 2 * (c[q] - w[q]);
      double fe = fit_objective(&f, xe); evals++;
      if (fe < fr) { memcpy(w, xe, sizeof(double) * (size_t)np); F[np] = fe; }
      else { memcpy(w, xr, sizeof(double) * (size_t)np); F[np] = fr; }
    } else if (fr < F[np - 1]) {
      memcpy(w, xr, sizeof(double) * (size_t)np); F[np] = fr;
    } else {
      int outside = fr < F[np];
      for (int q = 0; q < np; q++) xc[q] = outside ? c[q] + 0.5 * (xr[q] - c[q]) : c[q] + 0.5 * (w[q] - c[q]);
      double fc = fit_objective(&f, xc); evals++;
      if (fc < (outside ? fr : F[np])) { memcpy(w, xc, sizeof(double) * (size_t)np); F[np] = fc; }
      else { /* shrink towards the best */
        for (int i = 1; i <= np; i++) {
          for (int q = 0; q < np; q++) S[(size_t)i * np + q] = S[q] + 0.5 * (S[(size_t)i * np + q] - S[q]);
          F[i] = fit_objective(&f, S + (size_t)i * np); evals++;
        }
      }
    }
  }
  int bi = 0;
  for (int i = 1; i <= np; i++) if (F[i] < F[bi]) bi = i;
  double variance, noise;
  fit_decode(&f, S + (size_t)bi * np, &variance, &noise);
  if (best_objective) *best_objective = -F[bi];
  int rc = 0;
  if (F[bi] < 1e299) rc = mpt_gp_set_hyper(gp, f.ls, variance, noise, err);
  free(f.ls); free(S); free(F); free(c);
  return rc;
}
