/* spaces/sys/rng.c: xoshiro256** seeded through splitmix64. */
#include "spaces/sys/rng.h"
#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void mpt_rng_seed(mpt_rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t mpt_rng_next(mpt_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t mpt_rng_below(mpt_rng *r, uint64_t n) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = mpt_rng_next(r); while (x >= limit);
  return x % n;
}

double mpt_rng_uniform(mpt_rng *r) { return (double)(mpt_rng_next(r) >> 11) * 0x1.0p-53; }

double mpt_rng_normal(mpt_rng *r) {
  double u1, u2;
  do u1 = mpt_rng_uniform(r); while (u1 <= 0.0);
  u2 = mpt_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void mpt_rng_shuffle(mpt_rng *r, int64_t *a, int64_t n) {
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)mpt_rng_below(r, (uint64_t)i + 1);
    int64_t t = a[i]; a[i] = a[j]; a[j] = t;
  }
}
