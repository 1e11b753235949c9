/* evaluators/gpu/power_nvml.c: the NVML power observer (power.h): libnvidia-ml.so.1 loaded at run time
 * (MPT_NVML_LIB names another, as tests/fake_nvml.c stands in for it), the device found by its PCI bus id
 * (else by index), read for board power (nvmlDeviceGetPowerUsage, mW), the energy counter
 * (nvmlDeviceGetTotalEnergyConsumption, mJ, Volta and later), the SM clock and the GPU temperature. */
#include "evaluators/gpu/power.h"
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef int nvml_return;     /* nvmlReturn_t: 0 success */
typedef void *nvml_device;   /* nvmlDevice_t */
enum { NVML_CLOCK_SM = 1, NVML_TEMPERATURE_GPU = 0 };

typedef struct nvml_state {
  void *lib;
  nvml_device dev;
  nvml_return (*shutdown)(void);
  nvml_return (*power)(nvml_device, unsigned *mw);
  nvml_return (*energy)(nvml_device, unsigned long long *mj);
  nvml_return (*clock)(nvml_device, int type, unsigned *mhz);
  nvml_return (*temp)(nvml_device, int sensor, unsigned *c);
} nvml_state;

static int nvml_fail(nvml_state *s, const char *msg_text, char *msg, size_t cap) {
  snprintf(msg, cap, "nvml: %s", msg_text);
  if (s->lib) dlclose(s->lib);
  free(s);
  return -1;
}

/* the device: by PCI bus id when the runtime gave one, else by index */
static int nvml_find(nvml_state *s, int index, const char *pci_bus_id) {
  nvml_return (*by_bus)(const char *, nvml_device *) = (nvml_return(*)(const char *, nvml_device *))dlsym(
      s->lib, "nvmlDeviceGetHandleByPciBusId_v2");
  nvml_return (*by_index)(unsigned, nvml_device *) =
      (nvml_return(*)(unsigned, nvml_device *))dlsym(s->lib, "nvmlDeviceGetHandleByIndex_v2");
  if (pci_bus_id && pci_bus_id[0] && by_bus && by_bus(pci_bus_id, &s->dev) == 0) return 0;
  return by_index && index >= 0 && by_index((unsigned)index, &s->dev) == 0 ? 0 : -1;
}

static int nvml_open(void **stp, int index, const char *pci_bus_id, char *msg, size_t cap) {
  const char *name = getenv("MPT_NVML_LIB");
  nvml_state *s = calloc(1, sizeof *s);
  if (!s) return nvml_fail(s, "out of memory", msg, cap);
  s->lib = dlopen(name && name[0] ? name : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!s->lib) return nvml_fail(s, "libnvidia-ml.so.1 not found", msg, cap);
  nvml_return (*init)(void) = (nvml_return(*)(void))dlsym(s->lib, "nvmlInit_v2");
  s->shutdown = (nvml_return(*)(void))dlsym(s->lib, "nvmlShutdown");
  s->power = (nvml_return(*)(nvml_device, unsigned *))dlsym(s->lib, "nvmlDeviceGetPowerUsage");
  s->energy = (nvml_return(*)(nvml_device, unsigned long long *))dlsym(s->lib, "nvmlDeviceGetTotalEnergyConsumption");
  s->clock = (nvml_return(*)(nvml_device, int, unsigned *))dlsym(s->lib, "nvmlDeviceGetClockInfo");
  s->temp = (nvml_return(*)(nvml_device, int, unsigned *))dlsym(s->lib, "nvmlDeviceGetTemperature");
  if (!init || !s->shutdown || !s->power) return nvml_fail(s, "the library lacks nvmlInit_v2 or nvmlDeviceGetPowerUsage", msg, cap);
  if (init() != 0) return nvml_fail(s, "nvmlInit_v2 failed", msg, cap);
  if (nvml_find(s, index, pci_bus_id) != 0) {
    s->shutdown();
    return nvml_fail(s, "the device is unknown to NVML", msg, cap);
  }
  *stp = s;
  return 0;
}

static int nvml_read(void *st, mpt_power_reading *r) {
  nvml_state *s = st;
  unsigned v = 0;
  unsigned long long e = 0;
  int got = 0;
  if (s->power(s->dev, &v) == 0) { r->power_w = v * 1e-3; got = 1; }
  if (s->energy && s->energy(s->dev, &e) == 0) { r->energy_j = (double)e * 1e-3; got = 1; }
  if (s->clock && s->clock(s->dev, NVML_CLOCK_SM, &v) == 0) r->clock_mhz = v;
  if (s->temp && s->temp(s->dev, NVML_TEMPERATURE_GPU, &v) == 0) r->temp_c = v;
  return got ? 0 : -1;
}

static void nvml_close(void *st) {
  nvml_state *s = st;
  if (!s) return;
  s->shutdown();
  dlclose(s->lib);
  free(s);
}

const mpt_power_backend mpt_power_nvml = {"nvml", "NVIDIA", nvml_open, nvml_read, nvml_close};
