/* jobs/runlog/runlog_records.c: the rows of the run log (jobs/runlog/runlog_records.h): the evaluation record's layout and
 * HDF5 type, with the device and session rows'; a record made from an observation and read back into one, its
 * CRC; and the search for records in the raw bytes of a log HDF5 can not read (mpt_runlog_recover). */
#include "jobs/runlog/runlog_records.h"
#include "jobs/runlog/runlog_h5.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define ID_OFF(size) ((size) - sizeof(int64_t))

static hid_t status_enum(void) {
  hid_t t = H5Tenum_create(H5T_NATIVE_INT32);
  for (int32_t s = 0; s < MPT_STATUS_COUNT; s++) H5Tenum_insert(t, mpt_status_name(s), &s);
  return t;
}

/* a record of `fields` bytes of fields, then the value indices, then the id */
static size_t rec_size_of(size_t fields, int dims) {
  size_t sz = fields + sizeof(int32_t) * (size_t)(dims > 0 ? dims : 1);
  return ((sz + 7) & ~(size_t)7) + sizeof(int64_t);
}
size_t mpt_rl_rec_size(int dims) { return rec_size_of(sizeof(mpt_rl_rec), dims); }
size_t mpt_rl_rec_size_v3(int dims) { return rec_size_of(MPT_RL_REC_V3_FIELDS, dims); }
int64_t mpt_rl_rec_id(const unsigned char *rec, size_t size) {
  int64_t id;
  memcpy(&id, rec + ID_OFF(size), sizeof id);
  return id;
}

void mpt_rl_rec_set_id(unsigned char *rec, size_t size, int64_t id) { memcpy(rec + ID_OFF(size), &id, sizeof id); }

/* the type of a record of `fields` bytes of fields (MPT_RL_REC_V3_FIELDS: formats 2 and 3, else the current) */
static hid_t rec_type_of(size_t fields, int dims) {
  size_t size = rec_size_of(fields, dims);
  hid_t t = H5Tcreate(H5T_COMPOUND, size);
  hid_t st = status_enum();
  hsize_t nt = MPT_OBS_MAX_TIMES, nd = (hsize_t)(dims > 0 ? dims : 1);
  hid_t times_t = H5Tarray_create2(H5T_NATIVE_DOUBLE, 1, &nt);
  hid_t cfg_t = H5Tarray_create2(H5T_NATIVE_INT32, 1, &nd);
  hid_t reason_t = mpt_h5_fixstr_type(MPT_OBS_REASON, H5T_CSET_ASCII);
  H5Tinsert(t, "config", fields, cfg_t);
  H5Tinsert(t, "status", HOFFSET(mpt_rl_rec, status), st);
  H5Tinsert(t, "objective", HOFFSET(mpt_rl_rec, objective), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "median", HOFFSET(mpt_rl_rec, median), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "n_times", HOFFSET(mpt_rl_rec, n_times), H5T_NATIVE_INT32);
  H5Tinsert(t, "times", HOFFSET(mpt_rl_rec, times), times_t);
  H5Tinsert(t, "compile_ms", HOFFSET(mpt_rl_rec, compile_ms), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "benchmark_ms", HOFFSET(mpt_rl_rec, benchmark_ms), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "framework_ms", HOFFSET(mpt_rl_rec, framework_ms), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "rank", HOFFSET(mpt_rl_rec, rank), H5T_NATIVE_INT32);
  H5Tinsert(t, "device", HOFFSET(mpt_rl_rec, device), H5T_NATIVE_INT32);
  H5Tinsert(t, "session", HOFFSET(mpt_rl_rec, session), H5T_NATIVE_INT32);
  H5Tinsert(t, "t_start", HOFFSET(mpt_rl_rec, t_start), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "t_end", HOFFSET(mpt_rl_rec, t_end), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "reason", HOFFSET(mpt_rl_rec, reason), reason_t);
  H5Tinsert(t, "crc", HOFFSET(mpt_rl_rec, crc), H5T_NATIVE_UINT32);
  if (fields > MPT_RL_REC_V3_FIELDS) {
    H5Tinsert(t, "n_power", HOFFSET(mpt_rl_rec, n_power), H5T_NATIVE_INT32);
    H5Tinsert(t, "confirm", HOFFSET(mpt_rl_rec, confirm), H5T_NATIVE_INT32);
    H5Tinsert(t, "energy_j", HOFFSET(mpt_rl_rec, energy_j), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "power_w", HOFFSET(mpt_rl_rec, power_w), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "clock_mhz", HOFFSET(mpt_rl_rec, clock_mhz), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "temp_c", HOFFSET(mpt_rl_rec, temp_c), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "device_class", HOFFSET(mpt_rl_rec, device_class), H5T_NATIVE_INT32);
    H5Tinsert(t, "cross_from", HOFFSET(mpt_rl_rec, cross_from), H5T_NATIVE_INT32);
  }
  H5Tinsert(t, "id", ID_OFF(size), H5T_NATIVE_INT64);
  H5Tclose(st);
  H5Tclose(times_t);
  H5Tclose(cfg_t);
  H5Tclose(reason_t);
  return t;
}

hid_t mpt_rl_rec_type(int dims) { return rec_type_of(sizeof(mpt_rl_rec), dims); }
hid_t mpt_rl_rec_type_v3(int dims) { return rec_type_of(MPT_RL_REC_V3_FIELDS, dims); }

hid_t mpt_rl_dev_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(mpt_rl_dev));
  hid_t s64 = mpt_h5_fixstr_type(64, H5T_CSET_ASCII), s32 = mpt_h5_fixstr_type(32, H5T_CSET_ASCII);
  hid_t s128 = mpt_h5_fixstr_type(128, H5T_CSET_ASCII), s16 = mpt_h5_fixstr_type(16, H5T_CSET_ASCII);
  H5Tinsert(t, "session", HOFFSET(mpt_rl_dev, session), H5T_NATIVE_INT32);
  H5Tinsert(t, "rank", HOFFSET(mpt_rl_dev, rank), H5T_NATIVE_INT32);
  H5Tinsert(t, "index", HOFFSET(mpt_rl_dev, index), H5T_NATIVE_INT32);
  H5Tinsert(t, "host", HOFFSET(mpt_rl_dev, host), s64);
  H5Tinsert(t, "vendor", HOFFSET(mpt_rl_dev, vendor), s32);
  H5Tinsert(t, "name", HOFFSET(mpt_rl_dev, name), s128);
  H5Tinsert(t, "arch", HOFFSET(mpt_rl_dev, arch), s32);
  H5Tinsert(t, "memory_gib", HOFFSET(mpt_rl_dev, memory_gib), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "evaluator", HOFFSET(mpt_rl_dev, evaluator), s16);
  H5Tclose(s64); H5Tclose(s32); H5Tclose(s128); H5Tclose(s16);
  return t;
}

hid_t mpt_rl_session_type(void) {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(mpt_rl_session));
  hid_t s64 = mpt_h5_fixstr_type(64, H5T_CSET_ASCII), s40 = mpt_h5_fixstr_type(40, H5T_CSET_ASCII);
  H5Tinsert(t, "start_unix", HOFFSET(mpt_rl_session, start_unix), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "start_time", HOFFSET(mpt_rl_session, start_time), s40);
  H5Tinsert(t, "host", HOFFSET(mpt_rl_session, host), s64);
  H5Tinsert(t, "pid", HOFFSET(mpt_rl_session, pid), H5T_NATIVE_INT32);
  H5Tclose(s64); H5Tclose(s40);
  return t;
}

uint32_t mpt_rl_crc(const unsigned char *b, size_t size, size_t crc_at) {
  static const unsigned char zero[sizeof(uint32_t)];
  uLong c = crc32(0L, b, (uInt)crc_at);
  c = crc32(c, zero, sizeof zero);
  return (uint32_t)crc32(c, b + crc_at + sizeof zero, (uInt)(size - crc_at - sizeof zero));
}

/* the CRC of a record (mpt_runlog_recover checks records in a read-only mapping) */
static uint32_t rec_crc(const unsigned char *rec, size_t size) { return mpt_rl_crc(rec, size, offsetof(mpt_rl_rec, crc)); }

/* a record never written: the fill value (id -1, every other byte 0) */
int mpt_rl_rec_blank(const unsigned char *rec, size_t size) {
  if (mpt_rl_rec_id(rec, size) != -1) return 0;
  for (size_t i = 0; i < ID_OFF(size); i++)
    if (rec[i]) return 0;
  return 1;
}

/* a record of formats 2 and 3 that was written completely */
static int v3_valid(const unsigned char *rec, size_t size) {
  const mpt_rl_rec *r = (const mpt_rl_rec *)rec; /* the fields before n_power lie as in mpt_rl_rec */
  return mpt_rl_rec_id(rec, size) >= 0 && r->crc == mpt_rl_crc(rec, size, offsetof(mpt_rl_rec, crc));
}

/* a record that was written completely */
int mpt_rl_rec_valid(const unsigned char *rec, size_t size) {
  const mpt_rl_rec *r = (const mpt_rl_rec *)rec;
  return mpt_rl_rec_id(rec, size) >= 0 && r->crc == rec_crc(rec, size);
}

/* the fields a record and an observation share one to one (the same names and types in mpt_rl_rec and
 * mpt_obs): mpt_rl_rec_from_obs and mpt_rl_rec_to_obs copy exactly these, so the two directions cannot drift apart */
#define REC_OBS_FIELDS(X) \
  X(status) X(rank) X(device) X(objective) X(median) X(compile_ms) X(benchmark_ms) X(framework_ms) \
  X(t_start) X(t_end) X(n_power) X(confirm) X(energy_j) X(power_w) X(clock_mhz) X(temp_c) X(device_class) \
  X(cross_from)

/* a stored or given count of times, within [0, MPT_OBS_MAX_TIMES] */
static int32_t clamp_times(int32_t n) { return n < 0 ? 0 : n > MPT_OBS_MAX_TIMES ? MPT_OBS_MAX_TIMES : n; }

void mpt_rl_rec_from_obs(unsigned char *dst, size_t size, const mpt_obs *o, int32_t session, const mpt_space *space,
                         int dims) {
  memset(dst, 0, size);
  mpt_rl_rec *r = (mpt_rl_rec *)dst;
  mpt_rl_rec_set_id(dst, size, o->id);
#define COPY_TO_REC(f) r->f = o->f;
  REC_OBS_FIELDS(COPY_TO_REC)
#undef COPY_TO_REC
  r->session = session;
  r->n_times = clamp_times(o->n_times);
  memcpy(r->times, o->times, sizeof r->times);
  memcpy(r->reason, o->reason, MPT_OBS_REASON);
  r->reason[MPT_OBS_REASON - 1] = '\0';
  size_t rl = strlen(r->reason);
  memset(r->reason + rl, 0, MPT_OBS_REASON - rl); /* no stray bytes after the string */
  int32_t *cfg = (int32_t *)(dst + sizeof(mpt_rl_rec));
  if (space && o->id >= 0 && o->id < mpt_space_size(space) && dims > 0) {
    int idx[dims];
    mpt_space_config(space, o->id, idx);
    for (int p = 0; p < dims; p++) cfg[p] = idx[p];
  } else {
    for (int p = 0; p < dims; p++) cfg[p] = -1;
  }
  r->crc = rec_crc(dst, size);
}

void mpt_rl_rec_to_obs(const unsigned char *src, size_t size, mpt_obs *o) {
  const mpt_rl_rec *r = (const mpt_rl_rec *)src;
  memset(o, 0, sizeof *o);
  o->id = mpt_rl_rec_id(src, size);
#define COPY_TO_OBS(f) o->f = r->f;
  REC_OBS_FIELDS(COPY_TO_OBS)
#undef COPY_TO_OBS
  o->n_times = clamp_times(r->n_times);
  memcpy(o->times, r->times, sizeof o->times);
  memcpy(o->reason, r->reason, MPT_OBS_REASON);
  o->reason[MPT_OBS_REASON - 1] = '\0';
}

void mpt_rl_rec_from_v3(const unsigned char *src, unsigned char *dst, int dims) {
  size_t old = mpt_rl_rec_size_v3(dims), size = mpt_rl_rec_size(dims);
  int valid = v3_valid(src, old), blank = mpt_rl_rec_blank(src, old);
  memset(dst, 0, size);
  memcpy(dst, src, MPT_RL_REC_V3_FIELDS);
  memcpy(dst + sizeof(mpt_rl_rec), src + MPT_RL_REC_V3_FIELDS, sizeof(int32_t) * (size_t)(dims > 0 ? dims : 1));
  mpt_rl_rec_set_id(dst, size, mpt_rl_rec_id(src, old));
  if (blank) return; /* never written: still the fill value */
  mpt_rl_rec *r = (mpt_rl_rec *)dst;
  r->energy_j = r->power_w = r->clock_mhz = r->temp_c = NAN;
  if (valid) r->crc = rec_crc(dst, size); /* else it stays the old one: torn or damaged as it was */
}

/* Whether the rec_size bytes at r are a complete record of one of the space's configurations: the cheap
 * fields first (a CRC set, the id in range, the status and counts in range), then the value indices
 * against the space's own for that id, then the CRC. A never-written record (id -1, zeros) never matches. */
static int recover_match(const unsigned char *r, size_t rs, const mpt_space *space, int dims, int64_t n_space, int *idx) {
  size_t co = offsetof(mpt_rl_rec, crc);
  uint32_t crc;
  int32_t status, n_times, session;
  memcpy(&crc, r + co, sizeof crc);
  if (crc == 0) return 0;
  int64_t id = mpt_rl_rec_id(r, rs);
  if (id < 0 || id >= n_space) return 0;
  memcpy(&status, r + offsetof(mpt_rl_rec, status), sizeof status);
  memcpy(&n_times, r + offsetof(mpt_rl_rec, n_times), sizeof n_times);
  memcpy(&session, r + offsetof(mpt_rl_rec, session), sizeof session);
  if (status < 0 || status >= MPT_STATUS_COUNT || n_times < 0 || n_times > MPT_OBS_MAX_TIMES || session < 0) return 0;
  int32_t confirm;
  memcpy(&confirm, r + offsetof(mpt_rl_rec, confirm), sizeof confirm);
  if (confirm != 0) return 0; /* a row of /confirmations: no evaluation (they are not recovered) */
  mpt_space_config(space, id, idx);
  for (int p = 0; p < dims; p++) {
    int32_t v;
    memcpy(&v, r + sizeof(mpt_rl_rec) + sizeof v * (size_t)p, sizeof v);
    if (v != idx[p]) return 0;
  }
  return rec_crc(r, rs) == crc;
}

/* The records already found, by CRC: a record found again byte for byte (a stale copy of it, or a write that
 * landed twice) is one record. Two genuine records always differ: their start times, ranks or sessions do. */
typedef struct {
  int64_t *slot; /* cap entries: index + 1 into the found offsets, 0 empty */
  uint32_t *crc; /* the found records' CRCs, by index */
  int64_t cap;
} seen_set;

static int seen_grow(seen_set *s, int64_t n) {
  int64_t cap = s->cap ? 2 * s->cap : 4096;
  int64_t *slot = calloc((size_t)cap, sizeof *slot);
  if (!slot) return -1;
  for (int64_t i = 0; i < n; i++) {
    int64_t h = (int64_t)(s->crc[i] & (uint32_t)(cap - 1));
    while (slot[h]) h = (h + 1) & (cap - 1);
    slot[h] = i + 1;
  }
  free(s->slot);
  s->slot = slot, s->cap = cap;
  return 0;
}

/* whether the record at base + o (CRC c) equals one found before; otherwise it is entered as found[n] */
static int seen_before(seen_set *s, const unsigned char *base, const int64_t *found, int64_t n, size_t o, size_t rs,
                       uint32_t c) {
  int64_t h = (int64_t)(c & (uint32_t)(s->cap - 1));
  for (; s->slot[h]; h = (h + 1) & (s->cap - 1)) {
    int64_t i = s->slot[h] - 1;
    if (s->crc[i] == c && memcmp(base + found[i], base + o, rs) == 0) return 1;
  }
  s->crc[n] = c;
  s->slot[h] = n + 1;
  return 0;
}

int mpt_rl_recs_find(int fd, const char *path, const mpt_space *space, int dims, int64_t **off, int64_t *count,
                     mpt_error *err) {
  *off = NULL;
  *count = 0;
  struct stat sb;
  if (fstat(fd, &sb) != 0) return mpt_error_set(err, MPT_ERR_IO, "cannot read %s: %s", path, strerror(errno));
  size_t size = (size_t)sb.st_size, rs = mpt_rl_rec_size(dims);
  if (size < rs) return 0;
  const unsigned char *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) return mpt_error_set(err, MPT_ERR_IO, "cannot read %s: %s", path, strerror(errno));
  madvise((void *)base, size, MADV_SEQUENTIAL);
  int64_t n_space = mpt_space_size(space), cap = 0, n = 0;
  int64_t *found = NULL;
  seen_set seen = {0};
  int idx[dims > 0 ? dims : 1];
  int rc = 0;
  size_t page = (size_t)sysconf(_SC_PAGESIZE), dropped = 0, step = (size_t)8 << 20;
  for (size_t o = 0; o + rs <= size;) {
    if (o - dropped >= step + rs) { /* the pages scanned leave the process (memory independent of the file) */
      size_t upto = (o - rs) / page * page;
      madvise((void *)(base + dropped), upto - dropped, MADV_DONTNEED);
      dropped = upto;
    }
    if (!recover_match(base + o, rs, space, dims, n_space, idx)) { o++; continue; }
    if (n == cap) {
      cap = cap ? 2 * cap : 1024;
      int64_t *grown = realloc(found, sizeof *grown * (size_t)cap);
      uint32_t *crcs = grown ? realloc(seen.crc, sizeof *crcs * (size_t)cap) : NULL;
      if (crcs) seen.crc = crcs;
      if (grown) found = grown;
      if (!grown || !crcs) { rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); break; }
    }
    if (2 * (n + 1) > seen.cap && seen_grow(&seen, n) < 0) { rc = mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); break; }
    uint32_t c;
    memcpy(&c, base + o + offsetof(mpt_rl_rec, crc), sizeof c);
    if (!seen_before(&seen, base, found, n, o, rs, c)) found[n++] = (int64_t)o;
    o += rs; /* the records lie side by side */
  }
  munmap((void *)base, size);
  free(seen.slot);
  free(seen.crc);
  if (rc < 0) { free(found); return rc; }
  *off = found;
  *count = n;
  return 0;
}
