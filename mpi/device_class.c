/* mpi/device_class.c: the device class key of a worker and the user's override (mpi/device_class.h). */
#include "mpi/device_class.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mpt_device_class_key(const mpt_device_info *d, char *buf, size_t cap) {
  if (!cap) return;
  const char *vendor = d->vendor[0] ? d->vendor : "unknown";
  const char *name = d->name[0] ? d->name : "unknown";
  if (strstr(name, vendor) == name)
    snprintf(buf, cap, "%s (%s)", name, d->arch[0] ? d->arch : "?");
  else
    snprintf(buf, cap, "%s %s (%s)", vendor, name, d->arch[0] ? d->arch : "?");
}

void mpt_device_class_assign(mpt_device_info *d, const char *override) {
  const char *env = getenv(MPT_DEVICE_CLASS_ENV);
  if (override && override[0])
    snprintf(d->device_class, sizeof d->device_class, "%s", override);
  else if (env && env[0])
    snprintf(d->device_class, sizeof d->device_class, "%s", env);
  else
    mpt_device_class_key(d, d->device_class, sizeof d->device_class);
}
