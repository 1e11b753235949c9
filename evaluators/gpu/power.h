/* evaluators/gpu/power.h: power observers, the board's power, energy counter, SM clock and temperature read
 * through the vendor's management library loaded at run time (dlopen, like the runtimes): NVML
 * (libnvidia-ml.so.1, power_nvml.c) for NVIDIA, ROCm SMI (librocm_smi64.so, power_rsmi.c) for AMD. A meter
 * samples one device from a thread of the device server at MPT_POWER_PERIOD_MS while the timed runs go on,
 * and derives the observation's energy per launch, mean power, mean clock and end temperature. */
#ifndef MPT_POWER_H
#define MPT_POWER_H
#include <stddef.h>
#include "spaces/sys/obs.h"

#define MPT_POWER_PERIOD_MS 1.0   /* the sampling thread's period: 1 kHz */
#define MPT_POWER_COUNTER_MIN_MS 100.0 /* the energy counter gives the mean power of windows this long or longer */

/* One reading; NAN where the device does not report a quantity. */
typedef struct mpt_power_reading {
  double power_w;   /* board power (W) */
  double energy_j;  /* the energy counter (J since some fixed point; NAN: the device has none) */
  double clock_mhz; /* SM / shader clock (MHz) */
  double temp_c;    /* GPU temperature (C) */
} mpt_power_reading;

/* One vendor's management library. open: the device with the runtime's ordinal `index` (pci_bus_id, when
 * not empty, is preferred: the runtime's ordinals follow *_VISIBLE_DEVICES, the library's do not); 0 or -1
 * with a message. read: 0, or -1 when nothing could be read. */
typedef struct mpt_power_backend {
  const char *name;   /* "nvml", "rocm_smi" */
  const char *vendor; /* "NVIDIA", "AMD": the runtime's vendor it observes */
  int (*open)(void **st, int index, const char *pci_bus_id, char *msg, size_t cap);
  int (*read)(void *st, mpt_power_reading *r);
  void (*close)(void *st);
} mpt_power_backend;

extern const mpt_power_backend mpt_power_nvml;
extern const mpt_power_backend mpt_power_rsmi;

typedef struct mpt_power_meter mpt_power_meter;

/* The meter of device `index` of `vendor` ("NVIDIA", "AMD") with its sampling thread, or NULL when no
 * observer is available (why in msg: the library is missing, the device unknown to it). */
mpt_power_meter *mpt_power_open(const char *vendor, int index, const char *pci_bus_id, char *msg, size_t cap);
void mpt_power_close(mpt_power_meter *m);
const char *mpt_power_name(const mpt_power_meter *m);
/* Starts a window: samples from now on. */
void mpt_power_begin(mpt_power_meter *m);
/* Milliseconds since mpt_power_begin, and the samples taken so far. */
double mpt_power_window_ms(const mpt_power_meter *m, int *n_samples);
/* Ends the window over `launches` launches whose kernel times add up to kernel_ms: o->power_w is the mean
 * power of the window (from the energy counter when the device has one and the window lasts at least
 * MPT_POWER_COUNTER_MIN_MS, else the mean of the samples),
 * o->energy_j that power times the mean kernel time (J per launch), o->clock_mhz the mean clock,
 * o->temp_c the last temperature, o->n_power the samples taken. Fields without readings stay NAN. */
void mpt_power_end(mpt_power_meter *m, int launches, double kernel_ms, mpt_obs *o);

#endif
