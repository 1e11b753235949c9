/* strategies/prior_order.c: the `prior_order` strategy: no model, it follows related observations blindly
 * (mpt_strategy_tell_related: the other device classes of a run, --prior files). It proposes the
 * configurations in the order of their mean log-time over the sources that measured them (standardize=1: of
 * the standardized log-time; strategies/related.h), best first, re-reading that order at every ask; configurations no source measured
 * validly come after them in a uniformly random order. The baseline that bo's transfer is measured against
 * (docs/PERFORMANCE.md, "Transfer between GPUs"). */
#include <stdlib.h>
#include "strategies/related.h"
#include "strategies/strategy.h"

typedef struct prior_order_state {
  mpt_related *rel;
  int64_t size;
} prior_order_state;

static int prior_order_create(mpt_strategy *s, mpt_error *err) {
  prior_order_state *p = calloc(1, sizeof *p);
  if (!p) return mpt_error_set(err, MPT_ERR_NOMEM, "prior_order: out of memory");
  p->size = mpt_space_size(s->space);
  p->rel = mpt_related_new(p->size, mpt_strategy_opt_bool(s, "standardize"));
  s->data = p;
  if (!p->rel) return mpt_error_set(err, MPT_ERR_NOMEM, "prior_order: out of memory");
  return 0;
}

static void prior_order_tell_related(mpt_strategy *s, int source, const mpt_obs *obs, int n) {
  prior_order_state *p = s->data;
  mpt_related_add(p->rel, source, obs, n); /* out of memory: these are not followed */
}

static int prior_order_ask(mpt_strategy *s, int n, int64_t *ids) {
  prior_order_state *p = s->data;
  int64_t n_order = 0;
  const int64_t *order = mpt_related_order(p->rel, &n_order);
  if (!order && mpt_related_count(p->rel) > 0) {
    mpt_error_set(&s->ask_error, MPT_ERR_NOMEM, "prior_order: out of memory ordering the related observations");
    return MPT_ERR_NOMEM;
  }
  int k = 0;
  for (int64_t i = 0; i < n_order && k < n; i++) {
    int dup = 0;
    for (int j = 0; j < k && !dup; j++) dup = ids[j] == order[i];
    if (!dup && !mpt_strategy_is_seen(s, order[i])) ids[k++] = order[i];
  }
  int64_t id;
  while (k < n && (id = mpt_strategy_random_free(&s->rng, p->size, s->seen, NULL, 64, 1)) >= 0) {
    int dup = 0;
    for (int j = 0; j < k && !dup; j++) dup = ids[j] == id;
    if (dup) break; /* the base layer tops the ask up */
    ids[k++] = id;
  }
  return k;
}

static void prior_order_destroy(mpt_strategy *s) {
  prior_order_state *p = s->data;
  if (p) { mpt_related_free(p->rel); free(p); }
  s->data = NULL;
}

static const mpt_option_spec prior_order_options[] = {
    {"standardize", MPT_OPT_BOOL, "0", "order by the mean over the sources of the standardized log-time (each "
     "source's mean and sd removed: for sources that measured different configurations) instead of the mean "
     "log-time (0)", NULL, 1, 0},
    {0},
};

const mpt_strategy_type mpt_strategy_prior_order = {
  .name = "prior_order",
  .summary = "no model: configurations in the order of their mean log-time on related sources "
             "(other device classes, --prior files), then random",
  .options = prior_order_options,
  .create = prior_order_create,
  .ask = prior_order_ask,
  .tell = NULL,
  .destroy = prior_order_destroy,
  .tell_related = prior_order_tell_related,
};
