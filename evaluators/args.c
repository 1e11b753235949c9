/* evaluators/args.c: host argument buffers of a kernel: allocation, fill (Constant, Random, Generator,
 * BinaryRaw), references (ReferenceArguments or a run of the default configuration, optionally in
 * shared memory for child processes), comparison with a tolerance. Contract: evaluators/args.h. */
#include "evaluators/args.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "spaces/sys/rng.h"

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

void *mpt_args_aligned_alloc(size_t bytes) {
  return aligned_alloc(MPT_ARGS_ALIGN, round_up(bytes ? bytes : 1, MPT_ARGS_ALIGN));
}

static size_t page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

/* the layout of a guarded buffer: [guard page][body: padding, then the buffer rounded up][guard page] */
static size_t buffer_body(size_t bytes) { return round_up(round_up(bytes ? bytes : 1, MPT_ARGS_ALIGN), page_size()); }

void *mpt_args_buffer_alloc(size_t bytes) {
  size_t page = page_size(), body = buffer_body(bytes);
  char *m = mmap(NULL, body + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  if (mprotect(m + page, body, PROT_READ | PROT_WRITE) != 0) {
    munmap(m, body + 2 * page);
    return NULL;
  }
  return m + page + body - round_up(bytes ? bytes : 1, MPT_ARGS_ALIGN);
}

void mpt_args_buffer_free(void *p, size_t bytes) {
  if (!p) return;
  size_t page = page_size(), body = buffer_body(bytes);
  char *m = (char *)p - (body - round_up(bytes ? bytes : 1, MPT_ARGS_ALIGN)) - page;
  munmap(m, body + 2 * page);
}

void mpt_args_locate(const mpt_kernel_spec *ks, void *const *bufs, uintptr_t addr, char *out, size_t cap) {
  int best = -1;
  uintptr_t best_dist = 0;
  for (int i = 0; i < ks->n_args; i++) {
    const mpt_ks_arg *a = &ks->args[i];
    if (a->mem == MPT_MEM_SCALAR || !bufs[i]) continue;
    uintptr_t start = (uintptr_t)bufs[i], end = start + a->bytes;
    uintptr_t reach = a->bytes > page_size() ? a->bytes : page_size();
    uintptr_t dist = addr >= end ? addr - end + 1 : addr < start ? start - addr : 0;
    if (dist <= reach && (best < 0 || dist < best_dist)) best = i, best_dist = dist;
  }
  if (best < 0) {
    snprintf(out, cap, "in no argument buffer");
    return;
  }
  const mpt_ks_arg *a = &ks->args[best];
  uintptr_t start = (uintptr_t)bufs[best], end = start + a->bytes;
  if (addr >= end)
    snprintf(out, cap, "%llu bytes past the end of argument '%s' (%zu bytes at 0x%llx)",
             (unsigned long long)(addr - end), a->name, a->bytes, (unsigned long long)start);
  else if (addr < start)
    snprintf(out, cap, "%llu bytes before the start of argument '%s' (%zu bytes at 0x%llx)",
             (unsigned long long)(start - addr), a->name, a->bytes, (unsigned long long)start);
  else
    snprintf(out, cap, "inside argument '%s', at byte %llu of %zu (at 0x%llx)", a->name,
             (unsigned long long)(addr - start), a->bytes, (unsigned long long)start);
}

uint16_t mpt_half_from_float(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = (int32_t)((x >> 23) & 0xff);
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0)); /* inf / nan */
  int32_t e = exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u); /* overflow: inf */
  if (e <= 0) {                                      /* subnormal or zero */
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t h = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++; /* round to nearest even (may carry into exp) */
  return (uint16_t)(sign | h);
}

float mpt_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
  if (exp == 0) {
    if (mant == 0) x = sign;
    else { /* subnormal: normalize */
      int e = -1;
      do {
        e++;
        mant <<= 1;
      } while (!(mant & 0x400u));
      x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

double mpt_args_get(mpt_ks_base b, const void *data, int64_t j) {
  switch (b) {
  case MPT_T_BOOL: return ((const uint8_t *)data)[j] ? 1.0 : 0.0;
  case MPT_T_INT8: return ((const int8_t *)data)[j];
  case MPT_T_UINT8: return ((const uint8_t *)data)[j];
  case MPT_T_INT16: return ((const int16_t *)data)[j];
  case MPT_T_UINT16: return ((const uint16_t *)data)[j];
  case MPT_T_INT32: return ((const int32_t *)data)[j];
  case MPT_T_UINT32: return ((const uint32_t *)data)[j];
  case MPT_T_INT64: return (double)((const int64_t *)data)[j];
  case MPT_T_UINT64: return (double)((const uint64_t *)data)[j];
  case MPT_T_HALF: return mpt_half_to_float(((const uint16_t *)data)[j]);
  case MPT_T_FLOAT: return ((const float *)data)[j];
  case MPT_T_DOUBLE: return ((const double *)data)[j];
  case MPT_T_CUSTOM: return ((const uint8_t *)data)[j];
  }
  return 0;
}

/* saturating conversions: a fill value never invokes undefined behaviour */
static int64_t clamp_i(double v, double lo, double hi) {
  if (v != v) return 0;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return (int64_t)v;
}

void mpt_args_put(mpt_ks_base b, void *data, int64_t j, double v) {
  switch (b) {
  case MPT_T_BOOL: ((uint8_t *)data)[j] = v != 0; break;
  case MPT_T_INT8: ((int8_t *)data)[j] = (int8_t)clamp_i(v, -128, 127); break;
  case MPT_T_UINT8: ((uint8_t *)data)[j] = (uint8_t)clamp_i(v, 0, 255); break;
  case MPT_T_INT16: ((int16_t *)data)[j] = (int16_t)clamp_i(v, -32768, 32767); break;
  case MPT_T_UINT16: ((uint16_t *)data)[j] = (uint16_t)clamp_i(v, 0, 65535); break;
  case MPT_T_INT32: ((int32_t *)data)[j] = (int32_t)clamp_i(v, -2147483648.0, 2147483647.0); break;
  case MPT_T_UINT32: ((uint32_t *)data)[j] = (uint32_t)clamp_i(v, 0, 4294967295.0); break;
  case MPT_T_INT64: ((int64_t *)data)[j] = clamp_i(v, -9.2e18, 9.2e18); break;
  case MPT_T_UINT64: ((uint64_t *)data)[j] = (uint64_t)clamp_i(v, 0, 9.2e18); break;
  case MPT_T_HALF: ((uint16_t *)data)[j] = mpt_half_from_float((float)v); break;
  case MPT_T_FLOAT: ((float *)data)[j] = (float)v; break;
  case MPT_T_DOUBLE: ((double *)data)[j] = v; break;
  case MPT_T_CUSTOM: ((uint8_t *)data)[j] = (uint8_t)clamp_i(v, 0, 255); break;
  }
}

static int is_integer_type(mpt_ks_base b) {
  return b != MPT_T_HALF && b != MPT_T_FLOAT && b != MPT_T_DOUBLE;
}

int mpt_args_fill(const mpt_ks_fillspec *f, mpt_ks_base b, int lanes, size_t elem_bytes, int64_t n,
                  void *dst, const char *what, mpt_error *err) {
  /* custom types are filled byte-wise */
  int64_t count = b == MPT_T_CUSTOM ? n * (int64_t)elem_bytes : n * lanes;
  switch (f->type) {
  case MPT_FILL_CONSTANT:
    for (int64_t j = 0; j < count; j++) mpt_args_put(b, dst, j, f->value);
    return 0;
  case MPT_FILL_RANDOM: {
    mpt_rng r;
    mpt_rng_seed(&r, f->seed);
    int integer = is_integer_type(b);
    for (int64_t j = 0; j < count; j++) {
      double u = mpt_rng_uniform(&r) * f->value;
      mpt_args_put(b, dst, j, integer ? floor(u) : u);
    }
    return 0;
  }
  case MPT_FILL_GENERATOR: {
    mpt_value var, v = {0};
    for (int64_t j = 0; j < count; j++) {
      var = mpt_value_int(j);
      int rc = mpt_expr_eval(f->generator, &var, &v, err);
      int ok = 0;
      double x = rc ? 0 : mpt_value_as_double(&v, &ok);
      mpt_value_free(&v);
      if (rc || !ok) {
        char inner[1024];
        snprintf(inner, sizeof inner, "%s", rc ? err->msg : "not a number");
        int col = rc ? mpt_expr_fault_column(f->generator, &var) : -1; /* the caret under what failed */
        mpt_error_set(err, rc ? rc : MPT_ERR_VALUE, "%s: generator '%s' failed for i=%lld: %s", what, f->source,
                      (long long)j, inner);
        if (col >= 0) mpt_expr_format_error(err, NULL, NULL, f->source, col);
        return err->code;
      }
      mpt_args_put(b, dst, j, x);
    }
    return 0;
  }
  case MPT_FILL_BINARY_RAW: {
    size_t bytes = (size_t)n * elem_bytes;
    FILE *fp = fopen(f->source, "rb");
    if (!fp) return mpt_error_set(err, MPT_ERR_IO, "%s: cannot read '%s': %s", what, f->source, strerror(errno));
    size_t got = fread(dst, 1, bytes, fp);
    char extra;
    int more = got == bytes && fread(&extra, 1, 1, fp) == 1; /* exactly Size elements (KERNELS.md): a file of
                                                               * doubles for a float argument is an error */
    fclose(fp);
    if (got != bytes || more)
      return mpt_error_set(err, MPT_ERR_IO, "%s: '%s' holds %s%zu bytes, the argument needs %zu", what, f->source,
                           more ? "more than " : "", got, bytes);
    return 0;
  }
  case MPT_FILL_SCRIPT:
  case MPT_FILL_BINARY_HDF:
    break;
  }
  return mpt_error_set(err, MPT_ERR_VALUE, "%s: unsupported FillType", what);
}

void mpt_args_free(mpt_args *a) {
  if (!a) return;
  for (int i = 0; i < a->n; i++) free(a->init ? a->init[i] : NULL);
  free(a->init);
  if (a->shared) {
    if (a->shared_base) munmap(a->shared_base, a->shared_bytes);
  } else if (a->ref) {
    for (int i = 0; i < a->n; i++) free(a->ref[i]);
    free(a->ref_ready);
  }
  free(a->ref);
  free(a);
}

int mpt_args_create(const mpt_kernel_spec *ks, int shared, mpt_args **out, mpt_error *err) {
  *out = NULL;
  mpt_args *a = calloc(1, sizeof *a);
  if (!a) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  a->ks = ks;
  a->n = ks->n_args;
  a->shared = shared;
  size_t nn = (size_t)(a->n > 0 ? a->n : 1);
  a->init = calloc(nn, sizeof(void *));
  a->ref = calloc(nn, sizeof(void *));
  int rc = 0;
  if (!a->init || !a->ref) goto nomem;
  for (int i = 0; i < a->n; i++) {
    const mpt_ks_arg *g = &ks->args[i];
    char what[200];
    snprintf(what, sizeof what, "%s: KernelSpecification.Arguments[%d] (%s)", ks->problem->path, i, g->name);
    if (!(a->init[i] = mpt_args_aligned_alloc(g->bytes))) {
      rc = mpt_error_set(err, MPT_ERR_NOMEM, "%s: cannot allocate %zu bytes", what, g->bytes);
      goto fail;
    }
    if (g->mem == MPT_MEM_LOCAL) memset(a->init[i], 0, g->bytes);
    else if ((rc = mpt_args_fill(&g->fill, g->base, g->lanes, g->elem_bytes, g->n_elems, a->init[i], what, err)))
      goto fail;
  }
  /* reference buffers (MPT_ARGS_ALIGN-aligned slices of one mapping when shared) */
  size_t total = 0;
  for (int i = 0; i < a->n; i++)
    if (ks->args[i].output) total += round_up(ks->args[i].bytes, MPT_ARGS_ALIGN);
  size_t flags_off = total;
  total += nn * sizeof(int);
  if (shared) {
    a->shared_bytes = total;
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      rc = mpt_error_set(err, MPT_ERR_NOMEM, "cannot map %zu bytes of shared memory for the reference output: %s",
                         total, strerror(errno));
      goto fail;
    }
    a->shared_base = m;
    a->ref_ready = (int *)((char *)m + flags_off);
    size_t off = 0;
    for (int i = 0; i < a->n; i++)
      if (ks->args[i].output) {
        a->ref[i] = (char *)m + off;
        off += round_up(ks->args[i].bytes, MPT_ARGS_ALIGN);
      }
  } else {
    if (!(a->ref_ready = calloc(nn, sizeof(int)))) goto nomem;
    for (int i = 0; i < a->n; i++)
      if (ks->args[i].output && !(a->ref[i] = mpt_args_aligned_alloc(ks->args[i].bytes))) goto nomem;
  }
  for (int i = 0; i < a->n; i++) {
    const mpt_ks_arg *g = &ks->args[i];
    if (!g->has_reference) continue;
    char what[200];
    snprintf(what, sizeof what, "%s: KernelSpecification.ReferenceArguments (%s)", ks->problem->path, g->name);
    if ((rc = mpt_args_fill(&g->ref, g->base, g->lanes, g->elem_bytes, g->n_elems, a->ref[i], what, err))) goto fail;
    a->ref_ready[i] = 1;
  }
  *out = a;
  return 0;
nomem:
  rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory allocating the kernel's arguments");
fail:
  mpt_args_free(a);
  return rc;
}

int mpt_args_needs_reference_run(const mpt_args *a) {
  for (int i = 0; i < a->n; i++)
    if (a->ks->args[i].output && !a->ref_ready[i]) return 1;
  return 0;
}

void mpt_args_set_reference(mpt_args *a, int i, const void *data) {
  if (i < 0 || i >= a->n || !a->ks->args[i].output || a->ref_ready[i]) return;
  memcpy(a->ref[i], data, a->ks->args[i].bytes);
  a->ref_ready[i] = 1;
}

int mpt_args_compare(const mpt_args *a, int i, const void *data, char *msg, size_t cap) {
  const mpt_ks_arg *g = &a->ks->args[i];
  if (msg && cap) msg[0] = 0;
  if (!g->output || !a->ref_ready[i]) return 1;
  const void *ref = a->ref[i];
  if (g->base == MPT_T_CUSTOM) {
    const uint8_t *x = data, *r = ref;
    int64_t bad = 0, first = -1;
    for (size_t j = 0; j < g->bytes; j++)
      if (x[j] != r[j]) {
        if (first < 0) first = (int64_t)j;
        bad++;
      }
    if (bad && msg)
      snprintf(msg, cap, "%s: %lld of %zu bytes differ; first at byte %lld: %u (expected %u)", g->name,
               (long long)bad, g->bytes, (long long)first, x[first], r[first]);
    return bad == 0;
  }
  int64_t count = g->n_elems * g->lanes;
  int exact = is_integer_type(g->base);
  int64_t bad = 0, first = -1;
  double sum = 0;
  for (int64_t j = 0; j < count; j++) {
    double x = mpt_args_get(g->base, data, j), r = mpt_args_get(g->base, ref, j);
    double d = x == r ? 0.0 : fabs(x - r); /* equal infinities match, as in numpy.allclose (inf - inf is NaN) */
    int ok;
    if (x != r && (isinf(x) || isinf(r))) { /* an infinity matches only itself (numpy.isclose) */
      ok = 0;
    } else if (exact && g->check == MPT_CHECK_ALLCLOSE) { /* 64-bit integers as themselves: a double rounds past 2**53 */
      if (g->base == MPT_T_INT64) ok = ((const int64_t *)data)[j] == ((const int64_t *)ref)[j];
      else if (g->base == MPT_T_UINT64) ok = ((const uint64_t *)data)[j] == ((const uint64_t *)ref)[j];
      else ok = x == r;
    } else {
      switch (g->check) {
      case MPT_CHECK_ALLCLOSE: ok = d <= a->ks->atol + a->ks->rtol * fabs(r); break;
      case MPT_CHECK_SIDE_BY_SIDE: ok = d <= g->threshold; break;
      case MPT_CHECK_SIDE_BY_SIDE_REL: ok = d <= g->threshold * fabs(r); break;
      case MPT_CHECK_ABSDIFF_SUM:
      default:
        ok = d == d; /* NaN never matches */
        sum += d;
        break;
      }
    }
    if (!ok) {
      if (first < 0) first = j;
      bad++;
    }
  }
  if (g->check == MPT_CHECK_ABSDIFF_SUM && bad == 0) {
    if (sum <= g->threshold) return 1;
    if (msg) snprintf(msg, cap, "%s: sum of absolute differences %g exceeds %g", g->name, sum, g->threshold);
    return 0;
  }
  if (bad == 0) return 1;
  if (msg) {
    double x = mpt_args_get(g->base, data, first), r = mpt_args_get(g->base, ref, first);
    const char *rule;
    char rb[96];
    switch (g->check) {
    case MPT_CHECK_SIDE_BY_SIDE: snprintf(rb, sizeof rb, "|diff| > %g", g->threshold); break;
    case MPT_CHECK_SIDE_BY_SIDE_REL: snprintf(rb, sizeof rb, "|diff| > %g*|expected|", g->threshold); break;
    case MPT_CHECK_ABSDIFF_SUM: snprintf(rb, sizeof rb, "not a number"); break;
    default:
      if (exact) snprintf(rb, sizeof rb, "exact comparison");
      else snprintf(rb, sizeof rb, "|diff| > atol %g + rtol %g*|expected|", a->ks->atol, a->ks->rtol);
    }
    rule = rb;
    snprintf(msg, cap, "%s: %lld of %lld values differ; first at [%lld]: %.9g (expected %.9g; %s)", g->name,
             (long long)bad, (long long)count, (long long)first, x, r, rule);
  }
  return 0;
}
