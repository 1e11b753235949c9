/* evaluators/gpu/gpu_devices.h: GPU enumeration for the device table (NVIDIA through the CUDA driver API,
 * AMD through the HIP runtime, both loaded at run time), the *_VISIBLE_DEVICES rules and the
 * round-robin device pick. */
#ifndef MPT_GPU_DEVICES_H
#define MPT_GPU_DEVICES_H
#include <stddef.h>
#include "spaces/sys/error.h"
#include "spaces/sys/watch.h"

/* One GPU as the device table shows it. index is the device's ordinal as the runtime numbers it, i.e.
 * after CUDA_VISIBLE_DEVICES (NVIDIA) or ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES (AMD). */
typedef struct mpt_gpu_desc {
  char vendor[32];      /* "NVIDIA" or "AMD" */
  char api[8];          /* "cuda" or "hip": the evaluator that drives it */
  int index;
  char name[128];
  char arch[64];        /* "sm_90", "gfx90a" (features such as ":sramecc+:xnack-" stripped) */
  double memory_gib;
  int multiprocessors;  /* SMs / CUs */
  int max_threads_per_block;
  int max_shared_per_block; /* bytes; NVIDIA: the opt-in maximum when larger (a kernel may opt in to it) */
} mpt_gpu_desc;

/* Lists the CUDA devices. Returns the number found (0..cap written; more may exist) or <0 with err
 * (MPT_ERR_DEVICE) saying why there are none: no driver (libcuda.so.1 not loadable), cuInit failed,
 * CUDA_VISIBLE_DEVICES hides every device, or the driver reports no device. The driver is initialized in a
 * forked child, never in the caller: a process forked after CUDA (or HIP) is initialized cannot use it
 * (cuInit: CUDA_ERROR_NOT_INITIALIZED), and the evaluators fork their device servers and compiles. */
int mpt_gpu_list_cuda(mpt_gpu_desc *out, int cap, mpt_error *err);
/* Same for AMD GPUs through libamdhip64 (ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES). */
int mpt_gpu_list_hip(mpt_gpu_desc *out, int cap, mpt_error *err);
/* The same lists made in this process, which initializes the runtime: only for the device server, which holds
 * the device and forks nothing. */
int mpt_gpu_list_cuda_here(mpt_gpu_desc *out, int cap, mpt_error *err);
int mpt_gpu_list_hip_here(mpt_gpu_desc *out, int cap, mpt_error *err);
/* Both: CUDA devices first, then AMD ones. Never fails: a machine without GPUs gives 0, and `why`
 * (when not NULL) receives one line per runtime explaining its absence ("CUDA: no driver ...";
 * "HIP: no device ..."). */
int mpt_gpu_list_all(mpt_gpu_desc *out, int cap, char *why, size_t why_cap);

/* The *_VISIBLE_DEVICES variable that hides every device of a runtime ("" or "-1" or only
 * negative ids), or NULL when devices may be visible. vendor: "cuda" or "hip". CUDA reads
 * CUDA_VISIBLE_DEVICES; HIP reads ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES or, when that is not
 * set, CUDA_VISIBLE_DEVICES (as ROCm documents). */
const char *mpt_gpu_visibility_hides_all(const char *api);
/* The device `mptune devices` (without a problem) shows for a worker: the one a run binds, which binds
 * over the devices of one runtime, that of its evaluator: of gpus (mpt_gpu_list_all: CUDA first) those
 * of the first one's runtime, local_rank modulo their number. Returns an index into gpus, -1 when n <= 0. */
int mpt_gpu_bind(const mpt_gpu_desc *gpus, int n, int local_rank);
/* Picks the device for a worker: local_rank modulo count (workers share devices round-robin when
 * there are more workers than GPUs). Returns -1 when count <= 0. */
int mpt_gpu_pick(int local_rank, int count);

#endif
