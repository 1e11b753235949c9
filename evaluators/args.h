/* evaluators/args.h: the argument buffers of a kernel (host side): allocation, initial fill
 * (Constant, Random, Generator, BinaryRaw), the reference output each output argument is checked
 * against, and the comparison with a tolerance. Shared by the cpu, cuda and hip evaluators.
 * The reference buffers can live in shared memory (MAP_SHARED) so that a child process started by
 * evaluators/isolate.h can compute them for its parent. */
#ifndef MPT_ARGS_H
#define MPT_ARGS_H
#include <stddef.h>
#include <stdint.h>
#include "evaluators/kernel_spec.h"
#include "spaces/sys/error.h"

typedef struct mpt_args {
  const mpt_kernel_spec *ks;
  int n;                 /* = ks->n_args */
  void **init;           /* initial contents per argument (ks->args[i].bytes each; scalars: the value) */
  void **ref;            /* expected output per argument, NULL for non-outputs */
  int *ref_ready;        /* ref[i] holds the expected output (from ReferenceArguments or a run) */
  int shared;            /* ref buffers are MAP_SHARED (visible to forked children) */
  void *shared_base;     /* the one mapping holding every ref buffer (and ref_ready) when shared */
  size_t shared_bytes;
} mpt_args;

/* Argument buffers are aligned to MPT_ARGS_ALIGN bytes (vector types up to 16 floats, AVX-512's widest access) */
#define MPT_ARGS_ALIGN 64

/* A block of `bytes` (rounded up to MPT_ARGS_ALIGN) aligned to MPT_ARGS_ALIGN, released with free(); NULL when
 * out of memory. */
void *mpt_args_aligned_alloc(size_t bytes);

/* A buffer a kernel runs on: `bytes` aligned to MPT_ARGS_ALIGN in a mapping of its own, its end (rounded up to
 * MPT_ARGS_ALIGN) followed by an inaccessible guard page and a guard page before its first page, so an access
 * just past either end faults there; NULL when out of memory. Released with mpt_args_buffer_free(p, bytes). */
void *mpt_args_buffer_alloc(size_t bytes);
void mpt_args_buffer_free(void *p, size_t bytes);

/* Where address addr lies relative to the buffers of the non-scalar arguments (bufs[i], ks->args[i].bytes each;
 * NULL entries skipped): inside one, or past its end or before its start by at most its size (at least a page),
 * the nearest one: "64 bytes past the end of argument 'out' (4000 bytes at 0x7f...)"; else "in no argument
 * buffer". */
void mpt_args_locate(const mpt_kernel_spec *ks, void *const *bufs, uintptr_t addr, char *out, size_t cap);

/* Allocates and fills the initial contents of every argument and builds the references given by
 * ReferenceArguments. With shared != 0 the reference buffers and their ready flags are one MAP_SHARED
 * mapping. Errors: allocation, unreadable/short DataSource, generator failures (named). */
int mpt_args_create(const mpt_kernel_spec *ks, int shared, mpt_args **out, mpt_error *err);
void mpt_args_free(mpt_args *a);

/* 1 when some output argument has no reference yet (the default configuration must be run) */
int mpt_args_needs_reference_run(const mpt_args *a);
/* Takes `data` (ks->args[i].bytes) as the reference of output argument i (unless it has one). */
void mpt_args_set_reference(mpt_args *a, int i, const void *data);

/* Compares the output `data` of argument i with its reference using the argument's check (allclose
 * with ks->atol/rtol by default; bools, ints and custom types exactly). Returns 1 when it matches,
 * 0 when not (msg: how many elements differ, the first one with both values), and 1 when the
 * argument has no reference. */
int mpt_args_compare(const mpt_args *a, int i, const void *data, char *msg, size_t cap);

/* Fills n elements (lanes each) of base type b at dst from a fill spec; `what` names the field in
 * messages. Used for arguments and reference arguments. */
int mpt_args_fill(const mpt_ks_fillspec *f, mpt_ks_base b, int lanes, size_t elem_bytes, int64_t n,
                  void *dst, const char *what, mpt_error *err);

/* Element access as double (lane-wise index j over n*lanes values); custom types are not numeric. */
double mpt_args_get(mpt_ks_base b, const void *data, int64_t j);
void mpt_args_put(mpt_ks_base b, void *data, int64_t j, double v);

/* IEEE half <-> float */
uint16_t mpt_half_from_float(float f);
float mpt_half_to_float(uint16_t h);

#endif
