/* evaluators/gpu_devices.h: GPU enumeration for the device table (NVIDIA through the CUDA driver API,
 * AMD through the HIP runtime, both loaded at run time), the *_VISIBLE_DEVICES rules, and the types the
 * GPU layers share (the result of a run-time compilation with NVRTC or hiprtc). */
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
  int max_shared_per_block; /* bytes */
} mpt_gpu_desc;

/* Lists the CUDA devices. Returns the number found (0..cap written; more may exist) or <0 with err
 * (MPT_ERR_DEVICE) saying why there are none: no driver (libcuda.so.1 not loadable), cuInit failed,
 * CUDA_VISIBLE_DEVICES hides every device, or the driver reports no device. */
int mpt_gpu_list_cuda(mpt_gpu_desc *out, int cap, mpt_error *err);
/* Same for AMD GPUs through libamdhip64 (ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES). */
int mpt_gpu_list_hip(mpt_gpu_desc *out, int cap, mpt_error *err);
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

/* Result of one run-time compilation (NVRTC or hiprtc). ok: 1 when code was produced. On a compile
 * error ok=0 and log holds the compiler's messages. code is a CUBIN, PTX (is_ptx) or an AMD code
 * object; lowered is the kernel's symbol name (from a name expression). Owned: mpt_rtc_result_free. */
typedef struct mpt_rtc_result {
  int ok;
  int is_ptx;
  int crashed;          /* isolated compile only: the signal that killed the compiler (0: none) */
  int timed_out;        /* isolated compile only: killed after the timeout */
  int cancelled;        /* isolated compile only: killed when its watch said stop (the run is stopping) */
  char *code;
  size_t code_size;
  char *lowered;
  char *log;
  double compile_ms;
} mpt_rtc_result;
void mpt_rtc_result_free(mpt_rtc_result *r);

/* Signature shared by mpt_nvrtc_compile and mpt_hiprtc_compile. */
typedef int (*mpt_rtc_compile_fn)(const char *source, const char *source_name, const char *kernel_name,
                                  const char *arch, const char *const *opts, int n_opts,
                                  mpt_rtc_result *res, mpt_error *err);
/* Runs fn in a forked child process and copies its result back through a pipe, so a compiler that
 * crashes (hiprtc for gfx1100 in ROCm 5.2) or hangs only loses that child: then res->ok = 0 and
 * res->crashed = the signal (or res->timed_out = 1 after timeout_s; 0 means no limit) with a log that
 * says what happened, and 0 is returned. watch (NULL: none; spaces/sys/watch.h), asked at least every
 * 100 ms, kills the compiler too when it says stop: res->cancelled = 1 (not the variant's outcome). Errors
 * of fn itself (<0, e.g. library missing) are returned as they were in the child. The child only compiles
 * (no device context is used), and leaves with _exit, so it is safe to call from an MPI rank. */
int mpt_rtc_compile_isolated(mpt_rtc_compile_fn fn, const char *source, const char *source_name,
                             const char *kernel_name, const char *arch, const char *const *opts,
                             int n_opts, double timeout_s, const mpt_watch *watch, mpt_rtc_result *res,
                             mpt_error *err);

#endif
