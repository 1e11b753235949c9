/* evaluators/cpu_load.h: whether the cpu evaluator's timings can be trusted on this node: workers that share
 * cores, more workers and compile jobs than online cores, or a load average that says other processes compete
 * for them (a user saw the same default configuration measure 25.9, 91.2, 31.1, 110.0 and 86.2 ms over five runs
 * on a loaded machine, without a word). */
#ifndef MPT_CPU_LOAD_H
#define MPT_CPU_LOAD_H
#include <stddef.h>

/* What the node looks like to a run with `workers` cpu workers on it, each compiling `compile_jobs` at once. */
typedef struct mpt_cpu_load {
  int cores;          /* online cores */
  int workers;
  int compile_jobs;
  double load1;       /* the 1-minute load average before the run (-1: unknown) */
} mpt_cpu_load;

void mpt_cpu_load_read(int workers, int compile_jobs, mpt_cpu_load *out);
/* the warning for l (one line, naming the numbers, without a trailing newline), or 0 and out = "" when the
 * node has a core for each worker and compile job and no more load than cores */
int mpt_cpu_load_warning(const mpt_cpu_load *l, char *out, size_t cap);

#endif
