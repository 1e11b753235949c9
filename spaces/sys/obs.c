/* spaces/sys/obs.c: status names and small helpers for mpt_obs. */
#include "spaces/sys/obs.h"
#include <math.h>
#include <string.h>

static const char *const status_names[MPT_STATUS_COUNT] = {
  "ok", "compile_error", "launch_error", "runtime_error", "wrong_result",
  "timeout", "crash", "cancelled", "invalid", "missing",
};

const char *mpt_status_name(int status) {
  return (status >= 0 && status < MPT_STATUS_COUNT) ? status_names[status] : NULL;
}

void mpt_obs_init(mpt_obs *o, int64_t id) {
  memset(o, 0, sizeof *o);
  o->id = id;
  o->status = MPT_STATUS_OK;
  o->device = -1;
  o->objective = NAN;
  o->median = NAN;
  o->energy_j = NAN;
  o->power_w = NAN;
  o->clock_mhz = NAN;
  o->temp_c = NAN;
}

int mpt_obs_valid(const mpt_obs *o) { return o->status == MPT_STATUS_OK && isfinite(o->objective); }
