/* strategies/brute_force.c: the `brute_force` strategy: every valid id in ascending order, skipping the
 * ids already told (warm start) or seen. */
#include <stdlib.h>
#include "strategies/strategy.h"

typedef struct bf_state { int64_t next; } bf_state;

static int bf_create(mpt_strategy *s, mpt_error *err) {
  bf_state *b = calloc(1, sizeof *b);
  if (!b) return mpt_error_set(err, MPT_ERR_NOMEM, "brute_force: out of memory");
  s->data = b;
  return 0;
}

static int bf_ask(mpt_strategy *s, int n, int64_t *ids) {
  bf_state *b = s->data;
  int64_t size = mpt_space_size(s->space);
  int k = 0;
  while (k < n && b->next < size) {
    int64_t id = b->next++;
    if (!mpt_strategy_is_seen(s, id)) ids[k++] = id;
  }
  return k;
}

static void bf_destroy(mpt_strategy *s) { free(s->data); s->data = NULL; }

static const mpt_option_spec bf_options[] = {{0}};

const mpt_strategy_type mpt_strategy_brute_force = {
  .name = "brute_force",
  .summary = "every valid configuration in id order",
  .options = bf_options,
  .create = bf_create,
  .ask = bf_ask,
  .tell = NULL,
  .destroy = bf_destroy,
};
