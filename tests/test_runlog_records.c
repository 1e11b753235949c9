/* tests/test_runlog_records.c: the run log's rows (jobs/runlog/runlog_records.c) on the convolution_milo space: an
 * observation survives the trip into a record and back, every corrupted byte of a record is caught, a
 * never-written record is told from a damaged one, the HDF5 type matches the layout in memory, and the
 * raw-byte search of recovery finds exactly the intact records of the space among junk, at any offset, a
 * byte-for-byte copy of one of them once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>
#include <hdf5.h>
#include <zlib.h>
#include "jobs/runlog/runlog_records.h"
#include "spaces/sys/rng.h"
#include "tests/conv_fixture.h"

static int setup(void **state) { return conv_fixture_setup(state, "records"); }
static int teardown(void **state) { return conv_fixture_teardown(state); }

/* an observation of configuration id with every field set to something of its own */
static mpt_obs sample_obs(int64_t id, int k) {
  mpt_obs o;
  mpt_obs_init(&o, id);
  o.status = k % MPT_STATUS_COUNT;
  o.rank = 3 + k;
  o.device = k % 4;
  o.n_times = 1 + k % MPT_OBS_MAX_TIMES;
  for (int t = 0; t < MPT_OBS_MAX_TIMES; t++) o.times[t] = 0.25 * (t + 1) + k;
  o.objective = 1.5 + k;
  o.median = 1.25 + k;
  o.compile_ms = 100.0 + k;
  o.benchmark_ms = 20.0 + k;
  o.framework_ms = 0.5 + k;
  o.t_start = 1.7e9 + k;
  o.t_end = 1.7e9 + k + 0.75;
  snprintf(o.reason, sizeof o.reason, "reason %d", k);
  return o;
}

static void test_roundtrip(void **state) {
  const fixture *f = *state;
  int dims = f->p->n_params;
  size_t rs = mpt_rl_rec_size(dims);
  assert_true(rs >= sizeof(mpt_rl_rec) + sizeof(int32_t) * (size_t)dims + sizeof(int64_t));
  assert_int_equal(rs % 8, 0);
  unsigned char *rec = malloc(rs);
  assert_non_null(rec);
  int64_t n = mpt_space_size(f->s);
  for (int k = 0; k < 50; k++) {
    int64_t id = (n - 1) * k / 49;
    mpt_obs o = sample_obs(id, k), back;
    mpt_rl_rec_from_obs(rec, rs, &o, 7, f->s, dims);
    assert_true(mpt_rl_rec_valid(rec, rs));
    assert_false(mpt_rl_rec_blank(rec, rs));
    assert_int_equal(mpt_rl_rec_id(rec, rs), id);
    assert_int_equal(((const mpt_rl_rec *)rec)->session, 7);
    int idx[dims];
    mpt_space_config(f->s, id, idx);
    for (int p = 0; p < dims; p++) assert_int_equal(mpt_rl_rec_config(rec)[p], idx[p]);
    mpt_rl_rec_to_obs(rec, rs, &back);
    assert_int_equal(back.id, o.id);
    assert_int_equal(back.status, o.status);
    assert_int_equal(back.rank, o.rank);
    assert_int_equal(back.device, o.device);
    assert_int_equal(back.n_times, o.n_times);
    assert_memory_equal(back.times, o.times, sizeof o.times);
    assert_true(back.objective == o.objective && back.median == o.median);
    assert_true(back.compile_ms == o.compile_ms && back.benchmark_ms == o.benchmark_ms);
    assert_true(back.framework_ms == o.framework_ms && back.t_start == o.t_start && back.t_end == o.t_end);
    assert_string_equal(back.reason, o.reason);
  }
  /* a count of times out of range is stored within [0, MPT_OBS_MAX_TIMES]; no space: indices -1 */
  mpt_obs o = sample_obs(0, 1), back;
  o.n_times = MPT_OBS_MAX_TIMES + 5;
  mpt_rl_rec_from_obs(rec, rs, &o, 0, NULL, dims);
  assert_true(mpt_rl_rec_valid(rec, rs));
  mpt_rl_rec_to_obs(rec, rs, &back);
  assert_int_equal(back.n_times, MPT_OBS_MAX_TIMES);
  for (int p = 0; p < dims; p++) assert_int_equal(mpt_rl_rec_config(rec)[p], -1);
  free(rec);
}

/* a new buffer of f's record size, first filled with the byte junk, then holding the record of o */
static unsigned char *record_over_junk(const fixture *f, const mpt_obs *o, int junk) {
  size_t rs = mpt_rl_rec_size(f->p->n_params);
  unsigned char *rec = malloc(rs);
  assert_non_null(rec);
  memset(rec, junk, rs);
  mpt_rl_rec_from_obs(rec, rs, o, 1, f->s, f->p->n_params);
  return rec;
}

/* a record is written whole: the bytes after the reason's NUL are zero, so equal observations give equal bytes */
static void test_no_stray_bytes(void **state) {
  const fixture *f = *state;
  mpt_obs o = sample_obs(5, 2);
  unsigned char *a = record_over_junk(f, &o, 0xAB), *b = record_over_junk(f, &o, 0x11);
  assert_memory_equal(a, b, mpt_rl_rec_size(f->p->n_params));
  free(a);
  free(b);
}

static void test_every_damaged_byte_caught(void **state) {
  const fixture *f = *state;
  int dims = f->p->n_params;
  size_t rs = mpt_rl_rec_size(dims);
  mpt_obs o = sample_obs(mpt_space_size(f->s) / 2, 3);
  unsigned char *rec = record_over_junk(f, &o, 0), *bad = malloc(rs);
  assert_non_null(bad);
  static const unsigned char flips[] = {0x01, 0x80, 0xFF, 0x5A};
  for (size_t i = 0; i < rs; i++)
    for (size_t j = 0; j < sizeof flips; j++) {
      memcpy(bad, rec, rs);
      bad[i] ^= flips[j];
      if (mpt_rl_rec_valid(bad, rs)) fail_msg("byte %zu ^ 0x%02x of a %zu-byte record not caught", i, flips[j], rs);
    }
  /* the fill value of a never-written record: blank, not valid; with one byte set it is damage, not blank */
  memset(bad, 0, rs);
  mpt_rl_rec_set_id(bad, rs, -1);
  assert_true(mpt_rl_rec_blank(bad, rs));
  assert_false(mpt_rl_rec_valid(bad, rs));
  bad[offsetof(mpt_rl_rec, objective)] = 1;
  assert_false(mpt_rl_rec_blank(bad, rs));
  assert_false(mpt_rl_rec_valid(bad, rs));
  free(rec);
  free(bad);
}

static void test_hdf5_type_matches_layout(void **state) {
  const fixture *f = *state;
  int dims = f->p->n_params;
  size_t rs = mpt_rl_rec_size(dims);
  hid_t t = mpt_rl_rec_type(dims);
  assert_true(t >= 0);
  assert_int_equal(H5Tget_size(t), rs);
  struct { const char *name; size_t off; } m[] = {
    {"status", offsetof(mpt_rl_rec, status)}, {"objective", offsetof(mpt_rl_rec, objective)},
    {"times", offsetof(mpt_rl_rec, times)}, {"reason", offsetof(mpt_rl_rec, reason)},
    {"crc", offsetof(mpt_rl_rec, crc)}, {"config", sizeof(mpt_rl_rec)}, {"id", rs - sizeof(int64_t)},
  };
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    int k = H5Tget_member_index(t, m[i].name);
    assert_true(k >= 0);
    assert_int_equal(H5Tget_member_offset(t, (unsigned)k), m[i].off);
  }
  H5Tclose(t);
  hid_t d = mpt_rl_dev_type(), s = mpt_rl_session_type();
  assert_int_equal(H5Tget_size(d), sizeof(mpt_rl_dev));
  assert_int_equal(H5Tget_size(s), sizeof(mpt_rl_session));
  H5Tclose(d);
  H5Tclose(s);
}

/* the CRC a record carries (computed here independently of jobs/runlog/runlog_records.c) */
static uint32_t crc_of(const unsigned char *rec, size_t rs) {
  unsigned char *c = malloc(rs);
  assert_non_null(c);
  memcpy(c, rec, rs);
  memset(c + offsetof(mpt_rl_rec, crc), 0, sizeof(uint32_t));
  uint32_t v = (uint32_t)crc32(0L, c, (uInt)rs);
  free(c);
  return v;
}

static void test_find_records_in_raw_bytes(void **state) {
  const fixture *f = *state;
  int dims = f->p->n_params;
  size_t rs = mpt_rl_rec_size(dims);
  int64_t n = mpt_space_size(f->s);
  char path[512];
  snprintf(path, sizeof path, "%s/raw.bin", f->tmpdir);
  FILE *out = fopen(path, "wb");
  assert_non_null(out);
  mpt_rng rng;
  mpt_rng_seed(&rng, 99);
  unsigned char *rec = malloc(rs), junk[4096];
  assert_non_null(rec);
  int64_t want[64], n_want = 0, pos = 0;
  for (int k = 0; k < 40; k++) {
    /* junk of any length between records (odd lengths too), then one record */
    size_t j = (size_t)mpt_rng_below(&rng, sizeof junk);
    for (size_t i = 0; i < j; i++) junk[i] = (unsigned char)mpt_rng_below(&rng, 256);
    assert_int_equal(fwrite(junk, 1, j, out), j);
    pos += (int64_t)j;
    mpt_obs o = sample_obs((int64_t)mpt_rng_below(&rng, (uint64_t)n), k);
    mpt_rl_rec_from_obs(rec, rs, &o, 0, f->s, dims);
    int kind = k % 5; /* 0..2 intact; 3 one byte damaged; 4 a valid CRC over another configuration's indices */
    if (kind == 3) rec[offsetof(mpt_rl_rec, objective) + 2] ^= 0x10;
    if (kind == 4) {
      int32_t *cfg = (int32_t *)(rec + sizeof(mpt_rl_rec));
      cfg[0] = cfg[0] + 1 < f->p->params[0].n_values ? cfg[0] + 1 : cfg[0] - 1;
      uint32_t c = crc_of(rec, rs);
      memcpy(rec + offsetof(mpt_rl_rec, crc), &c, sizeof c);
    }
    if (kind <= 2) want[n_want++] = pos;
    assert_int_equal(fwrite(rec, 1, rs, out), rs);
    pos += (int64_t)rs;
    if (k % 7 == 6) { /* two intact records side by side */
      mpt_obs o2 = sample_obs((int64_t)mpt_rng_below(&rng, (uint64_t)n), 100 + k);
      mpt_rl_rec_from_obs(rec, rs, &o2, 0, f->s, dims);
      want[n_want++] = pos;
      assert_int_equal(fwrite(rec, 1, rs, out), rs);
      pos += (int64_t)rs;
    }
  }
  /* a byte-for-byte copy of the last record (a stale copy, a write landed twice) is the same record: not taken
   * twice; the same record with another start time is another evaluation: taken */
  mpt_obs again = sample_obs((int64_t)mpt_rng_below(&rng, (uint64_t)n), 7);
  mpt_rl_rec_from_obs(rec, rs, &again, 0, f->s, dims);
  want[n_want++] = pos;
  assert_int_equal(fwrite(rec, 1, rs, out), rs);
  assert_int_equal(fwrite(junk, 1, 13, out), 13);
  assert_int_equal(fwrite(rec, 1, rs, out), rs);
  pos += 2 * (int64_t)rs + 13;
  again.t_start += 1e-3;
  mpt_rl_rec_from_obs(rec, rs, &again, 0, f->s, dims);
  want[n_want++] = pos;
  assert_int_equal(fwrite(rec, 1, rs, out), rs);
  pos += (int64_t)rs;
  assert_int_equal(fclose(out), 0);
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  int64_t *off = NULL, count = -1;
  mpt_error err;
  int rc = mpt_rl_recs_find(fd, path, f->s, dims, &off, &count, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(count, n_want);
  for (int64_t i = 0; i < count; i++) assert_int_equal(off[i], want[i]);
  free(off);
  close(fd);
  /* a file shorter than one record holds none */
  snprintf(path, sizeof path, "%s/short.bin", f->tmpdir);
  out = fopen(path, "wb");
  assert_non_null(out);
  assert_int_equal(fwrite(rec, 1, rs - 1, out), rs - 1);
  assert_int_equal(fclose(out), 0);
  fd = open(path, O_RDONLY);
  assert_int_equal(mpt_rl_recs_find(fd, path, f->s, dims, &off, &count, &err), 0);
  assert_int_equal(count, 0);
  assert_null(off);
  close(fd);
  free(rec);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_roundtrip),
    cmocka_unit_test(test_no_stray_bytes),
    cmocka_unit_test(test_every_damaged_byte_caught),
    cmocka_unit_test(test_hdf5_type_matches_layout),
    cmocka_unit_test(test_find_records_in_raw_bytes),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
