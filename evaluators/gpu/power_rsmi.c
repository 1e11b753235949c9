/* evaluators/gpu/power_rsmi.c: the ROCm SMI power observer (power.h) for AMD GPUs: librocm_smi64.so loaded at
 * run time (MPT_RSMI_LIB names another), the device found by its PCI bus id (else by index), read for the
 * average socket power (rsmi_dev_power_ave_get, uW), the energy counter (rsmi_dev_energy_count_get, counts
 * of counter_resolution uJ) and the edge temperature (millidegrees). The clock is not read: the layout of
 * rsmi_frequencies_t differs between ROCm releases. */
#include "evaluators/gpu/power.h"
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

typedef int rsmi_status; /* rsmi_status_t: 0 success */
enum { RSMI_TEMP_TYPE_EDGE = 0, RSMI_TEMP_CURRENT = 0 };

typedef struct rsmi_state {
  void *lib;
  uint32_t dev;
  rsmi_status (*shutdown)(void);
  rsmi_status (*power)(uint32_t dv, uint32_t sensor, uint64_t *uw);
  rsmi_status (*energy)(uint32_t dv, uint64_t *count, float *resolution_uj, uint64_t *timestamp);
  rsmi_status (*temp)(uint32_t dv, uint32_t sensor, int metric, int64_t *millic);
} rsmi_state;

static int rsmi_fail(rsmi_state *s, const char *text, char *msg, size_t cap) {
  snprintf(msg, cap, "rocm_smi: %s", text);
  if (s && s->lib) dlclose(s->lib);
  free(s);
  return -1;
}

/* "DDDD:BB:DD.F" as ROCm SMI's BDF id: domain << 32 | bus << 8 | device << 3 | function */
static int bdf_of(const char *pci, uint64_t *bdf) {
  unsigned dom, bus, devn, fn;
  if (!pci || sscanf(pci, "%x:%x:%x.%x", &dom, &bus, &devn, &fn) != 4) return -1;
  *bdf = ((uint64_t)dom << 32) | ((uint64_t)(bus & 0xff) << 8) | ((uint64_t)(devn & 0x1f) << 3) | (fn & 7);
  return 0;
}

static int rsmi_find(rsmi_state *s, int index, const char *pci_bus_id) {
  rsmi_status (*count)(uint32_t *) = (rsmi_status(*)(uint32_t *))dlsym(s->lib, "rsmi_num_monitor_devices");
  rsmi_status (*pci)(uint32_t, uint64_t *) = (rsmi_status(*)(uint32_t, uint64_t *))dlsym(s->lib, "rsmi_dev_pci_id_get");
  uint32_t n = 0;
  if (!count || count(&n) != 0) return -1;
  uint64_t want, got;
  if (pci && bdf_of(pci_bus_id, &want) == 0)
    for (uint32_t d = 0; d < n; d++)
      if (pci(d, &got) == 0 && got == want) {
        s->dev = d;
        return 0;
      }
  if (index < 0 || (uint32_t)index >= n) return -1;
  s->dev = (uint32_t)index;
  return 0;
}

static int rsmi_open(void **stp, int index, const char *pci_bus_id, char *msg, size_t cap) {
  const char *name = getenv("MPT_RSMI_LIB");
  rsmi_state *s = calloc(1, sizeof *s);
  if (!s) return rsmi_fail(s, "out of memory", msg, cap);
  s->lib = dlopen(name && name[0] ? name : "librocm_smi64.so", RTLD_NOW | RTLD_LOCAL);
  if (!s->lib) s->lib = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!s->lib) return rsmi_fail(s, "librocm_smi64.so not found", msg, cap);
  rsmi_status (*init)(uint64_t) = (rsmi_status(*)(uint64_t))dlsym(s->lib, "rsmi_init");
  s->shutdown = (rsmi_status(*)(void))dlsym(s->lib, "rsmi_shut_down");
  s->power = (rsmi_status(*)(uint32_t, uint32_t, uint64_t *))dlsym(s->lib, "rsmi_dev_power_ave_get");
  s->energy = (rsmi_status(*)(uint32_t, uint64_t *, float *, uint64_t *))dlsym(s->lib, "rsmi_dev_energy_count_get");
  s->temp = (rsmi_status(*)(uint32_t, uint32_t, int, int64_t *))dlsym(s->lib, "rsmi_dev_temp_metric_get");
  if (!init || !s->shutdown || !s->power) return rsmi_fail(s, "the library lacks rsmi_init or rsmi_dev_power_ave_get", msg, cap);
  if (init(0) != 0) return rsmi_fail(s, "rsmi_init failed", msg, cap);
  if (rsmi_find(s, index, pci_bus_id) != 0) {
    s->shutdown();
    return rsmi_fail(s, "the device is unknown to ROCm SMI", msg, cap);
  }
  *stp = s;
  return 0;
}

static int rsmi_read(void *st, mpt_power_reading *r) {
  rsmi_state *s = st;
  uint64_t uw = 0, count = 0, ts = 0;
  float res = 0;
  int64_t mc = 0;
  int got = 0;
  if (s->power(s->dev, 0, &uw) == 0) { r->power_w = (double)uw * 1e-6; got = 1; }
  if (s->energy && s->energy(s->dev, &count, &res, &ts) == 0 && res > 0) { r->energy_j = (double)count * res * 1e-6; got = 1; }
  if (s->temp && s->temp(s->dev, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, &mc) == 0) r->temp_c = (double)mc * 1e-3;
  return got ? 0 : -1;
}

static void rsmi_close(void *st) {
  rsmi_state *s = st;
  if (!s) return;
  s->shutdown();
  dlclose(s->lib);
  free(s);
}

const mpt_power_backend mpt_power_rsmi = {"rocm_smi", "AMD", rsmi_open, rsmi_read, rsmi_close};
