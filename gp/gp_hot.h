/* gp/gp_hot.h: how the hot loops of gp/ are compiled (private to gp/gp*.c). Hot loops of adding an
 * observation (distances, kernel row, rank-one update) are compiled once per instruction set and picked at run time (GCC function multiversioning: no -march flag needed). The
 * clones compute bit-identical results: the loops vectorize across candidates only (no reordered
 * reductions) and ISO C mode (-std=c17) does not contract a*b+c into FMAs (fp-contract=off). The AVX-512
 * clone is x86-64-v4 (with AVX512VL), not plain avx512f: only with VL can 256-bit code use the 32 vector
 * registers, and add_panels's 16 sums spilled 4 of them to the stack without it (docs/PERFORMANCE.md).
 * GP_HOT_FMA: the same clones with a*b+c contracted into FMAs where the instruction set has them (the
 * x86-64-v4 and avx2 clones; results then differ from GP_HOT's and between clones by rounding): the
 * batch take-in of gp/gp_batch.c, which is not bit for bit equal to single adds. */
#ifndef MPT_GP_HOT_H
#define MPT_GP_HOT_H
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define GP_HOT __attribute__((target_clones("arch=x86-64-v4", "avx2", "default"), optimize("O3", "fp-contract=off")))
#define GP_HOT_FMA __attribute__((target_clones("arch=x86-64-v4", "avx2", "default"), optimize("O3", "fp-contract=fast")))
#elif defined(__GNUC__) && !defined(__clang__)
#define GP_HOT __attribute__((optimize("O3", "fp-contract=off")))
#define GP_HOT_FMA __attribute__((optimize("O3", "fp-contract=fast")))
#else
#define GP_HOT
#define GP_HOT_FMA
#endif
#endif
