/* evaluators/evaluator_options.c: the option tables of the evaluator types (`--evaluator-option key=value`):
 * checking a key=value against a type's table (or, for a type that takes the options of others, such as
 * `auto`, against theirs), printing a table for --help, and reading an opened evaluator's values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/evaluator.h"
#include "spaces/json/json_keys.h"

/* the row of key in t's table, else in the tables of the types t takes options of */
static const mpt_option_spec *find_row(const mpt_evaluator_type *t, const char *key) {
  const mpt_option_spec *o = mpt_option_find(t->options, key);
  for (const char *const *n = t->takes_options_of; !o && n && *n; n++) {
    const mpt_evaluator_type *other = mpt_evaluator_find(*n);
    if (other && other != t) o = mpt_option_find(other->options, key);
  }
  return o;
}

/* 1 when the list "a, b, c" in buf holds key */
static int listed(const char *buf, const char *key) {
  size_t n = strlen(key);
  for (const char *p = strstr(buf, key); p; p = strstr(p + 1, key))
    if ((p == buf || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

/* appends the keys of table not yet in buf (len: what it holds), noting in *meant the one key is closest to */
static size_t list_table(const mpt_option_spec *table, const char *key, const char **meant, int *best, char *buf,
                         size_t len, size_t cap) {
  for (const mpt_option_spec *o = table; o && o->key && len < cap; o++) {
    if (listed(buf, o->key)) continue; /* cuda's and hip's compile_options: one key */
    if (key) mpt_key_consider(key, o->key, 0, meant, best);
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", o->key);
  }
  return len;
}

/* "did you mean 'K'? valid options of 'NAME': a, b (mptune tune --evaluator NAME --help)" */
static void list_keys(const mpt_evaluator_type *t, const char *key, char *buf, size_t cap) {
  char keys[1024] = "";
  const char *meant = NULL;
  int best = 3;
  size_t len = list_table(t->options, key, &meant, &best, keys, 0, sizeof keys);
  for (const char *const *n = t->takes_options_of; n && *n; n++) {
    const mpt_evaluator_type *other = mpt_evaluator_find(*n);
    if (other && other != t) len = list_table(other->options, key, &meant, &best, keys, len, sizeof keys);
  }
  if (!keys[0]) {
    snprintf(buf, cap, "evaluator '%s' takes no options", t->name);
    return;
  }
  snprintf(buf, cap, "%s%s%svalid options of '%s': %s (mptune tune --evaluator %s --help)", meant ? "did you mean '" : "",
           meant ? meant : "", meant ? "'? " : "", t->name, keys, t->name);
}

int mpt_evaluator_check_option(const mpt_evaluator_type *t, const char *kv, mpt_error *err) {
  const char *eq = kv ? strchr(kv, '=') : NULL;
  char list[1400], key[128], why[256];
  if (!eq || eq == kv) {
    list_keys(t, NULL, list, sizeof list);
    return mpt_error_set(err, MPT_ERR_VALUE, "evaluator '%s': option '%s' is not of the form key=value; %s", t->name,
                         kv ? kv : "(null)", list);
  }
  snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
  const mpt_option_spec *o = find_row(t, key);
  if (!o) {
    list_keys(t, key, list, sizeof list);
    return mpt_error_set(err, MPT_ERR_NAME, "evaluator '%s': unknown option '%s'; %s", t->name, key, list);
  }
  if (mpt_option_check_value(o, eq + 1, why, sizeof why)) {
    mpt_option_describe(o, list, sizeof list);
    return mpt_error_set(err, MPT_ERR_VALUE, "evaluator '%s': bad value for option '%s': %s; the option: %s", t->name,
                         key, why, list);
  }
  return 0;
}

static void print_table(const mpt_option_spec *table, FILE *f) {
  for (const mpt_option_spec *o = table; o && o->key; o++) {
    char d[512];
    mpt_option_describe(o, d, sizeof d);
    fprintf(f, "  %s%s%s\n", d, o->help ? ": " : "", o->help ? o->help : "");
  }
}

void mpt_evaluator_print_options(const mpt_evaluator_type *t, FILE *f) {
  int any = t->options && t->options[0].key;
  if (any) {
    fprintf(f, "options of evaluator '%s' (--evaluator-option key=value):\n", t->name);
    print_table(t->options, f);
  }
  for (const char *const *n = t->takes_options_of; n && *n; n++) {
    const mpt_evaluator_type *other = mpt_evaluator_find(*n);
    if (!other || !other->options || !other->options[0].key) continue;
    fprintf(f, "options of evaluator '%s', which '%s' takes when it picks it (--evaluator-option key=value):\n",
            other->name, t->name);
    print_table(other->options, f);
    any = 1;
  }
  if (!any) fprintf(f, "evaluator '%s' takes no options\n", t->name);
}

/* the user's value of key (the last given), NULL when not given */
static const char *user_value(const mpt_evaluator *ev, const char *key) {
  size_t n = strlen(key);
  for (int i = ev->settings.n_options - 1; i >= 0; i--) {
    const char *kv = ev->settings.options[i];
    if (strncmp(kv, key, n) == 0 && kv[n] == '=') return kv + n + 1;
  }
  return NULL;
}

int mpt_evaluator_opt_given(const mpt_evaluator *ev, const char *key) { return user_value(ev, key) != NULL; }

const char *mpt_evaluator_opt_str(const mpt_evaluator *ev, const char *key) {
  const char *v = user_value(ev, key);
  if (v) return v;
  const mpt_option_spec *o = find_row(ev->type, key);
  return o ? o->default_value : NULL;
}

int64_t mpt_evaluator_opt_int(const mpt_evaluator *ev, const char *key) {
  const char *v = mpt_evaluator_opt_str(ev, key);
  long long x = 0;
  return v && mpt_option_parse_int(v, &x) == 0 ? (int64_t)x : 0;
}

double mpt_evaluator_opt_double(const mpt_evaluator *ev, const char *key) {
  const char *v = mpt_evaluator_opt_str(ev, key);
  double d = 0;
  return v && mpt_option_parse_double(v, &d) == 0 ? d : 0.0;
}
