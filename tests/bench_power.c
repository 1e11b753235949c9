/* tests/bench_power.c: the power meter's sampling (evaluators/gpu/power.c) measured, not tested: the samples
 * a window of W ms gets from its 1 kHz sampling thread (against the W + 1 a perfect thread would take) and
 * what opening and closing a window costs, with the observer library given (the stand-in NVML,
 * build/tests/libfake_nvml.so, or the real libnvidia-ml.so.1 on a GPU machine). Figures: docs/PERFORMANCE.md.
 *   bench_power [-n WINDOWS] [-w MS] [LIB] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "evaluators/gpu/power.h"
#include "spaces/sys/clock.h"

static void nap_ms(double ms) {
  struct timespec t = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
  nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
  int windows = 20;
  double width = 100;
  const char *lib = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) windows = atoi(argv[++i]);
    else if (strcmp(argv[i], "-w") == 0 && i + 1 < argc) width = atof(argv[++i]);
    else lib = argv[i];
  }
  if (lib) setenv("MPT_NVML_LIB", lib, 1);
  char msg[256] = "";
  mpt_power_meter *m = mpt_power_open("NVIDIA", 0, NULL, msg, sizeof msg);
  if (!m) {
    fprintf(stderr, "bench_power: no power observer: %s\n", msg);
    return 1;
  }
  double samples = 0, least = 1e9, edges_ms = 0;
  for (int w = 0; w < windows; w++) {
    mpt_obs o;
    mpt_obs_init(&o, 0);
    double t0 = mpt_clock_mono_ms();
    mpt_power_begin(m);
    double t1 = mpt_clock_mono_ms();
    nap_ms(width);
    double t2 = mpt_clock_mono_ms();
    mpt_power_end(m, 1, width, &o);
    edges_ms += (t1 - t0) + (mpt_clock_mono_ms() - t2);
    samples += o.n_power;
    if (o.n_power < least) least = o.n_power;
  }
  printf("%s: %d windows of %.0f ms: %.1f samples per window on average (least %.0f; a perfect 1 kHz thread: %.0f), "
         "%.3f ms to open and close a window\n", mpt_power_name(m), windows, width, samples / windows, least,
         width + 1, edges_ms / windows);
  mpt_power_close(m);
  return 0;
}
