/* evaluators/gpu/rtc.h: run-time compilation (NVRTC or hiprtc) as the GPU evaluators see it: the result of
 * one compilation, the signature the compilers share, and compiling in a forked child so that a compiler
 * crash or hang loses only that child. Knows no compiler: cuda_api.h and hip_api.h provide them. */
#ifndef MPT_RTC_H
#define MPT_RTC_H
#include <stddef.h>
#include "spaces/sys/error.h"
#include "spaces/sys/watch.h"

/* Result of one run-time compilation (NVRTC or hiprtc). ok: 1 when code was produced. On a compile
 * error ok=0 and log holds the compiler's messages. code is a CUBIN, PTX (is_ptx) or an AMD code
 * object; lowered is the kernel's symbol name (from a name expression). Owned: mpt_rtc_result_free. */
typedef struct mpt_rtc_result {
  int ok;
  int is_ptx;
  int crashed;          /* isolated compile only: the signal that killed the compiler (0: none) */
  int timed_out;        /* isolated compile only: killed after the timeout */
  int cancelled;        /* isolated compile only: killed when its watch said stop (the run is stopping) */
  char *code;
  size_t code_size;
  char *lowered;
  char *log;
  double compile_ms;
} mpt_rtc_result;
void mpt_rtc_result_free(mpt_rtc_result *r);

/* Signature shared by mpt_nvrtc_compile and mpt_hiprtc_compile. */
typedef int (*mpt_rtc_compile_fn)(const char *source, const char *source_name, const char *kernel_name,
                                  const char *arch, const char *const *opts, int n_opts,
                                  mpt_rtc_result *res, mpt_error *err);
/* Runs fn in a forked child process and copies its result back through a pipe, so a compiler that
 * crashes (hiprtc for gfx1100 in ROCm 5.2) or hangs only loses that child: then res->ok = 0 and
 * res->crashed = the signal (or res->timed_out = 1 after timeout_s; 0 means no limit) with a log that
 * says what happened, and 0 is returned. watch (NULL: none; spaces/sys/watch.h), asked at least every
 * 100 ms, kills the compiler too when it says stop: res->cancelled = 1 (not the variant's outcome). Errors
 * of fn itself (<0, e.g. library missing) are returned as they were in the child. The child only compiles
 * (no device context is used), and leaves with _exit, so it is safe to call from an MPI rank. */
int mpt_rtc_compile_isolated(mpt_rtc_compile_fn fn, const char *source, const char *source_name,
                             const char *kernel_name, const char *arch, const char *const *opts,
                             int n_opts, double timeout_s, const mpt_watch *watch, mpt_rtc_result *res,
                             mpt_error *err);

/* The outcome of a compile function (rc; e when rc < 0; r when rc is 0) as bytes (*buf malloc'd), and back: how
 * the isolated compile and the compile-ahead pipeline (evaluators/ahead.h) carry it out of a child. pack: 0, -1
 * when out of memory; unpack: as mpt_rtc_compile_isolated (errors of the compile function returned, a failed
 * compile res->ok = 0). */
int mpt_rtc_pack(int rc, const mpt_error *e, const mpt_rtc_result *r, char **buf, size_t *len);
int mpt_rtc_unpack(const char *buf, size_t len, mpt_rtc_result *res, mpt_error *err);
/* the compile function's return code a packed outcome carries (MPT_ERR_INTERNAL for a compile error) */
int mpt_rtc_packed_rc(const char *buf, size_t len);

#endif
