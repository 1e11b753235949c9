/* tests/bo_synthetic.h: the synthetic objective bo is told in its benchmark (tests/bench_bo.c) and in the test
 * of bo with model ranks (tests/test_bo_dist.c): smooth and positive over a T1 space's index encoding, with a
 * heavy tail, a few interactions and 5 % failures, and optionally a clustered region of failures. Header-only
 * (static inline functions), included by one test or benchmark each. */
#ifndef MPT_TESTS_BO_SYNTHETIC_H
#define MPT_TESTS_BO_SYNTHETIC_H
#include <math.h>
#include <stdint.h>
#include "spaces/space.h"
#include "spaces/sys/obs.h"

/* the first two parameters with more than 2 values (-1 when missing) */
static inline void bo_synthetic_region_dims(const mpt_space *sp, int dim[2]) {
  dim[0] = dim[1] = -1;
  for (int d = 0, k = 0; d < mpt_space_dims(sp) && k < 2; d++)
    if (mpt_space_n_values(sp, d) > 2) dim[k++] = d;
}

/* the observation of config id: a runtime error for 5 % of the ids and, with fail_q > 0, where both region
 * dimensions lie below fail_q; else objective (and median) exp(2 f) of a sum of shifted squares f */
static inline void bo_synthetic(const mpt_space *sp, int64_t id, double fail_q, mpt_obs *o) {
  int D = mpt_space_dims(sp);
  double x[256];
  mpt_space_encode(sp, id, MPT_ENC_INDEX, x);
  int rd[2];
  bo_synthetic_region_dims(sp, rd);
  double f = 0;
  for (int d = 0; d < D && d < 256; d++) {
    double c = 0.3 + 0.4 * ((d * 37) % 11) / 10.0;
    f += (1.0 + d % 3) * (x[d] - c) * (x[d] - c);
    if (d > 0) f += 0.5 * x[d] * x[d - 1];
  }
  mpt_obs_init(o, id);
  uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ULL;
  h ^= h >> 29;
  if (h % 20 == 0 || (fail_q > 0 && rd[1] >= 0 && x[rd[0]] < fail_q && x[rd[1]] < fail_q)) {
    o->status = MPT_STATUS_RUNTIME_ERROR;
    return;
  }
  o->objective = o->median = exp(2.0 * f);
}

#endif
