/* strategies/strategy.h: the ask/tell interface every optimizer implements, the registry of strategy
 * types by name (one file per strategy, one row per strategy in strategies/registry.c, after PETSc's
 * type registry), and the `--option key=value` handling shared by all of them.
 *
 * The base layer (strategies/strategy.c) owns what every strategy needs: the space, the seeded rng,
 * the parsed options, the budget, and the set of ids already asked for or told (so no configuration
 * is ever proposed twice in a run, resume included). */
#ifndef MPT_STRATEGY_H
#define MPT_STRATEGY_H
#include <stdint.h>
#include <stdio.h>
#include "spaces/space.h"
#include "spaces/sys/obs.h"
#include "spaces/sys/rng.h"
#include "spaces/sys/error.h"
#include "spaces/sys/option.h"

/* mpt_option_spec, a strategy's option table row: spaces/sys/option.h (evaluators have such tables too) */

typedef struct mpt_strategy mpt_strategy;

/* Called every so often by a long ask (bo taking in a resumed run's logged observations) with what it is
 * doing ("bo: model from 1,234 of 1,700 logged observations"): the caller shows it, and returns nonzero
 * when the run is stopping, which makes the ask give up with MPT_ERR_STOPPED (the strategy stays usable:
 * a later ask goes on where this one stopped). */
typedef int (*mpt_strategy_tick)(void *ctx, const char *doing);

typedef struct mpt_strategy_type {
  const char *name;
  const char *summary;
  const mpt_option_spec *options;   /* terminated by an entry with key == NULL */
  /* allocates s->data; options already validated; s->space, s->rng, s->budget set */
  int (*create)(mpt_strategy *s, mpt_error *err);
  /* writes up to n distinct ids not yet asked for or told; returns how many (0 = nothing left), or <0
   * with the reason in s->ask_error (mpt_error_set: what failed, e.g. "bo: cannot extend the GP to 801
   * observations: ...") */
  int (*ask)(mpt_strategy *s, int n, int64_t *ids);
  /* observations of earlier asks, or logged ones (warm start on resume), in any order */
  void (*tell)(mpt_strategy *s, const mpt_obs *obs, int n);
  void (*destroy)(mpt_strategy *s);
  /* optional (NULL: related observations are ignored): observations of the same space from another source,
   * prior knowledge and never this strategy's own measurements: another device class of the same run, or a
   * --prior file. source is a small integer, one per class or file (the same source always means the same
   * device); ids are this space's. They do not mark ids seen and do not count against the budget. */
  void (*tell_related)(mpt_strategy *s, int source, const mpt_obs *obs, int n);
  /* optional (NULL: none): the seconds the strategy's work has taken so far on its own clock when it is not
   * rank 0's CPU alone (bo with model ranks: the critical path of rank 0 and the model ranks); 0, or <0 when
   * this strategy has no such clock now */
  int (*clock)(mpt_strategy *s, double *seconds);
} mpt_strategy_type;

struct mpt_strategy {
  const mpt_strategy_type *type;
  const mpt_space *space;
  mpt_rng rng;
  uint64_t seed;
  int64_t budget;        /* evaluations the run will make in total (0 = unknown) */
  int n_opts;
  char **opt_keys, **opt_values; /* validated key=value pairs given by the user */
  uint8_t *seen;         /* per id: 1 when asked for or told */
  int64_t n_seen;
  int64_t n_told;
  mpt_error ask_error;   /* why the last ask failed (cleared before each ask; mpt_strategy_ask_error) */
  mpt_strategy_tick tick; /* NULL: none (mpt_strategy_set_tick) */
  void *tick_ctx;
  void *data;            /* the strategy's own state */
};

/* registry */
/* the type named `name`: one of ours ("bo") or Kernel Tuner's name of the same strategy ("bayes_opt"); NULL
 * when none is */
const mpt_strategy_type *mpt_strategy_find(const char *name);
int mpt_strategy_count(void);
const mpt_strategy_type *mpt_strategy_at(int i);
/* Kernel Tuner's name of the strategy at i ("bayes_opt" for bo), NULL when it has none */
const char *mpt_strategy_kernel_tuner_name(int i);
/* our name of t's option that Kernel Tuner calls `key` ("initial_samples" for bo's "popsize"), NULL when key
 * is no such alias */
const char *mpt_strategy_option_alias(const mpt_strategy_type *t, const char *key);
/* t's option aliases as "popsize (initial_samples), ..." into buf (cap bytes); returns how many */
int mpt_strategy_option_aliases(const mpt_strategy_type *t, char *buf, size_t cap);
/* the registered names, "random, brute_force, ...", then Kernel Tuner's names read as theirs ("; Kernel
 * Tuner's names: random_sample (random), ..."), into buf (cap bytes): for "unknown strategy" messages */
void mpt_strategy_names(char *buf, size_t cap);

/* Prints every option of t with its type, default, range or choices and help, one a line, then Kernel Tuner's
 * names of its options that mptune reads as its own */
void mpt_strategy_print_options(const mpt_strategy_type *t, FILE *f);
/* Checks one "key=value" option of strategy t as mpt_strategy_create does (key: ours or Kernel Tuner's
 * alias of it): 0, or the message mpt_strategy_create would give */
int mpt_strategy_check_option(const mpt_strategy_type *t, const char *kv, mpt_error *err);

/* Creates a strategy by name (ours or Kernel Tuner's: s->type->name is ours). options: n_opts "key=value"
 * strings (a key ours or Kernel Tuner's alias of it: kept under ours); unknown keys or bad values are
 * errors naming the strategy; an unknown key lists every valid key (and the one meant, when it is a
 * misspelling), a bad value describes its option. */
int mpt_strategy_create(const char *name, const mpt_space *space, const char *const *options,
                        int n_opts, uint64_t seed, int64_t budget, mpt_strategy **out, mpt_error *err);
/* Asks for up to n candidates; the base layer marks them seen and guarantees they are distinct, valid
 * and never seen before. Returns the number written (0 when the space is exhausted), <0 on error, whose
 * reason mpt_strategy_ask_error gives. */
int mpt_strategy_ask(mpt_strategy *s, int n, int64_t *ids);
/* why the last mpt_strategy_ask failed ("" when it did not) */
const char *mpt_strategy_ask_error(const mpt_strategy *s);
/* Sets the tick a long ask calls (NULL: none) */
void mpt_strategy_set_tick(mpt_strategy *s, mpt_strategy_tick tick, void *ctx);
/* for implementations: shows `doing` through the tick; 1 when the ask is to give up (the run is stopping) */
int mpt_strategy_ticks(mpt_strategy *s, const char *doing);
/* Marks id as taken without asking the strategy (the caller evaluates it itself, e.g. the problem's
 * default configuration first, and tells its observation later). 0, or <0 when already seen/invalid. */
int mpt_strategy_reserve(mpt_strategy *s, int64_t id);
/* Tells observations (also for warm starting from a log before the first ask). */
void mpt_strategy_tell(mpt_strategy *s, const mpt_obs *obs, int n);
/* Tells observations of the same space made on another device (source: one small integer per other device
 * class or --prior file) as prior knowledge: forwarded to the type's tell_related (ignored without one);
 * observations with an id outside the space are skipped. Never marks ids seen. */
void mpt_strategy_tell_related(mpt_strategy *s, int source, const mpt_obs *obs, int n);
/* The strategy's own clock (the type's clock): 0 with *seconds, or <0 when it has none (then rank 0's CPU
 * time is the strategy's time). */
int mpt_strategy_clock(mpt_strategy *s, double *seconds);
void mpt_strategy_destroy(mpt_strategy *s);

/* for strategy implementations */
int mpt_strategy_is_seen(const mpt_strategy *s, int64_t id);
int64_t mpt_strategy_opt_int(const mpt_strategy *s, const char *key);
double mpt_strategy_opt_double(const mpt_strategy *s, const char *key);
const char *mpt_strategy_opt_str(const mpt_strategy *s, const char *key);
int mpt_strategy_opt_bool(const mpt_strategy *s, const char *key);
/* A uniformly random id in [0, size) with a[id] == 0 and (b == NULL or b[id] == 0): up to `draws` draws
 * from rng, then, when scan is set, the first such id from a random start (wrapping); -1 when none is
 * found. Each caller passes its own exclusion masks (seen, proposed, taken in this ask), so the draws
 * from rng are exactly those of a hand-written loop. */
int64_t mpt_strategy_random_free(mpt_rng *rng, int64_t size, const uint8_t *a, const uint8_t *b, int draws,
                                 int scan);
/* Tables of bytes_per_config bytes for each of a space's size valid configurations (the base layer's seen, 1;
 * the evolutionary strategies' fitness cache): mpt_strategy_table_fits is 1 when they fit in this machine's
 * memory; mpt_strategy_table_refused sets the one message when they do not (or could not be allocated:
 * allocated = 0), naming strategy `name`, the space's size and the memory needed; MPT_ERR_NOMEM. */
int mpt_strategy_table_fits(int64_t size, size_t bytes_per_config);
int mpt_strategy_table_refused(const char *name, int64_t size, size_t bytes_per_config, mpt_error *err);

#endif
