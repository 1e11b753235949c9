/* coordinator/signals.c: records SIGINT/SIGTERM for a clean stop (see coordinator/signals.h). */
#include "coordinator/signals.h"
#include <signal.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t g_count = 0, g_last = 0;
static volatile int g_flag = 0;
static int g_installed = 0;
static struct sigaction g_old_int, g_old_term;

static volatile double g_first_s = 0;

static void on_signal(int sig) {
  if (g_count == 0) { /* clock_gettime is async-signal-safe */
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    g_first_s = (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
  }
  g_count = g_count + 1;
  g_last = sig;
  g_flag = 1;
}

void mpt_signals_install(void) {
  if (g_installed) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: a sleeping wait wakes up at once */
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  g_installed = 1;
}

void mpt_signals_restore(void) {
  if (!g_installed) return;
  sigaction(SIGINT, &g_old_int, NULL);
  sigaction(SIGTERM, &g_old_term, NULL);
  g_installed = 0;
}

int mpt_signals_count(void) { return (int)g_count; }
int mpt_signals_last(void) { return (int)g_last; }
double mpt_signals_first_s(void) { return g_first_s; }
volatile const int *mpt_signals_flag(void) { return &g_flag; }
