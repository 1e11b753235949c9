/* mpi/device_class.c: the device class key of a worker, the user's override, and the device table grouped by class
 * (mpi/device_class.h). */
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

int mpt_device_class_named(const mpt_device_info *d) {
  char key[sizeof d->device_class];
  mpt_device_class_key(d, key, sizeof key);
  return d->device_class[0] && strcmp(key, d->device_class) != 0;
}

/* 1 when the class of d[i] appears among d[0..i-1] */
static int seen_before(const mpt_device_info *d, int i) {
  for (int j = 0; j < i; j++)
    if (d[j].rank >= 0 && strcmp(d[j].device_class, d[i].device_class) == 0) return 1;
  return 0;
}

int mpt_device_class_count(const mpt_device_info *d, int n) {
  int classes = 0;
  for (int i = 0; i < n; i++) classes += d[i].rank >= 0 && !seen_before(d, i);
  return classes;
}

/* "1024" and "48.0 KiB", or "-" where the device has no such limit */
static void limits_text(const mpt_device_info *d, char *threads, char *shared, size_t cap) {
  if (d->max_threads_per_block > 0) snprintf(threads, cap, "%d", d->max_threads_per_block);
  else snprintf(threads, cap, "-");
  if (d->max_shared_per_block > 0) snprintf(shared, cap, "%.1f KiB", (double)d->max_shared_per_block / 1024.0);
  else snprintf(shared, cap, "-");
}

static void print_row(FILE *f, const mpt_device_info *d) {
  char idx[16], threads[32], shared[32];
  if (d->index >= 0) snprintf(idx, sizeof idx, "%d", d->index);
  else snprintf(idx, sizeof idx, "-");
  limits_text(d, threads, shared, sizeof threads);
  fprintf(f, "%-5d %-16.64s %-8.32s %-6s %-36.128s %-10.32s %6.1f GiB %11s %10s  %.16s\n", d->rank, d->host,
          d->vendor, idx, d->name, d->arch, d->memory_gib, threads, shared, d->evaluator);
}

/* the class line of d's class: its name, the automatic key when the user named it, its worker count */
static void print_class_line(FILE *f, const mpt_device_info *all, int n, const mpt_device_info *d) {
  int workers = 0;
  for (int j = 0; j < n; j++) workers += all[j].rank >= 0 && strcmp(all[j].device_class, d->device_class) == 0;
  char key[sizeof d->device_class];
  mpt_device_class_key(d, key, sizeof key);
  if (mpt_device_class_named(d))
    fprintf(f, "class %s (named by the user; automatic key %s): %d worker%s\n", d->device_class, key, workers,
            workers == 1 ? "" : "s");
  else
    fprintf(f, "class %s: %d worker%s\n", d->device_class, workers, workers == 1 ? "" : "s");
}

void mpt_device_table_print_classes(FILE *f, const mpt_device_info *d, int n) {
  fprintf(f, "%-5s %-16s %-8s %-6s %-36s %-10s %10s %11s %10s  %s\n", "rank", "host", "vendor", "device", "name",
          "arch", "memory", "threads/blk", "shared/blk", "evaluator");
  for (int i = 0; i < n; i++) {
    if (d[i].rank < 0 || seen_before(d, i)) continue;
    print_class_line(f, d, n, &d[i]);
    for (int j = i; j < n; j++)
      if (d[j].rank >= 0 && strcmp(d[j].device_class, d[i].device_class) == 0) print_row(f, &d[j]);
  }
}
