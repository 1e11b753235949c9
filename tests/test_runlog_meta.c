/* tests/test_runlog_meta.c: the run log's metadata copy (jobs/runlog/runlog_meta.c): the settings and the device
 * and session tables survive the trip into a block and back (absent attributes stay absent, unknown ones
 * are skipped), every corrupted byte of a block is caught, and the search finds the intact block among
 * junk, magics that lead nowhere and damaged copies, at any offset, across its read windows too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>
#include "jobs/runlog/runlog_meta.h"
#include "spaces/sys/rng.h"

static const char *const KEYS[] = {"strategy", "options", "seed", "problem_text", "stop_reason", "host"};
#define N_KEYS 6

/* a state with every field of its own; attribute 4 absent, attribute 5 empty */
static void sample_meta(mpt_rl_meta *m, char **vals, mpt_rl_dev *devs, mpt_rl_session *sess) {
  static char problem[5000];
  for (size_t i = 0; i + 1 < sizeof problem; i++) problem[i] = (char)('a' + i % 26);
  problem[sizeof problem - 1] = '\0';
  vals[0] = "bo";
  vals[1] = "acquisition=ei,batch=quantile";
  vals[2] = "12345678901234";
  vals[3] = problem;
  vals[4] = NULL;
  vals[5] = "";
  for (int d = 0; d < 3; d++) {
    memset(&devs[d], 0, sizeof devs[d]);
    devs[d].session = d / 2;
    devs[d].rank = d + 1;
    devs[d].index = d % 2;
    devs[d].memory_gib = 64.0 - d;
    snprintf(devs[d].host, sizeof devs[d].host, "node%02d", d);
    snprintf(devs[d].vendor, sizeof devs[d].vendor, d ? "AMD" : "NVIDIA");
    snprintf(devs[d].name, sizeof devs[d].name, d ? "AMD Instinct MI250X" : "NVIDIA H100");
    snprintf(devs[d].arch, sizeof devs[d].arch, d ? "gfx90a" : "sm_90");
    snprintf(devs[d].evaluator, sizeof devs[d].evaluator, d ? "hip" : "cuda");
  }
  for (int s = 0; s < 2; s++) {
    memset(&sess[s], 0, sizeof sess[s]);
    sess[s].start_unix = 1.79e9 + 3600.5 * s;
    sess[s].pid = 4242 + s;
    snprintf(sess[s].host, sizeof sess[s].host, "login%d", s);
    snprintf(sess[s].start_time, sizeof sess[s].start_time, "2026-11-22T1%d:00:00.500000Z", s);
  }
  *m = (mpt_rl_meta){N_KEYS, KEYS, vals, devs, 3, sess, 2};
}

/* sample_meta's state and its block (blk: malloc'd, size bytes) */
typedef struct sample {
  char *vals[N_KEYS];
  mpt_rl_dev devs[3];
  mpt_rl_session sess[2];
  mpt_rl_meta m;
  size_t size;
  unsigned char *blk;
} sample;

static void make_sample(sample *x) {
  sample_meta(&x->m, x->vals, x->devs, x->sess);
  x->blk = mpt_rl_meta_pack(&x->m, &x->size);
  assert_non_null(x->blk);
}

static void free_unpacked(mpt_rl_meta *m) {
  for (int i = 0; i < m->n_attrs; i++) free(m->values[i]);
  free(m->devs);
  free(m->sess);
}

static void test_roundtrip(void **state) {
  (void)state;
  sample x;
  make_sample(&x);
  mpt_rl_meta m = x.m;
  char **vals = x.vals;
  size_t size = x.size;
  unsigned char *blk = x.blk;
  assert_non_null(blk);
  /* read with the keys in another order, one the block lacks, and without "host" (skipped) */
  const char *keys[] = {"seed", "problem_text", "missing", "strategy", "stop_reason", "options"};
  char *got[6] = {0};
  mpt_rl_meta r = {6, keys, got, NULL, 0, NULL, 0};
  assert_int_equal(mpt_rl_meta_unpack(blk, size, &r), 0);
  assert_string_equal(got[0], vals[2]);
  assert_string_equal(got[1], vals[3]);
  assert_null(got[2]);
  assert_string_equal(got[3], "bo");
  assert_null(got[4]); /* absent when written */
  assert_string_equal(got[5], vals[1]);
  assert_int_equal(r.n_devs, 3);
  assert_int_equal(r.n_sess, 2);
  assert_memory_equal(r.devs, x.devs, sizeof x.devs);
  assert_memory_equal(r.sess, x.sess, sizeof x.sess);
  free_unpacked(&r);
  /* packing is a function of the state: the same bytes again */
  size_t size2;
  unsigned char *again = mpt_rl_meta_pack(&m, &size2);
  assert_true(again && size2 == size && memcmp(again, blk, size) == 0);
  free(again);
  /* no tables, empty value */
  mpt_rl_meta e = {N_KEYS, KEYS, vals, NULL, 0, NULL, 0};
  unsigned char *eb = mpt_rl_meta_pack(&e, &size2);
  char *g2[N_KEYS] = {0};
  mpt_rl_meta r2 = {N_KEYS, KEYS, g2, NULL, 0, NULL, 0};
  assert_int_equal(mpt_rl_meta_unpack(eb, size2, &r2), 0);
  assert_string_equal(g2[5], "");
  assert_int_equal(r2.n_devs + r2.n_sess, 0);
  free_unpacked(&r2);
  free(eb);
  free(blk);
}

/* every byte of a block changed in 3 ways, and the block cut short or read too long: rejected, nothing set */
static void test_every_damaged_byte_caught(void **state) {
  (void)state;
  sample x;
  make_sample(&x);
  unsigned char *bad = malloc(x.size + 1);
  assert_non_null(bad);
  static const unsigned char flips[] = {0x01, 0x80, 0xff};
  char *got[N_KEYS];
  for (size_t i = 0; i < x.size; i++)
    for (int f = 0; f < 3; f++) {
      memcpy(bad, x.blk, x.size);
      bad[i] ^= flips[f];
      memset(got, 0, sizeof got);
      mpt_rl_meta r = {N_KEYS, KEYS, got, NULL, 0, NULL, 0};
      assert_int_equal(mpt_rl_meta_unpack(bad, x.size, &r), -1);
      for (int k = 0; k < N_KEYS; k++) assert_null(got[k]);
      assert_true(r.devs == NULL && r.sess == NULL);
    }
  memcpy(bad, x.blk, x.size);
  bad[x.size] = 0;
  mpt_rl_meta r = {N_KEYS, KEYS, got, NULL, 0, NULL, 0};
  assert_int_equal(mpt_rl_meta_unpack(bad, x.size - 1, &r), -1);
  assert_int_equal(mpt_rl_meta_unpack(bad, x.size + 1, &r), -1);
  free(bad);
  free(x.blk);
}

/* writes n bytes of b at offset off of fd */
static void put_at(int fd, const void *b, size_t n, off_t off) { assert_int_equal(pwrite(fd, b, n, off), (ssize_t)n); }

/* The intact block is found among random junk, after decoys (the magic alone, a block with a wrong CRC,
 * a block whose size runs past the end), wherever it lies: at the start, at an odd offset, with its magic
 * across the boundary of two read windows (8 MB) and in the second window; and a file without one gives 0. */
static void test_find_among_junk(void **state) {
  (void)state;
  sample x;
  make_sample(&x);
  unsigned char *damaged = malloc(x.size);
  assert_true(x.blk && damaged);
  memcpy(damaged, x.blk, x.size);
  damaged[x.size / 3] ^= 0x10;
  const size_t window = 8u << 20;
  const size_t len = window + (1u << 20);
  unsigned char *junk = malloc(len);
  assert_non_null(junk);
  mpt_rng rng;
  mpt_rng_seed(&rng, 77);
  for (size_t i = 0; i < len; i++) junk[i] = (unsigned char)mpt_rng_below(&rng, 256);
  char path[] = "/tmp/mpt_meta_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const off_t where[] = {0, 12345, (off_t)window - 7, (off_t)window - 16, (off_t)window + 333};
  for (size_t w = 0; w < sizeof where / sizeof where[0]; w++) {
    assert_int_equal(ftruncate(fd, 0), 0);
    put_at(fd, junk, len, 0);
    off_t at = where[w];
    if (at > 4000) { /* decoys before it */
      put_at(fd, "mptune-metacopy1", 16, 100);
      put_at(fd, damaged, x.size, 1000);
      unsigned char runaway[32];
      memcpy(runaway, x.blk, 32);
      uint64_t huge = (uint64_t)len;
      memcpy(runaway + 24, &huge, sizeof huge);
      put_at(fd, runaway, sizeof runaway, 1000 + (off_t)x.size + 50);
    }
    put_at(fd, x.blk, x.size, at);
    unsigned char *found;
    size_t fsize;
    mpt_error err = {0};
    assert_int_equal(mpt_rl_meta_find(fd, path, &found, &fsize, &err), 1);
    assert_int_equal(fsize, x.size);
    assert_memory_equal(found, x.blk, x.size);
    free(found);
  }
  /* only the damaged copy: none */
  assert_int_equal(ftruncate(fd, 0), 0);
  put_at(fd, junk, len, 0);
  put_at(fd, damaged, x.size, 5000);
  unsigned char *found = NULL;
  size_t fsize = 0;
  mpt_error err = {0};
  assert_int_equal(mpt_rl_meta_find(fd, path, &found, &fsize, &err), 0);
  assert_null(found);
  close(fd);
  unlink(path);
  free(junk);
  free(damaged);
  free(x.blk);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_roundtrip),
    cmocka_unit_test(test_every_damaged_byte_caught),
    cmocka_unit_test(test_find_among_junk),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
