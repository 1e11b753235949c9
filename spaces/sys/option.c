/* spaces/sys/option.c: option rows (spaces/sys/option.h): their description, the check of a value against
 * its row, and the parsing of ints, floats and bools as the checks accept them. */
#include "spaces/sys/option.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *mpt_option_type_name(mpt_opt_type t) {
  switch (t) {
  case MPT_OPT_INT: return "int";
  case MPT_OPT_DOUBLE: return "float";
  case MPT_OPT_STRING: return "string";
  case MPT_OPT_BOOL: return "bool";
  }
  return "?";
}

void mpt_option_describe(const mpt_option_spec *o, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "%s (%s, default %s", o->key, mpt_option_type_name(o->type),
                                o->default_value ? o->default_value : "none");
  if ((o->type == MPT_OPT_INT || o->type == MPT_OPT_DOUBLE) && o->min <= o->max && len < cap)
    len += (size_t)snprintf(buf + len, cap - len, ", range %g..%g", o->min, o->max);
  if (o->type == MPT_OPT_STRING && o->choices && len < cap)
    len += (size_t)snprintf(buf + len, cap - len, ", one of %s", o->choices);
  if (len < cap) snprintf(buf + len, cap - len, ")");
}

int mpt_option_parse_bool(const char *v, int *out) {
  static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no", "off"};
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(v, yes[i]) == 0) { *out = 1; return 0; }
    if (strcasecmp(v, no[i]) == 0) { *out = 0; return 0; }
  }
  return -1;
}

int mpt_option_parse_int(const char *v, long long *out) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (end == v || errno) return -1;
  while (isspace((unsigned char)*end)) end++;
  if (*end) return -1;
  *out = x;
  return 0;
}

int mpt_option_parse_double(const char *v, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (end == v || errno || !isfinite(x)) return -1;
  while (isspace((unsigned char)*end)) end++;
  if (*end) return -1;
  *out = x;
  return 0;
}

static int in_choices(const char *choices, const char *v) {
  size_t n = strlen(v);
  const char *p = choices;
  while (*p) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len == n && strncmp(p, v, n) == 0) return 1;
    if (!bar) break;
    p = bar + 1;
  }
  return 0;
}

/* a number x against o's range (shown: x as an integer or as %g) */
static int check_range(const mpt_option_spec *o, double x, int integral, char *why, size_t cap) {
  if (o->min <= o->max && (x < o->min || x > o->max)) {
    char shown[64];
    if (integral) snprintf(shown, sizeof shown, "%lld", (long long)x);
    else snprintf(shown, sizeof shown, "%g", x);
    snprintf(why, cap, "%s is outside %g..%g", shown, o->min, o->max);
    return -1;
  }
  return 0;
}

int mpt_option_check_value(const mpt_option_spec *o, const char *v, char *why, size_t cap) {
  long long i;
  double d;
  int b;
  switch (o->type) {
  case MPT_OPT_INT:
    if (mpt_option_parse_int(v, &i)) { snprintf(why, cap, "'%s' is not an integer", v); return -1; }
    return check_range(o, (double)i, 1, why, cap);
  case MPT_OPT_DOUBLE:
    if (mpt_option_parse_double(v, &d)) { snprintf(why, cap, "'%s' is not a finite number", v); return -1; }
    return check_range(o, d, 0, why, cap);
  case MPT_OPT_BOOL:
    if (mpt_option_parse_bool(v, &b)) { snprintf(why, cap, "'%s' is not a boolean (0/1, true/false)", v); return -1; }
    return 0;
  case MPT_OPT_STRING:
    if (o->choices && !in_choices(o->choices, v)) {
      snprintf(why, cap, "'%s' is not one of %s", v, o->choices);
      return -1;
    }
    return 0;
  }
  snprintf(why, cap, "unknown option type");
  return -1;
}

const mpt_option_spec *mpt_option_find(const mpt_option_spec *table, const char *key) {
  for (const mpt_option_spec *o = table; o && o->key && key; o++)
    if (strcmp(o->key, key) == 0) return o;
  return NULL;
}
