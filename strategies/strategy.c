/* strategies/strategy.c: the strategy base layer (strategies/strategy.h): creation by name from the
 * registry, `key=value` option parsing and validation against each type's spec table, the seen-set
 * that guarantees no configuration is proposed twice in a run (resume included), the ask wrapper
 * (drops invalid/duplicate/seen ids, tops up from the type, falls back to unseen ids so the whole
 * budget is always usable), tell forwarding, and the option accessors. */
#include "strategies/strategy.h"
#include "spaces/json/json_keys.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <strings.h>

void mpt_strategy_print_options(const mpt_strategy_type *t, FILE *f) {
  if (!t->options || !t->options[0].key) {
    fprintf(f, "strategy '%s' takes no options\n", t->name);
    return;
  }
  fprintf(f, "options of strategy '%s' (--option key=value):\n", t->name);
  for (const mpt_option_spec *o = t->options; o->key; o++) {
    char d[512];
    mpt_option_describe(o, d, sizeof d);
    fprintf(f, "  %s%s%s\n", d, o->help ? ": " : "", o->help ? o->help : "");
  }
  char aliases[512];
  if (mpt_strategy_option_aliases(t, aliases, sizeof aliases) > 0)
    fprintf(f, "Kernel Tuner's names of these options, read as ours: %s\n", aliases);
}

/* "valid options of 'NAME': a, b, c (described by mptune tune --strategy NAME --help)", with
 * "did you mean 'K'? " first when key (NULL: none) is a misspelling of the option K; every key fits */
static void list_keys(const mpt_strategy_type *t, const char *key, char *buf, size_t cap) {
  if (!t->options || !t->options[0].key) {
    snprintf(buf, cap, "strategy '%s' takes no options", t->name);
    return;
  }
  const char *meant = NULL;
  int best = 3;
  for (const mpt_option_spec *o = t->options; key && o->key; o++) mpt_key_consider(key, o->key, 0, &meant, &best);
  size_t len = 0;
  if (meant) len = (size_t)snprintf(buf, cap, "did you mean '%s'? ", meant);
  if (len < cap) len += (size_t)snprintf(buf + len, cap - len, "valid options of '%s':", t->name);
  for (const mpt_option_spec *o = t->options; o->key && len < cap; o++)
    len += (size_t)snprintf(buf + len, cap - len, "%s %s", o == t->options ? "" : ",", o->key);
  if (len < cap) snprintf(buf + len, cap - len, " (described by mptune tune --strategy %s --help)", t->name);
}

/* t's option named key: one of ours, or ours that Kernel Tuner names key */
static const mpt_option_spec *find_spec(const mpt_strategy_type *t, const char *key) {
  if (!t->options) return NULL;
  const char *ours = mpt_strategy_option_alias(t, key);
  for (const mpt_option_spec *o = t->options; o->key; o++)
    if (strcmp(o->key, key) == 0 || (ours && strcmp(o->key, ours) == 0)) return o;
  return NULL;
}

static void free_opts(mpt_strategy *s) {
  for (int i = 0; i < s->n_opts; i++) {
    free(s->opt_keys[i]);
    free(s->opt_values[i]);
  }
  free(s->opt_keys);
  free(s->opt_values);
  s->opt_keys = s->opt_values = NULL;
  s->n_opts = 0;
}

void mpt_strategy_names(char *buf, size_t cap) {
  size_t len = 0;
  if (cap) buf[0] = '\0';
  for (int i = 0; i < mpt_strategy_count() && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", mpt_strategy_at(i)->name);
  int n_kt = 0;
  for (int i = 0; i < mpt_strategy_count() && len < cap; i++) {
    const char *kt = mpt_strategy_kernel_tuner_name(i);
    if (!kt || strcmp(kt, mpt_strategy_at(i)->name) == 0) continue;
    len += (size_t)snprintf(buf + len, cap - len, "%s%s (%s)", n_kt++ ? ", " : "; Kernel Tuner's names: ", kt,
                            mpt_strategy_at(i)->name);
  }
}

/* *spec: the spec of option kv ("key=value") of strategy t, its value checked; 0, or the message (naming t)
 * when kv is no key=value, its key is none of t's (nor Kernel Tuner's name of one) or its value does not fit */
static int resolve_option(const mpt_strategy_type *t, const char *kv, const mpt_option_spec **spec, mpt_error *err) {
  const char *eq = kv ? strchr(kv, '=') : NULL;
  char list[1400], key[128];
  if (!eq || eq == kv) {
    list_keys(t, NULL, list, sizeof list);
    return mpt_error_set(err, MPT_ERR_VALUE, "strategy '%s': option '%s' is not of the form key=value; %s", t->name,
                         kv ? kv : "(null)", list);
  }
  size_t klen = (size_t)(eq - kv);
  if (klen >= sizeof key) klen = sizeof key - 1;
  memcpy(key, kv, klen);
  key[klen] = '\0';
  const mpt_option_spec *o = find_spec(t, key);
  if (!o) {
    list_keys(t, key, list, sizeof list);
    return mpt_error_set(err, MPT_ERR_NAME, "strategy '%s': unknown option '%s'; %s", t->name, key, list);
  }
  char why[256];
  if (mpt_option_check_value(o, eq + 1, why, sizeof why)) {
    mpt_option_describe(o, list, sizeof list);
    return mpt_error_set(err, MPT_ERR_VALUE, "strategy '%s': bad value for option '%s': %s; the option: %s", t->name,
                         key, why, list);
  }
  *spec = o;
  return 0;
}

int mpt_strategy_check_option(const mpt_strategy_type *t, const char *kv, mpt_error *err) {
  const mpt_option_spec *o;
  return resolve_option(t, kv, &o, err);
}

/* stores option kv (checked) under its spec's key; a key given twice: the last one wins */
static int store_option(mpt_strategy *s, const mpt_option_spec *o, const char *kv, mpt_error *err) {
  int slot = s->n_opts;
  for (int j = 0; j < s->n_opts; j++)
    if (strcmp(s->opt_keys[j], o->key) == 0) slot = j;
  char *v = strdup(strchr(kv, '=') + 1);
  if (!v) return mpt_error_set(err, MPT_ERR_NOMEM, "strategy '%s': out of memory", s->type->name);
  if (slot == s->n_opts) {
    if (!(s->opt_keys[slot] = strdup(o->key))) {
      free(v);
      return mpt_error_set(err, MPT_ERR_NOMEM, "strategy '%s': out of memory", s->type->name);
    }
    s->opt_values[slot] = v;
    s->n_opts++;
  } else {
    free(s->opt_values[slot]);
    s->opt_values[slot] = v;
  }
  return 0;
}

int mpt_strategy_create(const char *name, const mpt_space *space, const char *const *options,
                        int n_opts, uint64_t seed, int64_t budget, mpt_strategy **out, mpt_error *err) {
  *out = NULL;
  if (!name || !space) return mpt_error_set(err, MPT_ERR_VALUE, "strategy: no name or no space given");
  const mpt_strategy_type *t = mpt_strategy_find(name);
  if (!t) {
    char names[1024];
    mpt_strategy_names(names, sizeof names);
    return mpt_error_set(err, MPT_ERR_NAME, "unknown strategy '%s'; known strategies: %s", name,
                         names[0] ? names : "(none registered)");
  }
  name = t->name; /* ours, also where Kernel Tuner's was given */
  if (budget < 0) return mpt_error_set(err, MPT_ERR_VALUE, "strategy '%s': negative budget %lld", name, (long long)budget);
  if (n_opts < 0 || (n_opts > 0 && !options))
    return mpt_error_set(err, MPT_ERR_VALUE, "strategy '%s': bad option list", name);

  mpt_strategy *s = calloc(1, sizeof *s);
  if (!s) return mpt_error_set(err, MPT_ERR_NOMEM, "strategy '%s': out of memory", name);
  s->type = t;
  s->space = space;
  s->seed = seed;
  s->budget = budget;
  mpt_rng_seed(&s->rng, seed);
  if (n_opts > 0) {
    s->opt_keys = calloc((size_t)n_opts, sizeof *s->opt_keys);
    s->opt_values = calloc((size_t)n_opts, sizeof *s->opt_values);
    if (!s->opt_keys || !s->opt_values) { free(s->opt_keys); free(s->opt_values); free(s); return mpt_error_set(err, MPT_ERR_NOMEM, "strategy '%s': out of memory", name); }
  }
  int rc = 0;
  for (int i = 0; i < n_opts && rc == 0; i++) {
    const mpt_option_spec *o = NULL;
    rc = resolve_option(t, options[i], &o, err);
    if (rc == 0) rc = store_option(s, o, options[i], err);
  }
  if (rc == 0) {
    int64_t size = mpt_space_size(space);
    s->seen = mpt_strategy_table_fits(size, 1) ? calloc(size > 0 ? (size_t)size : 1, 1) : NULL;
    if (!s->seen) rc = mpt_strategy_table_refused(name, size, 1, err);
  }
  if (rc == 0 && t->create) {
    mpt_error e2;
    mpt_error_clear(&e2);
    rc = t->create(s, err ? err : &e2);
    if (rc < 0 && err && !err->msg[0]) mpt_error_set(err, rc, "strategy '%s': could not be created", name);
    if (rc > 0) rc = 0;
  }
  if (rc < 0) {
    free_opts(s);
    free(s->seen);
    free(s);
    return rc;
  }
  *out = s;
  return 0;
}

/* this machine's memory in bytes (INFINITY when unknown) */
static double phys_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (double)pages * (double)page : INFINITY;
}

int mpt_strategy_table_fits(int64_t size, size_t bytes_per_config) {
  return (double)size * (double)bytes_per_config <= phys_bytes();
}

int mpt_strategy_table_refused(const char *name, int64_t size, size_t bytes_per_config, mpt_error *err) {
  double need = (double)size * (double)bytes_per_config, phys = phys_bytes();
  char why[96];
  if (need > phys) snprintf(why, sizeof why, "more than this machine's memory (%.1f GiB)", phys / 1073741824.0);
  else snprintf(why, sizeof why, "more than could be allocated");
  return mpt_error_set(err, MPT_ERR_NOMEM,
                       "strategy '%s' keeps %zu byte%s per valid configuration: the space's %lld valid configurations "
                       "need %.1f GiB, %s; narrow the space (Conditions, fewer values)",
                       name, bytes_per_config, bytes_per_config == 1 ? "" : "s", (long long)size, need / 1073741824.0,
                       why);
}

static inline int take(mpt_strategy *s, int64_t id, int64_t size) {
  if (id < 0 || id >= size || s->seen[id]) return 0;
  s->seen[id] = 1;
  s->n_seen++;
  return 1;
}

int64_t mpt_strategy_random_free(mpt_rng *rng, int64_t size, const uint8_t *a, const uint8_t *b, int draws,
                                 int scan) {
  if (size <= 0) return -1;
#define FREE_ID(id) (!a[id] && (!b || !b[id]))
  for (int t = 0; t < draws; t++) {
    int64_t id = (int64_t)mpt_rng_below(rng, (uint64_t)size);
    if (FREE_ID(id)) return id;
  }
  if (!scan) return -1;
  int64_t start = (int64_t)mpt_rng_below(rng, (uint64_t)size);
  for (int64_t k = 0; k < size; k++) {
    int64_t id = (start + k) % size;
    if (FREE_ID(id)) return id;
  }
#undef FREE_ID
  return -1;
}

const char *mpt_strategy_ask_error(const mpt_strategy *s) { return s->ask_error.msg; }

void mpt_strategy_set_tick(mpt_strategy *s, mpt_strategy_tick tick, void *ctx) {
  s->tick = tick;
  s->tick_ctx = ctx;
}

int mpt_strategy_ticks(mpt_strategy *s, const char *doing) { return s->tick && s->tick(s->tick_ctx, doing) != 0; }

int mpt_strategy_ask(mpt_strategy *s, int n, int64_t *ids) {
  if (!s || (n > 0 && !ids)) return MPT_ERR_VALUE;
  mpt_error_clear(&s->ask_error);
  int64_t size = mpt_space_size(s->space);
  if (n <= 0 || s->n_seen >= size) return 0;
  if ((int64_t)n > size - s->n_seen) n = (int)(size - s->n_seen);
  int k = 0;
  /* the type proposes; drop what is out of range, seen or repeated; top up a few times */
  for (int round = 0; round < 4 && k < n; round++) {
    int r = s->type->ask ? s->type->ask(s, n - k, ids + k) : 0;
    if (r < 0 && !s->ask_error.msg[0]) mpt_error_set(&s->ask_error, r, "%s: ask failed (error %d)", s->type->name, r);
    if (r == MPT_ERR_STOPPED && k > 0) break; /* the run is stopping: what was taken goes out */
    if (r < 0) return r;
    if (r > n - k) r = n - k;
    if (r == 0) break;
    int kept = k;
    for (int i = k; i < k + r; i++)
      if (take(s, ids[i], size)) ids[kept++] = ids[i];
    int got = kept - k;
    k = kept;
    if (got == r) break; /* the type gave what it could without waste */
  }
  /* never return 0 (or leave the batch empty) while unseen configurations remain: the whole budget
   * stays usable even when a strategy has converged or cannot propose more */
  if (k == 0) {
    int64_t id = s->n_seen < size ? mpt_strategy_random_free(&s->rng, size, s->seen, NULL, 32, 1) : -1;
    if (id >= 0 && take(s, id, size)) ids[k++] = id;
  }
  return k;
}

void mpt_strategy_tell(mpt_strategy *s, const mpt_obs *obs, int n) {
  if (!s || !obs || n <= 0) return;
  int64_t size = mpt_space_size(s->space);
  int all_ok = 1;
  for (int i = 0; i < n; i++) {
    int64_t id = obs[i].id;
    if (id < 0 || id >= size) { all_ok = 0; continue; }
    if (!s->seen[id]) { s->seen[id] = 1; s->n_seen++; }
    s->n_told++;
  }
  if (!s->type->tell) return;
  if (all_ok) {
    s->type->tell(s, obs, n);
  } else {
    for (int i = 0; i < n; i++)
      if (obs[i].id >= 0 && obs[i].id < size) s->type->tell(s, &obs[i], 1);
  }
}

int mpt_strategy_clock(mpt_strategy *s, double *seconds) {
  return s && s->type->clock ? s->type->clock(s, seconds) : -1;
}

void mpt_strategy_tell_related(mpt_strategy *s, int source, const mpt_obs *obs, int n) {
  if (!s || !obs || n <= 0 || !s->type->tell_related) return;
  int64_t size = mpt_space_size(s->space);
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && obs[j].id >= 0 && obs[j].id < size) j++;
    if (j > i) s->type->tell_related(s, source, obs + i, j - i);
    i = j + 1;
  }
}

void mpt_strategy_destroy(mpt_strategy *s) {
  if (!s) return;
  if (s->type && s->type->destroy) s->type->destroy(s);
  free_opts(s);
  free(s->seen);
  free(s);
}

int mpt_strategy_reserve(mpt_strategy *s, int64_t id) {
  if (mpt_strategy_is_seen(s, id)) return MPT_ERR_VALUE;
  s->seen[id] = 1;
  s->n_seen++;
  return 0;
}

int mpt_strategy_is_seen(const mpt_strategy *s, int64_t id) {
  if (id < 0 || id >= mpt_space_size(s->space)) return 1;
  return s->seen[id] != 0;
}

/* the user's value for key, else the spec's default; NULL when neither */
static const char *opt_raw(const mpt_strategy *s, const char *key) {
  for (int i = s->n_opts - 1; i >= 0; i--)
    if (strcmp(s->opt_keys[i], key) == 0) return s->opt_values[i];
  const mpt_option_spec *o = find_spec(s->type, key);
  return o ? o->default_value : NULL;
}

int64_t mpt_strategy_opt_int(const mpt_strategy *s, const char *key) {
  const char *v = opt_raw(s, key);
  long long x = 0;
  if (v && mpt_option_parse_int(v, &x) == 0) return (int64_t)x;
  double d;
  if (v && mpt_option_parse_double(v, &d) == 0) return (int64_t)d;
  return 0;
}

double mpt_strategy_opt_double(const mpt_strategy *s, const char *key) {
  const char *v = opt_raw(s, key);
  double d = 0;
  if (v && mpt_option_parse_double(v, &d) == 0) return d;
  return 0.0;
}

const char *mpt_strategy_opt_str(const mpt_strategy *s, const char *key) { return opt_raw(s, key); }

int mpt_strategy_opt_bool(const mpt_strategy *s, const char *key) {
  const char *v = opt_raw(s, key);
  int b = 0;
  if (v && mpt_option_parse_bool(v, &b) == 0) return b;
  return 0;
}
