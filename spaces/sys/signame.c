/* spaces/sys/signame.c: signal names (spaces/sys/signame.h). */
#include "spaces/sys/signame.h"
#include <stdio.h>
#include <string.h>

const char *mpt_signal_name(int sig) {
  static __thread char buf[32];
  const char *abbrev = sigabbrev_np(sig);
  if (abbrev) {
    snprintf(buf, sizeof buf, "SIG%s", abbrev);
    return buf;
  }
  snprintf(buf, sizeof buf, "signal %d", sig);
  return buf;
}
