/* mpi/device.h: binding each worker to one device and describing it for the device table: the worker's
 * node-local rank among workers (MPI_Comm_split_type MPI_COMM_TYPE_SHARED) that picks the device, the
 * CPU description (host, model from /proc/cpuinfo, arch from uname, memory from sysconf), the
 * description taken from an opened evaluator, and the printed table. */
#ifndef MPT_DEVICE_H
#define MPT_DEVICE_H
#include <mpi.h>
#include <stdio.h>
#include "evaluators/evaluator.h"

/* Collective over comm. Ranks with is_worker != 0 get their rank among the workers of their node
 * (0, 1, …) and the number of workers on the node; others get -1 and 0. */
int mpt_device_local_rank(MPI_Comm comm, int is_worker, int *local_rank, int *local_count);

/* Fills d with the CPU this process runs on: host, vendor "CPU", model name, arch, host memory. */
void mpt_device_cpu(mpt_device_info *d, int rank, const char *evaluator);

/* The device an opened evaluator is bound to (ev->device), completed where the evaluator left fields
 * empty (host, rank, evaluator name); with ev == NULL or an evaluator that filled nothing, the CPU. Its
 * device class is assigned (mpi/device_class.h). */
void mpt_device_describe(const mpt_evaluator *ev, int rank, mpt_device_info *d);

/* The *_VISIBLE_DEVICES variables set in this process, as "CUDA_VISIBLE_DEVICES=0,1 …" ("" if none). */
void mpt_device_visible(char *buf, int cap);

/* Prints the table (one row per entry; entries with rank < 0 are skipped). */
void mpt_device_table_print(FILE *f, const mpt_device_info *d, int n);

#endif
