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

int mpt_kspec_launch(const mpt_kernel_spec *ks, const int *idx, mpt_launch *out, mpt_error *err) {
  const mpt_problem *p = ks->problem;
  memset(out, 0, sizeof *out);
  mpt_value *vars = calloc((size_t)ks->n_names, sizeof(mpt_value));
  mpt_value items[3];
  if (!vars) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  char config[512];
  int len = 0;
  config[0] = 0;
  for (int i = 0; i < p->n_params; i++) {
    if (idx[i] < 0 || idx[i] >= p->params[i].n_values) {
      free(vars);
      return mpt_error_set(err, MPT_ERR_VALUE, "value index %d of parameter %s out of range", idx[i], p->params[i].name);
    }
    vars[i] = p->params[i].values[idx[i]];
    if (len < (int)sizeof config - 1) {
      len += snprintf(config + len, sizeof config - (size_t)len, "%s%s=", i ? "," : "", p->params[i].name);
      if (len < (int)sizeof config - 1)
        len += mpt_value_str_repr(&vars[i], config + len, (int)sizeof config - len);
    }
  }
  int rc = 0;
  /* ProblemSize */
  for (int d = 0; d < 3; d++) out->problem[d] = 1;
  vars[p->n_params].kind = MPT_V_NONE;
  for (int d = 0; d < ks->n_problem; d++) {
    char fld[32];
    snprintf(fld, sizeof fld, "ProblemSize[%d]", d);
    if ((rc = mpt_ks_eval_number(ks, ks->problem_size[d], vars, fld, config, 1, NULL, &out->problem[d], err))) goto done;
    items[d] = mpt_value_int(out->problem[d]);
  }
  vars[p->n_params].kind = MPT_V_LIST;
  vars[p->n_params].u.list.items = items;
  vars[p->n_params].u.list.n = ks->n_problem;
  static const char *bnames[3] = {"block_size_x", "block_size_y", "block_size_z"};
  static const char *gnames[3] = {"grid_size_x", "grid_size_y", "grid_size_z"};
  static const char *dims[3] = {"X", "Y", "Z"};
  static const char *gd_names[3] = {"GridDivX", "GridDivY", "GridDivZ"};
  /* block */
  for (int d = 0; d < 3; d++) {
    char fld[32];
    snprintf(fld, sizeof fld, "LocalSize.%s", dims[d]);
    if (ks->local[d]) {
      if ((rc = mpt_ks_eval_number(ks, ks->local[d], vars, fld, config, 1, NULL, &out->block[d], err))) goto done;
    } else {
      int pi = mpt_problem_param_index(p, bnames[d]);
      int ok = 0;
      out->block[d] = d == 0 ? 256 : 1;
      if (pi >= 0) {
        double v = mpt_value_as_double(&vars[pi], &ok);
        if (ok) out->block[d] = v >= 1 && v < 9.2e18 ? (int64_t)v : 0; /* no undefined cast: < 1 is refused below */
      }
    }
    if (out->block[d] < 1) {
      rc = mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "block size %lld < 1 for %s", (long long)out->block[d], config);
      goto done;
    }
  }
  /* grid */
  for (int d = 0; d < 3; d++) {
    char fld[48];
    if (ks->has_problem) {
      double div = 1;
      if (ks->griddiv_given[d]) {
        for (int i = 0; i < ks->n_griddiv[d]; i++) {
          double x;
          snprintf(fld, sizeof fld, "%s[%d]", gd_names[d], i);
          if ((rc = mpt_ks_eval_number(ks, ks->griddiv[d][i], vars, fld, config, 0, &x, NULL, err))) goto done;
          div *= x;
        }
      } else {
        int pi = mpt_problem_param_index(p, bnames[d]);
        int ok = 0;
        if (pi >= 0) {
          double v = mpt_value_as_double(&vars[pi], &ok);
          if (ok) div = v;
        }
      }
      if (!(div > 0)) {
        snprintf(fld, sizeof fld, "%s", gd_names[d]);
        rc = mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "grid divisor %g <= 0 for %s", div, config);
        goto done;
      }
      double blocks = ceil((double)out->problem[d] / div);
      if (!(blocks < 9.2e18)) { /* a divisor near 0 (1e-300): no undefined cast to int64 */
        snprintf(fld, sizeof fld, "%s", gd_names[d]);
        rc = mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "grid of %g blocks (divisor %g) for %s", blocks, div, config);
        goto done;
      }
      out->grid[d] = (int64_t)blocks;
    } else if (ks->global[d]) {
      int64_t g;
      snprintf(fld, sizeof fld, "GlobalSize.%s", dims[d]);
      if ((rc = mpt_ks_eval_number(ks, ks->global[d], vars, fld, config, 1, NULL, &g, err))) goto done;
      out->grid[d] = ks->global_blocks ? g : (g + out->block[d] - 1) / out->block[d];
    } else {
      out->grid[d] = 1;
    }
    if (out->grid[d] < 1) {
      snprintf(fld, sizeof fld, "%s", ks->has_problem ? "ProblemSize" : "GlobalSize");
      rc = mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "grid size %lld < 1 in dimension %s for %s", (long long)out->grid[d],
                dims[d], config);
      goto done;
    }
  }
  /* shared memory */
  if (ks->shared_memory &&
      (rc = mpt_ks_eval_number(ks, ks->shared_memory, vars, "SharedMemory", config, 1, NULL, &out->shared_bytes, err)))
    goto done;
  for (int i = 0; i < ks->n_args; i++)
    if (ks->args[i].mem == MPT_MEM_LOCAL) out->shared_bytes += (int64_t)ks->args[i].bytes;
  /* defines */
  int cap = 0;
  char val[256];
  for (int i = 0; i < p->n_params; i++) {
    if (vars[i].kind == MPT_V_BOOL) snprintf(val, sizeof val, "%d", (int)vars[i].u.i);
    else mpt_value_str_repr(&vars[i], val, (int)sizeof val);
    if (add_define(out, &cap, p->params[i].name, val)) goto nomem;
  }
  for (int d = 0; d < 3; d++)
    if (mpt_problem_param_index(p, bnames[d]) < 0) {
      snprintf(val, sizeof val, "%lld", (long long)out->block[d]);
      if (add_define(out, &cap, bnames[d], val)) goto nomem;
    }
  for (int d = 0; d < 3; d++)
    if (mpt_problem_param_index(p, gnames[d]) < 0) {
      snprintf(val, sizeof val, "%lld", (long long)out->grid[d]);
      if (add_define(out, &cap, gnames[d], val)) goto nomem;
    }
  if (mpt_problem_param_index(p, "kernel_tuner") < 0 && add_define(out, &cap, "kernel_tuner", "1")) goto nomem;
done:
  free(vars);
  if (rc) mpt_launch_free(out);
  return rc;
nomem:
  rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  goto done;
}
