/* tests/kernels/delayed.c: a kernel whose second call (the first timed run, after the verified warm-up) is delayed
 * by the scheduler, as a loaded node delays a run: it pins itself to its core, starts a thread there that spins for
 * 20 ms and spins beside it until that thread is done, so that for about half of the run this process's threads
 * wait for the core (tests/cpu_delayed.sh). Every other call is a plain loop. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static volatile int spinning;

static void *spin(void *arg) {
  (void)arg;
  double end = now_ms() + 20;
  while (now_ms() < end) {
  }
  spinning = 0;
  return NULL;
}

static void compete_for_the_core(void) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  sched_setaffinity(0, sizeof one, &one);
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setaffinity_np(&at, sizeof one, &one);
  pthread_t t;
  spinning = 1;
  if (pthread_create(&t, &at, spin, NULL) == 0) {
    while (spinning) {
    }
    pthread_join(t, NULL);
  }
  pthread_attr_destroy(&at);
}

void twice(float *out, const float *in, int32_t n) {
  static int calls;
  if (++calls == 2) compete_for_the_core();
  for (int32_t i = 0; i < n; i++) out[i] = 2.0f * in[i];
}
