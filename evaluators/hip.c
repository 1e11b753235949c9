/* evaluators/hip.c: the `hip` evaluator: hiprtc compiles each configuration (CUDA-style source) for
 * the bound device's architecture (--offload-arch=gfxXXX from gcnArchName), the HIP module API
 * (libamdhip64, loaded at run time) loads it (hipModuleLoadData), launches it (hipModuleLaunchKernel)
 * and times it (hipEvent*). The common flow lives in gpu_eval.c; this file holds the HIP calls and
 * the classification of HIP errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "evaluators/gpu/gpu_devices.h"
#include "evaluators/gpu/gpu_eval.h"
#include "evaluators/gpu/hip_api.h"

typedef struct hip_state {
  const mpt_hip_api *a;
  int dev;
  mpt_hip_handle ev_start, ev_end;
} hip_state;

static int fail(const mpt_hip_api *a, mpt_hip_result r, int status, const char *what, char *msg, size_t cap) {
  char t[256];
  snprintf(msg, cap, "%s: %s", what, mpt_hip_result_text(a, r, t, sizeof t));
  return status;
}

static int classify(mpt_hip_result r) {
  switch (r) {
  case MPT_HIP_ERROR_INVALID_VALUE:
  case MPT_HIP_ERROR_INVALID_CONFIGURATION:
  case MPT_HIP_ERROR_LAUNCH_OUT_OF_RESOURCES:
  case MPT_HIP_ERROR_OUT_OF_MEMORY:
    return MPT_STATUS_LAUNCH_ERROR;
  default:
    return MPT_STATUS_RUNTIME_ERROR;
  }
}

static int hip_available(mpt_error *err) {
  const mpt_hip_api *a;
  mpt_error e;
  mpt_error_clear(&e);
  if (mpt_hip_load(&a, &e)) return mpt_error_set(err, MPT_ERR_DEVICE, "no HIP device: %s", e.msg);
  if (!a->have_rtc) return mpt_error_set(err, MPT_ERR_DEVICE, "hip evaluator: hiprtc not found next to %s", a->path);
  const char *hidden = mpt_gpu_visibility_hides_all("hip");
  if (hidden)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no HIP device: %s='%s' hides every device", hidden, getenv(hidden));
  /* a machine without the kernel driver's /dev/kfd: the device server says so (mpt_gpu_list_hip) */
  return 0;
}

static int hip_init(void **stp, int local_rank, mpt_device_info *info, char *arch, size_t arch_cap, char *msg,
                    size_t cap) {
  mpt_error e;
  mpt_error_clear(&e);
  mpt_gpu_desc gpus[64];
  int n = mpt_gpu_list_hip_here(gpus, 64, &e); /* initializes the runtime in this (server) process */
  if (n < 0) {
    snprintf(msg, cap, "%s", e.msg);
    return -1;
  }
  int pick = mpt_gpu_pick(local_rank, n < 64 ? n : 64);
  hip_state *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(msg, cap, "out of memory");
    return -1;
  }
  mpt_hip_load(&s->a, &e);
  const mpt_hip_api *a = s->a;
  s->dev = pick;
  mpt_hip_result r;
  if ((r = a->hipSetDevice(pick)) != 0 || (r = a->hipEventCreate(&s->ev_start)) != 0 ||
      (r = a->hipEventCreate(&s->ev_end)) != 0) {
    char t[256];
    snprintf(msg, cap, "no HIP device: device %d: %s", pick, mpt_hip_result_text(a, r, t, sizeof t));
    free(s);
    return -1;
  }
  if (strcmp(gpus[pick].arch, "gfx?") == 0) {
    snprintf(msg, cap, "no HIP device: device %d: its architecture (gcnArchName) is unknown", pick);
    free(s);
    return -1;
  }
  info->index = pick;
  snprintf(info->vendor, sizeof info->vendor, "AMD");
  snprintf(info->name, sizeof info->name, "%s", gpus[pick].name);
  snprintf(info->arch, sizeof info->arch, "%s", gpus[pick].arch);
  info->memory_gib = gpus[pick].memory_gib;
  info->max_threads_per_block = gpus[pick].max_threads_per_block;
  info->max_shared_per_block = gpus[pick].max_shared_per_block;
  snprintf(arch, arch_cap, "%s", gpus[pick].arch);
  *stp = s;
  return 0;
}

static void hip_fini(void *st) {
  hip_state *s = st;
  if (!s) return;
  s->a->hipEventDestroy(s->ev_start);
  s->a->hipEventDestroy(s->ev_end);
  free(s);
}

static int hip_alloc(void *st, size_t bytes, uint64_t *ptr, char *msg, size_t cap) {
  hip_state *s = st;
  void *p = NULL;
  mpt_hip_result r = s->a->hipMalloc(&p, bytes ? bytes : 1);
  if (r) return fail(s->a, r, MPT_STATUS_RUNTIME_ERROR, "hipMalloc", msg, cap);
  *ptr = (uint64_t)(uintptr_t)p;
  return 0;
}

static int hip_upload(void *st, uint64_t dst, const void *src, size_t bytes, char *msg, size_t cap) {
  hip_state *s = st;
  mpt_hip_result r = s->a->hipMemcpyHtoD((void *)(uintptr_t)dst, (void *)(uintptr_t)src, bytes);
  return r ? fail(s->a, r, MPT_STATUS_RUNTIME_ERROR, "hipMemcpyHtoD", msg, cap) : 0;
}

static int hip_download(void *st, void *dst, uint64_t src, size_t bytes, char *msg, size_t cap) {
  hip_state *s = st;
  mpt_hip_result r = s->a->hipMemcpyDtoH(dst, (void *)(uintptr_t)src, bytes);
  return r ? fail(s->a, r, MPT_STATUS_RUNTIME_ERROR, "hipMemcpyDtoH", msg, cap) : 0;
}

static int hip_load(void *st, const void *code, size_t code_size, const char *lowered, void **mod, void **fn,
                    char *msg, size_t cap) {
  (void)code_size;
  hip_state *s = st;
  mpt_hip_result r = s->a->hipModuleLoadData(mod, code);
  if (r) {
    *mod = NULL;
    return fail(s->a, r, r == MPT_HIP_ERROR_OUT_OF_MEMORY ? MPT_STATUS_LAUNCH_ERROR : MPT_STATUS_COMPILE_ERROR,
                "hipModuleLoadData", msg, cap);
  }
  r = s->a->hipModuleGetFunction(fn, *mod, lowered);
  if (r) {
    char what[300];
    snprintf(what, sizeof what, "hipModuleGetFunction(%s)", lowered);
    return fail(s->a, r, MPT_STATUS_COMPILE_ERROR, what, msg, cap);
  }
  return 0;
}

static void hip_unload(void *st, void *mod) {
  hip_state *s = st;
  s->a->hipModuleUnload(mod);
}

static int hip_set_symbol(void *st, void *mod, const char *name, const void *data, size_t bytes, char *msg,
                          size_t cap) {
  hip_state *s = st;
  void *p = NULL;
  size_t have = 0;
  mpt_hip_result r = s->a->hipModuleGetGlobal(&p, &have, mod, name);
  if (r) {
    char what[300];
    snprintf(what, sizeof what, "constant-memory argument '%s': hipModuleGetGlobal", name);
    return fail(s->a, r, MPT_STATUS_LAUNCH_ERROR, what, msg, cap);
  }
  if (have < bytes) {
    snprintf(msg, cap, "constant-memory argument '%s': %zu bytes given, the symbol holds %zu", name, bytes, have);
    return MPT_STATUS_LAUNCH_ERROR;
  }
  r = s->a->hipMemcpyHtoD(p, (void *)(uintptr_t)data, bytes);
  return r ? fail(s->a, r, MPT_STATUS_RUNTIME_ERROR, "hipMemcpyHtoD (constant memory)", msg, cap) : 0;
}

static void hip_func_info(void *st, void *fn, int *max_threads, int *regs, int *static_shared) {
  hip_state *s = st;
  *max_threads = *regs = *static_shared = 0;
  if (!s->a->hipFuncGetAttribute) return;
  s->a->hipFuncGetAttribute(max_threads, MPT_HIP_FUNC_MAX_THREADS_PER_BLOCK, fn);
  s->a->hipFuncGetAttribute(regs, MPT_HIP_FUNC_NUM_REGS, fn);
  s->a->hipFuncGetAttribute(static_shared, MPT_HIP_FUNC_SHARED_SIZE_BYTES, fn);
}

static int hip_launch(void *st, void *fn, const int64_t grid[3], const int64_t block[3], unsigned shared,
                      void **params, float *ms, char *msg, size_t cap) {
  hip_state *s = st;
  const mpt_hip_api *a = s->a;
  for (int i = 0; i < 3; i++)
    if (grid[i] < 1 || grid[i] > 0x7fffffff || block[i] < 1 || block[i] > 1024) {
      snprintf(msg, cap, "invalid launch: grid %lldx%lldx%lld, block %lldx%lldx%lld", (long long)grid[0],
               (long long)grid[1], (long long)grid[2], (long long)block[0], (long long)block[1], (long long)block[2]);
      return MPT_STATUS_LAUNCH_ERROR;
    }
  mpt_hip_result r;
  if (ms && (r = a->hipEventRecord(s->ev_start, NULL)) != 0)
    return fail(a, r, MPT_STATUS_RUNTIME_ERROR, "hipEventRecord", msg, cap);
  r = a->hipModuleLaunchKernel(fn, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2], (unsigned)block[0],
                               (unsigned)block[1], (unsigned)block[2], shared, NULL, params, NULL);
  if (r) return fail(a, r, classify(r), "hipModuleLaunchKernel", msg, cap);
  if (!ms) return 0;
  if ((r = a->hipEventRecord(s->ev_end, NULL)) != 0 || (r = a->hipEventSynchronize(s->ev_end)) != 0)
    return fail(a, r, MPT_STATUS_RUNTIME_ERROR, "kernel run", msg, cap);
  if ((r = a->hipEventElapsedTime(ms, s->ev_start, s->ev_end)) != 0)
    return fail(a, r, MPT_STATUS_RUNTIME_ERROR, "hipEventElapsedTime", msg, cap);
  return 0;
}

static int hip_sync(void *st, char *msg, size_t cap) {
  hip_state *s = st;
  mpt_hip_result r = s->a->hipDeviceSynchronize();
  return r ? fail(s->a, r, MPT_STATUS_RUNTIME_ERROR, "kernel run", msg, cap) : 0;
}

/* hiprtc runs in a forked child (mpt_rtc_compile_isolated): ROCm 5.2's hiprtc can crash its caller */
static void hip_pci_bus_id(void *st, char *id, size_t cap) {
  hip_state *s = st;
  id[0] = 0;
  if (s->a->hipDeviceGetPCIBusId && s->a->hipDeviceGetPCIBusId(id, (int)cap, s->dev) != 0) id[0] = 0;
}

static const mpt_gpu_backend hip_backend = {
    .name = "hip",
    .label = "HIP",
    .vendor = "AMD",
    .compile = mpt_hiprtc_compile,
    .available = hip_available,
    .init = hip_init,
    .fini = hip_fini,
    .alloc = hip_alloc,
    .upload = hip_upload,
    .download = hip_download,
    .load = hip_load,
    .unload = hip_unload,
    .set_symbol = hip_set_symbol,
    .func_info = hip_func_info,
    .launch = hip_launch,
    .sync = hip_sync,
    .pci_bus_id = hip_pci_bus_id,
};

static int hip_open(mpt_evaluator *ev, mpt_error *err) { return mpt_gpu_eval_open(ev, &hip_backend, err); }

const mpt_evaluator_type mpt_evaluator_hip = {
    .name = "hip",
    .summary = "HIP kernels (CUDA-style source): hiprtc compile for the bound AMD GPU, module API launch, event timing",
    .open = hip_open,
    .evaluate = mpt_gpu_eval_evaluate,
    .close = mpt_gpu_eval_close,
    .options = mpt_gpu_eval_options,
    .ahead = &mpt_gpu_ahead_ops,
};
