/* mpi/device_class.h: the device class of a worker, what makes timings comparable: by default the vendor,
 * the device name and the architecture of the device it is bound to (the CPU model for the cpu
 * evaluator), or a name the user gives where that key is wrong (two partitions with different clocks):
 * the environment variable MPTUNE_DEVICE_CLASS of the worker's process. */
#ifndef MPT_DEVICE_CLASS_H
#define MPT_DEVICE_CLASS_H
#include <stddef.h>
#include <stdio.h>
#include "evaluators/evaluator.h"

#define MPT_DEVICE_CLASS_ENV "MPTUNE_DEVICE_CLASS"

/* The automatic key of d: "vendor name (arch)", e.g. "NVIDIA NVIDIA A100-SXM4-80GB (sm_80)", squeezed to
 * cap bytes. */
void mpt_device_class_key(const mpt_device_info *d, char *buf, size_t cap);

/* Sets d->device_class: override when not NULL and not empty, else MPTUNE_DEVICE_CLASS when set and not
 * empty, else the automatic key. */
void mpt_device_class_assign(mpt_device_info *d, const char *override);

/* 1 when d's class was named by the user (it differs from d's automatic key) */
int mpt_device_class_named(const mpt_device_info *d);

/* The number of distinct classes among the n entries of d (entries with rank < 0 skipped). */
int mpt_device_class_count(const mpt_device_info *d, int n);

/* Prints the device table grouped by class, in the order each class first appears: a line per class ("class KEY:
 * 2 workers", with the automatic key after a class the user named), then its workers, one row each, with the
 * device's limits (threads and shared memory per block; "-" where it has none). */
void mpt_device_table_print_classes(FILE *f, const mpt_device_info *d, int n);

#endif
