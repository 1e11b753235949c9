/* tests/fake_nvml.c: a stand-in NVML (libnvidia-ml) for the power observer (evaluators/gpu/power_nvml.c),
 * loaded through MPT_NVML_LIB on a machine without a GPU, with deterministic readings. Its device draws a
 * power that depends on the kernel launched last on the stand-in driver (tests/fake_cuda.c, found through
 * MPT_CUDA_DRIVER_LIB; mode 0 without it): 400, 50, 15 and 30 W for the modes 11 to 14, 250 W for any
 * other. The energy counter (mJ) integrates that power over the monotonic clock at each read. SM clock
 * 1980 - 10 * mode MHz, temperature 40 + mode C. One device (index 0, PCI bus id 00000000:01:00.0).
 * FAKE_NVML_NO_ENERGY=1: no energy counter (NVML_ERROR_NOT_SUPPORTED), as before Volta. FAKE_NVML_BUS_ONLY=1:
 * the device is not found by index (as when CUDA_VISIBLE_DEVICES renumbers), only by its bus id. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
enum { NVML_SUCCESS = 0, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3, NVML_ERROR_NOT_FOUND = 6 };

static int device_token; /* the one device's handle points here */
static double energy_mj, last_s = -1;

static int current_mode(void) {
  const char *path = getenv("MPT_CUDA_DRIVER_LIB");
  void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
  int (*mode)(void) = lib ? (int (*)(void))dlsym(lib, "fake_cuda_current_mode") : NULL;
  int m = mode ? mode() : 0;
  if (lib) dlclose(lib);
  return m;
}

static double power_of(int mode) {
  static const double w[] = {400, 50, 15, 30};
  return mode >= 11 && mode <= 14 ? w[mode - 11] : 250;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

nvmlReturn_t nvmlInit_v2(void) { return last_s = now_s(), NVML_SUCCESS; }
nvmlReturn_t nvmlShutdown(void) { return NVML_SUCCESS; }
const char *nvmlErrorString(nvmlReturn_t r) { return r ? "fake NVML error" : "success"; }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, void **dev) {
  if (index != 0 || getenv("FAKE_NVML_BUS_ONLY")) return NVML_ERROR_INVALID_ARGUMENT;
  return *dev = &device_token, NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev) {
  unsigned dom, b, d, fn; /* "domain:bus:device.function", the domain in 4 or 8 digits, as NVML takes it */
  if (sscanf(bus, "%x:%x:%x.%x", &dom, &b, &d, &fn) != 4 || dom != 0 || b != 1 || d != 0 || fn != 0)
    return NVML_ERROR_NOT_FOUND;
  return *dev = &device_token, NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(void *dev, unsigned *mw) {
  if (dev != &device_token) return NVML_ERROR_INVALID_ARGUMENT;
  return *mw = (unsigned)(power_of(current_mode()) * 1000), NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj) {
  if (dev != &device_token) return NVML_ERROR_INVALID_ARGUMENT;
  if (getenv("FAKE_NVML_NO_ENERGY")) return NVML_ERROR_NOT_SUPPORTED;
  double t = now_s();
  energy_mj += power_of(current_mode()) * (t - last_s) * 1e3;
  last_s = t;
  return *mj = (unsigned long long)energy_mj, NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz) {
  if (dev != &device_token || type != 1) return NVML_ERROR_INVALID_ARGUMENT;
  return *mhz = (unsigned)(1980 - 10 * current_mode()), NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(void *dev, int sensor, unsigned *c) {
  if (dev != &device_token || sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
  return *c = (unsigned)(40 + current_mode()), NVML_SUCCESS;
}
