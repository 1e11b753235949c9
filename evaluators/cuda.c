/* evaluators/cuda.c: the `cuda` evaluator: NVRTC compiles each configuration for the bound device's
 * architecture (sm_XX, CUBIN), the driver API (libcuda.so.1, loaded at run time) loads it
 * (cuModuleLoadData), launches it (cuLaunchKernel) and times it (cuEvent*). The common flow lives in
 * gpu_eval.c; this file holds the driver calls and the classification of CUDA errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/gpu/cuda_api.h"
#include "evaluators/gpu/gpu_devices.h"
#include "evaluators/gpu/gpu_eval.h"

typedef struct cuda_state {
  const mpt_cuda_driver *d;
  mpt_cu_device dev;
  mpt_cu_handle ctx;
  mpt_cu_handle ev_start, ev_end;
} cuda_state;

static int fail(const mpt_cuda_driver *d, mpt_cu_result r, int status, const char *what, char *msg, size_t cap) {
  char t[256];
  snprintf(msg, cap, "%s: %s", what, mpt_cuda_result_text(d, r, t, sizeof t));
  return status;
}

/* errors of a launch call: configuration problems are launch errors, sticky faults runtime errors */
static int classify(mpt_cu_result r) {
  switch (r) {
  case MPT_CU_ERROR_INVALID_VALUE:
  case MPT_CU_ERROR_LAUNCH_OUT_OF_RESOURCES:
  case MPT_CU_ERROR_OUT_OF_MEMORY:
    return MPT_STATUS_LAUNCH_ERROR;
  default:
    return MPT_STATUS_RUNTIME_ERROR;
  }
}

static int cuda_available(mpt_error *err) {
  const mpt_cuda_driver *d;
  mpt_error e;
  mpt_error_clear(&e);
  if (mpt_cuda_driver_load(&d, &e)) return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: %s", e.msg);
  const char *hidden = mpt_gpu_visibility_hides_all("cuda");
  if (hidden)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: %s='%s' hides every device", hidden, getenv(hidden));
  const mpt_nvrtc_api *rtc;
  if (mpt_nvrtc_load(&rtc, &e)) return mpt_error_set(err, MPT_ERR_DEVICE, "cuda evaluator: %s", e.msg);
  return 0;
}

static int cuda_init(void **stp, int local_rank, mpt_device_info *info, char *arch, size_t arch_cap, char *msg,
                     size_t cap) {
  mpt_error e;
  mpt_error_clear(&e);
  mpt_gpu_desc gpus[64];
  int n = mpt_gpu_list_cuda_here(gpus, 64, &e); /* initializes the driver in this (server) process */
  if (n < 0) {
    snprintf(msg, cap, "%s", e.msg);
    return -1;
  }
  int pick = mpt_gpu_pick(local_rank, n < 64 ? n : 64);
  cuda_state *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(msg, cap, "out of memory");
    return -1;
  }
  mpt_cuda_driver_load(&s->d, &e);
  const mpt_cuda_driver *d = s->d;
  mpt_cu_result r;
  if ((r = d->cuDeviceGet(&s->dev, pick)) != 0 || (r = d->cuDevicePrimaryCtxRetain(&s->ctx, s->dev)) != 0 ||
      (r = d->cuCtxSetCurrent(s->ctx)) != 0 || (r = d->cuEventCreate(&s->ev_start, 0)) != 0 ||
      (r = d->cuEventCreate(&s->ev_end, 0)) != 0) {
    char t[256];
    snprintf(msg, cap, "no CUDA device: device %d: %s", pick, mpt_cuda_result_text(d, r, t, sizeof t));
    free(s);
    return -1;
  }
  info->index = pick;
  snprintf(info->vendor, sizeof info->vendor, "NVIDIA");
  snprintf(info->name, sizeof info->name, "%s", gpus[pick].name);
  snprintf(info->arch, sizeof info->arch, "%s", gpus[pick].arch);
  info->memory_gib = gpus[pick].memory_gib;
  info->max_threads_per_block = gpus[pick].max_threads_per_block;
  info->max_shared_per_block = gpus[pick].max_shared_per_block;
  snprintf(arch, arch_cap, "%s", gpus[pick].arch);
  *stp = s;
  return 0;
}

static void cuda_fini(void *st) {
  cuda_state *s = st;
  if (!s) return;
  s->d->cuEventDestroy(s->ev_start);
  s->d->cuEventDestroy(s->ev_end);
  s->d->cuDevicePrimaryCtxRelease(s->dev);
  free(s);
}

static int cuda_alloc(void *st, size_t bytes, uint64_t *ptr, char *msg, size_t cap) {
  cuda_state *s = st;
  mpt_cu_ptr p = 0;
  mpt_cu_result r = s->d->cuMemAlloc(&p, bytes ? bytes : 1);
  if (r) return fail(s->d, r, MPT_STATUS_RUNTIME_ERROR, "cuMemAlloc", msg, cap);
  *ptr = p;
  return 0;
}

static int cuda_upload(void *st, uint64_t dst, const void *src, size_t bytes, char *msg, size_t cap) {
  cuda_state *s = st;
  mpt_cu_result r = s->d->cuMemcpyHtoD(dst, src, bytes);
  return r ? fail(s->d, r, MPT_STATUS_RUNTIME_ERROR, "cuMemcpyHtoD", msg, cap) : 0;
}

static int cuda_download(void *st, void *dst, uint64_t src, size_t bytes, char *msg, size_t cap) {
  cuda_state *s = st;
  mpt_cu_result r = s->d->cuMemcpyDtoH(dst, src, bytes);
  return r ? fail(s->d, r, MPT_STATUS_RUNTIME_ERROR, "cuMemcpyDtoH", msg, cap) : 0;
}

static int cuda_load(void *st, const void *code, size_t code_size, const char *lowered, void **mod, void **fn,
                     char *msg, size_t cap) {
  (void)code_size;
  cuda_state *s = st;
  mpt_cu_result r = s->d->cuModuleLoadData(mod, code);
  if (r) {
    *mod = NULL;
    /* code the device cannot run (wrong architecture, PTX too new for the driver) */
    return fail(s->d, r, r == MPT_CU_ERROR_OUT_OF_MEMORY ? MPT_STATUS_LAUNCH_ERROR : MPT_STATUS_COMPILE_ERROR,
                "cuModuleLoadData", msg, cap);
  }
  r = s->d->cuModuleGetFunction(fn, *mod, lowered);
  if (r) {
    char what[300];
    snprintf(what, sizeof what, "cuModuleGetFunction(%s)", lowered);
    return fail(s->d, r, MPT_STATUS_COMPILE_ERROR, what, msg, cap);
  }
  return 0;
}

static void cuda_unload(void *st, void *mod) {
  cuda_state *s = st;
  s->d->cuModuleUnload(mod);
}

static int cuda_set_symbol(void *st, void *mod, const char *name, const void *data, size_t bytes, char *msg,
                           size_t cap) {
  cuda_state *s = st;
  mpt_cu_ptr p = 0;
  size_t have = 0;
  mpt_cu_result r = s->d->cuModuleGetGlobal(&p, &have, mod, name);
  if (r) {
    char what[300];
    snprintf(what, sizeof what, "constant-memory argument '%s': cuModuleGetGlobal", name);
    return fail(s->d, r, MPT_STATUS_LAUNCH_ERROR, what, msg, cap);
  }
  if (have < bytes) {
    snprintf(msg, cap, "constant-memory argument '%s': %zu bytes given, the symbol holds %zu", name, bytes, have);
    return MPT_STATUS_LAUNCH_ERROR;
  }
  r = s->d->cuMemcpyHtoD(p, data, bytes);
  return r ? fail(s->d, r, MPT_STATUS_RUNTIME_ERROR, "cuMemcpyHtoD (constant memory)", msg, cap) : 0;
}

static void cuda_func_info(void *st, void *fn, int *max_threads, int *regs, int *static_shared) {
  cuda_state *s = st;
  *max_threads = *regs = *static_shared = 0;
  s->d->cuFuncGetAttribute(max_threads, MPT_CU_FUNC_MAX_THREADS_PER_BLOCK, fn);
  s->d->cuFuncGetAttribute(regs, MPT_CU_FUNC_NUM_REGS, fn);
  s->d->cuFuncGetAttribute(static_shared, MPT_CU_FUNC_SHARED_SIZE_BYTES, fn);
}

static int cuda_launch(void *st, void *fn, const int64_t grid[3], const int64_t block[3], unsigned shared,
                       void **params, float *ms, char *msg, size_t cap) {
  cuda_state *s = st;
  const mpt_cuda_driver *d = s->d;
  for (int i = 0; i < 3; i++)
    if (grid[i] < 1 || grid[i] > 0x7fffffff || block[i] < 1 || block[i] > 1024) {
      snprintf(msg, cap, "invalid launch: grid %lldx%lldx%lld, block %lldx%lldx%lld", (long long)grid[0],
               (long long)grid[1], (long long)grid[2], (long long)block[0], (long long)block[1], (long long)block[2]);
      return MPT_STATUS_LAUNCH_ERROR;
    }
  mpt_cu_result r;
  if (shared > 0 && d->cuFuncSetAttribute) { /* static + dynamic shared memory beyond 48 KiB: the dynamic is opt-in */
    int static_shared = 0;
    d->cuFuncGetAttribute(&static_shared, MPT_CU_FUNC_SHARED_SIZE_BYTES, fn);
    if ((long long)shared + static_shared > 48 * 1024 &&
        (r = d->cuFuncSetAttribute(fn, MPT_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared)) != 0)
      return fail(d, r, MPT_STATUS_LAUNCH_ERROR, "cuFuncSetAttribute (dynamic shared memory beyond 48 KiB)", msg, cap);
  }
  if (ms && (r = d->cuEventRecord(s->ev_start, NULL)) != 0)
    return fail(d, r, MPT_STATUS_RUNTIME_ERROR, "cuEventRecord", msg, cap);
  r = d->cuLaunchKernel(fn, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2], (unsigned)block[0],
                        (unsigned)block[1], (unsigned)block[2], shared, NULL, params, NULL);
  if (r) return fail(d, r, classify(r), "cuLaunchKernel", msg, cap);
  if (!ms) return 0;
  if ((r = d->cuEventRecord(s->ev_end, NULL)) != 0 || (r = d->cuEventSynchronize(s->ev_end)) != 0)
    return fail(d, r, MPT_STATUS_RUNTIME_ERROR, "kernel run", msg, cap);
  if ((r = d->cuEventElapsedTime(ms, s->ev_start, s->ev_end)) != 0)
    return fail(d, r, MPT_STATUS_RUNTIME_ERROR, "cuEventElapsedTime", msg, cap);
  return 0;
}

static int cuda_sync(void *st, char *msg, size_t cap) {
  cuda_state *s = st;
  mpt_cu_result r = s->d->cuCtxSynchronize();
  return r ? fail(s->d, r, MPT_STATUS_RUNTIME_ERROR, "kernel run", msg, cap) : 0;
}

static void cuda_pci_bus_id(void *st, char *id, size_t cap) {
  cuda_state *s = st;
  id[0] = 0;
  if (s->d->cuDeviceGetPCIBusId && s->d->cuDeviceGetPCIBusId(id, (int)cap, s->dev) != 0) id[0] = 0;
}

static const mpt_gpu_backend cuda_backend = {
    .name = "cuda",
    .label = "CUDA",
    .vendor = "NVIDIA",
    .compile = mpt_nvrtc_compile,
    .available = cuda_available,
    .init = cuda_init,
    .fini = cuda_fini,
    .alloc = cuda_alloc,
    .upload = cuda_upload,
    .download = cuda_download,
    .load = cuda_load,
    .unload = cuda_unload,
    .set_symbol = cuda_set_symbol,
    .func_info = cuda_func_info,
    .launch = cuda_launch,
    .sync = cuda_sync,
    .pci_bus_id = cuda_pci_bus_id,
};

static int cuda_open(mpt_evaluator *ev, mpt_error *err) { return mpt_gpu_eval_open(ev, &cuda_backend, err); }

const mpt_evaluator_type mpt_evaluator_cuda = {
    .name = "cuda",
    .summary = "CUDA kernels: NVRTC compile for the bound GPU, driver API launch, event timing",
    .open = cuda_open,
    .evaluate = mpt_gpu_eval_evaluate,
    .close = mpt_gpu_eval_close,
    .options = mpt_gpu_eval_options,
    .ahead = &mpt_gpu_ahead_ops,
};
