/* strategies/related.h: what a strategy keeps of related observations (mpt_strategy_tell_related): the same
 * space measured on other devices (the other device classes of a run, --prior files). Per source, the log of
 * the last valid objective told for each configuration and the source's running mean and standard deviation
 * of them; summarized per configuration as the mean over the sources that measured it of its standardized
 * log-time (z: each source's own scale removed, so a fast and a slow device weigh alike; or, on request, the
 * plain mean log-time). A configuration
 * that failed on every source that measured it is marked. Shared by bo's transfer (strategies/bo/bo_transfer.c),
 * the evolutionary strategies' seeding (strategies/evo_transfer.c) and prior_order (strategies/prior_order.c).
 * Memory: one double per configuration and source (sources beyond MPT_RELATED_MAX_SOURCES share the last). */
#ifndef MPT_RELATED_H
#define MPT_RELATED_H
#include <stdint.h>
#include "spaces/sys/obs.h"

#define MPT_RELATED_MAX_SOURCES 32

typedef struct mpt_related mpt_related;

/* for a space of n configurations; standardize 0: the summary is the mean log-time itself (each source's scale
 * kept: for sources that measured the same configurations, as brute-forced files did); NULL when out of memory */
mpt_related *mpt_related_new(int64_t n, int standardize);
void mpt_related_free(mpt_related *r);
/* takes in n observations of source (ids outside the space skipped; cancelled and missing ones are no
 * measurement); 0 or MPT_ERR_NOMEM (those told before are kept) */
int mpt_related_add(mpt_related *r, int source, const mpt_obs *obs, int n);
/* valid related observations held (the last per configuration and source) */
int64_t mpt_related_count(const mpt_related *r);
/* how many times related observations were added (a caller's cue that the summary changed) */
int64_t mpt_related_version(const mpt_related *r);
/* the summary per configuration id: the mean (standardized) log-time over the sources that measured it validly;
 * NAN when none did. *failed (may be NULL) gets per id 1 when every source that measured it saw it fail.
 * Recomputed when observations were added since the last call; NULL when out of memory. */
const double *mpt_related_mean_z(mpt_related *r, const uint8_t **failed);
/* sources held (at most MPT_RELATED_MAX_SOURCES) */
int mpt_related_sources(const mpt_related *r);
/* the share of the space's configurations source k measured validly (0..1) */
double mpt_related_source_coverage(const mpt_related *r, int k);
/* out[id] = source k's (k < mpt_related_sources) log-time of id, standardized as the summary is (NAN when k has no
 * valid measurement of it) */
void mpt_related_source_z(const mpt_related *r, int k, double *out);
/* the ids with a summary, best (lowest mean z) first, ties by id; *n of them; NULL when out of memory */
const int64_t *mpt_related_order(mpt_related *r, int64_t *n);

#endif
