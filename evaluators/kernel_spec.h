/* evaluators/kernel_spec.h: the T1 KernelSpecification read into memory (language, kernel file and
 * name, compiler options, launch-size expressions, arguments, reference arguments, iterations,
 * tolerance) and turned, per configuration, into a launch description: preprocessor defines, grid,
 * block and shared memory. Shared by the cpu, cuda and hip evaluators. Semantics: docs/KERNELS.md.
 *
 * Expression binding (documented in docs/KERNELS.md):
 *  - launch expressions (GlobalSize, LocalSize, GridDivX/Y/Z, ProblemSize entries, SharedMemory):
 *    every tunable parameter is bound to its value in the configuration, `ProblemSize` to the list
 *    of problem sizes of that configuration;
 *  - argument `Size` expressions are evaluated once per problem, with every tunable parameter bound to
 *    the LIST of its values (as Kernel Tuner binds tune_params), so `max(filter_width)` is the largest
 *    value; `ProblemSize` is the list of problem sizes. */
#ifndef MPT_KERNEL_SPEC_H
#define MPT_KERNEL_SPEC_H
#include <stddef.h>
#include <stdint.h>
#include "spaces/t1.h"
#include "spaces/expr/expr.h"
#include "spaces/sys/error.h"

/* C and C++: the cpu evaluator; CUDA, HIP: the GPU evaluators */
typedef enum mpt_ks_lang { MPT_LANG_C, MPT_LANG_CUDA, MPT_LANG_HIP, MPT_LANG_OPENCL, MPT_LANG_CXX } mpt_ks_lang;

/* element base types; vector types (float4, ...) are a base type with lanes > 1 */
typedef enum mpt_ks_base {
  MPT_T_BOOL, MPT_T_INT8, MPT_T_UINT8, MPT_T_INT16, MPT_T_UINT16, MPT_T_INT32, MPT_T_UINT32,
  MPT_T_INT64, MPT_T_UINT64, MPT_T_HALF, MPT_T_FLOAT, MPT_T_DOUBLE, MPT_T_CUSTOM
} mpt_ks_base;

typedef enum mpt_ks_mem {
  MPT_MEM_VECTOR,   /* a buffer passed by pointer */
  MPT_MEM_SCALAR,   /* a value passed by value (FillValue) */
  MPT_MEM_LOCAL,    /* scratch memory: dynamic shared memory on GPUs, a scratch buffer on the CPU */
  MPT_MEM_SYMBOL    /* a named global (constant memory): not in the call's argument list on GPUs */
} mpt_ks_mem;

typedef enum mpt_ks_fill {
  MPT_FILL_CONSTANT,   /* every element FillValue */
  MPT_FILL_RANDOM,     /* uniform in [0, FillValue) (ints: floor), seeded by RandomSeed */
  MPT_FILL_GENERATOR,  /* DataSource is an expression of the element index `i` */
  MPT_FILL_SCRIPT,     /* not supported: rejected at load */
  MPT_FILL_BINARY_RAW, /* DataSource is a raw little-endian file (relative to the T1 file) */
  MPT_FILL_BINARY_HDF  /* not supported: rejected at load */
} mpt_ks_fill;

typedef enum mpt_ks_access { MPT_ACCESS_READ_ONLY, MPT_ACCESS_WRITE_ONLY, MPT_ACCESS_READ_WRITE } mpt_ks_access;

/* how an output is compared with its reference */
typedef enum mpt_ks_check {
  MPT_CHECK_ALLCLOSE,        /* default, numpy.allclose as Kernel Tuner: |a-r| <= atol + rtol*|r| */
  MPT_CHECK_ABSDIFF_SUM,     /* KTT AbsoluteDifference: sum |a-r| <= threshold */
  MPT_CHECK_SIDE_BY_SIDE,    /* KTT SideBySideComparison: every |a-r| <= threshold */
  MPT_CHECK_SIDE_BY_SIDE_REL /* KTT SideBySideRelativeComparison: every |a-r| <= threshold*|r| */
} mpt_ks_check;

typedef struct mpt_ks_fillspec {
  mpt_ks_fill type;
  double value;          /* FillValue (default 1 for Random, 0 for Constant) */
  uint64_t seed;         /* RandomSeed, or a fixed per-argument default (same on every worker) */
  char *source;          /* DataSource: resolved file path (BinaryRaw) or the generator text */
  mpt_expr *generator;   /* Generator: compiled against the single name "i" */
} mpt_ks_fillspec;

typedef struct mpt_ks_arg {
  char *name;            /* Name, or "argN" */
  char type_name[16];    /* as written ("float4") */
  mpt_ks_base base;
  int lanes;             /* 1, 2, 4, 8, 16 */
  size_t elem_bytes;     /* bytes per element (TypeSize for custom) */
  mpt_ks_mem mem;
  int constant;          /* constant memory: MemType "Constant" or MemoryType "Symbol" */
  mpt_ks_access access;
  int output;            /* compared with the reference: Output, else any writable vector */
  char *size_src;        /* Size as text ("1" for scalars without Size) */
  int64_t n_elems;       /* Size evaluated (elements, >= 1) */
  size_t bytes;          /* n_elems * elem_bytes */
  mpt_ks_fillspec fill;
  int has_reference;     /* a ReferenceArguments entry targets this argument */
  mpt_ks_fillspec ref;   /* how to build the expected output */
  mpt_ks_check check;
  double threshold;      /* ValidationThreshold for the KTT methods */
} mpt_ks_arg;

typedef struct mpt_kernel_spec {
  const mpt_problem *problem;
  mpt_ks_lang lang;
  char *language;        /* as written */
  char *kernel_file;     /* resolved path (relative to the T1 file's directory) */
  char *kernel_dir;      /* its directory (added as -I by the cpu evaluator) */
  char *kernel_name;
  char *source;          /* the kernel file's text, NUL-terminated */
  size_t source_len;
  int n_options;
  char **options;        /* CompilerOptions */
  char *compiler;        /* Compiler: the program that compiles the kernel (cpu evaluator); NULL: not given */
  int returns_time;      /* ReturnsTime: 1 the kernel returns its own time in ms as a float (Kernel Tuner's C
                            convention), 0 its return value is ignored, -1 not given */
  int global_blocks;     /* GlobalSizeType "CUDA": GlobalSize counts blocks, not threads */
  int has_global;        /* GlobalSize present */
  mpt_expr *global[3];   /* NULL: "1" */
  mpt_expr *local[3];    /* NULL: block_size_{x,y,z} parameter, or 256/1/1 as Kernel Tuner */
  int has_problem;       /* ProblemSize present: grid = ceil(problem / prod(GridDiv)) as Kernel Tuner */
  int n_problem;
  mpt_expr *problem_size[3];
  int n_griddiv[3];      /* GridDivX/Y/Z; absent: block_size_x/y/z (Kernel Tuner's default) */
  mpt_expr **griddiv[3];
  int griddiv_given[3];
  mpt_expr *shared_memory; /* SharedMemory (bytes), NULL: 0 */
  int iterations;        /* timed iterations: Iterations, BenchmarkConfig.iterations, or 7 */
  double atol, rtol;     /* Tolerance {Atol, Rtol}; default 1e-6 / 1e-5 (Kernel Tuner) */
  int n_args;
  mpt_ks_arg *args;
  int n_outputs;         /* arguments with output set */
  int n_names;           /* expression names: the parameters (slot = parameter index), then "ProblemSize" */
  char **names;
} mpt_kernel_spec;

/* One configuration turned into a launch. */
typedef struct mpt_launch {
  int64_t grid[3];       /* blocks per dimension (>= 1) */
  int64_t block[3];      /* threads per block per dimension (>= 1) */
  int64_t problem[3];    /* problem size (1 for missing dimensions) */
  int64_t shared_bytes;  /* SharedMemory + the bytes of Local arguments */
  int n_defines;
  char **defines;        /* "name=value": every parameter, then block_size_x/y/z and grid_size_x/y/z
                            (unless parameters of that name), then kernel_tuner=1 */
} mpt_launch;

/* Reads the problem's KernelSpecification; checks every field, reads the kernel file, compiles every
 * expression and evaluates the argument sizes. Errors name the T1 file and the field
 * ("KernelSpecification.Arguments[2].Size") and show expressions with a caret. The spec keeps a pointer
 * to the problem, which must outlive it. */
int mpt_kspec_load(const mpt_problem *p, mpt_kernel_spec **out, mpt_error *err);
/* As mpt_kspec_load, without what only a compile needs: the kernel file is not read (it may be absent), and
 * CompilerOptions, Compiler, ReturnsTime and ReferenceArguments are not read. Enough for mpt_kspec_launch and
 * mpt_kspec_block_shared (the device limits, evaluators/device_limits.h); source is NULL. */
int mpt_kspec_load_geometry(const mpt_problem *p, mpt_kernel_spec **out, mpt_error *err);
/* The keys of the problem's KernelSpecification and of its objects (GlobalSize, LocalSize, Tolerance,
 * Arguments[i], ReferenceArguments[i]): a misspelt or repeated one is an error (spaces/json/json_keys.h), as
 * mpt_kspec_load finds first; 0 without a KernelSpecification. For commands that do not load the spec. */
int mpt_kspec_check_keys(const mpt_problem *p, mpt_error *err);
void mpt_kspec_free(mpt_kernel_spec *ks);

/* The launch of one configuration given as value indices (one per parameter). Errors (a size
 * expression failing or giving a value < 1) name the field and the configuration. */
int mpt_kspec_launch(const mpt_kernel_spec *ks, const int *idx, mpt_launch *out, mpt_error *err);
void mpt_launch_free(mpt_launch *l);
/* Only the threads per block in each dimension and the dynamic shared memory (SharedMemory plus the Local
 * arguments, bytes) of the configuration given as value indices; errors as mpt_kspec_launch. vars: scratch of
 * ks->n_names values (the caller's, reused over configurations). */
int mpt_kspec_block_shared(const mpt_kernel_spec *ks, const int *idx, mpt_value *vars, int64_t block[3],
                           int64_t *shared, mpt_error *err);

/* index of an argument by name, -1 when unknown */
int mpt_kspec_arg_index(const mpt_kernel_spec *ks, const char *name);
/* C type of one lane of a base type ("float", "int32_t", "_Float16", "_Bool"; NULL for custom) */
const char *mpt_ks_base_ctype(mpt_ks_base b);

#endif
