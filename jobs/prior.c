/* jobs/prior.c: --prior files told to a strategy as related observations (jobs/prior.h). Every file is read
 * whole before anything is told, so a bad one leaves the strategy as it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/replay/replay.h"
#include "jobs/prior.h"
#include "jobs/runlog/runlog.h"

typedef struct prior_data {
  mpt_obs *obs;
  int64_t n, n_valid;
  char device[128];
} prior_data;

/* 1 when path starts with the HDF5 signature (a run log) */
static int is_hdf5(const char *path) {
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char head[8] = {0};
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t got = fread(head, 1, sizeof head, f);
  fclose(f);
  return got == sizeof head && memcmp(head, sig, sizeof sig) == 0;
}

/* the records of a run log of this problem */
static int load_log(const char *path, const mpt_space *space, prior_data *d, mpt_error *err) {
  mpt_runlog *log = NULL;
  int rc = mpt_runlog_open_readonly(path, &log, err);
  if (rc == 0) rc = mpt_runlog_check_problem(log, space, path, err);
  if (rc == 0) rc = mpt_runlog_read(log, &d->obs, &d->n, err);
  if (rc == 0) snprintf(d->device, sizeof d->device, "a run log");
  if (log) mpt_runlog_close(log);
  return rc;
}

/* the records of a brute-forced file, matched onto space */
static int load_replay(const char *path, const mpt_space *space, prior_data *d, mpt_error *err) {
  mpt_replay *r = NULL;
  int rc = mpt_replay_load(path, space, &r, err);
  if (rc) return rc;
  int64_t size = mpt_space_size(space), k = 0;
  d->obs = malloc((size_t)(mpt_replay_count(r) > 0 ? mpt_replay_count(r) : 1) * sizeof *d->obs);
  if (!d->obs) { mpt_replay_free(r); return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory for %s", path); }
  for (int64_t id = 0; id < size; id++)
    if (mpt_replay_get(r, id, &d->obs[k])) d->obs[k++].id = id;
  d->n = k;
  snprintf(d->device, sizeof d->device, "device %s", mpt_replay_device_name(r));
  mpt_replay_free(r);
  return 0;
}

static int load_one(const char *path, const mpt_space *space, prior_data *d, mpt_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return mpt_error_set(err, MPT_ERR_IO, "--prior %s: cannot open the file", path);
  fclose(f);
  int rc = is_hdf5(path) ? load_log(path, space, d, err) : load_replay(path, space, d, err);
  if (rc) return mpt_error_prefix(err, "--prior %s", path);
  for (int64_t i = 0; i < d->n; i++) d->n_valid += mpt_obs_valid(&d->obs[i]);
  if (d->n_valid == 0)
    return mpt_error_set(err, MPT_ERR_VALUE, "--prior %s: no valid measurement of this problem's configurations "
                         "(of %lld records)", path, (long long)d->n);
  return 0;
}

int mpt_prior_tell(const char *const *paths, int n, const mpt_space *space, mpt_strategy *s, char *desc, size_t cap,
                   mpt_error *err) {
  if (n > MPT_PRIOR_MAX) return mpt_error_set(err, MPT_ERR_VALUE, "--prior: at most %d files", MPT_PRIOR_MAX);
  prior_data d[MPT_PRIOR_MAX];
  memset(d, 0, sizeof d);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) rc = load_one(paths[i], space, &d[i], err);
  size_t len = 0;
  if (cap) desc[0] = '\0';
  for (int i = 0; i < n && rc == 0; i++) {
    for (int64_t at = 0; at < d[i].n; at += 4096) {
      int64_t k = d[i].n - at < 4096 ? d[i].n - at : 4096;
      mpt_strategy_tell_related(s, MPT_PRIOR_SOURCE(i), d[i].obs + at, (int)k);
    }
    if (len < cap)
      len += (size_t)snprintf(desc + len, cap - len, "%s%s: %lld records (%lld valid), %s", i ? "; " : "",
                              paths[i], (long long)d[i].n, (long long)d[i].n_valid, d[i].device);
  }
  for (int i = 0; i < n; i++) free(d[i].obs);
  return rc;
}
