/* evaluators/gpu/gpu_devices.c: GPU enumeration (CUDA driver API, HIP runtime, both loaded at run time)
 * with the *_VISIBLE_DEVICES rules and the round-robin device pick. */
#include "evaluators/gpu/gpu_devices.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "evaluators/gpu/cuda_api.h"
#include "evaluators/gpu/hip_api.h"

int mpt_gpu_pick(int local_rank, int count) {
  if (count <= 0) return -1;
  if (local_rank < 0) local_rank = 0;
  return local_rank % count;
}

/* A visibility list hides everything when it is empty or starts with a negative or non-numeric id
 * (the runtimes stop parsing at the first invalid entry). UUIDs ("GPU-…") are valid entries. */
static int list_hides_all(const char *v) {
  while (*v == ' ') v++;
  if (!*v) return 1;
  if (*v == '-') return 1;
  if (strncmp(v, "GPU-", 4) == 0 || strncmp(v, "MIG-", 4) == 0) return 0;
  return !(*v >= '0' && *v <= '9');
}

/* HIP reads CUDA_VISIBLE_DEVICES when HIP_VISIBLE_DEVICES is not set (ROCm's "HIP environment
 * variables": "HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES: device indices exposed to HIP applications");
 * ROCR_VISIBLE_DEVICES applies beneath both */
const char *mpt_gpu_visibility_hides_all(const char *api) {
  const char *vars[3] = {"CUDA_VISIBLE_DEVICES", NULL, NULL};
  if (strcmp(api, "hip") == 0) {
    vars[0] = "ROCR_VISIBLE_DEVICES";
    vars[1] = getenv("HIP_VISIBLE_DEVICES") ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
  }
  for (int i = 0; vars[i]; i++) {
    const char *v = getenv(vars[i]);
    if (v && list_hides_all(v)) return vars[i];
  }
  return NULL;
}

int mpt_gpu_bind(const mpt_gpu_desc *gpus, int n, int local_rank) {
  int count = 0;
  for (int i = 0; i < n; i++) count += strcmp(gpus[i].api, gpus[0].api) == 0;
  int pick = mpt_gpu_pick(local_rank, count);
  for (int i = 0; i < n && pick >= 0; i++)
    if (strcmp(gpus[i].api, gpus[0].api) == 0 && pick-- == 0) return i;
  return -1;
}

static void copy_str(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

int mpt_gpu_list_cuda_here(mpt_gpu_desc *out, int cap, mpt_error *err) {
  const mpt_cuda_driver *d;
  mpt_error e;
  mpt_error_clear(&e);
  if (mpt_cuda_driver_load(&d, &e))
    return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: %s", e.msg);
  const char *hidden = mpt_gpu_visibility_hides_all("cuda");
  if (hidden)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: %s='%s' hides every device", hidden,
                         getenv(hidden));
  char t[256];
  mpt_cu_result r = d->cuInit(0);
  if (r != MPT_CU_SUCCESS)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: cuInit: %s", mpt_cuda_result_text(d, r, t, sizeof t));
  int n = 0;
  r = d->cuDeviceGetCount(&n);
  if (r != MPT_CU_SUCCESS)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: cuDeviceGetCount: %s",
                         mpt_cuda_result_text(d, r, t, sizeof t));
  if (n <= 0) return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: the driver reports none");
  for (int i = 0; i < n && i < cap; i++) {
    mpt_gpu_desc *g = &out[i];
    memset(g, 0, sizeof *g);
    copy_str(g->vendor, sizeof g->vendor, "NVIDIA");
    copy_str(g->api, sizeof g->api, "cuda");
    g->index = i;
    mpt_cu_device dev;
    if (d->cuDeviceGet(&dev, i) != MPT_CU_SUCCESS) continue;
    if (d->cuDeviceGetName(g->name, (int)sizeof g->name, dev) != MPT_CU_SUCCESS) copy_str(g->name, sizeof g->name, "?");
    int major = 0, minor = 0;
    d->cuDeviceGetAttribute(&major, MPT_CU_DEV_CC_MAJOR, dev);
    d->cuDeviceGetAttribute(&minor, MPT_CU_DEV_CC_MINOR, dev);
    snprintf(g->arch, sizeof g->arch, "sm_%d%d", major, minor);
    size_t bytes = 0;
    if (d->cuDeviceTotalMem(&bytes, dev) == MPT_CU_SUCCESS) g->memory_gib = (double)bytes / (1024.0 * 1024 * 1024);
    d->cuDeviceGetAttribute(&g->multiprocessors, MPT_CU_DEV_MULTIPROCESSOR_COUNT, dev);
    d->cuDeviceGetAttribute(&g->max_threads_per_block, MPT_CU_DEV_MAX_THREADS_PER_BLOCK, dev);
    d->cuDeviceGetAttribute(&g->max_shared_per_block, MPT_CU_DEV_MAX_SHARED_PER_BLOCK, dev);
    int optin = 0; /* beyond 48 KiB a kernel opts in (the cuda evaluator does): the most a block can have */
    if (d->cuDeviceGetAttribute(&optin, MPT_CU_DEV_MAX_SHARED_PER_BLOCK_OPTIN, dev) == MPT_CU_SUCCESS &&
        optin > g->max_shared_per_block)
      g->max_shared_per_block = optin;
  }
  return n;
}

int mpt_gpu_list_hip_here(mpt_gpu_desc *out, int cap, mpt_error *err) {
  const mpt_hip_api *a;
  mpt_error e;
  mpt_error_clear(&e);
  if (mpt_hip_load(&a, &e)) return mpt_error_set(err, MPT_ERR_DEVICE, "no HIP device: %s", e.msg);
  const char *hidden = mpt_gpu_visibility_hides_all("hip");
  if (hidden)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no HIP device: %s='%s' hides every device", hidden,
                         getenv(hidden));
  char t[256];
  int n = 0;
  /* hipInit fails without a GPU (hipErrorInvalidDevice / hipErrorNoDevice); the count says why */
  mpt_hip_result ri = a->hipInit(0);
  mpt_hip_result r = a->hipGetDeviceCount(&n);
  if (r != MPT_HIP_SUCCESS || n <= 0) {
    /* the ROCm runtime needs the kernel driver's /dev/kfd: say so instead of a bare hipErrorNoDevice (a runtime
     * that needs none, such as the stand-in tests/fake_hip.c, answers for itself first) */
    if (access("/dev/kfd", F_OK) != 0)
      return mpt_error_set(err, MPT_ERR_DEVICE, "no HIP device: /dev/kfd is missing (no AMD GPU driver on this machine)");
    if (r == MPT_HIP_SUCCESS) r = ri;
    return mpt_error_set(err, MPT_ERR_DEVICE, "no HIP device: %s",
                         r != MPT_HIP_SUCCESS ? mpt_hip_result_text(a, r, t, sizeof t) : "the runtime reports none");
  }
  for (int i = 0; i < n && i < cap; i++) {
    mpt_gpu_desc *g = &out[i];
    memset(g, 0, sizeof *g);
    copy_str(g->vendor, sizeof g->vendor, "AMD");
    copy_str(g->api, sizeof g->api, "hip");
    g->index = i;
    if (a->hipDeviceGetName(g->name, (int)sizeof g->name, i) != MPT_HIP_SUCCESS || !g->name[0])
      copy_str(g->name, sizeof g->name, "AMD GPU");
    char full[256];
    if (mpt_hip_arch_name(a, i, full, sizeof full, &e) == 0) {
      full[strcspn(full, ":")] = 0; /* "gfx90a:sramecc+:xnack-" -> "gfx90a" */
      copy_str(g->arch, sizeof g->arch, full);
    } else {
      copy_str(g->arch, sizeof g->arch, "gfx?");
    }
    size_t bytes = 0;
    if (a->hipDeviceTotalMem(&bytes, i) == MPT_HIP_SUCCESS) g->memory_gib = (double)bytes / (1024.0 * 1024 * 1024);
    a->hipDeviceGetAttribute(&g->multiprocessors, MPT_HIP_DEV_MULTIPROCESSOR_COUNT, i);
    a->hipDeviceGetAttribute(&g->max_threads_per_block, MPT_HIP_DEV_MAX_THREADS_PER_BLOCK, i);
    a->hipDeviceGetAttribute(&g->max_shared_per_block, MPT_HIP_DEV_MAX_SHARED_PER_BLOCK, i);
  }
  return n;
}

int mpt_gpu_list_all(mpt_gpu_desc *out, int cap, char *why, size_t why_cap) {
  mpt_error e;
  int total = 0;
  if (why && why_cap) why[0] = 0;
  mpt_error_clear(&e);
  int n = mpt_gpu_list_cuda(out, cap, &e);
  if (n < 0) {
    if (why && why_cap) snprintf(why + strlen(why), why_cap - strlen(why), "CUDA: %s\n", e.msg);
  } else {
    total += n < cap ? n : cap;
  }
  mpt_error_clear(&e);
  n = mpt_gpu_list_hip(out + total, cap - total, &e);
  if (n < 0) {
    if (why && why_cap) snprintf(why + strlen(why), why_cap - strlen(why), "HIP: %s\n", e.msg);
  } else {
    total += n < cap - total ? n : cap - total;
  }
  return total;
}
