/* tests/fake_cuda.c: a stand-in CUDA driver (libcuda) for tests/gpu_fake_driver.py, loaded by mptune
 * through MPT_CUDA_DRIVER_LIB on a machine without a GPU. It runs no kernel: it acts out, per variant,
 * what a real driver reports, so that the cuda evaluator's whole device-server path (context, buffers,
 * constant memory, module load, launch, event timing, output check, failure classification, a fresh
 * server after a sticky error) runs for real. The variant's behaviour is the tuning parameter `fmode`,
 * which the kernel source compiles (with the real NVRTC) into its image as the text "MPT_FAKE_MODE=<n>;":
 *   0 correct          1 illegal address at launch (sticky)   2 illegal address at synchronize (sticky)
 *   3 hangs in launch  4 writes a wrong result                5 aborts the process
 *   6 invalid image    7 at most 128 threads per block        8 invalid value at launch (not sticky)
 *   9 launch failure at an event synchronize after a few launches (sticky)
 *  10 checks every kernel parameter: the image says how many ("MPT_FAKE_NARGS=<n>;"), parameter k > 0
 *     must be an int32 scalar of value k, else an invalid value at launch (a parameter missing or wrong)
 *  11-14 correct, taking (mode - 10) ms: the variants of a time/energy trade-off with the stand-in NVML
 *     (tests/fake_nvml.c), which reads the mode of the last launch through fake_cuda_current_mode()
 * cuInit fails (CUDA_ERROR_NOT_INITIALIZED) in a process forked after it succeeded, as the real driver's does.
 * FAKE_CUDA_CC_MAJOR=N: the device's compute capability is N.0 (9.0 without it).
 * Timings: fmode * 10 + (launch count % 3) ms (modes 11-14: mode - 10 + (launch count % 3) / 100 ms). FAKE_CUDA_DEAD=FILE: an illegal address (mode 1) also
 * creates FILE, and while it exists no context can be made (the device is lost). */
#include <elf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

typedef struct fake_module { int mode, nargs; } fake_module;

static CUresult sticky;   /* the context's sticky error: every later call fails with it */
static int current_mode;  /* the mode of the last launched kernel */
static long launches;
static char symbols[65536]; /* every __constant__ symbol */

#define STICKY \
  if (sticky) return sticky

/* the image's size: a CUBIN is an ELF file (its section headers lie at its end), PTX a string */
static size_t image_size(const void *image) {
  const unsigned char *b = image;
  if (memcmp(b, ELFMAG, SELFMAG) != 0) return strlen(image);
  Elf64_Ehdr h; /* copied: no alignment assumed */
  memcpy(&h, image, sizeof h);
  size_t end = (size_t)h.e_shoff + (size_t)h.e_shnum * h.e_shentsize;
  size_t ph = (size_t)h.e_phoff + (size_t)h.e_phnum * h.e_phentsize;
  return end > ph ? end : ph;
}

/* the number after `key` in the image (0 when absent) */
static int image_number(const void *image, const char *key) {
  size_t n = strlen(key);
  const char *p = memmem(image, image_size(image), key, n);
  return p ? atoi(p + n) : 0;
}

static void lose_device(void) {
  const char *dead = getenv("FAKE_CUDA_DEAD");
  FILE *f = dead ? fopen(dead, "w") : NULL;
  if (f) fclose(f);
}

/* as the real driver: a process forked after CUDA was initialized cannot initialize it
 * (CUDA_ERROR_NOT_INITIALIZED, 3) */
static pid_t initialized_in;
CUresult cuInit(unsigned flags) {
  (void)flags;
  if (initialized_in && initialized_in != getpid()) return 3;
  initialized_in = getpid();
  return 0;
}
CUresult cuDriverGetVersion(int *v) { return *v = 13000, 0; }
CUresult cuDeviceGetCount(int *n) { return *n = 1, 0; }
CUresult cuDeviceGet(int *d, int ordinal) { return *d = ordinal, 0; }
CUresult cuDeviceGetName(char *name, int len, int d) { return snprintf(name, (size_t)len, "Fake GPU %d", d), 0; }
CUresult cuDeviceGetPCIBusId(char *id, int len, int d) { return snprintf(id, (size_t)len, "0000:%02x:00.0", d + 1), 0; }
CUresult cuDeviceTotalMem_v2(size_t *bytes, int d) { return (void)d, *bytes = (size_t)80 << 30, 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  switch (attr) {
    case 1: *v = 1024; break;   /* max threads per block */
    case 8: *v = 49152; break;  /* shared memory per block */
    case 16: *v = 132; break;   /* multiprocessors */
    case 75: /* compute capability 9.0: sm_90; FAKE_CUDA_CC_MAJOR=99: sm_990, which NVRTC does not know */
      *v = getenv("FAKE_CUDA_CC_MAJOR") ? atoi(getenv("FAKE_CUDA_CC_MAJOR")) : 9;
      break;
    case 97: *v = 232448; break; /* shared memory per block, opt-in */
    default: *v = 0;
  }
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) {
  const char *dead = getenv("FAKE_CUDA_DEAD");
  if (dead && access(dead, F_OK) == 0) return 999; /* CUDA_ERROR_UNKNOWN: the device is gone */
  return (void)d, *ctx = (void *)0x1000, 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return (void)d, 0; }
CUresult cuDevicePrimaryCtxReset_v2(int d) { return (void)d, 0; }
CUresult cuCtxSetCurrent(void *ctx) { return (void)ctx, 0; }
CUresult cuCtxSynchronize(void) {
  STICKY;
  if (current_mode == 2) return sticky = 700;
  return 0;
}
CUresult cuModuleLoadData(void **module, const void *image) {
  STICKY;
  int mode = image_number(image, "MPT_FAKE_MODE=");
  if (mode == 6) return 200; /* CUDA_ERROR_INVALID_IMAGE */
  fake_module *m = malloc(sizeof *m);
  if (!m) return 2;
  m->mode = mode;
  m->nargs = image_number(image, "MPT_FAKE_NARGS=");
  *module = m;
  return 0;
}
CUresult cuModuleUnload(void *module) { return free(module), sticky; }
CUresult cuModuleGetFunction(void **fn, void *module, const char *name) { return (void)name, *fn = module, sticky; }
CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *bytes, void *module, const char *name) {
  (void)module, (void)name;
  STICKY;
  *p = (CUdeviceptr)(uintptr_t)symbols;
  *bytes = sizeof symbols;
  return 0;
}
CUresult cuFuncGetAttribute(int *v, int attr, void *fn) {
  const fake_module *m = fn;
  *v = attr == 0 ? (m->mode == 7 ? 128 : 1024) : attr == 4 ? 32 : 0; /* max threads, registers */
  return sticky;
}
CUresult cuFuncSetAttribute(void *fn, int attr, int v) { return (void)fn, (void)attr, (void)v, sticky; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  STICKY;
  void *m = calloc(1, bytes);
  *p = (CUdeviceptr)(uintptr_t)m;
  return m ? 0 : 2;
}
CUresult cuMemFree_v2(CUdeviceptr p) { return free((void *)(uintptr_t)p), 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { STICKY; return memcpy((void *)(uintptr_t)d, s, n), 0; }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { STICKY; return memcpy(d, (void *)(uintptr_t)s, n), 0; }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { STICKY; return memset((void *)(uintptr_t)d, v, n), 0; }
CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream, (void)extra;
  STICKY;
  const fake_module *m = fn;
  current_mode = m->mode;
  launches++;
  switch (m->mode) {
    case 1: lose_device(); return sticky = 700; /* CUDA_ERROR_ILLEGAL_ADDRESS */
    case 3: for (;;) pause();
    case 4: (*(float **)params[0])[0] += 1000.0f; return 0; /* the first argument: the output */
    case 5: abort();
    case 8: return 1; /* CUDA_ERROR_INVALID_VALUE */
    case 10:
      for (int k = 1; k < m->nargs; k++)
        if (*(const int *)params[k] != k) return 1;
      return 0;
    default: return 0;
  }
}
CUresult cuEventCreate(void **ev, unsigned flags) { return (void)flags, (*ev = malloc(1)) ? 0 : 2; }
CUresult cuEventRecord(void *ev, void *stream) { return (void)ev, (void)stream, sticky; }
CUresult cuEventSynchronize(void *ev) {
  (void)ev;
  STICKY;
  if (current_mode == 9 && launches % 8 > 3) return sticky = 719; /* CUDA_ERROR_LAUNCH_FAILED */
  return 0;
}
CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) {
  (void)a, (void)b;
  STICKY;
  *ms = current_mode >= 11 ? (float)(current_mode - 10) + (float)(launches % 3) / 100.0f
                            : (float)(current_mode * 10 + launches % 3);
  return 0;
}
/* for tests/fake_nvml.c: the mode of the kernel launched last (0 before any) */
int fake_cuda_current_mode(void) { return current_mode; }
CUresult cuEventDestroy_v2(void *ev) { return free(ev), 0; }
CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : r == 719 ? "CUDA_ERROR_LAUNCH_FAILED" : r == 1 ? "CUDA_ERROR_INVALID_VALUE"
     : r == 200 ? "CUDA_ERROR_INVALID_IMAGE" : r == 3 ? "CUDA_ERROR_NOT_INITIALIZED" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char **s) { return (void)r, *s = "reported by the fake driver", 0; }
