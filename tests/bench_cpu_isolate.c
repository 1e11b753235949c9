/* tests/bench_cpu_isolate.c: cost of one isolated call (evaluators/isolate.c) with a serving child
 * versus a fresh child per call (fork per evaluation), while the worker holds R MiB of touched memory
 * (the kernel's argument buffers). Usage: bench_cpu_isolate [R_MiB=128] [calls=200] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "evaluators/isolate.h"
#include "spaces/sys/clock.h"

static long serve(void *ctx, const void *req, size_t len, void *resp, size_t cap) {
  (void)ctx;
  size_t n = len < cap ? len : cap;
  memcpy(resp, req, n);
  return (long)n;
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 128;
  int calls = argc > 2 ? atoi(argv[2]) : 200;
  char *mem = malloc(mib << 20);
  if (!mem) return 1;
  memset(mem, 1, mib << 20);
  for (int one_shot = 0; one_shot <= 1; one_shot++) {
    mpt_isolate *iso = NULL;
    mpt_error err = {0};
    mpt_isolate_opts o = {.one_shot = one_shot};
    if (mpt_isolate_create(&o, serve, NULL, NULL, &iso, &err)) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
    char resp[64];
    size_t len;
    mpt_isolate_result r;
    mpt_isolate_call(iso, "x", 1, resp, sizeof resp, &len, 10, &r, &err); /* first fork */
    double t0 = mpt_clock_mono_ms();
    for (int i = 0; i < calls; i++)
      if (mpt_isolate_call(iso, "ping", 4, resp, sizeof resp, &len, 10, &r, &err) || r.outcome != MPT_ISO_OK) {
        fprintf(stderr, "call failed: %s %s\n", err.msg, r.reason);
        return 1;
      }
    double per = (mpt_clock_mono_ms() - t0) / calls;
    printf("%-22s worker resident %4zu MiB: %8.1f us per call (%d calls, %d forks)\n",
           one_shot ? "fork per evaluation" : "serving child", mib, per * 1e3, calls, mpt_isolate_forks(iso));
    mpt_isolate_destroy(iso);
  }
  free(mem);
  return 0;
}
