/* evaluators/evaluator.c: the generic evaluator layer around the registry: open (find the type, copy
 * the settings, fill the common device fields), evaluate (id check, timestamps, framework time; the watch
 * the type's waits ask; each observation's objective, evaluators/objective.h) and close. The types themselves
 * live one per file (evaluators/sim.c, cpu.c, ...). */
#include "evaluators/evaluator.h"
#include "evaluators/objective.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "spaces/sys/clock.h"

#define AHEAD_CACHE_MAX 1024 /* compile artifacts kept for the run (GPU code objects: tens of KiB each) */

/* The evaluator plus private copies of the settings' strings, so callers need not keep them alive, and
 * what its watch (ev.watch) asks. */
typedef struct evaluator_holder {
  mpt_evaluator ev;
  char *simulate_path;
  char *workdir;
  char **options;          /* copies of settings.options */
  int opened;              /* open() has returned: from then on its waits are an evaluation's */
  const mpt_watch *also;   /* the watch of the evaluation running now (mpt_evaluator_evaluate_watched) */
  mpt_objective objective; /* what each observation's objective is */
  mpt_ahead *ahead;        /* the type's compiles (NULL: it has none) */
} evaluator_holder;

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void holder_free(evaluator_holder *h) {
  mpt_objective_free(&h->objective);
  for (int i = 0; h->options && i < h->ev.settings.n_options; i++) free(h->options[i]);
  free(h->options);
  free(h->simulate_path);
  free(h->workdir);
  free(h);
}

/* the settings' strings copied into h (ev.settings points at the copies); MPT_ERR_NOMEM */
static int copy_settings(evaluator_holder *h, const mpt_eval_settings *settings, const char *name, mpt_error *err) {
  mpt_evaluator *ev = &h->ev;
  if (settings) ev->settings = *settings;
  int n = ev->settings.options ? ev->settings.n_options : 0;
  ev->settings.n_options = 0;
  h->simulate_path = dup_or_null(ev->settings.simulate_path);
  h->workdir = dup_or_null(ev->settings.workdir);
  h->options = calloc((size_t)n + 1, sizeof *h->options);
  int bad = (ev->settings.simulate_path && !h->simulate_path) || (ev->settings.workdir && !h->workdir) || !h->options;
  for (int i = 0; !bad && i < n; i++, ev->settings.n_options++) bad = !(h->options[i] = strdup(ev->settings.options[i]));
  ev->settings.simulate_path = h->simulate_path;
  ev->settings.workdir = h->workdir;
  ev->settings.options = (const char *const *)h->options;
  return bad ? mpt_error_set(err, MPT_ERR_NOMEM, "out of memory opening evaluator '%s'", name) : 0;
}

/* every option of the settings checked against the type's table */
static int check_options(const mpt_evaluator *ev, mpt_error *err) {
  for (int i = 0; i < ev->settings.n_options; i++) {
    int rc = mpt_evaluator_check_option(ev->type, ev->settings.options[i], err);
    if (rc) return rc;
  }
  return 0;
}

/* ev.watch: nothing while the type opens (its reference run is no evaluation of the caller's); then the
 * running evaluation's own watch, and the settings' watch, whose word counts */
static int watch_evaluation(void *ctx, const char *doing, double done) {
  evaluator_holder *h = ctx;
  mpt_ahead_pump(h->ahead); /* compiles ahead finish and start while the device works */
  if (!h->opened) return 0;
  int stop = mpt_watch_call(h->also, doing, done);
  return mpt_watch_call(&h->ev.settings.watch, doing, done) || stop;
}

/* the objective of settings; one that needs the energy only where a power observer can be (cuda, hip) */
static int open_objective(evaluator_holder *h, const mpt_evaluator_type *type, const mpt_problem *p,
                          const mpt_eval_settings *settings, mpt_error *err) {
  int rc = mpt_objective_parse(settings ? settings->objective : NULL, p, &h->objective, err);
  if (rc == 0 && h->objective.needs_energy && strcmp(type->name, "cuda") != 0 && strcmp(type->name, "hip") != 0 &&
      strcmp(type->name, "auto") != 0) {
    char spec[256];
    mpt_objective_describe(&h->objective, spec, sizeof spec);
    mpt_objective_free(&h->objective);
    rc = mpt_error_set(err, MPT_ERR_VALUE, "--objective %s needs the energy of each launch: the %s evaluator has no "
                       "power observer (the cuda and hip evaluators have, through NVML and ROCm SMI)", spec, type->name);
  }
  return rc;
}

int mpt_evaluator_open(const char *name, const mpt_problem *p, const mpt_space *s,
                       const mpt_eval_settings *settings, mpt_evaluator **out, mpt_error *err) {
  *out = NULL;
  if (!name) return mpt_error_set(err, MPT_ERR_NAME, "no evaluator named");
  const mpt_evaluator_type *type = mpt_evaluator_find(name);
  if (!type) {
    char known[512] = "";
    for (int i = 0; i < mpt_evaluator_count(); i++) {
      size_t len = strlen(known);
      snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", mpt_evaluator_at(i)->name);
    }
    return mpt_error_set(err, MPT_ERR_NAME, "unknown evaluator '%s' (known: %s)", name,
                         known[0] ? known : "none");
  }
  if (!p || !s) return mpt_error_set(err, MPT_ERR_VALUE, "evaluator '%s': no problem or space", name);
  evaluator_holder *h = calloc(1, sizeof *h);
  if (!h) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory opening evaluator '%s'", name);
  int orc = open_objective(h, type, p, settings, err);
  if (orc) {
    free(h);
    return orc;
  }
  mpt_evaluator *ev = &h->ev;
  ev->type = type;
  ev->problem = p;
  ev->space = s;
  int rc = copy_settings(h, settings, name, err);
  if (rc == 0) rc = check_options(ev, err);
  if (rc) {
    holder_free(h);
    return rc;
  }
  ev->settings.power_window_ms = h->objective.needs_energy ? MPT_OBJECTIVE_POWER_WINDOW_MS : 0;
  /* common device fields; the type refines them */
  ev->device.rank = ev->settings.rank;
  ev->device.index = -1;
  if (gethostname(ev->device.host, sizeof ev->device.host) != 0) snprintf(ev->device.host, sizeof ev->device.host, "unknown");
  ev->device.host[sizeof ev->device.host - 1] = '\0';
  snprintf(ev->device.evaluator, sizeof ev->device.evaluator, "%s", type->name);
  ev->watch = (mpt_watch){watch_evaluation, h};
  if (type->ahead && !(h->ahead = mpt_ahead_create(type->ahead, ev, mpt_evaluator_compile_jobs(ev), AHEAD_CACHE_MAX))) {
    holder_free(h);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory opening evaluator '%s'", name);
  }
  rc = type->open ? type->open(ev, err) : 0;
  if (rc < 0) {
    mpt_ahead_destroy(h->ahead);
    holder_free(h);
    return rc;
  }
  h->opened = 1;
  *out = ev;
  return 0;
}

int mpt_evaluator_evaluate_watched(mpt_evaluator *ev, int64_t id, const mpt_watch *also, mpt_obs *out,
                                   mpt_error *err) {
  evaluator_holder *h = (evaluator_holder *)ev; /* ev is the first member */
  h->also = also;
  int rc = mpt_evaluator_evaluate(ev, id, out, err);
  h->also = NULL;
  return rc;
}

int mpt_evaluator_evaluate(mpt_evaluator *ev, int64_t id, mpt_obs *out, mpt_error *err) {
  mpt_obs_init(out, id);
  if (id < 0 || id >= mpt_space_size(ev->space))
    return mpt_error_set(err, MPT_ERR_VALUE, "evaluator '%s': configuration id %lld is not in the space (0..%lld)",
                         ev->type->name, (long long)id, (long long)mpt_space_size(ev->space) - 1);
  double t0 = mpt_clock_unix_s(), m0 = mpt_clock_mono_ms();
  int rc = ev->type->evaluate(ev, id, out, err);
  double m1 = mpt_clock_mono_ms();
  out->id = id;
  out->rank = ev->settings.rank;
  out->device = ev->device.index;
  out->t_start = t0;
  out->t_end = t0 + (m1 - m0) * 1e-3;
  if (rc < 0) return rc;
  /* framework time: what the evaluation took besides compiling and benchmarking, unless the type
   * recorded its own (the replay evaluator keeps the recorded one) */
  if (!(out->framework_ms > 0)) {
    double fw = (m1 - m0) - (isfinite(out->compile_ms) ? out->compile_ms : 0) -
                (isfinite(out->benchmark_ms) ? out->benchmark_ms : 0);
    out->framework_ms = fw > 0 ? fw : 0;
  }
  mpt_objective_apply(&((evaluator_holder *)ev)->objective, ev->space, out);
  out->reason[MPT_OBS_REASON - 1] = '\0';
  return 0;
}

int mpt_evaluator_become(mpt_evaluator *ev, const mpt_evaluator_type *t, mpt_error *err) {
  evaluator_holder *h = (evaluator_holder *)ev; /* ev is the first member */
  ev->type = t;
  snprintf(ev->device.evaluator, sizeof ev->device.evaluator, "%s", t->name);
  if (t->ahead && !h->ahead && !(h->ahead = mpt_ahead_create(t->ahead, ev, mpt_evaluator_compile_jobs(ev), AHEAD_CACHE_MAX)))
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory opening evaluator '%s'", t->name);
  return 0;
}

void mpt_evaluator_close(mpt_evaluator *ev) {
  if (!ev) return;
  evaluator_holder *h = (evaluator_holder *)ev; /* ev is the first member */
  mpt_ahead_destroy(h->ahead); /* before the type's close: its compiles write into its scratch directory */
  if (ev->type && ev->type->close) ev->type->close(ev);
  holder_free(h);
}

/* ---- compile-ahead ---- */

static mpt_ahead *ahead_of(const mpt_evaluator *ev) { return ev ? ((const evaluator_holder *)ev)->ahead : NULL; }

void mpt_evaluator_prepare(mpt_evaluator *ev, int64_t id) {
  if (id >= 0 && ev && id < mpt_space_size(ev->space)) mpt_ahead_prepare(ahead_of(ev), id);
}

void mpt_evaluator_discard(mpt_evaluator *ev, int64_t id) { mpt_ahead_discard(ahead_of(ev), id); }

static int online_cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

int mpt_evaluator_default_jobs(const char *evaluator, int local_workers) {
  int workers = local_workers > 0 ? local_workers : 1;
  int jobs = online_cores() / workers;
  if (evaluator && strcmp(evaluator, "cpu") == 0) jobs--; /* the variant being timed takes a core of its own */
  return jobs > 0 ? jobs : 1;
}

int mpt_evaluator_compile_jobs(const mpt_evaluator *ev) {
  if (ev->settings.compile_jobs > 0) return ev->settings.compile_jobs;
  return mpt_evaluator_default_jobs(ev->type->name, ev->settings.local_workers);
}

int mpt_evaluator_node_oversubscribed(const mpt_evaluator *ev) {
  int workers = ev->settings.local_workers > 0 ? ev->settings.local_workers : 1, cores = online_cores();
  double load[1];
  return workers + mpt_evaluator_compile_jobs(ev) > cores || (getloadavg(load, 1) == 1 && load[0] > cores);
}

int mpt_evaluator_compile(mpt_evaluator *ev, int64_t id, mpt_ahead_result *res, mpt_obs *obs, mpt_error *err) {
  mpt_ahead *a = ahead_of(ev);
  if (!a) return mpt_error_set(err, MPT_ERR_INTERNAL, "evaluator '%s' has no compile", ev->type->name);
  int rc = mpt_ahead_take(a, id, &ev->watch, res, err);
  if (rc) return rc;
  obs->compile_ms = res->compile_ms;
  if (res->outcome == MPT_AHEAD_DONE) return 0;
  /* cancelled: not the variant's outcome, a resume compiles it again */
  obs->status = res->outcome == MPT_AHEAD_CANCELLED ? MPT_STATUS_CANCELLED
                : res->outcome == MPT_AHEAD_TIMEOUT ? MPT_STATUS_TIMEOUT
                                                    : MPT_STATUS_CRASH;
  snprintf(obs->reason, sizeof obs->reason, "%s", res->reason);
  return 0;
}

void mpt_evaluator_pause_compiles(mpt_evaluator *ev, int paused) { mpt_ahead_pause(ahead_of(ev), paused); }

void mpt_evaluator_compile_stats(const mpt_evaluator *ev, mpt_ahead_stats *out) { mpt_ahead_get_stats(ahead_of(ev), out); }
