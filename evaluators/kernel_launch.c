/* evaluators/kernel_launch.c: the launch of one configuration of a KernelSpecification: problem sizes,
 * block and grid (LocalSize/GlobalSize or ProblemSize/GridDiv, Kernel Tuner's defaults when absent),
 * shared memory and the preprocessor defines. Contract: evaluators/kernel_spec.h; semantics in
 * docs/KERNELS.md. */
#include "evaluators/kernel_spec.h"
#include "evaluators/kernel_spec_eval.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mpt_launch_free(mpt_launch *l) {
  if (!l) return;
  for (int i = 0; i < l->n_defines; i++) free(l->defines[i]);
  free(l->defines);
  l->defines = NULL;
  l->n_defines = 0;
}

static int add_define(mpt_launch *l, int *cap, const char *name, const char *value) {
  if (l->n_defines == *cap) {
    int nc = *cap ? *cap * 2 : 16;
    char **nd = realloc(l->defines, sizeof(char *) * (size_t)nc);
    if (!nd) return -1;
    l->defines = nd;
    *cap = nc;
  }
  size_t n = strlen(name) + strlen(value) + 2;
  char *s = malloc(n);
  if (!s) return -1;
  snprintf(s, n, "%s=%s", name, value);
  l->defines[l->n_defines++] = s;
  return 0;
}

/* the names a launch binds or defines, per dimension */
static const char *const block_names[3] = {"block_size_x", "block_size_y", "block_size_z"};
static const char *const grid_names[3] = {"grid_size_x", "grid_size_y", "grid_size_z"};
static const char *const dim_names[3] = {"X", "Y", "Z"};
static const char *const griddiv_names[3] = {"GridDivX", "GridDivY", "GridDivZ"};

/* binds each parameter's value of configuration idx in vars and writes the configuration as
 * "name=value,..." into config (cut short at cap) for messages */
static int bind_parameters(const mpt_problem *p, const int *idx, mpt_value *vars, char *config, int cap,
                           mpt_error *err) {
  int len = 0;
  config[0] = 0;
  for (int i = 0; i < p->n_params; i++) {
    if (idx[i] < 0 || idx[i] >= p->params[i].n_values)
      return mpt_error_set(err, MPT_ERR_VALUE, "value index %d of parameter %s out of range", idx[i],
                           p->params[i].name);
    vars[i] = p->params[i].values[idx[i]];
    if (len < cap - 1) {
      len += snprintf(config + len, (size_t)(cap - len), "%s%s=", i ? "," : "", p->params[i].name);
      if (len < cap - 1) len += mpt_value_str_repr(&vars[i], config + len, cap - len);
    }
  }
  return 0;
}

/* ProblemSize (1 for missing dimensions), evaluated without ProblemSize bound; then ProblemSize is bound in
 * vars as the list of its values, held in items */
static int compute_problem_size(const mpt_kernel_spec *ks, mpt_value *vars, mpt_value items[3], const char *config,
                                mpt_launch *out, mpt_error *err) {
  const mpt_problem *p = ks->problem;
  for (int d = 0; d < 3; d++) out->problem[d] = 1;
  vars[p->n_params].kind = MPT_V_NONE;
  for (int d = 0; d < ks->n_problem; d++) {
    char fld[32];
    snprintf(fld, sizeof fld, "ProblemSize[%d]", d);
    int rc = mpt_ks_eval_number(ks, ks->problem_size[d], vars, fld, config, 1, NULL, &out->problem[d], err);
    if (rc) return rc;
    items[d] = mpt_value_int(out->problem[d]);
  }
  vars[p->n_params].kind = MPT_V_LIST;
  vars[p->n_params].u.list.items = items;
  vars[p->n_params].u.list.n = ks->n_problem;
  return 0;
}

/* the block size of dimension d without LocalSize: the parameter block_size_x/y/z, else Kernel Tuner's
 * 256/1/1; 0 for a value < 1 or too large for int64 (no undefined cast: < 1 is refused by the caller) */
static int64_t default_block(const mpt_problem *p, const mpt_value *vars, int d) {
  int pi = mpt_problem_param_index(p, block_names[d]);
  int ok = 0;
  int64_t block = d == 0 ? 256 : 1;
  if (pi >= 0) {
    double v = mpt_value_as_double(&vars[pi], &ok);
    if (ok) block = v >= 1 && v < 9.2e18 ? (int64_t)v : 0;
  }
  return block;
}

/* the threads per block of every dimension: LocalSize, else default_block; each >= 1 */
static int compute_block(const mpt_kernel_spec *ks, const mpt_value *vars, const char *config, mpt_launch *out,
                         mpt_error *err) {
  for (int d = 0; d < 3; d++) {
    char fld[32];
    snprintf(fld, sizeof fld, "LocalSize.%s", dim_names[d]);
    if (ks->local[d]) {
      int rc = mpt_ks_eval_number(ks, ks->local[d], vars, fld, config, 1, NULL, &out->block[d], err);
      if (rc) return rc;
    } else {
      out->block[d] = default_block(ks->problem, vars, d);
    }
    if (out->block[d] < 1)
      return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, fld, "block size %lld < 1 for %s", (long long)out->block[d],
                        config);
  }
  return 0;
}

/* the grid divisor of dimension d: the product of GridDivX/Y/Z's expressions, else the parameter
 * block_size_x/y/z (Kernel Tuner's default), else 1 */
static int grid_divisor(const mpt_kernel_spec *ks, int d, const mpt_value *vars, const char *config, double *div,
                        mpt_error *err) {
  *div = 1;
  if (ks->griddiv_given[d]) {
    for (int i = 0; i < ks->n_griddiv[d]; i++) {
      char fld[48];
      double x;
      snprintf(fld, sizeof fld, "%s[%d]", griddiv_names[d], i);
      int rc = mpt_ks_eval_number(ks, ks->griddiv[d][i], vars, fld, config, 0, &x, NULL, err);
      if (rc) return rc;
      *div *= x;
    }
    return 0;
  }
  int pi = mpt_problem_param_index(ks->problem, block_names[d]);
  int ok = 0;
  if (pi >= 0) {
    double v = mpt_value_as_double(&vars[pi], &ok);
    if (ok) *div = v;
  }
  return 0;
}

/* the blocks of dimension d with ProblemSize: ceil(problem / divisor), the divisor > 0 and the count within int64 */
static int grid_from_problem(const mpt_kernel_spec *ks, int d, const mpt_value *vars, const char *config,
                             mpt_launch *out, mpt_error *err) {
  double div;
  int rc = grid_divisor(ks, d, vars, config, &div, err);
  if (rc) return rc;
  if (!(div > 0))
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, griddiv_names[d], "grid divisor %g <= 0 for %s", div, config);
  double blocks = ceil((double)out->problem[d] / div);
  if (!(blocks < 9.2e18)) /* a divisor near 0 (1e-300): no undefined cast to int64 */
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, griddiv_names[d], "grid of %g blocks (divisor %g) for %s",
                      blocks, div, config);
  out->grid[d] = (int64_t)blocks;
  return 0;
}

/* the blocks of dimension d with GlobalSize: the size itself when it counts blocks (GlobalSizeType CUDA), else
 * threads divided by the block size, rounded up */
static int grid_from_global(const mpt_kernel_spec *ks, int d, const mpt_value *vars, const char *config,
                            mpt_launch *out, mpt_error *err) {
  char fld[48];
  int64_t g;
  snprintf(fld, sizeof fld, "GlobalSize.%s", dim_names[d]);
  int rc = mpt_ks_eval_number(ks, ks->global[d], vars, fld, config, 1, NULL, &g, err);
  if (rc) return rc;
  out->grid[d] = ks->global_blocks ? g : (g + out->block[d] - 1) / out->block[d];
  return 0;
}

/* the blocks per dimension: from ProblemSize, else GlobalSize, else 1; each >= 1 */
static int compute_grid(const mpt_kernel_spec *ks, const mpt_value *vars, const char *config, mpt_launch *out,
                        mpt_error *err) {
  for (int d = 0; d < 3; d++) {
    int rc = 0;
    if (ks->has_problem) rc = grid_from_problem(ks, d, vars, config, out, err);
    else if (ks->global[d]) rc = grid_from_global(ks, d, vars, config, out, err);
    else out->grid[d] = 1;
    if (rc) return rc;
    if (out->grid[d] < 1)
      return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, ks->has_problem ? "ProblemSize" : "GlobalSize",
                        "grid size %lld < 1 in dimension %s for %s", (long long)out->grid[d], dim_names[d], config);
  }
  return 0;
}

/* SharedMemory (0 without it) plus the bytes of the Local arguments */
static int compute_shared_bytes(const mpt_kernel_spec *ks, const mpt_value *vars, const char *config,
                                mpt_launch *out, mpt_error *err) {
  if (ks->shared_memory) {
    int rc = mpt_ks_eval_number(ks, ks->shared_memory, vars, "SharedMemory", config, 1, NULL, &out->shared_bytes, err);
    if (rc) return rc;
  }
  for (int i = 0; i < ks->n_args; i++)
    if (ks->args[i].mem == MPT_MEM_LOCAL) out->shared_bytes += (int64_t)ks->args[i].bytes;
  return 0;
}

/* adds "name=n" unless a parameter is named `name` (it is defined as a parameter then); -1 when out of memory */
static int add_size_define(const mpt_problem *p, mpt_launch *out, int *cap, const char *name, int64_t n) {
  char val[32];
  if (mpt_problem_param_index(p, name) >= 0) return 0;
  snprintf(val, sizeof val, "%lld", (long long)n);
  return add_define(out, cap, name, val);
}

/* the defines: every parameter (bools as 0/1), then block_size_x/y/z, grid_size_x/y/z and kernel_tuner=1 where
 * no parameter has their name; -1 when out of memory */
static int add_launch_defines(const mpt_problem *p, const mpt_value *vars, mpt_launch *out) {
  int cap = 0;
  char val[256];
  for (int i = 0; i < p->n_params; i++) {
    if (vars[i].kind == MPT_V_BOOL) snprintf(val, sizeof val, "%d", (int)vars[i].u.i);
    else mpt_value_str_repr(&vars[i], val, (int)sizeof val);
    if (add_define(out, &cap, p->params[i].name, val)) return -1;
  }
  for (int d = 0; d < 3; d++)
    if (add_size_define(p, out, &cap, block_names[d], out->block[d])) return -1;
  for (int d = 0; d < 3; d++)
    if (add_size_define(p, out, &cap, grid_names[d], out->grid[d])) return -1;
  if (mpt_problem_param_index(p, "kernel_tuner") < 0 && add_define(out, &cap, "kernel_tuner", "1")) return -1;
  return 0;
}

int mpt_kspec_launch(const mpt_kernel_spec *ks, const int *idx, mpt_launch *out, mpt_error *err) {
  memset(out, 0, sizeof *out);
  mpt_value *vars = calloc((size_t)ks->n_names, sizeof(mpt_value)); /* the parameters, then ProblemSize */
  mpt_value items[3];                                                  /* ProblemSize's list, bound in vars */
  if (!vars) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  char config[512];
  int rc = bind_parameters(ks->problem, idx, vars, config, (int)sizeof config, err);
  if (rc == 0) rc = compute_problem_size(ks, vars, items, config, out, err);
  if (rc == 0) rc = compute_block(ks, vars, config, out, err);
  if (rc == 0) rc = compute_grid(ks, vars, config, out, err);
  if (rc == 0) rc = compute_shared_bytes(ks, vars, config, out, err);
  if (rc == 0 && add_launch_defines(ks->problem, vars, out)) rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  free(vars);
  if (rc) mpt_launch_free(out);
  return rc;
}

int mpt_kspec_block_shared(const mpt_kernel_spec *ks, const int *idx, mpt_value *vars, int64_t block[3],
                           int64_t *shared, mpt_error *err) {
  mpt_launch l;
  mpt_value items[3]; /* ProblemSize's list, bound in vars */
  char config[512];
  memset(&l, 0, sizeof l);
  int rc = bind_parameters(ks->problem, idx, vars, config, (int)sizeof config, err);
  if (rc == 0) rc = compute_problem_size(ks, vars, items, config, &l, err);
  if (rc == 0) rc = compute_block(ks, vars, config, &l, err);
  if (rc == 0) rc = compute_shared_bytes(ks, vars, config, &l, err);
  memcpy(block, l.block, sizeof l.block);
  *shared = l.shared_bytes;
  return rc;
}
