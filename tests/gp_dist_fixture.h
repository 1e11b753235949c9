/* tests/gp_dist_fixture.h: what the distributed-GP tests and benchmark share: observation points from a real
 * T1 space (the index encodings of configurations spread over its valid set, ../shared/data/t1) and a smooth
 * synthetic output for each. Header-only (static inline functions), included by one test or benchmark each. */
#ifndef MPT_TESTS_GP_DIST_FIXTURE_H
#define MPT_TESTS_GP_DIST_FIXTURE_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "spaces/space.h"
#include "spaces/t1.h"
#include "gp/gp.h"
#include "gp/gp_dist.h"

typedef struct gpd_points {
  mpt_problem *prob;
  mpt_space *space;
  int dim;
} gpd_points;

/* loads ../shared/data/t1/NAME (MPT_SHARED_DATA) and builds its space; 0 or -1 with a message */
static inline int gpd_open(const char *name, gpd_points *p) {
  const char *dir = getenv("MPT_SHARED_DATA");
  char path[1024];
  snprintf(path, sizeof path, "%s/t1/%s", dir ? dir : "../shared/data", name);
  mpt_error err;
  if (mpt_problem_load(path, &p->prob, &err) != 0 || mpt_space_build(p->prob, &p->space, &err) != 0) {
    fprintf(stderr, "%s: %s\n", path, err.msg);
    return -1;
  }
  p->dim = mpt_space_dims(p->space);
  return 0;
}

static inline void gpd_close(gpd_points *p) {
  mpt_space_free(p->space);
  mpt_problem_free(p->prob);
}

/* n points (n x dim, row-major): configurations offset, offset + stride, ... of the valid set (wrapping) */
static inline double *gpd_encode(const gpd_points *p, int64_t n, int64_t offset, int64_t stride) {
  double *X = malloc(sizeof(double) * (size_t)n * (size_t)p->dim);
  int64_t N = mpt_space_size(p->space);
  for (int64_t i = 0; X && i < n; i++)
    mpt_space_encode(p->space, (offset + i * stride) % N, MPT_ENC_INDEX, X + (size_t)i * (size_t)p->dim);
  return X;
}

/* a smooth output of each point, with a small deterministic wiggle */
static inline void gpd_outputs(const double *X, int64_t n, int dim, double *y) {
  for (int64_t i = 0; i < n; i++) {
    double f = 0;
    for (int d = 0; d < dim; d++) f += (1.0 + d % 3) * (X[i * dim + d] - 0.4) * (X[i * dim + d] - 0.4);
    y[i] = 2.0 + f + 0.01 * sin(7.0 * (double)i);
  }
}
/* the full covariance of n points as the serial path builds it (row-major, lower triangle), the reference the
 * distributed factorization is checked and timed against */
static inline void gpd_full_cov(const mpt_gp_dist_hyper *h, const double *X, int n, double *K) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double s = 0;
      for (int q = 0; q < h->dim; q++) {
        double t = (X[i * h->dim + q] - X[j * h->dim + q]) * h->inv_ls[q];
        s += t * t;
      }
      K[(size_t)i * n + j] = i == j ? h->variance + h->noise + MPT_GP_JITTER * h->variance
                                    : h->variance * mpt_gp_kernel_r2(h->kernel, s);
    }
}
#endif
