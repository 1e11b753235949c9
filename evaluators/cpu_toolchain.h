/* evaluators/cpu_toolchain.h: what the cpu evaluator hands the compiler: which compiler compiles a C or C++
 * kernel (KernelSpecification.Compiler, else $CXX or $CC, else c++ or cc) and the C call wrapper, the wrapper's
 * source, and the compile-time check of the kernel's return type (does it return its own time as a float,
 * Kernel Tuner's C convention). Semantics: docs/KERNELS.md, "The cpu evaluator". */
#ifndef MPT_CPU_TOOLCHAIN_H
#define MPT_CPU_TOOLCHAIN_H
#include "evaluators/kernel_spec.h"
#include "spaces/sys/error.h"

/* A compiler command: one or more words (an environment variable such as CC="ccache gcc" is split at blanks) */
typedef struct mpt_cpu_cc {
  char *text;            /* the words, NUL-separated */
  char **argv;           /* the n words, then NULL */
  int n;
  const char *origin;    /* where it came from, for messages: "KernelSpecification.Compiler", "$CXX", "$CC", "the default" */
} mpt_cpu_cc;

/* The compiler of the kernel: KernelSpecification.Compiler, else $CXX (C++) or $CC (C) when set and not blank,
 * else c++ or cc. */
int mpt_cpu_cc_kernel(const mpt_kernel_spec *ks, mpt_cpu_cc *out, mpt_error *err);
/* The compiler of the call wrapper (C): the kernel's for a C kernel, else $CC, else cc. */
int mpt_cpu_cc_wrapper(const mpt_kernel_spec *ks, mpt_cpu_cc *out, mpt_error *err);
void mpt_cpu_cc_free(mpt_cpu_cc *c);

/* 1 when CompilerOptions choose the source language themselves (-x LANG, -xc, -xc++) */
int mpt_cpu_options_set_language(const mpt_kernel_spec *ks);

/* The C source of the call wrapper `launch_symbol(void *const *argv)`: a prototype of the kernel from the T1
 * argument list (pointers for Vector/Local/Symbol, the C type of scalars), returning float when returns_float
 * (the wrapper then returns the kernel's value), else void. Malloc'd; NULL with err when the kernel name is no C
 * identifier or a scalar has a type the wrapper cannot pass. */
char *mpt_cpu_wrapper_source(const mpt_kernel_spec *ks, const char *launch_symbol, int returns_float, mpt_error *err);

/* The return type of the kernel as a compile of mpt_cpu_return_check_source tells it */
typedef enum mpt_cpu_return { MPT_CPU_RETURNS_UNKNOWN, MPT_CPU_RETURNS_VOID, MPT_CPU_RETURNS_FLOAT,
                              MPT_CPU_RETURNS_OTHER } mpt_cpu_return;

/* A source (C or C++ as the kernel) that includes the kernel file and fails to compile, with a message
 * mpt_cpu_return_kind recognizes, when the kernel returns float or void. Malloc'd; NULL when out of memory. */
char *mpt_cpu_return_check_source(const mpt_kernel_spec *ks);
/* The return type from that compile's exit status and output: UNKNOWN when it failed for another reason (the
 * kernel not declared, a compiler without -fsyntax-only, ...). */
mpt_cpu_return mpt_cpu_return_kind(int status, const char *output);

#endif
