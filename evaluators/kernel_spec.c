/* evaluators/kernel_spec.c: reads the T1 KernelSpecification (all of it) into memory and frees it. The
 * launch of one configuration is in evaluators/kernel_launch.c; the message format and the numeric
 * evaluation of expressions both use are in evaluators/kernel_spec_eval.c. Contract:
 * evaluators/kernel_spec.h; semantics in docs/KERNELS.md. */
#include "evaluators/kernel_spec.h"
#include "evaluators/kernel_spec_eval.h"
#include "spaces/json/json_keys.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define KS "KernelSpecification"

/* The keys read here or listed by the T1 schema, per object; a key one or two edits from one of them is a
 * misspelling and an error (spaces/json/json_keys.h) */
static const char *const ks_keys[] = {"Language", "CompilerOptions", "KernelName", "KernelFile", "GlobalSizeType",
                                      "GlobalSize", "LocalSize", "SharedMemory", "Arguments", "ReferenceArguments",
                                      "Device", "Profiling", "SimulationInput", "ProblemSize", "GridDivX", "GridDivY",
                                      "GridDivZ", "Iterations", "Tolerance", "Compiler", "ReturnsTime", NULL};
static const char *const arg_keys[] = {"Name", "Type", "TypeSize", "MemoryType", "MemType", "AccessType", "Size",
                                       "FillType", "FillValue", "DataSource", "RandomSeed", "Output", NULL};
static const char *const ref_keys[] = {"Name", "TargetName", "FillType", "FillValue", "DataSource", "RandomSeed",
                                       "ValidationMethod", "ValidationThreshold", NULL};
static const char *const xyz_keys[] = {"X", "Y", "Z", NULL};
static const char *const tol_keys[] = {"Atol", "Rtol", NULL};

static int check_keys(const mpt_problem *p, const cJSON *o, const char *const *known, const char *field,
                      mpt_error *err) {
  char where[192];
  snprintf(where, sizeof where, "%s%s%s", KS, field[0] ? "." : "", field);
  return mpt_json_check_keys(o, known, p->path, p->text, where, err);
}

/* the objects of the array member `name` of k, each against known */
static int check_item_keys(const mpt_problem *p, const cJSON *k, const char *name, const char *const *known,
                           mpt_error *err) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(k, name), *o;
  int i = 0, rc = 0;
  if (!cJSON_IsArray(arr)) return 0;
  cJSON_ArrayForEach(o, arr) {
    char field[64];
    snprintf(field, sizeof field, "%s[%d]", name, i++);
    if ((rc = check_keys(p, o, known, field, err))) break;
  }
  return rc;
}

int mpt_kspec_check_keys(const mpt_problem *p, mpt_error *err) {
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(p->json, KS);
  int rc = check_keys(p, k, ks_keys, "", err);
  if (rc || !cJSON_IsObject(k)) return rc;
  static const char *const xyz_of[] = {"GlobalSize", "LocalSize"};
  for (int d = 0; rc == 0 && d < 2; d++)
    rc = check_keys(p, cJSON_GetObjectItemCaseSensitive(k, xyz_of[d]), xyz_keys, xyz_of[d], err);
  if (rc == 0) rc = check_keys(p, cJSON_GetObjectItemCaseSensitive(k, "Tolerance"), tol_keys, "Tolerance", err);
  if (rc == 0) rc = check_item_keys(p, k, "Arguments", arg_keys, err);
  if (rc == 0) rc = check_item_keys(p, k, "ReferenceArguments", ref_keys, err);
  return rc;
}

static const struct {
  const char *name;
  mpt_ks_base base;
  int lanes;
  size_t bytes; /* per lane */
} type_table[] = {
  {"bool", MPT_T_BOOL, 1, 1},       {"int8", MPT_T_INT8, 1, 1},       {"uint8", MPT_T_UINT8, 1, 1},
  {"int16", MPT_T_INT16, 1, 2},     {"uint16", MPT_T_UINT16, 1, 2},   {"int32", MPT_T_INT32, 1, 4},
  {"uint32", MPT_T_UINT32, 1, 4},   {"int64", MPT_T_INT64, 1, 8},     {"uint64", MPT_T_UINT64, 1, 8},
  {"half", MPT_T_HALF, 1, 2},       {"half2", MPT_T_HALF, 2, 2},      {"half4", MPT_T_HALF, 4, 2},
  {"half8", MPT_T_HALF, 8, 2},      {"half16", MPT_T_HALF, 16, 2},    {"float", MPT_T_FLOAT, 1, 4},
  {"float2", MPT_T_FLOAT, 2, 4},    {"float4", MPT_T_FLOAT, 4, 4},    {"float8", MPT_T_FLOAT, 8, 4},
  {"float16", MPT_T_FLOAT, 16, 4},  {"double", MPT_T_DOUBLE, 1, 8},   {"double2", MPT_T_DOUBLE, 2, 8},
  {"double4", MPT_T_DOUBLE, 4, 8},  {"double8", MPT_T_DOUBLE, 8, 8},  {"double16", MPT_T_DOUBLE, 16, 8},
  {"custom", MPT_T_CUSTOM, 1, 0},
};

const char *mpt_ks_base_ctype(mpt_ks_base b) {
  switch (b) {
  case MPT_T_BOOL: return "_Bool";
  case MPT_T_INT8: return "int8_t";
  case MPT_T_UINT8: return "uint8_t";
  case MPT_T_INT16: return "int16_t";
  case MPT_T_UINT16: return "uint16_t";
  case MPT_T_INT32: return "int32_t";
  case MPT_T_UINT32: return "uint32_t";
  case MPT_T_INT64: return "int64_t";
  case MPT_T_UINT64: return "uint64_t";
  case MPT_T_HALF: return "_Float16";
  case MPT_T_FLOAT: return "float";
  case MPT_T_DOUBLE: return "double";
  case MPT_T_CUSTOM: return NULL;
  }
  return NULL;
}

int mpt_kspec_arg_index(const mpt_kernel_spec *ks, const char *name) {
  for (int i = 0; i < ks->n_args; i++)
    if (strcmp(ks->args[i].name, name) == 0) return i;
  return -1;
}

/* Compiles an expression given as a JSON string or number. */
static int compile_field(const mpt_kernel_spec *ks, const cJSON *j, const char *field, mpt_expr **out,
                         mpt_error *err) {
  char buf[64], full[256];
  const char *src;
  *out = NULL;
  if (cJSON_IsString(j)) {
    src = j->valuestring;
  } else if (cJSON_IsNumber(j)) {
    if (j->valuedouble == floor(j->valuedouble) && fabs(j->valuedouble) < 9e15)
      snprintf(buf, sizeof buf, "%lld", (long long)j->valuedouble);
    else
      snprintf(buf, sizeof buf, "%.17g", j->valuedouble);
    src = buf;
  } else {
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, field, "expected an expression (string) or a number");
  }
  if (!src[0]) return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, field, "empty expression");
  int col = 0;
  int rc = mpt_expr_compile(src, (const char *const *)ks->names, ks->n_names, out, &col, err);
  if (rc) { /* col, a byte of src, places LINE:COL only in a string (mpt_json_locate) */
    snprintf(full, sizeof full, "%s.%s", KS, field);
    return mpt_problem_expr_error(ks->problem, err, rc, full, src, col);
  }
  return 0;
}


/* ---- loading ---- */

static int read_file(const char *path, char **text, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    return -1;
  }
  size_t r;
  while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += r;
    if (n + 1 >= cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        fclose(f);
        return -1;
      }
      buf = nb;
      cap *= 2;
    }
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return -1;
  }
  buf[n] = 0;
  *text = buf;
  *len = n;
  return 0;
}

static char *resolve(const mpt_problem *p, const char *rel) {
  if (rel[0] == '/') return strdup(rel);
  size_t n = strlen(p->dir) + strlen(rel) + 2;
  char *s = malloc(n);
  if (s) snprintf(s, n, "%s/%s", p->dir, rel);
  return s;
}

static int parse_fill(mpt_kernel_spec *ks, const cJSON *o, const char *field, int arg_index,
                      mpt_ks_fillspec *f, mpt_error *err) {
  const mpt_problem *p = ks->problem;
  char fld[160];
  const cJSON *ft = cJSON_GetObjectItemCaseSensitive(o, "FillType");
  const cJSON *fv = cJSON_GetObjectItemCaseSensitive(o, "FillValue");
  const cJSON *ds = cJSON_GetObjectItemCaseSensitive(o, "DataSource");
  const cJSON *rs = cJSON_GetObjectItemCaseSensitive(o, "RandomSeed");
  f->type = MPT_FILL_CONSTANT;
  if (ft) {
    static const char *names[] = {"Constant", "Random", "Generator", "Script", "BinaryRaw", "BinaryHDF"};
    int k = -1;
    if (cJSON_IsString(ft))
      for (int t = 0; t < 6; t++)
        if (strcmp(ft->valuestring, names[t]) == 0) k = t;
    snprintf(fld, sizeof fld, "%s.FillType", field);
    if (k < 0)
      return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "'%s' is not one of Constant, Random, Generator, Script, "
                  "BinaryRaw, BinaryHDF", cJSON_IsString(ft) ? ft->valuestring : "?");
    if (k == MPT_FILL_SCRIPT || k == MPT_FILL_BINARY_HDF)
      return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "FillType %s is not supported (use Constant, Random, "
                  "Generator or BinaryRaw)", names[k]);
    f->type = (mpt_ks_fill)k;
  }
  f->value = f->type == MPT_FILL_RANDOM ? 1.0 : 0.0;
  if (fv) {
    snprintf(fld, sizeof fld, "%s.FillValue", field);
    if (cJSON_IsNumber(fv)) f->value = fv->valuedouble;
    else if (cJSON_IsBool(fv)) f->value = cJSON_IsTrue(fv) ? 1.0 : 0.0;
    else return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "expected a number");
  }
  f->seed = 0x6d7074756e65ULL + (uint64_t)arg_index * 7919u; /* same on every worker */
  if (rs) {
    snprintf(fld, sizeof fld, "%s.RandomSeed", field);
    if (!cJSON_IsNumber(rs) || rs->valuedouble < 0) return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "expected an integer >= 0");
    f->seed = (uint64_t)rs->valuedouble;
  }
  if (f->type == MPT_FILL_GENERATOR || f->type == MPT_FILL_BINARY_RAW) {
    snprintf(fld, sizeof fld, "%s.DataSource", field);
    if (!cJSON_IsString(ds) || !ds->valuestring[0])
      return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "FillType %s needs a DataSource",
                  f->type == MPT_FILL_GENERATOR ? "Generator (an expression of the index i)" : "BinaryRaw (a file)");
    if (f->type == MPT_FILL_BINARY_RAW) {
      if (!(f->source = resolve(p, ds->valuestring))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
      FILE *t = fopen(f->source, "rb");
      if (!t) return mpt_ks_err(err, MPT_ERR_IO, p, fld, "cannot read '%s': %s", f->source, strerror(errno));
      fclose(t);
    } else {
      if (!(f->source = strdup(ds->valuestring))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
      static const char *const iname[] = {"i"};
      int col = 0;
      int rc = mpt_expr_compile(f->source, iname, 1, &f->generator, &col, err);
      if (rc) {
        char full[256];
        snprintf(full, sizeof full, "%s.%s", KS, fld);
        return mpt_problem_expr_error(p, err, rc, full, f->source, col);
      }
    }
  }
  return 0;
}

static int parse_type(mpt_kernel_spec *ks, const cJSON *o, const char *field, mpt_ks_arg *a, mpt_error *err) {
  char fld[160];
  snprintf(fld, sizeof fld, "%s.Type", field);
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "Type");
  if (!cJSON_IsString(t)) return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, fld, "missing (a type such as float, int32, float4)");
  int k = -1;
  for (size_t i = 0; i < sizeof type_table / sizeof type_table[0]; i++)
    if (strcmp(type_table[i].name, t->valuestring) == 0) k = (int)i;
  if (k < 0) return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, fld, "unknown type '%s'", t->valuestring);
  snprintf(a->type_name, sizeof a->type_name, "%s", t->valuestring);
  a->base = type_table[k].base;
  a->lanes = type_table[k].lanes;
  a->elem_bytes = type_table[k].bytes * (size_t)type_table[k].lanes;
  if (a->base == MPT_T_CUSTOM) {
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(o, "TypeSize");
    snprintf(fld, sizeof fld, "%s.TypeSize", field);
    if (!cJSON_IsNumber(ts) || ts->valuedouble < 1)
      return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, fld, "Type custom needs TypeSize (bytes, >= 1)");
    a->elem_bytes = (size_t)ts->valuedouble;
  }
  return 0;
}

/* vars for argument sizes: every parameter bound to the list of its values, ProblemSize to a list */
static int size_vars(const mpt_kernel_spec *ks, mpt_value *vars, mpt_value *psize, mpt_error *err) {
  const mpt_problem *p = ks->problem;
  for (int i = 0; i < p->n_params; i++) {
    vars[i].kind = MPT_V_LIST;
    vars[i].u.list.items = p->params[i].values;
    vars[i].u.list.n = p->params[i].n_values;
  }
  psize->kind = MPT_V_LIST;
  psize->u.list.n = ks->has_problem ? ks->n_problem : 0;
  psize->u.list.items = calloc(3, sizeof(mpt_value));
  if (!psize->u.list.items) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  vars[p->n_params].kind = MPT_V_NONE;
  for (int d = 0; d < psize->u.list.n; d++) {
    char fld[32];
    snprintf(fld, sizeof fld, "ProblemSize[%d]", d);
    int64_t v;
    int rc = mpt_ks_eval_number(ks, ks->problem_size[d], vars, fld, "argument sizes (parameters bound to their value lists)",
                         1, NULL, &v, err);
    if (rc) {
      free(psize->u.list.items);
      return rc;
    }
    psize->u.list.items[d] = mpt_value_int(v);
  }
  vars[p->n_params] = *psize;
  return 0;
}

/* Arguments[i].Name (default "argN"), unique among the arguments before it */
static int parse_arg_name(mpt_kernel_spec *ks, const cJSON *o, int i, const char *field, mpt_ks_arg *a,
                         mpt_error *err) {
  const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "Name");
  char defname[32], fld[160];
  snprintf(defname, sizeof defname, "arg%d", i);
  if (!(a->name = strdup(cJSON_IsString(nm) && nm->valuestring[0] ? nm->valuestring : defname)))
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = 0;
  for (int k = 0; k < i; k++)
    if (strcmp(ks->args[k].name, a->name) == 0) {
      snprintf(fld, sizeof fld, "%s.Name", field);
      rc = mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, fld, "'%s' is also the name of Arguments[%d]", a->name, k);
    }
  return rc;
}

/* MemoryType (required), MemType "Constant" and AccessType (default: ReadOnly for scalars, else ReadWrite) */
static int parse_arg_memory(mpt_kernel_spec *ks, const cJSON *o, const char *field, mpt_ks_arg *a, mpt_error *err) {
  const mpt_problem *p = ks->problem;
  char fld[160];
  const cJSON *mt = cJSON_GetObjectItemCaseSensitive(o, "MemoryType");
  snprintf(fld, sizeof fld, "%s.MemoryType", field);
  if (!cJSON_IsString(mt)) return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "missing (Scalar, Vector, Local or Symbol)");
  if (strcmp(mt->valuestring, "Vector") == 0) a->mem = MPT_MEM_VECTOR;
  else if (strcmp(mt->valuestring, "Scalar") == 0) a->mem = MPT_MEM_SCALAR;
  else if (strcmp(mt->valuestring, "Local") == 0) a->mem = MPT_MEM_LOCAL;
  else if (strcmp(mt->valuestring, "Symbol") == 0) a->mem = MPT_MEM_SYMBOL, a->constant = 1;
  else return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "'%s' is not one of Scalar, Vector, Local, Symbol", mt->valuestring);
  const cJSON *memt = cJSON_GetObjectItemCaseSensitive(o, "MemType");
  if (cJSON_IsString(memt) && strcasecmp(memt->valuestring, "Constant") == 0) a->constant = 1;
  const cJSON *at = cJSON_GetObjectItemCaseSensitive(o, "AccessType");
  a->access = a->mem == MPT_MEM_SCALAR ? MPT_ACCESS_READ_ONLY : MPT_ACCESS_READ_WRITE;
  if (!at) return 0;
  snprintf(fld, sizeof fld, "%s.AccessType", field);
  if (cJSON_IsString(at) && strcmp(at->valuestring, "ReadOnly") == 0) a->access = MPT_ACCESS_READ_ONLY;
  else if (cJSON_IsString(at) && strcmp(at->valuestring, "WriteOnly") == 0) a->access = MPT_ACCESS_WRITE_ONLY;
  else if (cJSON_IsString(at) && strcmp(at->valuestring, "ReadWrite") == 0) a->access = MPT_ACCESS_READ_WRITE;
  else return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "expected ReadOnly, WriteOnly or ReadWrite");
  return 0;
}

/* Output: as given when any argument has the key, else every writable Vector argument; only Vector
 * arguments can be outputs */
static int parse_arg_output(mpt_kernel_spec *ks, const cJSON *o, const char *field, int any_output_key,
                           mpt_ks_arg *a, mpt_error *err) {
  char fld[160];
  snprintf(fld, sizeof fld, "%s.Output", field);
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(o, "Output");
  if (out && !cJSON_IsBool(out) && !(cJSON_IsNumber(out) && (out->valuedouble == 0 || out->valuedouble == 1)))
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, fld, "expected true, false, 1 or 0");
  if (any_output_key)
    a->output = out && (cJSON_IsTrue(out) || (cJSON_IsNumber(out) && out->valuedouble != 0));
  else
    a->output = a->mem == MPT_MEM_VECTOR && a->access != MPT_ACCESS_READ_ONLY;
  if (a->output && a->mem != MPT_MEM_VECTOR)
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, fld, "only Vector arguments can be outputs");
  return 0;
}

/* Size (elements; 1 for a scalar without one), evaluated with vars (size_vars), and the bytes it takes */
static int parse_arg_size(mpt_kernel_spec *ks, const cJSON *o, const char *field, const mpt_value *vars,
                         mpt_ks_arg *a, mpt_error *err) {
  const mpt_problem *p = ks->problem;
  char fld[160];
  const cJSON *sz = cJSON_GetObjectItemCaseSensitive(o, "Size");
  snprintf(fld, sizeof fld, "%s.Size", field);
  if (!sz) {
    if (a->mem != MPT_MEM_SCALAR)
      return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "missing (number of elements, a number or an expression)");
    a->n_elems = 1;
    a->size_src = strdup("1");
  } else {
    mpt_expr *e = NULL;
    int rc = compile_field(ks, sz, fld, &e, err);
    if (rc) return rc;
    a->size_src = strdup(mpt_expr_source(e));
    rc = mpt_ks_eval_number(ks, e, vars, fld, "", 1, NULL, &a->n_elems, err);
    mpt_expr_free(e);
    if (rc) {
      char inner[1536];
      snprintf(inner, sizeof inner, "%s", err->msg);
      return mpt_error_set(err, rc, "%s\n  (in Size expressions every tunable parameter is bound to the list of "
                           "its values, e.g. max(filter_width); ProblemSize to the list of problem sizes)", inner);
    }
    if (a->n_elems < 1)
      return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "'%s' gives %lld elements, expected at least 1", a->size_src,
                        (long long)a->n_elems);
  }
  if (!a->size_src) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if ((double)a->n_elems * (double)a->elem_bytes > 1e15)
    return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "%lld elements of %zu bytes is too large", (long long)a->n_elems,
                      a->elem_bytes);
  a->bytes = (size_t)a->n_elems * a->elem_bytes;
  return 0;
}

/* Arguments[i], field by field in the order of the messages */
static int parse_arg(mpt_kernel_spec *ks, const cJSON *o, int i, int any_output_key, const mpt_value *vars,
                     mpt_error *err) {
  mpt_ks_arg *a = &ks->args[i];
  char field[64];
  snprintf(field, sizeof field, "Arguments[%d]", i);
  if (!cJSON_IsObject(o)) return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, field, "expected an object");
  int rc = parse_arg_name(ks, o, i, field, a, err);
  if (rc == 0) rc = parse_type(ks, o, field, a, err);
  if (rc == 0) rc = parse_arg_memory(ks, o, field, a, err);
  if (rc == 0) rc = parse_arg_output(ks, o, field, any_output_key, a, err);
  if (rc == 0) rc = parse_arg_size(ks, o, field, vars, a, err);
  if (rc == 0) rc = parse_fill(ks, o, field, i, &a->fill, err);
  if (rc == 0) a->check = MPT_CHECK_ALLCLOSE;
  return rc;
}

static int parse_args(mpt_kernel_spec *ks, const cJSON *jargs, mpt_error *err) {
  const mpt_problem *p = ks->problem;
  if (!jargs) return 0;
  if (!cJSON_IsArray(jargs)) return mpt_ks_err(err, MPT_ERR_VALUE, p, "Arguments", "expected an array");
  int n = cJSON_GetArraySize(jargs);
  ks->args = calloc((size_t)(n > 0 ? n : 1), sizeof(mpt_ks_arg));
  if (!ks->args) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  ks->n_args = n;
  int any_output_key = 0;
  for (int i = 0; i < n; i++)
    if (cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(jargs, i), "Output")) any_output_key = 1;
  mpt_value *vars = calloc((size_t)ks->n_names, sizeof(mpt_value));
  mpt_value psize = {0};
  if (!vars) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = size_vars(ks, vars, &psize, err);
  if (rc) {
    free(vars);
    return rc;
  }
  for (int i = 0; i < n && rc == 0; i++) rc = parse_arg(ks, cJSON_GetArrayItem(jargs, i), i, any_output_key, vars, err);
  free(psize.u.list.items);
  free(vars);
  if (rc) return rc;
  for (int i = 0; i < n; i++) ks->n_outputs += ks->args[i].output;
  return 0;
}

static int parse_refs(mpt_kernel_spec *ks, const cJSON *jr, mpt_error *err) {
  const mpt_problem *p = ks->problem;
  if (!jr) return 0;
  if (!cJSON_IsArray(jr)) return mpt_ks_err(err, MPT_ERR_VALUE, p, "ReferenceArguments", "expected an array");
  int n = cJSON_GetArraySize(jr);
  for (int i = 0; i < n; i++) {
    const cJSON *o = cJSON_GetArrayItem(jr, i);
    char field[64], fld[160];
    snprintf(field, sizeof field, "ReferenceArguments[%d]", i);
    if (!cJSON_IsObject(o)) return mpt_ks_err(err, MPT_ERR_VALUE, p, field, "expected an object");
    const cJSON *tn = cJSON_GetObjectItemCaseSensitive(o, "TargetName");
    snprintf(fld, sizeof fld, "%s.TargetName", field);
    if (!cJSON_IsString(tn)) return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "missing (the name of an argument)");
    int k = mpt_kspec_arg_index(ks, tn->valuestring);
    if (k < 0) return mpt_ks_err(err, MPT_ERR_NAME, p, fld, "'%s' is not the name of an argument", tn->valuestring);
    mpt_ks_arg *a = &ks->args[k];
    if (a->mem != MPT_MEM_VECTOR) return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "'%s' is not a Vector argument", a->name);
    if (a->has_reference) return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "'%s' already has a reference", a->name);
    if (!cJSON_GetObjectItemCaseSensitive(o, "FillType"))
      return mpt_ks_err(err, MPT_ERR_VALUE, p, field, "missing FillType (how the expected output is given)");
    int rc = parse_fill(ks, o, field, 1000 + i, &a->ref, err);
    if (rc) return rc;
    a->has_reference = 1;
    if (!a->output) {
      a->output = 1;
      ks->n_outputs++;
    }
    const cJSON *vm = cJSON_GetObjectItemCaseSensitive(o, "ValidationMethod");
    const cJSON *vt = cJSON_GetObjectItemCaseSensitive(o, "ValidationThreshold");
    a->threshold = 1e-6;
    if (vt) {
      snprintf(fld, sizeof fld, "%s.ValidationThreshold", field);
      if (!cJSON_IsNumber(vt) || vt->valuedouble < 0) return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "expected a number >= 0");
      a->threshold = vt->valuedouble;
      a->check = MPT_CHECK_SIDE_BY_SIDE;
    }
    if (vm) {
      snprintf(fld, sizeof fld, "%s.ValidationMethod", field);
      if (cJSON_IsString(vm) && strcmp(vm->valuestring, "AbsoluteDifference") == 0) a->check = MPT_CHECK_ABSDIFF_SUM;
      else if (cJSON_IsString(vm) && strcmp(vm->valuestring, "SideBySideComparison") == 0) a->check = MPT_CHECK_SIDE_BY_SIDE;
      else if (cJSON_IsString(vm) && strcmp(vm->valuestring, "SideBySideRelativeComparison") == 0)
        a->check = MPT_CHECK_SIDE_BY_SIDE_REL;
      else
        return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "expected AbsoluteDifference, SideBySideComparison or "
                    "SideBySideRelativeComparison");
    }
  }
  return 0;
}

/* X/Y/Z of GlobalSize / LocalSize */
static int parse_xyz(mpt_kernel_spec *ks, const cJSON *o, const char *name, mpt_expr **dst, mpt_error *err) {
  if (!cJSON_IsObject(o)) return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, name, "expected an object with X, Y, Z");
  for (int d = 0; d < 3; d++) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, xyz_keys[d]);
    if (!j || cJSON_IsNull(j)) continue;
    char fld[64];
    snprintf(fld, sizeof fld, "%s.%s", name, xyz_keys[d]);
    int rc = compile_field(ks, j, fld, &dst[d], err);
    if (rc) return rc;
  }
  return 0;
}

/* A spec of p with its expression names: the parameters (slot = parameter index), then ProblemSize. NULL
 * with err when memory runs out. */
static mpt_kernel_spec *new_spec(const mpt_problem *p, mpt_error *err) {
  mpt_kernel_spec *ks = calloc(1, sizeof *ks);
  if (!ks) {
    mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  ks->problem = p;
  ks->n_names = p->n_params + 1;
  ks->names = calloc((size_t)ks->n_names, sizeof(char *));
  if (!ks->names) {
    mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    mpt_kspec_free(ks);
    return NULL;
  }
  for (int i = 0; i < p->n_params; i++) ks->names[i] = p->params[i].name;
  ks->names[p->n_params] = "ProblemSize";
  return ks;
}

/* Language: C, C++, CUDA, HIP or OpenCL in any case, kept as written */
static int parse_language(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  const cJSON *lang = cJSON_GetObjectItemCaseSensitive(k, "Language");
  if (!cJSON_IsString(lang))
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, "Language", "missing (C, C++, CUDA, HIP or OpenCL)");
  ks->language = strdup(lang->valuestring);
  if (strcasecmp(lang->valuestring, "C") == 0) ks->lang = MPT_LANG_C;
  else if (strcasecmp(lang->valuestring, "C++") == 0) ks->lang = MPT_LANG_CXX;
  else if (strcasecmp(lang->valuestring, "CUDA") == 0) ks->lang = MPT_LANG_CUDA;
  else if (strcasecmp(lang->valuestring, "HIP") == 0) ks->lang = MPT_LANG_HIP;
  else if (strcasecmp(lang->valuestring, "OpenCL") == 0) ks->lang = MPT_LANG_OPENCL;
  else
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, "Language", "'%s' is not supported (C, C++, CUDA, HIP or OpenCL)",
                      lang->valuestring);
  return 0;
}

/* KernelName, and KernelFile (relative to the T1 file) read into memory with the directory it lies in */
static int read_kernel_source(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  const mpt_problem *p = ks->problem;
  const cJSON *kn = cJSON_GetObjectItemCaseSensitive(k, "KernelName");
  if (!cJSON_IsString(kn) || !kn->valuestring[0])
    return mpt_ks_err(err, MPT_ERR_VALUE, p, "KernelName", "missing (the kernel function's name)");
  ks->kernel_name = strdup(kn->valuestring);
  const cJSON *kf = cJSON_GetObjectItemCaseSensitive(k, "KernelFile");
  if (!cJSON_IsString(kf) || !kf->valuestring[0])
    return mpt_ks_err(err, MPT_ERR_VALUE, p, "KernelFile", "missing (the kernel source, relative to the T1 file)");
  ks->kernel_file = resolve(p, kf->valuestring);
  if (!ks->kernel_file || !ks->kernel_name || !ks->language) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (read_file(ks->kernel_file, &ks->source, &ks->source_len) != 0)
    return mpt_ks_err(err, MPT_ERR_IO, p, "KernelFile", "cannot read '%s': %s", ks->kernel_file, strerror(errno));
  ks->kernel_dir = strdup(ks->kernel_file);
  if (ks->kernel_dir) {
    char *sl = strrchr(ks->kernel_dir, '/');
    if (sl) *(sl == ks->kernel_dir ? sl + 1 : sl) = 0;
    else strcpy(ks->kernel_dir, ".");
  }
  return 0;
}

/* CompilerOptions: an array of strings */
static int parse_compiler_options(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  const cJSON *co = cJSON_GetObjectItemCaseSensitive(k, "CompilerOptions");
  if (!co) return 0;
  if (!cJSON_IsArray(co)) return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, "CompilerOptions", "expected an array of strings");
  int n = cJSON_GetArraySize(co);
  ks->options = calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
  if (!ks->options) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    const cJSON *s = cJSON_GetArrayItem(co, i);
    if (!cJSON_IsString(s)) {
      char fld[48];
      snprintf(fld, sizeof fld, "CompilerOptions[%d]", i);
      return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, fld, "expected a string");
    }
    ks->options[ks->n_options++] = strdup(s->valuestring);
  }
  return 0;
}

/* Compiler: one program, a name looked up in PATH or a path (its options go in CompilerOptions) */
static int parse_compiler(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(k, "Compiler");
  if (!c) return 0;
  if (!cJSON_IsString(c) || !c->valuestring[0])
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, "Compiler", "expected a compiler (a program name or path, "
                      "e.g. \"clang\")");
  if (strpbrk(c->valuestring, " \t\n\r\f\v"))
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, "Compiler", "'%s' is not one program name or path; the "
                      "compiler's options go in CompilerOptions", c->valuestring);
  if (!(ks->compiler = strdup(c->valuestring))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  return 0;
}

/* ReturnsTime: true, false, 1 or 0 (-1 when not given) */
static int parse_returns_time(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(k, "ReturnsTime");
  ks->returns_time = -1;
  if (!r) return 0;
  if (cJSON_IsBool(r)) ks->returns_time = cJSON_IsTrue(r);
  else if (cJSON_IsNumber(r) && (r->valuedouble == 0 || r->valuedouble == 1)) ks->returns_time = r->valuedouble != 0;
  else return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, "ReturnsTime", "expected true, false, 1 or 0");
  return 0;
}

/* GlobalSizeType (CUDA: GlobalSize counts blocks), GlobalSize and LocalSize */
static int parse_global_local(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  const cJSON *gst = cJSON_GetObjectItemCaseSensitive(k, "GlobalSizeType");
  if (gst) {
    if (cJSON_IsString(gst) && strcmp(gst->valuestring, "CUDA") == 0) ks->global_blocks = 1;
    else if (!(cJSON_IsString(gst) && (strcmp(gst->valuestring, "OpenCL") == 0 || strcmp(gst->valuestring, "Vulkan") == 0)))
      return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, "GlobalSizeType", "expected OpenCL, CUDA or Vulkan");
  }
  int rc = 0;
  const cJSON *gs = cJSON_GetObjectItemCaseSensitive(k, "GlobalSize");
  if (gs && !cJSON_IsNull(gs)) {
    ks->has_global = 1;
    if ((rc = parse_xyz(ks, gs, "GlobalSize", ks->global, err))) return rc;
  }
  const cJSON *ls = cJSON_GetObjectItemCaseSensitive(k, "LocalSize");
  if (ls && !cJSON_IsNull(ls)) rc = parse_xyz(ks, ls, "LocalSize", ks->local, err);
  return rc;
}

/* ProblemSize: one expression or a list of 1 to 3, none referring to ProblemSize itself */
static int parse_problem_size(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  const mpt_problem *p = ks->problem;
  const cJSON *ps = cJSON_GetObjectItemCaseSensitive(k, "ProblemSize");
  if (!ps || cJSON_IsNull(ps)) return 0;
  ks->has_problem = 1;
  char fld[32];
  int rc;
  if (cJSON_IsArray(ps)) {
    int n = cJSON_GetArraySize(ps);
    if (n < 1 || n > 3) return mpt_ks_err(err, MPT_ERR_VALUE, p, "ProblemSize", "expected 1 to 3 sizes, got %d", n);
    for (int d = 0; d < n; d++) {
      snprintf(fld, sizeof fld, "ProblemSize[%d]", d);
      if ((rc = compile_field(ks, cJSON_GetArrayItem(ps, d), fld, &ks->problem_size[d], err))) return rc;
    }
    ks->n_problem = n;
  } else {
    if ((rc = compile_field(ks, ps, "ProblemSize", &ks->problem_size[0], err))) return rc;
    ks->n_problem = 1;
  }
  for (int d = 0; d < ks->n_problem; d++)
    for (int u = 0; u < mpt_expr_n_uses(ks->problem_size[d]); u++)
      if (mpt_expr_uses(ks->problem_size[d])[u] == p->n_params) {
        snprintf(fld, sizeof fld, "ProblemSize[%d]", d);
        return mpt_ks_err(err, MPT_ERR_VALUE, p, fld, "cannot refer to ProblemSize itself");
      }
  return 0;
}

/* GridDivX/Y/Z: one expression or a list each */
static int parse_grid_divisors(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  static const char *gd_names[3] = {"GridDivX", "GridDivY", "GridDivZ"};
  for (int d = 0; d < 3; d++) {
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(k, gd_names[d]);
    if (!g || cJSON_IsNull(g)) continue;
    ks->griddiv_given[d] = 1;
    int n = cJSON_IsArray(g) ? cJSON_GetArraySize(g) : 1;
    ks->griddiv[d] = calloc((size_t)(n > 0 ? n : 1), sizeof(mpt_expr *));
    if (!ks->griddiv[d]) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
      char fld[48];
      snprintf(fld, sizeof fld, "%s[%d]", gd_names[d], i);
      int rc = compile_field(ks, cJSON_IsArray(g) ? cJSON_GetArrayItem(g, i) : g, fld, &ks->griddiv[d][i], err);
      if (rc) return rc;
      ks->n_griddiv[d]++;
    }
  }
  return 0;
}

/* SharedMemory (bytes): an expression */
static int parse_shared_memory(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  const cJSON *sm = cJSON_GetObjectItemCaseSensitive(k, "SharedMemory");
  if (!sm || cJSON_IsNull(sm)) return 0;
  return compile_field(ks, sm, "SharedMemory", &ks->shared_memory, err);
}

/* timed iterations: Iterations, else the problem's BenchmarkConfig.iterations (or .Iterations), else 7 */
static int parse_iterations(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  ks->iterations = 7;
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(k, "Iterations");
  const char *it_field = "Iterations";
  if (!it) {
    const cJSON *bc = cJSON_GetObjectItemCaseSensitive(ks->problem->json, "BenchmarkConfig");
    if (cJSON_IsObject(bc)) {
      it = cJSON_GetObjectItemCaseSensitive(bc, "iterations");
      if (!it) it = cJSON_GetObjectItemCaseSensitive(bc, "Iterations");
      it_field = "(BenchmarkConfig.iterations)";
    }
  }
  if (!it) return 0;
  if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < 1 || it->valuedouble > 32)
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, it_field, "expected an integer from 1 to 32 (timed iterations)");
  ks->iterations = (int)it->valuedouble;
  return 0;
}

/* Tolerance {Atol, Rtol} (an mptune extension), Kernel Tuner's defaults 1e-6 and 1e-5 */
static int parse_tolerance(mpt_kernel_spec *ks, const cJSON *k, mpt_error *err) {
  ks->atol = 1e-6;
  ks->rtol = 1e-5;
  const cJSON *tol = cJSON_GetObjectItemCaseSensitive(k, "Tolerance");
  if (!tol) return 0;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(tol, "Atol");
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(tol, "Rtol");
  if (!cJSON_IsObject(tol) || (a && (!cJSON_IsNumber(a) || a->valuedouble < 0)) ||
      (r && (!cJSON_IsNumber(r) || r->valuedouble < 0)))
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, "Tolerance", "expected {\"Atol\": number >= 0, \"Rtol\": number >= 0}");
  if (a) ks->atol = a->valuedouble;
  if (r) ks->rtol = r->valuedouble;
  return 0;
}

/* the spec of p; with_source 0: without what only a compile needs (the kernel file, CompilerOptions, Compiler,
 * ReturnsTime, the ReferenceArguments) */
static int load_spec(const mpt_problem *p, int with_source, mpt_kernel_spec **out, mpt_error *err) {
  *out = NULL;
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(p->json, KS);
  if (!cJSON_IsObject(k)) return mpt_error_set(err, MPT_ERR_VALUE, "%s: no %s object", p->path, KS);
  mpt_kernel_spec *ks = new_spec(p, err);
  if (!ks) return MPT_ERR_NOMEM;
  /* the fields in the order their messages take precedence */
  int rc = mpt_kspec_check_keys(p, err);
  if (rc == 0) rc = parse_language(ks, k, err);
  if (rc == 0 && with_source) rc = read_kernel_source(ks, k, err);
  if (rc == 0 && with_source) rc = parse_compiler_options(ks, k, err);
  if (rc == 0 && with_source) rc = parse_compiler(ks, k, err);
  if (rc == 0 && with_source) rc = parse_returns_time(ks, k, err);
  if (rc == 0) rc = parse_global_local(ks, k, err);
  if (rc == 0) rc = parse_problem_size(ks, k, err);
  if (rc == 0) rc = parse_grid_divisors(ks, k, err);
  if (rc == 0) rc = parse_shared_memory(ks, k, err);
  if (rc == 0) rc = parse_iterations(ks, k, err);
  if (rc == 0) rc = parse_tolerance(ks, k, err);
  if (rc == 0) rc = parse_args(ks, cJSON_GetObjectItemCaseSensitive(k, "Arguments"), err);
  if (rc == 0 && with_source) rc = parse_refs(ks, cJSON_GetObjectItemCaseSensitive(k, "ReferenceArguments"), err);
  if (rc) {
    mpt_kspec_free(ks);
    return rc;
  }
  *out = ks;
  return 0;
}

int mpt_kspec_load(const mpt_problem *p, mpt_kernel_spec **out, mpt_error *err) { return load_spec(p, 1, out, err); }

int mpt_kspec_load_geometry(const mpt_problem *p, mpt_kernel_spec **out, mpt_error *err) {
  return load_spec(p, 0, out, err);
}

static void free_fill(mpt_ks_fillspec *f) {
  free(f->source);
  mpt_expr_free(f->generator);
}

void mpt_kspec_free(mpt_kernel_spec *ks) {
  if (!ks) return;
  free(ks->language);
  free(ks->kernel_file);
  free(ks->kernel_dir);
  free(ks->kernel_name);
  free(ks->source);
  for (int i = 0; i < ks->n_options; i++) free(ks->options[i]);
  free(ks->options);
  free(ks->compiler);
  for (int d = 0; d < 3; d++) {
    mpt_expr_free(ks->global[d]);
    mpt_expr_free(ks->local[d]);
    mpt_expr_free(ks->problem_size[d]);
    for (int i = 0; i < ks->n_griddiv[d]; i++) mpt_expr_free(ks->griddiv[d][i]);
    free(ks->griddiv[d]);
  }
  mpt_expr_free(ks->shared_memory);
  for (int i = 0; i < ks->n_args; i++) {
    free(ks->args[i].name);
    free(ks->args[i].size_src);
    free_fill(&ks->args[i].fill);
    free_fill(&ks->args[i].ref);
  }
  free(ks->args);
  free(ks->names);
  free(ks);
}
