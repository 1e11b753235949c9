/* evaluators/gpu/hip_api.c: run-time loading (dlopen) of the HIP runtime/module API and hiprtc, the
 * layout-independent gcnArchName query, and the hiprtc compile path used by the hip evaluator and the
 * GPU compile tests. */
#include "evaluators/gpu/hip_api.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "spaces/sys/clock.h"

static mpt_hip_api g_hip;
static int g_hip_state; /* 0 not tried, 1 loaded, -1 failed */
static char g_hip_msg[1024];

#define RESOLVE(lib, field, sym, required)                                                           \
  do {                                                                                               \
    void *sym_ = dlsym(lib, sym);                                                                    \
    memcpy(&a->field, &sym_, sizeof sym_);                                                           \
    if (!sym_ && (required)) {                                                                       \
      snprintf(missing, sizeof missing, "%s", sym);                                                  \
      goto fail;                                                                                     \
    }                                                                                                \
  } while (0)

static int resolve_rtc(mpt_hip_api *a, void *lib) {
  static const char *syms[] = {"hiprtcVersion", "hiprtcGetErrorString", "hiprtcCreateProgram",
                               "hiprtcDestroyProgram", "hiprtcCompileProgram", "hiprtcGetProgramLogSize",
                               "hiprtcGetProgramLog", "hiprtcGetCodeSize", "hiprtcGetCode",
                               "hiprtcAddNameExpression", "hiprtcGetLoweredName"};
  void *p[11];
  for (int i = 0; i < 11; i++)
    if (!(p[i] = dlsym(lib, syms[i]))) return 0;
  memcpy(&a->hiprtcVersion, &p[0], sizeof p[0]);
  memcpy(&a->hiprtcGetErrorString, &p[1], sizeof p[1]);
  memcpy(&a->hiprtcCreateProgram, &p[2], sizeof p[2]);
  memcpy(&a->hiprtcDestroyProgram, &p[3], sizeof p[3]);
  memcpy(&a->hiprtcCompileProgram, &p[4], sizeof p[4]);
  memcpy(&a->hiprtcGetProgramLogSize, &p[5], sizeof p[5]);
  memcpy(&a->hiprtcGetProgramLog, &p[6], sizeof p[6]);
  memcpy(&a->hiprtcGetCodeSize, &p[7], sizeof p[7]);
  memcpy(&a->hiprtcGetCode, &p[8], sizeof p[8]);
  memcpy(&a->hiprtcAddNameExpression, &p[9], sizeof p[9]);
  memcpy(&a->hiprtcGetLoweredName, &p[10], sizeof p[10]);
  a->rtc_lib = lib;
  a->have_rtc = 1;
  return 1;
}

int mpt_hip_load(const mpt_hip_api **out, mpt_error *err) {
  if (g_hip_state == 1) {
    *out = &g_hip;
    return 0;
  }
  if (g_hip_state == -1) return mpt_error_set(err, MPT_ERR_DEVICE, "%s", g_hip_msg);
  const char *names[8];
  int n = 0;
  const char *env = getenv("MPT_HIP_LIB");
  if (env && *env) names[n++] = env;
  names[n++] = "libamdhip64.so.5";
  names[n++] = "libamdhip64.so";
  names[n++] = "libamdhip64.so.6";
  names[n++] = "/opt/rocm/lib/libamdhip64.so";
  void *lib = NULL;
  char firsterr[400] = "";
  mpt_hip_api *a = &g_hip;
  memset(a, 0, sizeof *a);
  for (int i = 0; i < n && !lib; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib && !firsterr[0]) {
      const char *e = dlerror();
      snprintf(firsterr, sizeof firsterr, "%s", e ? e : names[i]);
    }
    if (lib) snprintf(a->path, sizeof a->path, "%s", names[i]);
  }
  if (!lib) {
    snprintf(g_hip_msg, sizeof g_hip_msg, "no HIP runtime: %s", firsterr);
    g_hip_state = -1;
    return mpt_error_set(err, MPT_ERR_DEVICE, "%s", g_hip_msg);
  }
  char missing[128] = "";
  a->lib = lib;
  RESOLVE(lib, hipInit, "hipInit", 1);
  RESOLVE(lib, hipDriverGetVersion, "hipDriverGetVersion", 1);
  RESOLVE(lib, hipRuntimeGetVersion, "hipRuntimeGetVersion", 1);
  RESOLVE(lib, hipGetDeviceCount, "hipGetDeviceCount", 1);
  RESOLVE(lib, hipSetDevice, "hipSetDevice", 1);
  RESOLVE(lib, hipDeviceGetName, "hipDeviceGetName", 1);
  RESOLVE(lib, hipDeviceGetPCIBusId, "hipDeviceGetPCIBusId", 0);
  RESOLVE(lib, hipDeviceTotalMem, "hipDeviceTotalMem", 1);
  RESOLVE(lib, hipDeviceGetAttribute, "hipDeviceGetAttribute", 1);
  /* the unversioned symbol keeps the ROCm 5 (R0000) layout in ROCm 6 as well */
  RESOLVE(lib, hipGetDeviceProperties, "hipGetDeviceProperties", 1);
  RESOLVE(lib, hipDeviceSynchronize, "hipDeviceSynchronize", 1);
  RESOLVE(lib, hipDeviceReset, "hipDeviceReset", 1);
  RESOLVE(lib, hipModuleLoadData, "hipModuleLoadData", 1);
  RESOLVE(lib, hipModuleUnload, "hipModuleUnload", 1);
  RESOLVE(lib, hipModuleGetFunction, "hipModuleGetFunction", 1);
  RESOLVE(lib, hipModuleGetGlobal, "hipModuleGetGlobal", 1);
  RESOLVE(lib, hipFuncGetAttribute, "hipFuncGetAttribute", 0);
  RESOLVE(lib, hipMalloc, "hipMalloc", 1);
  RESOLVE(lib, hipFree, "hipFree", 1);
  RESOLVE(lib, hipMemcpyHtoD, "hipMemcpyHtoD", 1);
  RESOLVE(lib, hipMemcpyDtoH, "hipMemcpyDtoH", 1);
  RESOLVE(lib, hipMemset, "hipMemset", 1);
  RESOLVE(lib, hipModuleLaunchKernel, "hipModuleLaunchKernel", 1);
  RESOLVE(lib, hipEventCreate, "hipEventCreate", 1);
  RESOLVE(lib, hipEventRecord, "hipEventRecord", 1);
  RESOLVE(lib, hipEventSynchronize, "hipEventSynchronize", 1);
  RESOLVE(lib, hipEventElapsedTime, "hipEventElapsedTime", 1);
  RESOLVE(lib, hipEventDestroy, "hipEventDestroy", 1);
  RESOLVE(lib, hipGetLastError, "hipGetLastError", 1);
  RESOLVE(lib, hipGetErrorName, "hipGetErrorName", 1);
  RESOLVE(lib, hipGetErrorString, "hipGetErrorString", 1);
  if (!resolve_rtc(a, lib)) {
    static const char *rtcs[] = {"libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5", "/opt/rocm/lib/libhiprtc.so"};
    for (int i = 0; i < 4 && !a->have_rtc; i++) {
      void *r = dlopen(rtcs[i], RTLD_NOW | RTLD_LOCAL);
      if (r && resolve_rtc(a, r))
        snprintf(a->rtc_path, sizeof a->rtc_path, "%s", rtcs[i]);
      else if (r)
        dlclose(r);
    }
  } else {
    snprintf(a->rtc_path, sizeof a->rtc_path, "%s", a->path);
  }
  g_hip_state = 1;
  *out = a;
  return 0;
fail:
  snprintf(g_hip_msg, sizeof g_hip_msg, "HIP runtime %s lacks %s", a->path, missing);
  dlclose(lib);
  memset(a, 0, sizeof *a);
  g_hip_state = -1;
  return mpt_error_set(err, MPT_ERR_DEVICE, "%s", g_hip_msg);
}

const char *mpt_hip_result_text(const mpt_hip_api *a, mpt_hip_result r, char *buf, size_t cap) {
  const char *name = a && a->hipGetErrorName ? a->hipGetErrorName(r) : NULL;
  const char *str = a && a->hipGetErrorString ? a->hipGetErrorString(r) : NULL;
  if (name && str && strcmp(name, str) != 0)
    snprintf(buf, cap, "%s (%s)", name, str);
  else if (name)
    snprintf(buf, cap, "%s", name);
  else
    snprintf(buf, cap, "HIP error %d", r);
  return buf;
}

/* hipDeviceProp_t changed layout between releases (gcnArchName is at byte 396 in ROCm 5.x). The
 * properties are written into a generous zeroed buffer; the known offset is tried first, then the
 * buffer is scanned for the one "gfx…" string it holds. */
int mpt_hip_arch_name(const mpt_hip_api *a, int d, char *buf, size_t cap, mpt_error *err) {
  enum { PROP_BYTES = 16384, ROCM5_OFFSET = 396 };
  unsigned char *prop = calloc(1, PROP_BYTES);
  if (!prop) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  mpt_hip_result r = a->hipGetDeviceProperties(prop, d);
  if (r != MPT_HIP_SUCCESS) {
    char t[256];
    free(prop);
    return mpt_error_set(err, MPT_ERR_DEVICE, "hipGetDeviceProperties(%d): %s", d,
                         mpt_hip_result_text(a, r, t, sizeof t));
  }
  const char *found = NULL;
  if (memcmp(prop + ROCM5_OFFSET, "gfx", 3) == 0) found = (const char *)prop + ROCM5_OFFSET;
  for (size_t i = 0; !found && i + 8 < PROP_BYTES; i++) {
    if (prop[i] == 'g' && memcmp(prop + i, "gfx", 3) == 0 && (i == 0 || prop[i - 1] == 0) &&
        prop[i + 3] >= '0' && prop[i + 3] <= '9')
      found = (const char *)prop + i;
  }
  if (!found) {
    free(prop);
    return mpt_error_set(err, MPT_ERR_DEVICE, "device %d: no gcnArchName in hipGetDeviceProperties", d);
  }
  size_t len = strnlen(found, 255);
  if (len >= cap) len = cap - 1;
  memcpy(buf, found, len);
  buf[len] = 0;
  free(prop);
  return 0;
}

static char *read_log(const mpt_hip_api *a, void *prog) {
  size_t n = 0;
  if (a->hiprtcGetProgramLogSize(prog, &n) != 0) n = 0;
  char *log = calloc(n + 1, 1);
  if (!log) return NULL;
  if (n > 0 && a->hiprtcGetProgramLog(prog, log) != 0) log[0] = 0;
  log[n] = 0;
  return log;
}

int mpt_hiprtc_compile(const char *source, const char *source_name, const char *kernel_name,
                       const char *arch, const char *const *opts, int n_opts, mpt_rtc_result *res,
                       mpt_error *err) {
  memset(res, 0, sizeof *res);
  const mpt_hip_api *a;
  int rc = mpt_hip_load(&a, err);
  if (rc) return rc;
  if (!a->have_rtc)
    return mpt_error_set(err, MPT_ERR_DEVICE, "hiprtc not found (neither in %s nor in libhiprtc.so)", a->path);
  if (!arch || strncmp(arch, "gfx", 3) != 0)
    return mpt_error_set(err, MPT_ERR_VALUE, "hiprtc: architecture '%s' is not gfxXXX", arch ? arch : "(null)");
  char arch_opt[96];
  snprintf(arch_opt, sizeof arch_opt, "--offload-arch=%s", arch);
  const char **all = calloc((size_t)n_opts + 2, sizeof *all);
  if (!all) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int k = 0;
  all[k++] = arch_opt;
  for (int i = 0; i < n_opts; i++) all[k++] = opts[i];

  double t0 = mpt_clock_mono_ms();
  void *prog = NULL;
  int r = a->hiprtcCreateProgram(&prog, source, source_name ? source_name : "kernel.cu", 0, NULL, NULL);
  if (r != 0) {
    free(all);
    return mpt_error_set(err, MPT_ERR_INTERNAL, "hiprtcCreateProgram: %s", a->hiprtcGetErrorString(r));
  }
  if (kernel_name && *kernel_name) {
    r = a->hiprtcAddNameExpression(prog, kernel_name);
    if (r != 0) {
      a->hiprtcDestroyProgram(&prog);
      free(all);
      return mpt_error_set(err, MPT_ERR_INTERNAL, "hiprtcAddNameExpression(%s): %s", kernel_name,
                           a->hiprtcGetErrorString(r));
    }
  }
  r = a->hiprtcCompileProgram(prog, k, all);
  free(all);
  res->log = read_log(a, prog);
  for (size_t n = res->log ? strlen(res->log) : 0; n > 0 && (res->log[n - 1] == '\n' || res->log[n - 1] == ' '); n--)
    res->log[n - 1] = 0; /* the log's last newline: the message goes on after it */
  if (r == 5) { /* HIPRTC_ERROR_INVALID_OPTION: the same options for every variant (the setup's error) */
    rc = mpt_error_set(err, MPT_ERR_VALUE, "hiprtc rejects its options (%s): %s", arch_opt,
                       res->log && res->log[0] ? res->log : a->hiprtcGetErrorString(r));
    a->hiprtcDestroyProgram(&prog);
    mpt_rtc_result_free(res);
    return rc;
  }
  if (r != 0) {
    if (!res->log || !res->log[0]) {
      free(res->log);
      res->log = strdup(a->hiprtcGetErrorString(r));
    }
    res->compile_ms = mpt_clock_mono_ms() - t0;
    a->hiprtcDestroyProgram(&prog);
    return 0;
  }
  size_t n = 0;
  int gr = a->hiprtcGetCodeSize(prog, &n);
  if (gr == 0 && n > 0) {
    res->code = malloc(n);
    if (res->code) gr = a->hiprtcGetCode(prog, res->code);
  }
  if (gr != 0 || !res->code || n == 0) {
    a->hiprtcDestroyProgram(&prog);
    mpt_rtc_result_free(res);
    return mpt_error_set(err, MPT_ERR_INTERNAL, "hiprtc produced no code object for %s", arch);
  }
  res->code_size = n;
  if (kernel_name && *kernel_name) {
    const char *low = NULL;
    if (a->hiprtcGetLoweredName(prog, kernel_name, &low) == 0 && low) res->lowered = strdup(low);
  }
  if (!res->lowered) res->lowered = strdup(kernel_name ? kernel_name : "");
  res->ok = 1;
  res->compile_ms = mpt_clock_mono_ms() - t0;
  a->hiprtcDestroyProgram(&prog);
  return 0;
}
