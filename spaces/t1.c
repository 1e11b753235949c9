/* spaces/t1.c: reads a T1 problem file (ConfigurationSpace.TuningParameters and Conditions): evaluates
 * each parameter's `Values` expression, checks types and defaults, compiles the conditions and finds the
 * parameters each one uses (warning when the file's `Parameters` list disagrees); reads the Search block (a
 * strategy's name, its Attributes as key=value options) and the Budget block (each kind in range, once);
 * misspelt keys are errors (spaces/json/json_keys.c). */
#include "spaces/t1.h"
#include "spaces/json/json_doc.h"
#include "spaces/json/json_keys.h"
#include "spaces/sys/name_set.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *type_names[] = {"int", "uint", "float", "bool", "string"};

/* The keys read here or listed by the T1 schema, per object (KernelSpecification: evaluators/kernel_spec.c) */
static const char *const root_keys[] = {"General", "ConfigurationSpace", "KernelSpecification", "Search", "Budget",
                                        "BenchmarkConfig", "Metrics", NULL}; /* Metrics: evaluators/objective.h */
static const char *const general_keys[] = {"BenchmarkName", "OutputFormat", "FormatVersion", "LoggingLevel",
                                           "OutputFile", "TimeUnit", NULL};
static const char *const space_keys[] = {"TuningParameters", "Conditions", NULL};
static const char *const param_keys[] = {"Name", "Type", "Values", "Default", NULL};
static const char *const condition_keys[] = {"Expression", "Parameters", NULL};
static const char *const search_keys[] = {"Name", "Attributes", NULL};
static const char *const attribute_keys[] = {"Name", "Value", NULL};
static const char *const budget_keys[] = {"Type", "BudgetValue", NULL};

#define CS "ConfigurationSpace"

/* "FILE:LINE:COL: FIELD: message" for a message about field (a path from the document, with an optional
 * label after a space): LINE:COL the position of its value, or of the object it is missing from
 * (mpt_json_locate) */
static void field_vmsg(const mpt_problem *p, const char *field, char *out, size_t n, const char *fmt, va_list ap) {
  char at[600], msg[1024];
  mpt_json_locate(p->path, p->text, field, -1, at, sizeof at);
  vsnprintf(msg, sizeof msg, fmt, ap);
  snprintf(out, n, "%s: %s: %s", at, field, msg);
}

static int t1_error(const mpt_problem *p, mpt_error *err, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int t1_error(const mpt_problem *p, mpt_error *err, int code, const char *field, const char *fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  field_vmsg(p, field, line, sizeof line, fmt, ap);
  va_end(ap);
  return mpt_error_set(err, code, "%s", line);
}

int mpt_problem_expr_error(const mpt_problem *p, mpt_error *err, int rc, const char *field, const char *src, int col) {
  char at[600];
  mpt_json_locate(p->path, p->text, field, col, at, sizeof at);
  mpt_expr_format_error(err, at, field, src, col);
  return err ? err->code : rc;
}

static int add_warning(mpt_problem *p, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add_warning(mpt_problem *p, const char *field, const char *fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  field_vmsg(p, field, line, sizeof line, fmt, ap);
  va_end(ap);
  char **w = realloc(p->warnings, sizeof(char *) * (size_t)(p->n_warnings + 1));
  if (!w) return MPT_ERR_NOMEM;
  p->warnings = w;
  if (!(w[p->n_warnings] = strdup(line))) return MPT_ERR_NOMEM;
  p->n_warnings++;
  return 0;
}

/* A JSON scalar (number, string, bool) as a value; numbers become int when integral and the
 * parameter is not a float. */
static int json_to_value(const cJSON *j, mpt_ptype type, mpt_value *out) {
  if (cJSON_IsBool(j)) { *out = mpt_value_bool(cJSON_IsTrue(j)); return 0; }
  if (cJSON_IsNumber(j)) {
    double d = j->valuedouble;
    if (type != MPT_P_FLOAT && d == floor(d) && fabs(d) < 9.2e18) *out = mpt_value_int((int64_t)d);
    else *out = mpt_value_float(d);
    return 0;
  }
  if (cJSON_IsString(j)) {
    *out = mpt_value_str(j->valuestring);
    return out->kind == MPT_V_STR ? 0 : MPT_ERR_NOMEM;
  }
  return MPT_ERR_VALUE;
}

/* *v from the integer literal at field in the file's text, exactly (not through a double); a literal with
 * a fraction or exponent is left as it is; one outside int64 is an error */
static int exact_json_int(const mpt_problem *p, const char *field, mpt_value *v, mpt_error *err) {
  long off = mpt_json_value_offset(p->text, field);
  if (off < 0) return 0;
  const char *lit = p->text + off, *end;
  size_t len = strspn(lit + (*lit == '-'), "0123456789") + (*lit == '-');
  end = lit + len;
  if (*end == '.' || *end == 'e' || *end == 'E') return 0; /* a float literal: its double */
  errno = 0;
  long long x = strtoll(lit, NULL, 10);
  if (errno == ERANGE)
    return t1_error(p, err, MPT_ERR_VALUE, field, "the integer %.*s does not fit a 64-bit int", (int)len, lit);
  *v = mpt_value_int(x);
  return 0;
}

static const char *kind_name(mpt_vkind k) {
  switch (k) {
    case MPT_V_BOOL: return "bool";
    case MPT_V_INT: return "int";
    case MPT_V_FLOAT: return "float";
    case MPT_V_STR: return "str";
    case MPT_V_LIST: return "list";
    default: return "None";
  }
}

/* Checks that v fits the declared type (ints accepted for float, 0/1 for bool, bool for int). */
static int value_fits(const mpt_value *v, mpt_ptype t) {
  switch (t) {
    case MPT_P_INT: return v->kind == MPT_V_INT || v->kind == MPT_V_BOOL;
    case MPT_P_UINT: return (v->kind == MPT_V_INT || v->kind == MPT_V_BOOL) && v->u.i >= 0;
    case MPT_P_FLOAT: return v->kind == MPT_V_FLOAT || v->kind == MPT_V_INT || v->kind == MPT_V_BOOL;
    case MPT_P_BOOL: return v->kind == MPT_V_BOOL || (v->kind == MPT_V_INT && (v->u.i == 0 || v->u.i == 1));
    case MPT_P_STRING: return v->kind == MPT_V_STR;
  }
  return 0;
}

/* qsort order of values: numbers (bools, ints, floats: True == 1 == 1.0, as in Python) by value, then
 * strings, then anything else; ties by position */
typedef struct value_at {
  const mpt_value *v;
  int pos;
} value_at;

static int value_rank(const mpt_value *v) {
  return v->kind == MPT_V_BOOL || v->kind == MPT_V_INT || v->kind == MPT_V_FLOAT ? 0 : v->kind == MPT_V_STR ? 1 : 2;
}

static int value_order(const void *pa, const void *pb) {
  const value_at *a = pa, *b = pb;
  int ra = value_rank(a->v), rb = value_rank(b->v), c = 0;
  if (ra != rb) return ra < rb ? -1 : 1;
  if (ra == 0 && a->v->kind != MPT_V_FLOAT && b->v->kind != MPT_V_FLOAT) { /* ints (and bools) exactly: 2**53 + 1 */
    c = a->v->u.i < b->v->u.i ? -1 : a->v->u.i > b->v->u.i;
  } else if (ra == 0) { /* a total order: NaN after every number (it compared equal to all) */
    int ok;
    double x = mpt_value_as_double(a->v, &ok), y = mpt_value_as_double(b->v, &ok);
    c = isnan(x) || isnan(y) ? isnan(x) - isnan(y) : x < y ? -1 : x > y;
  } else if (ra == 1) {
    c = strcmp(a->v->u.s, b->v->u.s);
  }
  return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

/* 1 when two items of the list are equal (a parameter with a value twice would give every configuration
 * with it twice): *first and *second their positions, the pair whose later item comes first */
static int find_duplicate(const mpt_value *list, int *first, int *second) {
  int64_t n = list->u.list.n;
  value_at *va = malloc(sizeof *va * (size_t)(n > 0 ? n : 1));
  if (!va) return 0; /* out of memory: the check is skipped, the reader goes on */
  for (int64_t k = 0; k < n; k++) va[k] = (value_at){&list->u.list.items[k], (int)k};
  qsort(va, (size_t)n, sizeof *va, value_order);
  int found = 0;
  for (int64_t k = 1; k < n; k++)
    if (value_rank(va[k].v) < 2 && mpt_value_equal(va[k - 1].v, va[k].v) && (!found || va[k].pos < *second)) {
      found = 1;
      *first = va[k - 1].pos;
      *second = va[k].pos;
    }
  free(va);
  return found;
}

/* the opening of TuningParameters[i] (where): an object of known keys, its Name a new, valid identifier */
static int param_name(mpt_problem *p, int i, const cJSON *jp, const char *where, mpt_error *err) {
  mpt_param *par = &p->params[i];
  char field[256];
  if (!cJSON_IsObject(jp)) return t1_error(p, err, MPT_ERR_VALUE, where, "expected an object");
  int krc = mpt_json_check_keys(jp, param_keys, p->path, p->text, where, err);
  if (krc) return krc;
  const cJSON *jn = cJSON_GetObjectItemCaseSensitive(jp, "Name");
  snprintf(field, sizeof field, "%s.Name", where);
  if (!cJSON_IsString(jn) || !jn->valuestring[0])
    return t1_error(p, err, MPT_ERR_VALUE, field, "missing or not a non-empty string");
  const char *fault = mpt_expr_name_fault(jn->valuestring);
  if (fault) return t1_error(p, err, MPT_ERR_VALUE, field, "'%s' is %s", jn->valuestring, fault);
  if (!(par->name = strdup(jn->valuestring))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int named = -1, added = mpt_name_set_add(p->param_index, par->name, i, &named);
  if (added < 0) return mpt_error_set(err, added, "out of memory");
  if (added)
    return t1_error(p, err, MPT_ERR_VALUE, field, "duplicate parameter '%s' (the name of TuningParameters[%d] too)",
                    par->name, named);
  return 0;
}

/* par->type from the parameter's Type, one of type_names */
static int param_type(mpt_problem *p, mpt_param *par, const cJSON *jp, const char *where, mpt_error *err) {
  char field[256];
  const cJSON *jt = cJSON_GetObjectItemCaseSensitive(jp, "Type");
  snprintf(field, sizeof field, "%s.Type (%s)", where, par->name);
  if (!cJSON_IsString(jt)) return t1_error(p, err, MPT_ERR_VALUE, field, "missing or not a string");
  int t = -1;
  for (int k = 0; k < 5; k++)
    if (strcmp(jt->valuestring, type_names[k]) == 0) t = k;
  if (t < 0)
    return t1_error(p, err, MPT_ERR_VALUE, field, "unknown type '%s' (expected int, uint, float, bool or string)",
                    jt->valuestring);
  par->type = (mpt_ptype)t;
  return 0;
}

/* *list from a Values expression (field): it must evaluate to a list */
static int values_from_expression(mpt_problem *p, const char *field, const char *src, mpt_value *list,
                                  mpt_error *err) {
  int col = 0;
  int rc = mpt_expr_eval_const(src, list, &col, err);
  if (rc) return mpt_problem_expr_error(p, err, rc, field, src, col);
  if (list->kind != MPT_V_LIST) {
    const char *kn = kind_name(list->kind); /* before the free, which resets the kind */
    mpt_value_free(list);
    return t1_error(p, err, MPT_ERR_VALUE, field, "the expression '%s' gives %s %s, not a list", src,
                    strchr("aeiou", kn[0]) ? "an" : "a", kn);
  }
  return 0;
}

/* list item k from the JSON array item it: an integer beyond 2**53 (which cJSON's double rounded) read from
 * the literal itself; a negative code with *list freed and err set */
static int value_from_array_item(mpt_problem *p, const char *where, const mpt_param *par, const cJSON *it,
                                 mpt_value *list, mpt_error *err) {
  mpt_value *v = &list->u.list.items[list->u.list.n];
  char item[300];
  int rc = json_to_value(it, par->type, v);
  if (rc == 0 && cJSON_IsNumber(it) && fabs(it->valuedouble) >= 9007199254740992.0 && par->type != MPT_P_FLOAT) {
    snprintf(item, sizeof item, "%s.Values[%d] (%s)", where, (int)list->u.list.n, par->name);
    rc = exact_json_int(p, item, v, err);
    if (rc) {
      mpt_value_free(list);
      return rc;
    }
  }
  if (rc) {
    int bad = (int)list->u.list.n; /* before the free, which empties the list */
    mpt_value_free(list);
    if (rc == MPT_ERR_NOMEM) return mpt_error_set(err, rc, "out of memory");
    snprintf(item, sizeof item, "%s.Values[%d] (%s)", where, bad, par->name);
    return t1_error(p, err, MPT_ERR_VALUE, item, "not a number, string or bool");
  }
  return 0;
}

/* *list from a JSON array of values (lenient: T1 gives an expression) */
static int values_from_array(mpt_problem *p, const char *where, const mpt_param *par, const cJSON *jv,
                             mpt_value *list, mpt_error *err) {
  int n = cJSON_GetArraySize(jv);
  list->kind = MPT_V_LIST;
  list->u.list.n = 0;
  list->u.list.items = calloc((size_t)(n > 0 ? n : 1), sizeof(mpt_value));
  if (!list->u.list.items) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  const cJSON *it;
  cJSON_ArrayForEach(it, jv) {
    int rc = value_from_array_item(p, where, par, it, list, err);
    if (rc) return rc;
    list->u.list.n++;
  }
  return 0;
}

/* the list checks on Values (field): not empty, not too long, each value of the Type, none twice; *list
 * freed on an error */
static int check_values(mpt_problem *p, const char *field, const mpt_param *par, mpt_value *list, mpt_error *err) {
  if (list->u.list.n == 0) {
    mpt_value_free(list);
    return t1_error(p, err, MPT_ERR_VALUE, field, "empty Values list");
  }
  if (list->u.list.n > 1000000000) {
    mpt_value_free(list);
    return t1_error(p, err, MPT_ERR_VALUE, field, "too many values");
  }
  for (int64_t k = 0; k < list->u.list.n; k++) {
    if (!value_fits(&list->u.list.items[k], par->type)) {
      char rep[128];
      mpt_value_repr(&list->u.list.items[k], rep, sizeof rep);
      const char *kn = kind_name(list->u.list.items[k].kind);
      mpt_value_free(list);
      return t1_error(p, err, MPT_ERR_VALUE, field, "value %s (%s) does not fit Type '%s'", rep, kn,
                      type_names[par->type]);
    }
  }
  int first = 0, second = 0;
  if (find_duplicate(list, &first, &second)) {
    char rep[128];
    mpt_value_repr(&list->u.list.items[second], rep, sizeof rep);
    mpt_value_free(list);
    return t1_error(p, err, MPT_ERR_VALUE, field, "value %s is listed twice (items %d and %d)", rep, first, second);
  }
  return 0;
}

/* par->values from the parameter's Values (an expression, or a JSON array), checked, and their numeric
 * stand-ins (a value's number, else its index) */
static int param_values(mpt_problem *p, mpt_param *par, const cJSON *jp, const char *where, mpt_error *err) {
  char field[256];
  const cJSON *jv = cJSON_GetObjectItemCaseSensitive(jp, "Values");
  mpt_value list = {0};
  snprintf(field, sizeof field, "%s.Values (%s)", where, par->name);
  int rc;
  if (cJSON_IsString(jv)) rc = values_from_expression(p, field, jv->valuestring, &list, err);
  else if (cJSON_IsArray(jv)) rc = values_from_array(p, where, par, jv, &list, err);
  else return t1_error(p, err, MPT_ERR_VALUE, field, "missing, or neither a string nor an array");
  if (rc || (rc = check_values(p, field, par, &list, err))) return rc;
  /* take ownership of the items */
  par->n_values = (int)list.u.list.n;
  par->values = list.u.list.items;
  par->numeric = malloc(sizeof(double) * (size_t)par->n_values);
  if (!par->numeric) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int k = 0; k < par->n_values; k++) {
    int ok = 0;
    double d = mpt_value_as_double(&par->values[k], &ok);
    par->numeric[k] = ok ? d : (double)k;
  }
  return 0;
}

/* par->default_index from the parameter's Default, when it gives one: a warning (not an error) for a
 * value that is not among Values or is no scalar */
static void param_default(mpt_problem *p, mpt_param *par, const cJSON *jp, const char *where) {
  char field[256];
  par->default_index = -1;
  const cJSON *jd = cJSON_GetObjectItemCaseSensitive(jp, "Default");
  if (cJSON_IsArray(jd) && cJSON_GetArraySize(jd) == 1) jd = cJSON_GetArrayItem(jd, 0); /* gemm_milo: [0] */
  if (!jd || cJSON_IsNull(jd)) return;
  mpt_value dv = {0};
  int drc;
  if (cJSON_IsString(jd) && par->type != MPT_P_STRING) { /* lenient: "Default": "16" for an int */
    int col;
    mpt_error e2;
    drc = mpt_expr_eval_const(jd->valuestring, &dv, &col, &e2);
    if (drc) drc = json_to_value(jd, par->type, &dv);
  } else {
    drc = json_to_value(jd, par->type, &dv);
  }
  snprintf(field, sizeof field, "%s.Default (%s)", where, par->name);
  if (drc != 0) {
    add_warning(p, field, "not a number, string or bool; ignored");
    return;
  }
  for (int k = 0; k < par->n_values; k++)
    if (mpt_value_equal(&dv, &par->values[k])) { par->default_index = k; break; }
  if (par->default_index < 0) {
    char rep[128];
    mpt_value_repr(&dv, rep, sizeof rep);
    add_warning(p, field, "%s is not among the values", rep);
  }
  mpt_value_free(&dv);
}

/* TuningParameters[i]: its Name, Type, Values and Default, checked in that order */
static int parse_param(mpt_problem *p, int i, const cJSON *jp, mpt_error *err) {
  mpt_param *par = &p->params[i];
  char where[64];
  snprintf(where, sizeof where, CS ".TuningParameters[%d]", i);
  int rc;
  if ((rc = param_name(p, i, jp, where, err)) || (rc = param_type(p, par, jp, where, err)) ||
      (rc = param_values(p, par, jp, where, err)))
    return rc;
  param_default(p, par, jp, where);
  return 0;
}

/* seen: one zero byte per parameter, for the comparison with the Parameters list (zero again on return) */
static int parse_condition(mpt_problem *p, int i, const cJSON *jc, const char *const *names, char *seen,
                           mpt_error *err) {
  mpt_condition *c = &p->conditions[i];
  char where[64], field[96];
  snprintf(where, sizeof where, CS ".Conditions[%d]", i);
  int krc = mpt_json_check_keys(jc, condition_keys, p->path, p->text, where, err);
  if (krc) return krc;
  const cJSON *je = cJSON_IsString(jc) ? jc : cJSON_GetObjectItemCaseSensitive(jc, "Expression");
  /* a condition given as a bare string is its own expression */
  snprintf(field, sizeof field, cJSON_IsString(jc) ? "%s" : "%s.Expression", where);
  if (!cJSON_IsString(je)) return t1_error(p, err, MPT_ERR_VALUE, field, "missing or not a string");
  if (!(c->source = strdup(je->valuestring))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int col = 0;
  int rc = mpt_expr_compile_indexed(c->source, names, p->n_params, p->param_index, &c->expr, &col, err);
  if (rc) {
    c->expr = NULL;
    return mpt_problem_expr_error(p, err, rc, field, c->source, col);
  }
  c->n_params = mpt_expr_n_uses(c->expr);
  c->params = malloc(sizeof(int) * (size_t)(c->n_params > 0 ? c->n_params : 1));
  if (!c->params) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (c->n_params) memcpy(c->params, mpt_expr_uses(c->expr), sizeof(int) * (size_t)c->n_params);

  /* compare with the file's Parameters list */
  const cJSON *jl = cJSON_IsObject(jc) ? cJSON_GetObjectItemCaseSensitive(jc, "Parameters") : NULL;
  if (!jl) return 0;
  if (!cJSON_IsArray(jl)) {
    snprintf(field, sizeof field, "%s.Parameters", where);
    add_warning(p, field, "not a list; the parameters are taken from the expression");
    return 0;
  }
  char listed[512] = "", used[512] = "";
  int mismatch = 0, n_listed = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, jl) {
    const char *nm = cJSON_IsString(it) ? it->valuestring : "?";
    size_t l = strlen(listed);
    snprintf(listed + l, sizeof listed - l, "%s%s", n_listed++ ? ", " : "", nm);
    int k = mpt_problem_param_index(p, nm);
    if (k < 0) { mismatch = 1; continue; }
    seen[k] = 1;
  }
  for (int k = 0; k < c->n_params; k++) {
    size_t l = strlen(used);
    snprintf(used + l, sizeof used - l, "%s%s", k ? ", " : "", p->params[c->params[k]].name);
    /* a parameter with one value left out of the list (a constant such as convolution's filter_width) is
     * harmless: no warning for it */
    if (!seen[c->params[k]] && p->params[c->params[k]].n_values > 1) mismatch = 1;
    seen[c->params[k]] = 2;
  }
  cJSON_ArrayForEach(it, jl) { /* listed but not used; seen is zero again after it */
    int k = cJSON_IsString(it) ? mpt_problem_param_index(p, it->valuestring) : -1;
    if (k >= 0 && seen[k] == 1) mismatch = 1;
    if (k >= 0) seen[k] = 0;
  }
  for (int k = 0; k < c->n_params; k++) seen[c->params[k]] = 0;
  if (mismatch)
    add_warning(p, where, "Parameters lists [%s] but the expression '%s' uses [%s]; using the expression's", listed,
                c->source, used);
  return 0;
}

/* ---- the Search block ---- */

/* Search.Attributes[i].Value as the value of "--option Name=Value": a number as written in the file (its
 * double printed when the file cannot be read there), a string as it is, a bool as true/false; NULL with
 * *why for what no option value can be (an object, a list, null) */
static char *attribute_value(const mpt_problem *p, const char *field, const cJSON *v, const char **why) {
  char buf[64];
  *why = NULL;
  if (cJSON_IsString(v)) return strdup(v->valuestring);
  if (cJSON_IsBool(v)) return strdup(cJSON_IsTrue(v) ? "true" : "false");
  if (cJSON_IsNumber(v)) {
    long off = mpt_json_value_offset(p->text, field);
    size_t len = off >= 0 ? strspn(p->text + off, "+-0123456789.eE") : 0;
    if (len > 0 && len < sizeof buf) snprintf(buf, sizeof buf, "%.*s", (int)len, p->text + off);
    else snprintf(buf, sizeof buf, "%.17g", v->valuedouble);
    return strdup(buf);
  }
  *why = cJSON_IsObject(v) ? "an object" : cJSON_IsArray(v) ? "a list" : "null";
  return NULL;
}

/* Search.Attributes[i]: {"Name": key, "Value": value} */
static int parse_attribute(mpt_problem *p, int i, const cJSON *ja, mpt_error *err) {
  mpt_t1_search *sr = &p->search;
  char where[64], field[128];
  snprintf(where, sizeof where, "Search.Attributes[%d]", i);
  if (!cJSON_IsObject(ja)) return t1_error(p, err, MPT_ERR_VALUE, where, "expected an object {\"Name\": ..., \"Value\": ...}");
  int rc = mpt_json_check_keys(ja, attribute_keys, p->path, p->text, where, err);
  if (rc) return rc;
  const cJSON *jn = cJSON_GetObjectItemCaseSensitive(ja, "Name"), *jv = cJSON_GetObjectItemCaseSensitive(ja, "Value");
  snprintf(field, sizeof field, "%s.Name", where);
  if (!cJSON_IsString(jn) || !jn->valuestring[0] || strchr(jn->valuestring, '='))
    return t1_error(p, err, MPT_ERR_VALUE, field, "missing, or not a non-empty string without '='");
  snprintf(field, sizeof field, "%s.Value", where);
  if (!jv) return t1_error(p, err, MPT_ERR_VALUE, field, "missing");
  char *value = attribute_value(p, field, jv, &sr->why[i]);
  if (value) {
    size_t n = strlen(jn->valuestring) + strlen(value) + 2;
    if ((sr->options[i] = malloc(n)) != NULL) snprintf(sr->options[i], n, "%s=%s", jn->valuestring, value);
    free(value);
    if (!sr->options[i]) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  } else if (!sr->why[i]) {
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  return 0;
}

/* the Search block: its Name, and its Attributes as options (checked against the strategy by the job) */
static int parse_search(mpt_problem *p, const cJSON *js, mpt_error *err) {
  if (!js) return 0;
  if (!cJSON_IsObject(js)) return t1_error(p, err, MPT_ERR_VALUE, "Search", "not an object {\"Name\": ..., \"Attributes\": [...]}");
  int rc = mpt_json_check_keys(js, search_keys, p->path, p->text, "Search", err);
  if (rc) return rc;
  const cJSON *jn = cJSON_GetObjectItemCaseSensitive(js, "Name");
  if (!cJSON_IsString(jn) || !jn->valuestring[0])
    return t1_error(p, err, MPT_ERR_VALUE, "Search.Name", "missing or not a non-empty string");
  if (!(p->search.name = strdup(jn->valuestring))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  const cJSON *ja = cJSON_GetObjectItemCaseSensitive(js, "Attributes");
  if (!ja || cJSON_IsNull(ja)) return 0;
  if (!cJSON_IsArray(ja)) return t1_error(p, err, MPT_ERR_VALUE, "Search.Attributes", "not a list");
  int n = cJSON_GetArraySize(ja);
  p->search.options = calloc((size_t)(n > 0 ? n : 1), sizeof *p->search.options);
  p->search.why = calloc((size_t)(n > 0 ? n : 1), sizeof *p->search.why);
  if (!p->search.options || !p->search.why) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  const cJSON *it;
  cJSON_ArrayForEach(it, ja) {
    if ((rc = parse_attribute(p, p->search.n_attributes, it, err))) return rc;
    p->search.n_attributes++;
  }
  return 0;
}

/* ---- the Budget block ---- */

static const char *const budget_types[] = {"ConfigurationCount", "ConfigurationFraction", "TuningDuration"};

/* the value of Budget[i] (its Type's index k) in range: a whole number of evaluations, a fraction, seconds */
static int budget_value(mpt_problem *p, int i, int k, double v, mpt_error *err) {
  char field[64];
  snprintf(field, sizeof field, "Budget[%d].BudgetValue (%s)", i, budget_types[k]);
  mpt_t1_budget *b = &p->budget;
  if (k == 0) {
    if (!(v >= 1 && v <= 9e18 && v == floor(v)))
      return t1_error(p, err, MPT_ERR_VALUE, field, "%g is not a whole number of evaluations >= 1", v);
    b->count = (int64_t)v;
  } else if (k == 1) {
    if (!(v > 0 && v <= 1))
      return t1_error(p, err, MPT_ERR_VALUE, field, "%g is not a fraction of the valid configurations in (0, 1]", v);
    b->fraction = v;
  } else {
    if (!(v > 0 && isfinite(v))) return t1_error(p, err, MPT_ERR_VALUE, field, "%g is not a number of seconds > 0", v);
    b->seconds = v;
  }
  return 0;
}

/* Budget[i]: {"Type": ..., "BudgetValue": number}, a kind at most once */
static int parse_budget_item(mpt_problem *p, int i, const cJSON *jb, mpt_error *err) {
  char where[64], field[96];
  snprintf(where, sizeof where, "Budget[%d]", i);
  if (!cJSON_IsObject(jb)) return t1_error(p, err, MPT_ERR_VALUE, where, "expected an object {\"Type\": ..., \"BudgetValue\": ...}");
  int rc = mpt_json_check_keys(jb, budget_keys, p->path, p->text, where, err);
  if (rc) return rc;
  const cJSON *jt = cJSON_GetObjectItemCaseSensitive(jb, "Type"), *jv = cJSON_GetObjectItemCaseSensitive(jb, "BudgetValue");
  snprintf(field, sizeof field, "%s.Type", where);
  int k = -1;
  for (int t = 0; cJSON_IsString(jt) && t < 3; t++)
    if (strcmp(jt->valuestring, budget_types[t]) == 0) k = t;
  if (k < 0)
    return t1_error(p, err, MPT_ERR_VALUE, field, "%s%s%s (expected ConfigurationCount, ConfigurationFraction or TuningDuration)",
                    cJSON_IsString(jt) ? "unknown type '" : "missing or not a string", cJSON_IsString(jt) ? jt->valuestring : "",
                    cJSON_IsString(jt) ? "'" : "");
  mpt_t1_budget *b = &p->budget;
  int *at[3] = {&b->count_at, &b->fraction_at, &b->seconds_at};
  if (*at[k] >= 0) return t1_error(p, err, MPT_ERR_VALUE, field, "%s given twice (Budget[%d] too)", budget_types[k], *at[k]);
  if (k < 2 && *at[1 - k] >= 0)
    return t1_error(p, err, MPT_ERR_VALUE, field, "%s and %s (Budget[%d]) both give an evaluation budget; give one",
                    budget_types[k], budget_types[1 - k], *at[1 - k]);
  snprintf(field, sizeof field, "%s.BudgetValue", where);
  if (!cJSON_IsNumber(jv)) return t1_error(p, err, MPT_ERR_VALUE, field, "missing or not a number");
  *at[k] = i;
  return budget_value(p, i, k, jv->valuedouble, err);
}

static int parse_budget(mpt_problem *p, const cJSON *jb, mpt_error *err) {
  if (!jb) return 0;
  if (!cJSON_IsArray(jb)) return t1_error(p, err, MPT_ERR_VALUE, "Budget", "not a list of {\"Type\": ..., \"BudgetValue\": ...}");
  int i = 0, rc;
  const cJSON *it;
  cJSON_ArrayForEach(it, jb) {
    if ((rc = parse_budget_item(p, i++, it, err))) return rc;
  }
  return 0;
}

/* a new problem holding copies of path and text, and path's folder (its dir); NULL with err set */
static mpt_problem *problem_new(const char *text, const char *path, mpt_error *err) {
  mpt_problem *p = calloc(1, sizeof *p);
  if (!p) {
    mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  p->path = strdup(path);
  p->text = strdup(text);
  const char *slash = strrchr(path, '/');
  if (p->path) {
    if (slash) {
      p->dir = strdup(path);
      if (p->dir) p->dir[slash - path == 0 ? 1 : slash - path] = '\0';
    } else {
      p->dir = strdup(".");
    }
  }
  if (!p->path || !p->text || !p->dir) {
    mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
    mpt_problem_free(p);
    return NULL;
  }
  p->budget.count_at = p->budget.fraction_at = p->budget.seconds_at = -1;
  return p;
}

/* p->json from text: one JSON object and nothing after it, strictly (spaces/json/json_doc.h) */
static int parse_document(mpt_problem *p, const char *text, const char *path, mpt_error *err) {
  return mpt_json_parse_document(text, path, &p->json, err);
}

/* p->name: General.BenchmarkName, else the file's name without its .json */
static int problem_name(mpt_problem *p, const cJSON *gen, const char *path, mpt_error *err) {
  const cJSON *bn = gen ? cJSON_GetObjectItemCaseSensitive(gen, "BenchmarkName") : NULL;
  if (cJSON_IsString(bn) && bn->valuestring[0]) {
    p->name = strdup(bn->valuestring);
  } else {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    p->name = strdup(base);
    if (p->name) {
      size_t l = strlen(p->name);
      if (l > 5 && strcmp(p->name + l - 5, ".json") == 0) p->name[l - 5] = '\0';
    }
  }
  if (!p->name) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  return 0;
}

/* p->params from ConfigurationSpace (cs) .TuningParameters: a list of 1 to MPT_T1_MAX_PARAMS, each read by
 * parse_param (p->n_params counts the one being read, for mpt_problem_free) */
static int parse_params(mpt_problem *p, const cJSON *cs, mpt_error *err) {
  if (!cJSON_IsObject(cs)) return t1_error(p, err, MPT_ERR_VALUE, CS, "missing or not an object");
  const cJSON *tp = cJSON_GetObjectItemCaseSensitive(cs, "TuningParameters");
  if (!cJSON_IsArray(tp) || cJSON_GetArraySize(tp) == 0)
    return t1_error(p, err, MPT_ERR_VALUE, CS ".TuningParameters", "missing, empty or not a list");
  int np = cJSON_GetArraySize(tp);
  if (np > MPT_T1_MAX_PARAMS)
    return t1_error(p, err, MPT_ERR_VALUE, CS ".TuningParameters",
                    "%d parameters; mptune reads at most %d (far more than any real problem has)", np, MPT_T1_MAX_PARAMS);
  p->params = calloc((size_t)np, sizeof(mpt_param));
  p->param_index = malloc(sizeof *p->param_index);
  if (!p->params || !p->param_index || mpt_name_set_init(p->param_index, (size_t)np)) {
    free(p->param_index); /* a failed init holds nothing */
    p->param_index = NULL;
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  const cJSON *it;
  int i = 0, rc;
  cJSON_ArrayForEach(it, tp) {
    p->n_params = i + 1;
    if ((rc = parse_param(p, i, it, err))) return rc;
    i++;
  }
  return 0;
}

/* p->conditions from ConfigurationSpace (cs) .Conditions, when given: a list, each read by parse_condition
 * (p->n_conditions counts the one being read, for mpt_problem_free) */
static int parse_conditions(mpt_problem *p, const cJSON *cs, mpt_error *err) {
  const cJSON *cd = cJSON_GetObjectItemCaseSensitive(cs, "Conditions");
  if (!cd || cJSON_IsNull(cd)) return 0;
  if (!cJSON_IsArray(cd)) return t1_error(p, err, MPT_ERR_VALUE, CS ".Conditions", "not a list");
  int nc = cJSON_GetArraySize(cd);
  p->conditions = calloc((size_t)(nc > 0 ? nc : 1), sizeof(mpt_condition));
  const char **names = malloc(sizeof(char *) * (size_t)p->n_params);
  char *seen = calloc((size_t)p->n_params, 1);
  if (!p->conditions || !names || !seen) {
    free(names);
    free(seen);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  for (int k = 0; k < p->n_params; k++) names[k] = p->params[k].name;
  const cJSON *it;
  int i = 0, rc = 0;
  cJSON_ArrayForEach(it, cd) {
    p->n_conditions = i + 1;
    if ((rc = parse_condition(p, i, it, (const char *const *)names, seen, err))) break;
    i++;
  }
  free(names);
  free(seen);
  return rc;
}

/* the problem's parts in the order their faults are reported: the document, the keys of the root, General
 * and ConfigurationSpace, the name, the parameters, the conditions, Search, Budget */
static int parse_problem(mpt_problem *p, const char *text, const char *path, mpt_error *err) {
  int rc;
  if ((rc = parse_document(p, text, path, err))) return rc;
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(p->json, "General");
  const cJSON *cs = cJSON_GetObjectItemCaseSensitive(p->json, "ConfigurationSpace");
  if ((rc = mpt_json_check_keys(p->json, root_keys, path, text, "", err)) ||
      (rc = mpt_json_check_keys(gen, general_keys, path, text, "General", err)) ||
      (rc = mpt_json_check_keys(cs, space_keys, path, text, "ConfigurationSpace", err)) ||
      (rc = problem_name(p, gen, path, err)) || (rc = parse_params(p, cs, err)) ||
      (rc = parse_conditions(p, cs, err)) ||
      (rc = parse_search(p, cJSON_GetObjectItemCaseSensitive(p->json, "Search"), err)) ||
      (rc = parse_budget(p, cJSON_GetObjectItemCaseSensitive(p->json, "Budget"), err)))
    return rc;
  return 0;
}

int mpt_problem_parse(const char *text, const char *path, mpt_problem **out, mpt_error *err) {
  *out = NULL;
  if (!path) path = "<string>";
  mpt_problem *p = problem_new(text, path, err);
  if (!p) return MPT_ERR_NOMEM;
  int rc = parse_problem(p, text, path, err);
  if (rc) {
    mpt_problem_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

int mpt_problem_load(const char *path, mpt_problem **out, mpt_error *err) {
  *out = NULL;
  struct stat sb; /* before opening: a pipe would block the open */
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
    return mpt_error_set(err, MPT_ERR_IO, "%s: %s", path, S_ISDIR(sb.st_mode) ? "is a directory, not a problem file"
                                                            : "is not a regular file (a pipe or a device), not a problem file");
  FILE *f = fopen(path, "rb");
  if (!f) return mpt_error_set(err, MPT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (cap - len < 65536) {
      size_t nc = cap ? cap * 2 : 65536;
      char *nb = realloc(buf, nc + 1);
      if (!nb) { free(buf); fclose(f); return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); }
      buf = nb;
      cap = nc;
    }
    size_t r = fread(buf + len, 1, cap - len, f);
    len += r;
    if (r == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) { free(buf); return mpt_error_set(err, MPT_ERR_IO, "%s: read error", path); }
  buf[len] = '\0';
  if (strlen(buf) != len) { free(buf); return mpt_error_set(err, MPT_ERR_PARSE, "%s: contains a NUL byte", path); }
  int rc = mpt_problem_parse(buf, path, out, err);
  free(buf);
  return rc;
}

void mpt_problem_free(mpt_problem *p) {
  if (!p) return;
  for (int i = 0; i < p->n_params; i++) {
    mpt_param *par = &p->params[i];
    for (int k = 0; k < par->n_values; k++) mpt_value_free(&par->values[k]);
    free(par->values);
    free(par->numeric);
    free(par->name);
  }
  free(p->params);
  if (p->param_index) mpt_name_set_free(p->param_index);
  free(p->param_index);
  for (int i = 0; i < p->n_conditions; i++) {
    free(p->conditions[i].source);
    mpt_expr_free(p->conditions[i].expr);
    free(p->conditions[i].params);
  }
  free(p->conditions);
  for (int i = 0; i < p->n_warnings; i++) free(p->warnings[i]);
  free(p->warnings);
  for (int i = 0; i < p->search.n_attributes; i++) free(p->search.options[i]);
  free(p->search.options);
  free(p->search.why);
  free(p->search.name);
  if (p->json) cJSON_Delete(p->json);
  free(p->path);
  free(p->dir);
  free(p->text);
  free(p->name);
  free(p);
}

int mpt_problem_param_index(const mpt_problem *p, const char *name) {
  if (p->param_index) return mpt_name_set_find(p->param_index, name);
  for (int i = 0; i < p->n_params; i++)
    if (strcmp(p->params[i].name, name) == 0) return i;
  return -1;
}
