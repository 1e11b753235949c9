/* evaluators/cpu_load.c: the cpu evaluator's warning about a node whose cores are shared (see cpu_load.h). */
#include "evaluators/cpu_load.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void mpt_cpu_load_read(int workers, int compile_jobs, mpt_cpu_load *out) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  out->cores = n > 0 ? (int)n : 1;
  out->workers = workers > 0 ? workers : 1;
  out->compile_jobs = compile_jobs > 0 ? compile_jobs : 0;
  double load[1];
  out->load1 = getloadavg(load, 1) == 1 ? load[0] : -1;
}

int mpt_cpu_load_warning(const mpt_cpu_load *l, char *out, size_t cap) {
  int n = 0;
  out[0] = '\0';
  if (l->workers > l->cores)
    n += snprintf(out + n, cap - (size_t)n, "%d cpu workers share %d online cores", l->workers, l->cores);
  else if (l->workers + l->compile_jobs > l->cores)
    n += snprintf(out + n, cap - (size_t)n, "%d cpu workers + %d compile job%s each exceed the %d online cores "
                  "(the compiles stop while a variant is timed)", l->workers, l->compile_jobs,
                  l->compile_jobs == 1 ? "" : "s", l->cores);
  if (l->load1 > l->cores && (size_t)n < cap)
    n += snprintf(out + n, cap - (size_t)n, "%sthe load average is %.2f on %d online cores before the run: other "
                  "processes compete for them", n ? "; " : "", l->load1, l->cores);
  if (n == 0) return 0;
  if ((size_t)n < cap)
    snprintf(out + n, cap - (size_t)n, "; timings of this run may vary beyond their spread and differ from a quiet "
             "node's (fewer workers, --compile-jobs, or a node of its own)");
  return 1;
}
