/* spaces/sys/clock.h: the clocks every part reads, in seconds (header only): monotonic time for durations,
 * Unix time for what the run log stamps, and the CPU time of the calling thread or process (what a
 * machine shared with other jobs inflates least). */
#ifndef MPT_CLOCK_H
#define MPT_CLOCK_H
#include <time.h>

static inline double mpt_clock_read_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline double mpt_clock_mono_s(void) { return mpt_clock_read_s(CLOCK_MONOTONIC); }
static inline double mpt_clock_mono_ms(void) { return 1e3 * mpt_clock_read_s(CLOCK_MONOTONIC); }
static inline double mpt_clock_unix_s(void) { return mpt_clock_read_s(CLOCK_REALTIME); }
static inline double mpt_clock_thread_cpu_s(void) { return mpt_clock_read_s(CLOCK_THREAD_CPUTIME_ID); }
static inline double mpt_clock_process_cpu_s(void) { return mpt_clock_read_s(CLOCK_PROCESS_CPUTIME_ID); }

#endif
