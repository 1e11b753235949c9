/* evaluators/gpu/gpu_eval.h: the part the cuda and hip evaluators share. The worker process compiles
 * (NVRTC / hiprtc in a forked child, so a compiler crash or hang costs one variant) and a device
 * server process (evaluators/isolate.h) holds the GPU context, loads the code, launches, verifies and
 * times. The worker never initializes the GPU runtime itself, so the server can always be re-forked:
 * after a fault in a kernel (runtime_error), a crash or a timeout the context is rebuilt by starting a
 * fresh server. A backend (cuda.c, hip.c) supplies the runtime calls through mpt_gpu_backend. */
#ifndef MPT_GPU_EVAL_H
#define MPT_GPU_EVAL_H
#include <stddef.h>
#include <stdint.h>
#include "evaluators/evaluator.h"
#include "evaluators/kernel_spec.h"
#include "evaluators/gpu/rtc.h"

/* Runtime calls of one GPU API. All but `available` run only in the device server. Calls that can
 * fail return 0 or an mpt_status (MPT_STATUS_COMPILE_ERROR for code the device cannot load,
 * MPT_STATUS_LAUNCH_ERROR, MPT_STATUS_RUNTIME_ERROR) with a message in msg. */
typedef struct mpt_gpu_backend {
  const char *name;      /* "cuda", "hip" */
  const char *label;     /* "CUDA", "HIP" (messages: "no CUDA device: ...") */
  const char *vendor;    /* "NVIDIA", "AMD" */
  mpt_rtc_compile_fn compile;
  /* worker side, must not initialize the runtime: 0, or MPT_ERR_DEVICE with the reason (no driver) */
  int (*available)(mpt_error *err);
  /* initializes the runtime, picks the device for local_rank (round-robin over the visible devices),
   * makes its context current; fills info (index, name, arch, memory) and arch (for the compiler) */
  int (*init)(void **st, int local_rank, mpt_device_info *info, char *arch, size_t arch_cap, char *msg,
              size_t cap);
  void (*fini)(void *st);
  int (*alloc)(void *st, size_t bytes, uint64_t *ptr, char *msg, size_t cap);
  int (*upload)(void *st, uint64_t dst, const void *src, size_t bytes, char *msg, size_t cap);
  int (*download)(void *st, void *dst, uint64_t src, size_t bytes, char *msg, size_t cap);
  int (*load)(void *st, const void *code, size_t code_size, const char *lowered, void **mod, void **fn,
              char *msg, size_t cap);
  void (*unload)(void *st, void *mod);
  /* copies data into the module's global `name` (constant memory) */
  int (*set_symbol)(void *st, void *mod, const char *name, const void *data, size_t bytes, char *msg,
                    size_t cap);
  /* the compiled kernel's limits: max threads per block, registers per thread, static shared bytes */
  void (*func_info)(void *st, void *fn, int *max_threads, int *regs, int *static_shared);
  /* launches once; with ms != NULL the launch is bracketed by events and waited for, *ms its time */
  int (*launch)(void *st, void *fn, const int64_t grid[3], const int64_t block[3], unsigned shared,
                void **params, float *ms, char *msg, size_t cap);
  /* waits for the device; a fault in the kernel is MPT_STATUS_RUNTIME_ERROR */
  int (*sync)(void *st, char *msg, size_t cap);
  /* the device's PCI bus id ("0000:01:00.0"), "" when the runtime cannot say: how the power observer
   * (gpu/power.h) finds it whatever *_VISIBLE_DEVICES did to the runtime's numbering */
  void (*pci_bus_id)(void *st, char *id, size_t cap);
} mpt_gpu_backend;

/* the settings both GPU evaluators take (--evaluator-option key=value) */
extern const mpt_option_spec mpt_gpu_eval_options[];
/* the compile-ahead of both GPU evaluators (evaluators/ahead.h): the key is the prepared source, file, kernel,
 * architecture and CompilerOptions; the compile function runs in the compile process itself; a cuda or hip
 * evaluator type names it */
extern const mpt_ahead_ops mpt_gpu_ahead_ops;

int mpt_gpu_eval_open(mpt_evaluator *ev, const mpt_gpu_backend *be, mpt_error *err);
int mpt_gpu_eval_evaluate(mpt_evaluator *ev, int64_t id, mpt_obs *out, mpt_error *err);
void mpt_gpu_eval_close(mpt_evaluator *ev);

/* Compiles configuration `id` the way the evaluators do: the problem's CompilerOptions plus one
 * -Dname=value per define of mpt_kspec_launch (every parameter, block_size_x/y/z, grid_size_x/y/z,
 * kernel_tuner=1), through `compile` in a forked child (mpt_rtc_compile_isolated, timeout_s; unwatched).
 * launch (may be NULL) receives the launch description. Returns as mpt_rtc_compile_isolated; a
 * configuration whose launch cannot be computed returns the kspec error. */
int mpt_gpu_compile_config(const mpt_kernel_spec *ks, const mpt_space *s, int64_t id,
                           mpt_rtc_compile_fn compile, const char *arch, double timeout_s,
                           mpt_launch *launch, mpt_rtc_result *res, mpt_error *err);

/* The compile step of mpt_gpu_compile_config for a launch already computed (mpt_kspec_launch), watched
 * (watch: as mpt_rtc_compile_isolated's). Errors of the compile function itself (<0: no compiler,
 * MPT_ERR_VALUE for an architecture or option it refuses) hold for every configuration; a failed compile of
 * this variant is res->ok = 0. */
int mpt_gpu_compile_launch(const mpt_kernel_spec *ks, const mpt_launch *l, mpt_rtc_compile_fn compile,
                           const char *arch, double timeout_s, const mpt_watch *watch, mpt_rtc_result *res,
                           mpt_error *err);

/* 1 when `name` (a kernel name, possibly "k<float>") occurs as an identifier in source */
int mpt_gpu_source_has_kernel(const char *source, const char *name);
/* the source a configuration is compiled from (malloc'd, NULL when out of memory): one "#define name
 * value" line per define ("name=value", mpt_launch), "#line 1", then the source, in which the
 * "#pragma unroll loop_unroll_factor_X" directives of a loop_unroll_factor_X that is 0 are blanked (no
 * unroll hint for that loop), as Kernel Tuner prepares a kernel string */
char *mpt_gpu_prepare_source(const char *source, const char *const *defines, int n_defines);

#endif
