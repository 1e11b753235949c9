/* evaluators/gpu/cuda_api.c: run-time loading (dlopen) of the CUDA driver API and NVRTC, and the NVRTC
 * compile path used by the cuda evaluator and the GPU compile tests. */
#include "evaluators/gpu/cuda_api.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "spaces/sys/clock.h"

/* ---- driver API ---------------------------------------------------------------------------- */

static mpt_cuda_driver g_drv;
static int g_drv_state; /* 0 not tried, 1 loaded, -1 failed */
static char g_drv_msg[512];

#define RESOLVE(lib, tbl, field, sym, required)                                                      \
  do {                                                                                               \
    void *sym_ = dlsym(lib, sym);                                                                    \
    memcpy(&(tbl)->field, &sym_, sizeof sym_);                                                       \
    if (!(tbl)->field && (required)) {                                                               \
      snprintf(missing, sizeof missing, "%s", sym);                                                  \
      goto fail;                                                                                     \
    }                                                                                                \
  } while (0)

/* the _v2 entry point when the driver has it, else the original (required): CUDA 12.8+ drivers add _v2 to some,
 * older ones only have the original */
#define RESOLVE_V2(lib, tbl, field, sym)                                                             \
  do {                                                                                               \
    RESOLVE(lib, tbl, field, sym "_v2", 0);                                                          \
    if (!(tbl)->field) RESOLVE(lib, tbl, field, sym, 1);                                             \
  } while (0)

int mpt_cuda_driver_load(const mpt_cuda_driver **out, mpt_error *err) {
  if (g_drv_state == 1) {
    *out = &g_drv;
    return 0;
  }
  if (g_drv_state == -1) return mpt_error_set(err, MPT_ERR_DEVICE, "%s", g_drv_msg);
  char missing[128] = "";
  const char *name = getenv("MPT_CUDA_DRIVER_LIB");
  if (!name || !*name) name = "libcuda.so.1";
  void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(g_drv_msg, sizeof g_drv_msg, "no CUDA driver: %s", e ? e : name);
    g_drv_state = -1;
    return mpt_error_set(err, MPT_ERR_DEVICE, "%s", g_drv_msg);
  }
  mpt_cuda_driver *d = &g_drv;
  memset(d, 0, sizeof *d);
  d->lib = lib;
  snprintf(d->path, sizeof d->path, "%s", name);
  RESOLVE(lib, d, cuInit, "cuInit", 1);
  RESOLVE(lib, d, cuDriverGetVersion, "cuDriverGetVersion", 1);
  RESOLVE(lib, d, cuDeviceGetCount, "cuDeviceGetCount", 1);
  RESOLVE(lib, d, cuDeviceGet, "cuDeviceGet", 1);
  RESOLVE(lib, d, cuDeviceGetName, "cuDeviceGetName", 1);
  RESOLVE(lib, d, cuDeviceTotalMem, "cuDeviceTotalMem_v2", 1);
  RESOLVE(lib, d, cuDeviceGetAttribute, "cuDeviceGetAttribute", 1);
  RESOLVE(lib, d, cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", 0);
  RESOLVE(lib, d, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 1);
  RESOLVE_V2(lib, d, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease");
  RESOLVE_V2(lib, d, cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset");
  RESOLVE(lib, d, cuCtxSetCurrent, "cuCtxSetCurrent", 1);
  RESOLVE(lib, d, cuCtxSynchronize, "cuCtxSynchronize", 1);
  RESOLVE(lib, d, cuModuleLoadData, "cuModuleLoadData", 1);
  RESOLVE(lib, d, cuModuleUnload, "cuModuleUnload", 1);
  RESOLVE(lib, d, cuModuleGetFunction, "cuModuleGetFunction", 1);
  RESOLVE(lib, d, cuModuleGetGlobal, "cuModuleGetGlobal_v2", 1);
  RESOLVE(lib, d, cuFuncGetAttribute, "cuFuncGetAttribute", 1);
  RESOLVE(lib, d, cuFuncSetAttribute, "cuFuncSetAttribute", 0);
  RESOLVE(lib, d, cuMemAlloc, "cuMemAlloc_v2", 1);
  RESOLVE(lib, d, cuMemFree, "cuMemFree_v2", 1);
  RESOLVE(lib, d, cuMemcpyHtoD, "cuMemcpyHtoD_v2", 1);
  RESOLVE(lib, d, cuMemcpyDtoH, "cuMemcpyDtoH_v2", 1);
  RESOLVE(lib, d, cuMemsetD8, "cuMemsetD8_v2", 1);
  RESOLVE(lib, d, cuLaunchKernel, "cuLaunchKernel", 1);
  RESOLVE(lib, d, cuEventCreate, "cuEventCreate", 1);
  RESOLVE(lib, d, cuEventRecord, "cuEventRecord", 1);
  RESOLVE(lib, d, cuEventSynchronize, "cuEventSynchronize", 1);
  RESOLVE_V2(lib, d, cuEventElapsedTime, "cuEventElapsedTime");
  RESOLVE_V2(lib, d, cuEventDestroy, "cuEventDestroy");
  RESOLVE(lib, d, cuGetErrorName, "cuGetErrorName", 1);
  RESOLVE(lib, d, cuGetErrorString, "cuGetErrorString", 1);
  g_drv_state = 1;
  *out = d;
  return 0;
fail:
  snprintf(g_drv_msg, sizeof g_drv_msg, "CUDA driver %s lacks %s (driver too old?)", name, missing);
  dlclose(lib);
  memset(d, 0, sizeof *d);
  g_drv_state = -1;
  return mpt_error_set(err, MPT_ERR_DEVICE, "%s", g_drv_msg);
}

const char *mpt_cuda_result_text(const mpt_cuda_driver *d, mpt_cu_result r, char *buf, size_t cap) {
  const char *name = NULL, *str = NULL;
  if (d && d->cuGetErrorName) d->cuGetErrorName(r, &name);
  if (d && d->cuGetErrorString) d->cuGetErrorString(r, &str);
  if (name && str) {
    snprintf(buf, cap, "%s (%s)", name, str);
    return buf;
  }
  /* the driver could not name it (e.g. the stub library): the codes met before a device is usable */
  static const struct { int code; const char *text; } known[] = {
      {MPT_CU_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
      {34, "CUDA_ERROR_STUB_LIBRARY (the toolkit's driver stub was loaded, not a real driver)"},
      {35, "CUDA_ERROR_INSUFFICIENT_DRIVER (driver older than needed)"},
      {MPT_CU_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
      {MPT_CU_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
      {999, "CUDA_ERROR_UNKNOWN"},
  };
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (known[i].code == r) {
      snprintf(buf, cap, "%s", known[i].text);
      return buf;
    }
  snprintf(buf, cap, "CUDA error %d", r);
  return buf;
}

/* ---- NVRTC ----------------------------------------------------------------------------------- */

static mpt_nvrtc_api g_rtc;
static int g_rtc_state;
static char g_rtc_msg[1024];

static int file_exists(const char *p) { return access(p, R_OK) == 0; }

static void find_include_dir(mpt_nvrtc_api *a) {
  char cand[4][512];
  int n = 0;
  Dl_info info;
  void *fn;
  memcpy(&fn, &a->nvrtcVersion, sizeof fn);
  if (fn && dladdr(fn, &info) && info.dli_fname) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s", info.dli_fname);
    char *slash = strrchr(dir, '/');
    if (slash) {
      *slash = 0;
      snprintf(a->path, sizeof a->path, "%s/%s", dir, slash + 1);
      snprintf(cand[n++], 512, "%s/../include", dir);
      snprintf(cand[n++], 512, "%s/../../include", dir); /* lib64/stubs or targets/<arch>/lib */
    }
  }
  const char *home = getenv("CUDA_HOME");
  if (!home || !*home) home = getenv("CUDA_PATH");
  if (home && *home) snprintf(cand[n++], 512, "%s/include", home);
  snprintf(cand[n++], 512, "/usr/local/cuda/include");
  for (int i = 0; i < n; i++) {
    char probe[600];
    snprintf(probe, sizeof probe, "%s/nvrtc.h", cand[i]);
    if (file_exists(probe)) {
      char *rp = realpath(cand[i], NULL);
      snprintf(a->include_dir, sizeof a->include_dir, "%s", rp ? rp : cand[i]);
      free(rp);
      return;
    }
  }
  a->include_dir[0] = 0;
}

int mpt_nvrtc_load(const mpt_nvrtc_api **out, mpt_error *err) {
  if (g_rtc_state == 1) {
    *out = &g_rtc;
    return 0;
  }
  if (g_rtc_state == -1) return mpt_error_set(err, MPT_ERR_DEVICE, "%s", g_rtc_msg);
  const char *names[16];
  int n = 0;
  const char *env = getenv("MPT_NVRTC_LIB");
  if (env && *env) names[n++] = env;
  static const char *plain[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};
  for (int i = 0; i < 4; i++) names[n++] = plain[i];
  char homes[3][512];
  int nh = 0;
  const char *h1 = getenv("CUDA_HOME"), *h2 = getenv("CUDA_PATH");
  if (h1 && *h1) snprintf(homes[nh++], 512, "%s/lib64/libnvrtc.so", h1);
  if (h2 && *h2) snprintf(homes[nh++], 512, "%s/lib64/libnvrtc.so", h2);
  snprintf(homes[nh++], 512, "/usr/local/cuda/lib64/libnvrtc.so");
  for (int i = 0; i < nh; i++) names[n++] = homes[i];
  void *lib = NULL;
  char firsterr[400] = "";
  for (int i = 0; i < n && !lib; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib && !firsterr[0]) {
      const char *e = dlerror();
      snprintf(firsterr, sizeof firsterr, "%s", e ? e : names[i]);
    }
    if (lib) snprintf(g_rtc.path, sizeof g_rtc.path, "%s", names[i]);
  }
  if (!lib) {
    snprintf(g_rtc_msg, sizeof g_rtc_msg,
             "NVRTC not found (tried libnvrtc.so[.13|.12|.11.2], $CUDA_HOME/lib64, /usr/local/cuda/lib64; "
             "set MPT_NVRTC_LIB): %s", firsterr);
    g_rtc_state = -1;
    return mpt_error_set(err, MPT_ERR_DEVICE, "%s", g_rtc_msg);
  }
  mpt_nvrtc_api *a = &g_rtc;
  char missing[128] = "";
  a->lib = lib;
  RESOLVE(lib, a, nvrtcVersion, "nvrtcVersion", 1);
  RESOLVE(lib, a, nvrtcGetErrorString, "nvrtcGetErrorString", 1);
  RESOLVE(lib, a, nvrtcCreateProgram, "nvrtcCreateProgram", 1);
  RESOLVE(lib, a, nvrtcDestroyProgram, "nvrtcDestroyProgram", 1);
  RESOLVE(lib, a, nvrtcCompileProgram, "nvrtcCompileProgram", 1);
  RESOLVE(lib, a, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", 1);
  RESOLVE(lib, a, nvrtcGetProgramLog, "nvrtcGetProgramLog", 1);
  RESOLVE(lib, a, nvrtcGetPTXSize, "nvrtcGetPTXSize", 1);
  RESOLVE(lib, a, nvrtcGetPTX, "nvrtcGetPTX", 1);
  RESOLVE(lib, a, nvrtcGetCUBINSize, "nvrtcGetCUBINSize", 0);
  RESOLVE(lib, a, nvrtcGetCUBIN, "nvrtcGetCUBIN", 0);
  RESOLVE(lib, a, nvrtcAddNameExpression, "nvrtcAddNameExpression", 1);
  RESOLVE(lib, a, nvrtcGetLoweredName, "nvrtcGetLoweredName", 1);
  a->nvrtcVersion(&a->version_major, &a->version_minor);
  find_include_dir(a);
  g_rtc_state = 1;
  *out = a;
  return 0;
fail:
  snprintf(g_rtc_msg, sizeof g_rtc_msg, "NVRTC library %s lacks %s", g_rtc.path, missing);
  dlclose(lib);
  memset(a, 0, sizeof *a);
  g_rtc_state = -1;
  return mpt_error_set(err, MPT_ERR_DEVICE, "%s", g_rtc_msg);
}

static char *read_log(const mpt_nvrtc_api *a, void *prog) {
  size_t n = 0;
  if (a->nvrtcGetProgramLogSize(prog, &n) != 0) n = 0;
  char *log = calloc(n + 1, 1);
  if (!log) return NULL;
  if (n > 0 && a->nvrtcGetProgramLog(prog, log) != 0) log[0] = 0;
  log[n] = 0;
  return log;
}

int mpt_nvrtc_compile(const char *source, const char *source_name, const char *kernel_name,
                      const char *arch, const char *const *opts, int n_opts, mpt_rtc_result *res,
                      mpt_error *err) {
  memset(res, 0, sizeof *res);
  const mpt_nvrtc_api *a;
  int rc = mpt_nvrtc_load(&a, err);
  if (rc) return rc;
  if (!arch || (strncmp(arch, "sm_", 3) != 0 && strncmp(arch, "compute_", 8) != 0))
    return mpt_error_set(err, MPT_ERR_VALUE, "NVRTC: architecture '%s' is not sm_XX or compute_XX",
                         arch ? arch : "(null)");
  const int want_ptx = strncmp(arch, "compute_", 8) == 0 || !a->nvrtcGetCUBIN;
  char arch_opt[64], inc_opt[600];
  /* without nvrtcGetCUBIN (CUDA < 11.1) compile for the virtual architecture and load PTX */
  if (strncmp(arch, "sm_", 3) == 0 && want_ptx)
    snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=compute_%s", arch + 3);
  else
    snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s", arch);
  const char **all = calloc((size_t)n_opts + 3, sizeof *all);
  if (!all) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int k = 0;
  all[k++] = arch_opt;
  if (a->include_dir[0]) {
    snprintf(inc_opt, sizeof inc_opt, "--include-path=%s", a->include_dir);
    all[k++] = inc_opt;
  }
  for (int i = 0; i < n_opts; i++) all[k++] = opts[i];

  double t0 = mpt_clock_mono_ms();
  void *prog = NULL;
  int r = a->nvrtcCreateProgram(&prog, source, source_name ? source_name : "kernel.cu", 0, NULL, NULL);
  if (r != 0) {
    free(all);
    return mpt_error_set(err, MPT_ERR_INTERNAL, "nvrtcCreateProgram: %s", a->nvrtcGetErrorString(r));
  }
  if (kernel_name && *kernel_name) {
    r = a->nvrtcAddNameExpression(prog, kernel_name);
    if (r != 0) {
      a->nvrtcDestroyProgram(&prog);
      free(all);
      return mpt_error_set(err, MPT_ERR_INTERNAL, "nvrtcAddNameExpression(%s): %s", kernel_name,
                           a->nvrtcGetErrorString(r));
    }
  }
  r = a->nvrtcCompileProgram(prog, k, all);
  free(all);
  res->log = read_log(a, prog);
  for (size_t n = res->log ? strlen(res->log) : 0; n > 0 && (res->log[n - 1] == '\n' || res->log[n - 1] == ' '); n--)
    res->log[n - 1] = 0; /* the log's last newline: the message goes on after it */
  if (r == 5) { /* NVRTC_ERROR_INVALID_OPTION: the options (architecture, CompilerOptions) are the same for
                 * every variant, so no variant compiles: an error of the setup, not of this variant */
    rc = mpt_error_set(err, MPT_ERR_VALUE, "NVRTC rejects its options (%s): %s", arch_opt,
                       res->log && res->log[0] ? res->log : a->nvrtcGetErrorString(r));
    a->nvrtcDestroyProgram(&prog);
    mpt_rtc_result_free(res);
    return rc;
  }
  if (r != 0) {
    /* NVRTC_ERROR_COMPILATION (6) is the variant's fault: a compile error */
    if (!res->log || !res->log[0]) {
      free(res->log);
      res->log = strdup(a->nvrtcGetErrorString(r));
    }
    res->ok = 0;
    res->compile_ms = mpt_clock_mono_ms() - t0;
    a->nvrtcDestroyProgram(&prog);
    return 0;
  }
  size_t n = 0;
  int gr = want_ptx ? a->nvrtcGetPTXSize(prog, &n) : a->nvrtcGetCUBINSize(prog, &n);
  if (gr == 0 && n > 0) {
    res->code = malloc(n);
    if (res->code) gr = want_ptx ? a->nvrtcGetPTX(prog, res->code) : a->nvrtcGetCUBIN(prog, res->code);
  }
  if (gr != 0 || !res->code || n == 0) {
    a->nvrtcDestroyProgram(&prog);
    mpt_rtc_result_free(res);
    return mpt_error_set(err, MPT_ERR_INTERNAL, "NVRTC produced no %s for %s", want_ptx ? "PTX" : "CUBIN", arch);
  }
  res->code_size = n;
  res->is_ptx = want_ptx;
  if (kernel_name && *kernel_name) {
    const char *low = NULL;
    if (a->nvrtcGetLoweredName(prog, kernel_name, &low) == 0 && low) res->lowered = strdup(low);
  }
  if (!res->lowered) res->lowered = strdup(kernel_name ? kernel_name : "");
  res->ok = 1;
  res->compile_ms = mpt_clock_mono_ms() - t0;
  a->nvrtcDestroyProgram(&prog);
  return 0;
}
