/* evaluators/device_limits.c: the configurations a device refuses by its threads and shared memory per block
 * (evaluators/device_limits.h). */
#include "evaluators/device_limits.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "evaluators/kernel_spec.h"

int mpt_device_refuses(const mpt_device_info *d, const int64_t block[3], int64_t shared, char *why, size_t cap) {
  int64_t threads = block[0] * block[1] * block[2];
  if (cap) why[0] = '\0';
  if (d->max_threads_per_block > 0 && threads > d->max_threads_per_block) {
    snprintf(why, cap, "block of %lld threads exceeds the device's %d threads per block", (long long)threads,
             d->max_threads_per_block);
    return 1;
  }
  if (d->max_shared_per_block > 0 && shared > d->max_shared_per_block) {
    snprintf(why, cap, "%lld bytes of shared memory exceed the device's %lld per block", (long long)shared,
             (long long)d->max_shared_per_block);
    return 1;
  }
  return 0;
}

/* marks every configuration of s that d refuses, the spec ks read */
static int mark_refused(const mpt_kernel_spec *ks, const mpt_space *s, const mpt_device_info *d, uint8_t *excluded,
                        int64_t *n_excluded, mpt_error *err) {
  int *idx = calloc((size_t)mpt_space_dims(s) + 1, sizeof *idx);
  mpt_value *vars = calloc((size_t)ks->n_names + 1, sizeof *vars);
  if (!idx || !vars) {
    free(idx);
    free(vars);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  for (int64_t id = 0; id < mpt_space_size(s); id++) {
    int64_t block[3], shared = 0;
    mpt_error ignored;
    char why[160];
    mpt_space_config(s, id, idx);
    excluded[id] = mpt_kspec_block_shared(ks, idx, vars, block, &shared, &ignored) == 0 &&
                   mpt_device_refuses(d, block, shared, why, sizeof why);
    *n_excluded += excluded[id];
  }
  free(idx);
  free(vars);
  return 0;
}

int mpt_device_excluded(const mpt_problem *p, const mpt_space *s, const mpt_device_info *d, uint8_t *excluded,
                        int64_t *n_excluded, mpt_error *err) {
  *n_excluded = 0;
  memset(excluded, 0, (size_t)mpt_space_size(s));
  if ((d->max_threads_per_block <= 0 && d->max_shared_per_block <= 0) ||
      !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(p->json, "KernelSpecification")))
    return 0;
  mpt_kernel_spec *ks = NULL;
  int rc = mpt_kspec_load_geometry(p, &ks, err);
  if (rc == 0) rc = mark_refused(ks, s, d, excluded, n_excluded, err);
  mpt_kspec_free(ks);
  return rc;
}
