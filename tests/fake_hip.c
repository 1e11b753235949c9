/* tests/fake_hip.c: a stand-in HIP runtime (libamdhip64) for tests/devices_auto_mixed.py, loaded by mptune
 * through MPT_HIP_LIB on a machine without an AMD GPU, as tests/fake_cuda.c stands in for the CUDA driver. It
 * reports one AMD GPU ("Fake AMD GPU", gfx90a, 1024 threads and 64 KiB of shared memory per block) and runs
 * no kernel: the hip evaluator's whole device-server path (device pick, buffers, constant memory, module load,
 * launch, event timing, output check) runs for real, and hiprtc is the real one: its entry points are those of
 * the system's libamdhip64.so.5 (ROCm 5 keeps hiprtc there), so every variant is compiled for gfx90a. The
 * variant's behaviour is the tuning parameter `fmode`, which the kernel compiles into its code object as the
 * text "MPT_FAKE_MODE=<n>;": 0 correct, 4 writes a wrong result, 8 invalid value at launch (not sticky).
 * Timings: 3 + fmode * 10 + (launch count % 3) ms. */
#include <dlfcn.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
typedef struct fake_module { int mode; } fake_module;

static int current_mode;
static long launches;
static char symbols[65536]; /* every __constant__ symbol */

/* the size of a code object: an ELF file (its section headers lie at its end) or a clang offload bundle (its
 * entries' ends); the marker is searched for within it */
static size_t image_size(const void *image) {
  const unsigned char *b = image;
  static const char bundle[] = "__CLANG_OFFLOAD_BUNDLE__";
  if (memcmp(b, bundle, sizeof bundle - 1) == 0) {
    uint64_t n, off, size, id_len, end = 0;
    const unsigned char *p = b + sizeof bundle - 1;
    memcpy(&n, p, 8);
    p += 8;
    for (uint64_t i = 0; i < n && i < 64; i++, p += 24 + id_len) {
      memcpy(&off, p, 8), memcpy(&size, p + 8, 8), memcpy(&id_len, p + 16, 8);
      if (off + size > end) end = off + size;
    }
    return (size_t)end;
  }
  if (memcmp(b, ELFMAG, SELFMAG) != 0) return strlen(image);
  Elf64_Ehdr h;
  memcpy(&h, image, sizeof h);
  return (size_t)h.e_shoff + (size_t)h.e_shnum * h.e_shentsize;
}

static int image_mode(const void *image) {
  const char *p = memmem(image, image_size(image), "MPT_FAKE_MODE=", 14);
  return p ? atoi(p + 14) : 0;
}

hipError_t hipInit(unsigned flags) { return (void)flags, 0; }
hipError_t hipDriverGetVersion(int *v) { return *v = 50221153, 0; }
hipError_t hipRuntimeGetVersion(int *v) { return *v = 50221153, 0; }
hipError_t hipGetDeviceCount(int *n) { return *n = 1, 0; }
hipError_t hipSetDevice(int d) { return d == 0 ? 0 : 101; }
hipError_t hipDeviceGetName(char *name, int len, int d) { return snprintf(name, (size_t)len, "Fake AMD GPU %d", d), 0; }
hipError_t hipDeviceTotalMem(size_t *bytes, int d) { return (void)d, *bytes = (size_t)64 << 30, 0; }
hipError_t hipDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  *v = attr == 56 ? 1024 : attr == 74 ? 65536 : attr == 63 ? 110 : attr == 87 ? 64 : 0;
  return 0;
}
/* hipDeviceProp_t of ROCm 5: gcnArchName at byte 396 */
hipError_t hipGetDeviceProperties(void *prop, int d) {
  (void)d;
  strcpy((char *)prop + 396, "gfx90a:sramecc+:xnack-");
  return 0;
}
hipError_t hipDeviceSynchronize(void) { return 0; }
hipError_t hipDeviceReset(void) { return 0; }
hipError_t hipModuleLoadData(void **module, const void *image) {
  fake_module *m = malloc(sizeof *m);
  if (!m) return 2;
  m->mode = image_mode(image);
  *module = m;
  return 0;
}
hipError_t hipModuleUnload(void *module) { return free(module), 0; }
hipError_t hipModuleGetFunction(void **fn, void *module, const char *name) { return (void)name, *fn = module, 0; }
hipError_t hipModuleGetGlobal(void **p, size_t *bytes, void *module, const char *name) {
  (void)module, (void)name;
  *p = symbols;
  *bytes = sizeof symbols;
  return 0;
}
hipError_t hipFuncGetAttribute(int *v, int attr, void *fn) {
  (void)fn;
  *v = attr == 0 ? 1024 : attr == 4 ? 32 : 0; /* max threads, registers */
  return 0;
}
hipError_t hipMalloc(void **p, size_t bytes) { return (*p = calloc(1, bytes)) ? 0 : 2; }
hipError_t hipFree(void *p) { return free(p), 0; }
hipError_t hipMemcpyHtoD(void *d, void *s, size_t n) { return memcpy(d, s, n), 0; }
hipError_t hipMemcpyDtoH(void *d, void *s, size_t n) { return memcpy(d, s, n), 0; }
hipError_t hipMemset(void *d, int v, size_t n) { return memset(d, v, n), 0; }
hipError_t hipModuleLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                 unsigned shared, void *stream, void **params, void **extra) {
  (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream, (void)extra;
  const fake_module *m = fn;
  current_mode = m->mode;
  launches++;
  if (m->mode == 4) (*(float **)params[0])[0] += 1000.0f; /* the first argument: the output */
  return m->mode == 8 ? 1 : 0;                            /* hipErrorInvalidValue */
}
hipError_t hipEventCreate(void **ev) { return (*ev = malloc(1)) ? 0 : 2; }
hipError_t hipEventRecord(void *ev, void *stream) { return (void)ev, (void)stream, 0; }
hipError_t hipEventSynchronize(void *ev) { return (void)ev, 0; }
hipError_t hipEventElapsedTime(float *ms, void *a, void *b) {
  (void)a, (void)b;
  *ms = (float)(3 + current_mode * 10 + launches % 3);
  return 0;
}
hipError_t hipEventDestroy(void *ev) { return free(ev), 0; }
hipError_t hipGetLastError(void) { return 0; }
const char *hipGetErrorName(hipError_t r) { return r == 1 ? "hipErrorInvalidValue" : r == 2 ? "hipErrorOutOfMemory" : "hipErrorUnknown"; }
const char *hipGetErrorString(hipError_t r) { return (void)r, "reported by the fake HIP runtime"; }

/* hiprtc: the system's, from libamdhip64.so.5 */
static void *real_rtc(const char *sym) {
  static void *lib;
  if (!lib) lib = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
  return lib ? dlsym(lib, sym) : NULL;
}
#define FORWARD(ret, name, params, args, fail)           \
  ret name params {                                      \
    ret(*f) params;                                      \
    void *s = real_rtc(#name);                           \
    if (!s) return fail;                                 \
    memcpy(&f, &s, sizeof s);                            \
    return f args;                                       \
  }
FORWARD(int, hiprtcVersion, (int *major, int *minor), (major, minor), 7)
FORWARD(const char *, hiprtcGetErrorString, (int r), (r), "hiprtc not found")
FORWARD(int, hiprtcCreateProgram, (void **prog, const char *src, const char *name, int n, const char *const *h,
                                   const char *const *names), (prog, src, name, n, h, names), 7)
FORWARD(int, hiprtcDestroyProgram, (void **prog), (prog), 7)
FORWARD(int, hiprtcCompileProgram, (void *prog, int n, const char *const *opts), (prog, n, opts), 7)
FORWARD(int, hiprtcGetProgramLogSize, (void *prog, size_t *n), (prog, n), 7)
FORWARD(int, hiprtcGetProgramLog, (void *prog, char *log), (prog, log), 7)
FORWARD(int, hiprtcGetCodeSize, (void *prog, size_t *n), (prog, n), 7)
FORWARD(int, hiprtcGetCode, (void *prog, char *code), (prog, code), 7)
FORWARD(int, hiprtcAddNameExpression, (void *prog, const char *expr), (prog, expr), 7)
FORWARD(int, hiprtcGetLoweredName, (void *prog, const char *expr, const char **lowered), (prog, expr, lowered), 7)
