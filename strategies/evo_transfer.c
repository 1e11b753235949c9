/* strategies/evo_transfer.c: related observations seed the evolutionary strategies (strategies/evo_transfer.h):
 * they are kept in a strategies/related.h store, summarized per configuration as the mean standardized
 * log-time over the sources, and the best ones this search has not proposed yet replace a share (option
 * transfer) of each initial and restart population and serve as the start points of sa and mls. */
#include <math.h>
#include "strategies/evo_transfer.h"
#include "strategies/related.h"

void evo_strategy_tell_related(mpt_strategy *s, int source, const mpt_obs *obs, int n) {
  evo *e = s->data;
  if (!e->rel) {
    e->transfer = mpt_strategy_opt_double(s, "transfer");
    if (e->transfer <= 0 || !(e->rel = mpt_related_new(e->size, 1))) return; /* off, or out of memory */
  }
  mpt_related_add(e->rel, source, obs, n);
}

/* the best related configuration from *pos on that this search has not proposed and that is not among
 * ids[0..n); -1 when none. *pos moves past what was looked at. */
static int64_t next_elite(evo *e, int64_t *pos, const int64_t *ids, int64_t n) {
  int64_t n_order = 0;
  const int64_t *order = mpt_related_order(e->rel, &n_order);
  for (; order && *pos < n_order; (*pos)++) {
    int64_t id = order[*pos], dup = e->mine[id];
    for (int64_t j = 0; j < n && !dup; j++) dup = ids[j] == id;
    if (!dup) return order[(*pos)++];
  }
  return -1;
}

void evo_transfer_seed(evo *e, int64_t *ids, int64_t n) {
  if (!e->rel || e->transfer <= 0 || n <= 0) return;
  int64_t m = (int64_t)floor(e->transfer * (double)n + 0.5), pos = 0;
  for (int64_t k = 0; k < m; k++) {
    int64_t id = next_elite(e, &pos, ids, n);
    if (id < 0) break;
    ids[k] = id;
  }
}

int64_t evo_transfer_start(evo *e) {
  int64_t pos = 0, id = e->rel && e->transfer > 0 ? next_elite(e, &pos, NULL, 0) : -1;
  return id >= 0 ? id : evo_random_unseen(e);
}
