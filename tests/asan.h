/* tests/asan.h: ASAN is 1 in the AddressSanitizer build (MPT_SANITIZE=ON), else 0, for the tests whose
 * memory limits (RLIMIT_AS) cannot apply there: AddressSanitizer reserves terabytes of address space. */
#ifndef MPT_TESTS_ASAN_H
#define MPT_TESTS_ASAN_H
#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#else
#define ASAN 0
#endif
#endif
