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

/* marks in used (one per expression name: the parameters, then ProblemSize) the names e reads */
static void add_uses(const mpt_expr *e, uint8_t *used) {
  for (int u = 0; e && u < mpt_expr_n_uses(e); u++) used[mpt_expr_uses(e)[u]] = 1;
}

/* the parameters a configuration's block and shared memory depend on: those LocalSize (or, without it, the
 * parameters block_size_x/y/z) and SharedMemory read, and those ProblemSize reads when they read it */
static void launch_params(const mpt_kernel_spec *ks, uint8_t *used) {
  static const char *const block_names[3] = {"block_size_x", "block_size_y", "block_size_z"};
  int np = ks->problem->n_params;
  for (int d = 0; d < 3; d++) {
    int pi = mpt_problem_param_index(ks->problem, block_names[d]);
    if (ks->local[d]) add_uses(ks->local[d], used);
    else if (pi >= 0) used[pi] = 1;
  }
  add_uses(ks->shared_memory, used);
  if (used[np])
    for (int d = 0; d < ks->n_problem; d++) add_uses(ks->problem_size[d], used);
}

/* The verdicts already reached, by the value indices of the parameters the launch depends on (mixed radix): -1
 * not known yet, 0 accepted, 1 refused. Most spaces have few distinct blocks: each is computed once. */
typedef struct verdicts {
  const mpt_kernel_spec *ks;
  uint8_t *used;     /* per parameter (then ProblemSize) */
  int8_t *memo;      /* NULL: too many combinations to keep (every configuration computed) */
  int *idx;          /* scratch: one configuration's value indices */
  mpt_value *vars;   /* scratch for mpt_kspec_block_shared */
} verdicts;

static int verdicts_init(verdicts *v, const mpt_kernel_spec *ks, int dims) {
  memset(v, 0, sizeof *v);
  v->ks = ks;
  v->used = calloc((size_t)ks->n_names + 1, 1);
  v->idx = calloc((size_t)dims + 1, sizeof *v->idx);
  v->vars = calloc((size_t)ks->n_names + 1, sizeof *v->vars);
  if (!v->used || !v->idx || !v->vars) return -1;
  launch_params(ks, v->used);
  int64_t combos = 1;
  for (int i = 0; i < ks->problem->n_params && combos <= (1 << 22); i++)
    if (v->used[i]) combos *= ks->problem->params[i].n_values;
  if (combos <= (1 << 22) && (v->memo = malloc((size_t)combos))) memset(v->memo, -1, (size_t)combos);
  return 0;
}

static void verdicts_free(verdicts *v) {
  free(v->used);
  free(v->memo);
  free(v->idx);
  free(v->vars);
}

/* 1 when d refuses configuration id of s (0 also when its launch cannot be computed) */
static int refused(verdicts *v, const mpt_space *s, int64_t id, const mpt_device_info *d) {
  const mpt_problem *p = v->ks->problem;
  mpt_space_config(s, id, v->idx);
  int64_t key = 0;
  for (int i = 0; i < p->n_params; i++)
    if (v->used[i]) key = key * p->params[i].n_values + v->idx[i];
  if (v->memo && v->memo[key] >= 0) return v->memo[key];
  int64_t block[3], shared = 0;
  mpt_error ignored;
  char why[160];
  int r = mpt_kspec_block_shared(v->ks, v->idx, v->vars, block, &shared, &ignored) == 0 &&
          mpt_device_refuses(d, block, shared, why, sizeof why);
  if (v->memo) v->memo[key] = (int8_t)r;
  return r;
}

/* marks every configuration of s that d refuses, the spec ks read */
static int mark_refused(const mpt_kernel_spec *ks, const mpt_space *s, const mpt_device_info *d, uint8_t *excluded,
                        int64_t *n_excluded, mpt_error *err) {
  verdicts v;
  int rc = verdicts_init(&v, ks, mpt_space_dims(s));
  for (int64_t id = 0; rc == 0 && id < mpt_space_size(s); id++) {
    excluded[id] = (uint8_t)refused(&v, s, id, d);
    *n_excluded += excluded[id];
  }
  verdicts_free(&v);
  return rc ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory") : 0;
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
