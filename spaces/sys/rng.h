/* spaces/sys/rng.h: the seeded random generator (xoshiro256**) every strategy and sampler uses:
 * one instance per strategy, so a run is reproducible from its seed. */
#ifndef MPT_RNG_H
#define MPT_RNG_H
#include <stdint.h>

typedef struct mpt_rng { uint64_t s[4]; } mpt_rng;

void mpt_rng_seed(mpt_rng *r, uint64_t seed);
uint64_t mpt_rng_next(mpt_rng *r);
/* uniform integer in [0, n), unbiased; n > 0 */
uint64_t mpt_rng_below(mpt_rng *r, uint64_t n);
/* uniform double in [0, 1) */
double mpt_rng_uniform(mpt_rng *r);
/* standard normal */
double mpt_rng_normal(mpt_rng *r);
/* Fisher-Yates shuffle of n int64 values */
void mpt_rng_shuffle(mpt_rng *r, int64_t *a, int64_t n);

#endif
