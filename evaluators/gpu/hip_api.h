/* evaluators/gpu/hip_api.h: the HIP runtime/module API and hiprtc loaded at run time with dlopen
 * (libamdhip64.so.5 / libamdhip64.so / libamdhip64.so.6; hiprtc lives in libamdhip64 itself in
 * ROCm 5.x and in libhiprtc.so from ROCm 6), as tables of function pointers, and the hiprtc compile
 * path (source + defines -> AMD code object + lowered kernel name). No HIP header is included. */
#ifndef MPT_HIP_API_H
#define MPT_HIP_API_H
#include <stddef.h>
#include "spaces/sys/error.h"
#include "evaluators/gpu/rtc.h"

typedef int mpt_hip_result;   /* hipError_t */
typedef void *mpt_hip_handle; /* hipModule_t, hipFunction_t, hipEvent_t, hipStream_t */

enum {
  MPT_HIP_SUCCESS = 0,
  MPT_HIP_ERROR_INVALID_VALUE = 1,
  MPT_HIP_ERROR_OUT_OF_MEMORY = 2,
  MPT_HIP_ERROR_INVALID_CONFIGURATION = 9,
  MPT_HIP_ERROR_NO_DEVICE = 100,
  MPT_HIP_ERROR_INVALID_DEVICE = 101,
  MPT_HIP_ERROR_INVALID_IMAGE = 200,
  MPT_HIP_ERROR_NO_BINARY_FOR_GPU = 209,
  MPT_HIP_ERROR_NOT_FOUND = 500,
  MPT_HIP_ERROR_ILLEGAL_ADDRESS = 700,
  MPT_HIP_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  MPT_HIP_ERROR_LAUNCH_FAILURE = 719,
};
/* hipDeviceAttribute_t values (ROCm >= 5.0 numbering) and hipFunction_attribute values */
enum {
  MPT_HIP_DEV_CC_MAJOR = 23,
  MPT_HIP_DEV_MAX_THREADS_PER_BLOCK = 56,
  MPT_HIP_DEV_CC_MINOR = 61,
  MPT_HIP_DEV_MULTIPROCESSOR_COUNT = 63,
  MPT_HIP_DEV_MAX_SHARED_PER_BLOCK = 74,
  MPT_HIP_DEV_WARP_SIZE = 87,
  MPT_HIP_FUNC_MAX_THREADS_PER_BLOCK = 0,
  MPT_HIP_FUNC_SHARED_SIZE_BYTES = 1,
  MPT_HIP_FUNC_NUM_REGS = 4,
};

typedef struct mpt_hip_api {
  void *lib;
  void *rtc_lib;   /* library the hiprtc symbols came from (== lib on ROCm 5) */
  char path[256];
  char rtc_path[256];
  int have_rtc;    /* hiprtc entry points resolved */
  mpt_hip_result (*hipInit)(unsigned flags);
  mpt_hip_result (*hipDriverGetVersion)(int *v);
  mpt_hip_result (*hipRuntimeGetVersion)(int *v);
  mpt_hip_result (*hipGetDeviceCount)(int *n);
  mpt_hip_result (*hipSetDevice)(int d);
  mpt_hip_result (*hipDeviceGetName)(char *name, int len, int d);
  mpt_hip_result (*hipDeviceGetPCIBusId)(char *id, int len, int d); /* NULL: not in this runtime */
  mpt_hip_result (*hipDeviceTotalMem)(size_t *bytes, int d);
  mpt_hip_result (*hipDeviceGetAttribute)(int *v, int attr, int d);
  mpt_hip_result (*hipGetDeviceProperties)(void *prop, int d); /* layout varies; see hip_api.c */
  mpt_hip_result (*hipDeviceSynchronize)(void);
  mpt_hip_result (*hipDeviceReset)(void);
  mpt_hip_result (*hipModuleLoadData)(mpt_hip_handle *mod, const void *image);
  mpt_hip_result (*hipModuleUnload)(mpt_hip_handle mod);
  mpt_hip_result (*hipModuleGetFunction)(mpt_hip_handle *f, mpt_hip_handle mod, const char *name);
  mpt_hip_result (*hipModuleGetGlobal)(void **p, size_t *bytes, mpt_hip_handle mod, const char *name);
  mpt_hip_result (*hipFuncGetAttribute)(int *v, int attr, mpt_hip_handle f);
  mpt_hip_result (*hipMalloc)(void **p, size_t bytes);
  mpt_hip_result (*hipFree)(void *p);
  mpt_hip_result (*hipMemcpyHtoD)(void *dst, void *src, size_t bytes);
  mpt_hip_result (*hipMemcpyDtoH)(void *dst, void *src, size_t bytes);
  mpt_hip_result (*hipMemset)(void *dst, int v, size_t bytes);
  mpt_hip_result (*hipModuleLaunchKernel)(mpt_hip_handle f, unsigned gx, unsigned gy, unsigned gz,
                                          unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                          mpt_hip_handle stream, void **params, void **extra);
  mpt_hip_result (*hipEventCreate)(mpt_hip_handle *e);
  mpt_hip_result (*hipEventRecord)(mpt_hip_handle e, mpt_hip_handle stream);
  mpt_hip_result (*hipEventSynchronize)(mpt_hip_handle e);
  mpt_hip_result (*hipEventElapsedTime)(float *ms, mpt_hip_handle start, mpt_hip_handle end);
  mpt_hip_result (*hipEventDestroy)(mpt_hip_handle e);
  mpt_hip_result (*hipGetLastError)(void);
  const char *(*hipGetErrorName)(mpt_hip_result r);
  const char *(*hipGetErrorString)(mpt_hip_result r);
  /* hiprtc */
  int (*hiprtcVersion)(int *major, int *minor);
  const char *(*hiprtcGetErrorString)(int r);
  int (*hiprtcCreateProgram)(void **prog, const char *src, const char *name, int n_headers,
                             const char *const *headers, const char *const *include_names);
  int (*hiprtcDestroyProgram)(void **prog);
  int (*hiprtcCompileProgram)(void *prog, int n_opts, const char *const *opts);
  int (*hiprtcGetProgramLogSize)(void *prog, size_t *n);
  int (*hiprtcGetProgramLog)(void *prog, char *log);
  int (*hiprtcGetCodeSize)(void *prog, size_t *n);
  int (*hiprtcGetCode)(void *prog, char *code);
  int (*hiprtcAddNameExpression)(void *prog, const char *expr);
  int (*hiprtcGetLoweredName)(void *prog, const char *expr, const char **lowered);
} mpt_hip_api;

/* Loads libamdhip64 once per process ($MPT_HIP_LIB, libamdhip64.so.5, libamdhip64.so,
 * libamdhip64.so.6, /opt/rocm/lib/libamdhip64.so) and the hiprtc entry points (from it, else from
 * libhiprtc.so[.6|.5]). MPT_ERR_DEVICE "no HIP runtime: ..." when absent. Does not call hipInit. */
int mpt_hip_load(const mpt_hip_api **out, mpt_error *err);
/* "hipErrorIllegalAddress (an illegal memory access was encountered)" */
const char *mpt_hip_result_text(const mpt_hip_api *a, mpt_hip_result r, char *buf, size_t cap);
/* gcnArchName of device d ("gfx90a:sramecc+:xnack-"), found in hipDeviceProp_t without depending on
 * the struct's layout of one ROCm release. 0 or MPT_ERR_DEVICE. */
int mpt_hip_arch_name(const mpt_hip_api *a, int d, char *buf, size_t cap, mpt_error *err);

/* Compiles CUDA-style source (hiprtc accepts CUDA kernels: threadIdx, __shared__, __constant__, …;
 * it defines __HIPCC_RTC__ and __HIP__) for `arch` ("gfx90a"), adding --offload-arch=ARCH. Kernel
 * lookup through a name expression as for NVRTC. Same return convention as mpt_nvrtc_compile. Runs in
 * the calling process: ROCm 5.2's hiprtc crashes the caller for some targets (gfx1100), so callers
 * that must survive use mpt_rtc_compile_isolated (rtc.h). */
int mpt_hiprtc_compile(const char *source, const char *source_name, const char *kernel_name,
                       const char *arch, const char *const *opts, int n_opts, mpt_rtc_result *res,
                       mpt_error *err);

#endif
