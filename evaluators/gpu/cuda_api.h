/* evaluators/gpu/cuda_api.h: the CUDA driver API (libcuda.so.1) and NVRTC (libnvrtc.so.*) loaded at run
 * time with dlopen, as tables of function pointers, so one mptune binary runs on machines with or
 * without CUDA; and the NVRTC compile path (source + defines -> CUBIN/PTX + lowered kernel name).
 * No CUDA header is included: the few types and enum values used are declared here. */
#ifndef MPT_CUDA_API_H
#define MPT_CUDA_API_H
#include <stddef.h>
#include "spaces/sys/error.h"
#include "evaluators/gpu/rtc.h"

typedef int mpt_cu_result;            /* CUresult */
typedef int mpt_cu_device;            /* CUdevice */
typedef unsigned long long mpt_cu_ptr; /* CUdeviceptr */
typedef void *mpt_cu_handle;          /* CUcontext, CUmodule, CUfunction, CUevent, CUstream */

/* CUresult values the evaluator classifies */
enum {
  MPT_CU_SUCCESS = 0,
  MPT_CU_ERROR_INVALID_VALUE = 1,
  MPT_CU_ERROR_OUT_OF_MEMORY = 2,
  MPT_CU_ERROR_NOT_INITIALIZED = 3,
  MPT_CU_ERROR_NO_DEVICE = 100,
  MPT_CU_ERROR_INVALID_DEVICE = 101,
  MPT_CU_ERROR_INVALID_IMAGE = 200,
  MPT_CU_ERROR_NO_BINARY_FOR_GPU = 209,
  MPT_CU_ERROR_INVALID_PTX = 218,
  MPT_CU_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  MPT_CU_ERROR_NOT_FOUND = 500,
  MPT_CU_ERROR_ILLEGAL_ADDRESS = 700,
  MPT_CU_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  MPT_CU_ERROR_LAUNCH_TIMEOUT = 702,
  MPT_CU_ERROR_LAUNCH_FAILED = 719,
};
/* CUdevice_attribute / CUfunction_attribute values used */
enum {
  MPT_CU_DEV_MAX_THREADS_PER_BLOCK = 1,
  MPT_CU_DEV_MAX_SHARED_PER_BLOCK = 8,
  MPT_CU_DEV_MULTIPROCESSOR_COUNT = 16,
  MPT_CU_DEV_CC_MAJOR = 75,
  MPT_CU_DEV_CC_MINOR = 76,
  MPT_CU_DEV_MAX_SHARED_PER_BLOCK_OPTIN = 97,
  MPT_CU_FUNC_MAX_THREADS_PER_BLOCK = 0,
  MPT_CU_FUNC_SHARED_SIZE_BYTES = 1,
  MPT_CU_FUNC_NUM_REGS = 4,
  MPT_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/* The driver API entry points mptune uses (the _v2 symbols where cuda.h maps to them). */
typedef struct mpt_cuda_driver {
  void *lib;
  char path[256];
  mpt_cu_result (*cuInit)(unsigned flags);
  mpt_cu_result (*cuDriverGetVersion)(int *v);
  mpt_cu_result (*cuDeviceGetCount)(int *n);
  mpt_cu_result (*cuDeviceGet)(mpt_cu_device *d, int ordinal);
  mpt_cu_result (*cuDeviceGetName)(char *name, int len, mpt_cu_device d);
  mpt_cu_result (*cuDeviceTotalMem)(size_t *bytes, mpt_cu_device d);
  mpt_cu_result (*cuDeviceGetAttribute)(int *v, int attrib, mpt_cu_device d);
  mpt_cu_result (*cuDeviceGetPCIBusId)(char *id, int len, mpt_cu_device d); /* NULL: not in this driver */
  mpt_cu_result (*cuDevicePrimaryCtxRetain)(mpt_cu_handle *ctx, mpt_cu_device d);
  mpt_cu_result (*cuDevicePrimaryCtxRelease)(mpt_cu_device d);
  mpt_cu_result (*cuDevicePrimaryCtxReset)(mpt_cu_device d);
  mpt_cu_result (*cuCtxSetCurrent)(mpt_cu_handle ctx);
  mpt_cu_result (*cuCtxSynchronize)(void);
  mpt_cu_result (*cuModuleLoadData)(mpt_cu_handle *mod, const void *image);
  mpt_cu_result (*cuModuleUnload)(mpt_cu_handle mod);
  mpt_cu_result (*cuModuleGetFunction)(mpt_cu_handle *f, mpt_cu_handle mod, const char *name);
  mpt_cu_result (*cuModuleGetGlobal)(mpt_cu_ptr *p, size_t *bytes, mpt_cu_handle mod, const char *name);
  mpt_cu_result (*cuFuncGetAttribute)(int *v, int attrib, mpt_cu_handle f);
  mpt_cu_result (*cuFuncSetAttribute)(mpt_cu_handle f, int attrib, int value);
  mpt_cu_result (*cuMemAlloc)(mpt_cu_ptr *p, size_t bytes);
  mpt_cu_result (*cuMemFree)(mpt_cu_ptr p);
  mpt_cu_result (*cuMemcpyHtoD)(mpt_cu_ptr dst, const void *src, size_t bytes);
  mpt_cu_result (*cuMemcpyDtoH)(void *dst, mpt_cu_ptr src, size_t bytes);
  mpt_cu_result (*cuMemsetD8)(mpt_cu_ptr dst, unsigned char v, size_t n);
  mpt_cu_result (*cuLaunchKernel)(mpt_cu_handle f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                  unsigned by, unsigned bz, unsigned shared, mpt_cu_handle stream,
                                  void **params, void **extra);
  mpt_cu_result (*cuEventCreate)(mpt_cu_handle *e, unsigned flags);
  mpt_cu_result (*cuEventRecord)(mpt_cu_handle e, mpt_cu_handle stream);
  mpt_cu_result (*cuEventSynchronize)(mpt_cu_handle e);
  mpt_cu_result (*cuEventElapsedTime)(float *ms, mpt_cu_handle start, mpt_cu_handle end);
  mpt_cu_result (*cuEventDestroy)(mpt_cu_handle e);
  mpt_cu_result (*cuGetErrorName)(mpt_cu_result r, const char **s);
  mpt_cu_result (*cuGetErrorString)(mpt_cu_result r, const char **s);
} mpt_cuda_driver;

/* Loads libcuda.so.1 once per process (MPT_CUDA_DRIVER_LIB overrides the name) and resolves every
 * entry point. MPT_ERR_DEVICE with "no CUDA driver: <dlerror>" when the library is absent. The table
 * lives until the process ends. Does not call cuInit. */
int mpt_cuda_driver_load(const mpt_cuda_driver **out, mpt_error *err);
/* "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"; works without a driver */
const char *mpt_cuda_result_text(const mpt_cuda_driver *d, mpt_cu_result r, char *buf, size_t cap);

typedef struct mpt_nvrtc_api {
  void *lib;
  char path[512];
  char include_dir[512];  /* CUDA include directory passed as --include-path ("" when not found) */
  int version_major, version_minor;
  int (*nvrtcVersion)(int *major, int *minor);
  const char *(*nvrtcGetErrorString)(int r);
  int (*nvrtcCreateProgram)(void **prog, const char *src, const char *name, int n_headers,
                            const char *const *headers, const char *const *include_names);
  int (*nvrtcDestroyProgram)(void **prog);
  int (*nvrtcCompileProgram)(void *prog, int n_opts, const char *const *opts);
  int (*nvrtcGetProgramLogSize)(void *prog, size_t *n);
  int (*nvrtcGetProgramLog)(void *prog, char *log);
  int (*nvrtcGetPTXSize)(void *prog, size_t *n);
  int (*nvrtcGetPTX)(void *prog, char *ptx);
  int (*nvrtcGetCUBINSize)(void *prog, size_t *n);  /* NULL before CUDA 11.1 */
  int (*nvrtcGetCUBIN)(void *prog, char *cubin);
  int (*nvrtcAddNameExpression)(void *prog, const char *expr);
  int (*nvrtcGetLoweredName)(void *prog, const char *expr, const char **lowered);
} mpt_nvrtc_api;

/* Loads NVRTC once per process: $MPT_NVRTC_LIB, then libnvrtc.so, libnvrtc.so.13 … .11.2 on the
 * loader path, then $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64. The include directory
 * is found next to the library (../include with cuda_runtime.h or nvrtc.h) or $CUDA_HOME/include.
 * MPT_ERR_DEVICE "NVRTC not found: ..." when absent. */
int mpt_nvrtc_load(const mpt_nvrtc_api **out, mpt_error *err);

/* Compiles CUDA source with NVRTC for `arch` ("sm_90": CUBIN; "compute_90": PTX). The kernel is found
 * through a name expression (nvrtcAddNameExpression(kernel_name) + nvrtcGetLoweredName), so both
 * extern "C" kernels and C++ (also template instantiations such as "k<float>") work; a kernel name not
 * in the source is a compile error whose log says so. opts are passed as given (e.g. "-Dname=value",
 * "-std=c++11"); --gpu-architecture and --include-path are added. Returns 0 when the compiler ran
 * (res->ok tells whether code was produced; on failure res->log has the messages), <0 when NVRTC
 * cannot be used at all. */
int mpt_nvrtc_compile(const char *source, const char *source_name, const char *kernel_name,
                      const char *arch, const char *const *opts, int n_opts, mpt_rtc_result *res,
                      mpt_error *err);

#endif
