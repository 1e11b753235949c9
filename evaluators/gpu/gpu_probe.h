/* evaluators/gpu/gpu_probe.h: the GPUs of this node listed in a child process (mpt_gpu_list_all there), so that
 * a worker that will fork (compiles, the device server) never initializes CUDA or HIP itself; and the pick of
 * one GPU among all of them, NVIDIA and AMD alike, for a worker (`--evaluator auto`, `mptune devices`). */
#ifndef MPT_GPU_PROBE_H
#define MPT_GPU_PROBE_H
#include <stddef.h>
#include "evaluators/gpu/gpu_devices.h"
#include "spaces/sys/error.h"

enum { MPT_GPU_PROBE_MAX = 64 };

/* Lists up to cap (at most MPT_GPU_PROBE_MAX) GPUs as mpt_gpu_list_all does, CUDA devices first, in a child
 * process; why (may be NULL) receives the runtimes' reasons for having none. Returns the number listed, or <0
 * with err when the child could not run or did not answer (a driver that hangs: after 120 s). */
int mpt_gpu_probe(mpt_gpu_desc *out, int cap, char *why, size_t why_cap, mpt_error *err);

/* The GPU a worker of node-local rank local_rank binds among all n listed (NVIDIA and AMD): local_rank modulo
 * n, so that the workers of a node with both kinds spread over every GPU. -1 when n <= 0. */
int mpt_gpu_bind_any(const mpt_gpu_desc *gpus, int n, int local_rank);

#endif
