/* evaluators/gpu/power.c: the power meter of one device (see power.h): the backend for the runtime's vendor,
 * a sampling thread that reads it every MPT_POWER_PERIOD_MS while a window is open, and what a window comes
 * to (mean power, energy per launch, mean clock, last temperature). */
#include "evaluators/gpu/power.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include "spaces/sys/clock.h"

typedef struct window {
  double t0_ms, t1_ms;             /* its start, its last sample */
  int n;                           /* samples */
  double power_sum; int n_power;   /* of the samples that had a power reading */
  double clock_sum; int n_clock;
  double temp_last;
  double energy0, energy1;         /* the counter at the first and the last sample (NAN: none) */
  double e0_ms, e1_ms;             /* when they were read */
} window;

struct mpt_power_meter {
  const mpt_power_backend *be;
  void *st;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int active, quit;
  window w;
};

static void window_reset(window *w) {
  memset(w, 0, sizeof *w);
  w->t0_ms = mpt_clock_mono_ms();
  w->temp_last = w->energy0 = w->energy1 = NAN;
}

/* one reading into the window (the caller holds the lock) */
static void sample(mpt_power_meter *m) {
  mpt_power_reading r = {NAN, NAN, NAN, NAN};
  if (m->be->read(m->st, &r) != 0) return;
  window *w = &m->w;
  double now = mpt_clock_mono_ms();
  w->n++;
  w->t1_ms = now;
  if (isfinite(r.power_w)) { w->power_sum += r.power_w; w->n_power++; }
  if (isfinite(r.clock_mhz)) { w->clock_sum += r.clock_mhz; w->n_clock++; }
  if (isfinite(r.temp_c)) w->temp_last = r.temp_c;
  if (isfinite(r.energy_j)) {
    if (!isfinite(w->energy0)) { w->energy0 = r.energy_j; w->e0_ms = now; }
    w->energy1 = r.energy_j;
    w->e1_ms = now;
  }
}

static void *sampler(void *arg) {
  mpt_power_meter *m = arg;
  const struct timespec period = {0, (long)(MPT_POWER_PERIOD_MS * 1e6)};
  pthread_mutex_lock(&m->mu);
  while (!m->quit) {
    if (!m->active) {
      pthread_cond_wait(&m->cv, &m->mu);
      continue;
    }
    sample(m);
    pthread_mutex_unlock(&m->mu);
    nanosleep(&period, NULL);
    pthread_mutex_lock(&m->mu);
  }
  pthread_mutex_unlock(&m->mu);
  return NULL;
}

static const mpt_power_backend *const backends[] = {&mpt_power_nvml, &mpt_power_rsmi};

mpt_power_meter *mpt_power_open(const char *vendor, int index, const char *pci_bus_id, char *msg, size_t cap) {
  const mpt_power_backend *be = NULL;
  for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
    if (vendor && strcmp(backends[i]->vendor, vendor) == 0) be = backends[i];
  if (!be) {
    snprintf(msg, cap, "no power observer for %s devices", vendor ? vendor : "these");
    return NULL;
  }
  mpt_power_meter *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(msg, cap, "out of memory");
    return NULL;
  }
  m->be = be;
  if (be->open(&m->st, index, pci_bus_id, msg, cap) != 0) {
    free(m);
    return NULL;
  }
  pthread_mutex_init(&m->mu, NULL);
  pthread_cond_init(&m->cv, NULL);
  window_reset(&m->w);
  if (pthread_create(&m->thread, NULL, sampler, m) != 0) {
    snprintf(msg, cap, "%s: no sampling thread", be->name);
    be->close(m->st);
    free(m);
    return NULL;
  }
  return m;
}

void mpt_power_close(mpt_power_meter *m) {
  if (!m) return;
  pthread_mutex_lock(&m->mu);
  m->quit = 1;
  pthread_cond_signal(&m->cv);
  pthread_mutex_unlock(&m->mu);
  pthread_join(m->thread, NULL);
  m->be->close(m->st);
  pthread_mutex_destroy(&m->mu);
  pthread_cond_destroy(&m->cv);
  free(m);
}

const char *mpt_power_name(const mpt_power_meter *m) { return m ? m->be->name : "none"; }

void mpt_power_begin(mpt_power_meter *m) {
  pthread_mutex_lock(&m->mu);
  window_reset(&m->w);
  sample(m); /* the first reading at once: the counter's start */
  m->active = 1;
  pthread_cond_signal(&m->cv);
  pthread_mutex_unlock(&m->mu);
}

double mpt_power_window_ms(const mpt_power_meter *m, int *n_samples) {
  mpt_power_meter *mm = (mpt_power_meter *)m;
  pthread_mutex_lock(&mm->mu);
  double ms = mpt_clock_mono_ms() - mm->w.t0_ms;
  if (n_samples) *n_samples = mm->w.n;
  pthread_mutex_unlock(&mm->mu);
  return ms;
}

void mpt_power_end(mpt_power_meter *m, int launches, double kernel_ms, mpt_obs *o) {
  pthread_mutex_lock(&m->mu);
  sample(m); /* the last reading at once: the counter's end */
  m->active = 0;
  window w = m->w;
  pthread_mutex_unlock(&m->mu);
  o->n_power = w.n;
  double power = w.n_power ? w.power_sum / w.n_power : NAN;
  /* the counter's mean over a window long enough for its steps (mJ, updated every 20-100 ms on recent GPUs) */
  if (isfinite(w.energy0) && w.e1_ms - w.e0_ms >= MPT_POWER_COUNTER_MIN_MS && w.energy1 > w.energy0)
    power = (w.energy1 - w.energy0) / ((w.e1_ms - w.e0_ms) * 1e-3);
  o->power_w = power;
  o->energy_j = launches > 0 && isfinite(power) ? power * (kernel_ms / launches) * 1e-3 : NAN;
  o->clock_mhz = w.n_clock ? w.clock_sum / w.n_clock : NAN;
  o->temp_c = w.temp_last;
}
