/* evaluators/device_limits.h: the configurations of a space that a device is known to refuse before anything is
 * compiled, as Kernel Tuner drops those above the device's max_threads: a block of more threads than the
 * device's max_threads_per_block (the product of the block's dimensions, evaluators/kernel_spec.h), or more
 * dynamic shared memory than its max_shared_per_block (the problem's KernelSpecification.SharedMemory plus its
 * Local arguments; shared memory the kernel declares statically is known only once compiled, and a launch that
 * exceeds it stays a recorded launch_error, as does the compiled kernel's own register limit). The coordinator
 * leaves these out of a device class's valid set, so that no budget is spent on a launch the device refuses. */
#ifndef MPT_DEVICE_LIMITS_H
#define MPT_DEVICE_LIMITS_H
#include <stdint.h>
#include "evaluators/evaluator.h"

/* Marks in excluded (mpt_space_size(s) bytes, written whole: 1 refused, 0 not) the configurations device d
 * refuses and counts them in *n_excluded. A device without limits (both 0: the CPU, a replayed device) and a
 * problem without a KernelSpecification refuse none; a configuration whose block or shared memory cannot be
 * computed is not marked (its evaluation records the launch_error). 0, or <0 with err (a KernelSpecification
 * that cannot be read, naming the file and field; out of memory). */
int mpt_device_excluded(const mpt_problem *p, const mpt_space *s, const mpt_device_info *d, uint8_t *excluded,
                        int64_t *n_excluded, mpt_error *err);

/* Why d refuses a block of block[0..2] threads and shared bytes of dynamic shared memory, written to why (""
 * and 0 when it does not, 1 when it does): "block of 2048 threads exceeds the device's 1024 threads per block" */
int mpt_device_refuses(const mpt_device_info *d, const int64_t block[3], int64_t shared, char *why, size_t cap);

#endif
