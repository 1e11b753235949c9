/* jobs/runlog/runlog_meta.c: the run log's metadata copy (jobs/runlog/runlog_meta.h): packing the root attributes and the
 * device and session tables into one checksummed block, reading it back, and finding it in the raw bytes
 * of a file HDF5 can not read.
 *
 * Block layout (native byte order, as the records): the magic "mptune-metacopy1" (16 bytes), uint32 CRC-32
 * of the whole block with this field 0, uint32 0, uint64 size of the whole block; then uint32 number of
 * attributes, each as uint32 key length, key, int32 value length (-1: absent), value; uint32 rows and
 * uint32 row size of the devices, their rows; the same for the sessions. */
#include "jobs/runlog/runlog_meta.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "mptune-metacopy1"
#define MAGIC_LEN 16
#define HEAD 32               /* magic, crc, 0, size */
#define CRC_AT 16
#define SIZE_AT 24            /* the uint64 size of the whole block */
#define MAX_BLOCK (1u << 30)  /* a sanity bound for a size read from a damaged file */
#define WINDOW (8u << 20)     /* bytes read at a time while searching */

typedef struct writer { unsigned char *p; size_t n; } writer;

/* appends len bytes (p NULL: only counts them) */
static void put(writer *w, const void *src, size_t len) {
  if (w->p) memcpy(w->p + w->n, src, len);
  w->n += len;
}
static void put_u32(writer *w, uint32_t v) { put(w, &v, sizeof v); }

static void pack_into(const mpt_rl_meta *m, writer *w) {
  unsigned char head[HEAD] = {0};
  put(w, head, sizeof head);
  put_u32(w, (uint32_t)m->n_attrs);
  for (int i = 0; i < m->n_attrs; i++) {
    size_t kl = strlen(m->keys[i]);
    put_u32(w, (uint32_t)kl);
    put(w, m->keys[i], kl);
    const char *v = m->values[i];
    int32_t vl = v ? (int32_t)strlen(v) : -1;
    put(w, &vl, sizeof vl);
    if (v) put(w, v, (size_t)vl);
  }
  put_u32(w, (uint32_t)m->n_devs);
  put_u32(w, (uint32_t)sizeof(mpt_rl_dev));
  if (m->n_devs) put(w, m->devs, sizeof(mpt_rl_dev) * (size_t)m->n_devs);
  put_u32(w, (uint32_t)m->n_sess);
  put_u32(w, (uint32_t)sizeof(mpt_rl_session));
  if (m->n_sess) put(w, m->sess, sizeof(mpt_rl_session) * (size_t)m->n_sess);
}

unsigned char *mpt_rl_meta_pack(const mpt_rl_meta *m, size_t *size) {
  writer w = {NULL, 0};
  pack_into(m, &w); /* the size */
  *size = w.n;
  w.p = calloc(1, w.n);
  if (!w.p) return NULL;
  w.n = 0;
  pack_into(m, &w);
  uint64_t total = w.n;
  memcpy(w.p, MAGIC, MAGIC_LEN);
  memcpy(w.p + SIZE_AT, &total, sizeof total);
  uint32_t crc = mpt_rl_crc(w.p, w.n, CRC_AT);
  memcpy(w.p + CRC_AT, &crc, sizeof crc);
  return w.p;
}

typedef struct reader { const unsigned char *p; size_t n, at; int bad; } reader;

/* the next len bytes, NULL (and r->bad) past the end */
static const unsigned char *take(reader *r, size_t len) {
  if (r->bad || len > r->n - r->at) { r->bad = 1; return NULL; }
  const unsigned char *s = r->p + r->at;
  r->at += len;
  return s;
}
static uint32_t take_u32(reader *r) {
  uint32_t v = 0;
  const unsigned char *s = take(r, sizeof v);
  if (s) memcpy(&v, s, sizeof v);
  return v;
}

/* whether b holds the header of a block of size bytes with a right CRC (size as read from it) */
static int block_ok(const unsigned char *b, size_t size) {
  uint64_t total;
  uint32_t crc;
  if (size < HEAD || memcmp(b, MAGIC, MAGIC_LEN) != 0) return 0;
  memcpy(&total, b + SIZE_AT, sizeof total);
  memcpy(&crc, b + CRC_AT, sizeof crc);
  return total == size && crc == mpt_rl_crc(b, size, CRC_AT);
}

/* rows of a table: count, row size (must be `row`), the rows as a malloc'd copy */
static void *take_rows(reader *r, size_t row, int *n_out) {
  uint32_t n = take_u32(r), rs = take_u32(r);
  if (r->bad || rs != row || n > (r->n - r->at) / row) { r->bad = 1; return NULL; }
  const unsigned char *s = take(r, (size_t)n * row);
  void *rows = calloc(n ? n : 1, row);
  if (!s || !rows) { free(rows); r->bad = 1; return NULL; }
  if (n) memcpy(rows, s, (size_t)n * row);
  *n_out = (int)n;
  return rows;
}

int mpt_rl_meta_unpack(const unsigned char *blk, size_t size, mpt_rl_meta *m) {
  if (!block_ok(blk, size)) return -1;
  reader r = {blk, size, HEAD, 0};
  char **vals = calloc((size_t)(m->n_attrs > 0 ? m->n_attrs : 1), sizeof *vals);
  if (!vals) return -1;
  uint32_t na = take_u32(&r);
  for (uint32_t a = 0; a < na && !r.bad; a++) {
    uint32_t kl = take_u32(&r);
    const unsigned char *key = take(&r, kl);
    int32_t vl = (int32_t)take_u32(&r);
    const unsigned char *val = vl >= 0 ? take(&r, (size_t)vl) : NULL;
    if (r.bad || vl < 0) continue;
    for (int i = 0; i < m->n_attrs; i++)
      if (strlen(m->keys[i]) == kl && memcmp(m->keys[i], key, kl) == 0 && !vals[i]) {
        vals[i] = malloc((size_t)vl + 1);
        if (!vals[i]) { r.bad = 1; break; }
        memcpy(vals[i], val, (size_t)vl);
        vals[i][vl] = '\0';
        if (memchr(vals[i], '\0', (size_t)vl)) r.bad = 1; /* a string holds no NUL */
      }
  }
  int nd = 0, ns = 0;
  mpt_rl_dev *devs = take_rows(&r, sizeof(mpt_rl_dev), &nd);
  mpt_rl_session *sess = take_rows(&r, sizeof(mpt_rl_session), &ns);
  if (r.bad || r.at != r.n) {
    for (int i = 0; i < m->n_attrs; i++) free(vals[i]);
    free(vals);
    free(devs);
    free(sess);
    return -1;
  }
  for (int i = 0; i < m->n_attrs; i++) m->values[i] = vals[i];
  free(vals);
  m->devs = devs;
  m->n_devs = nd;
  m->sess = sess;
  m->n_sess = ns;
  return 0;
}

/* 1 with *blk when the block whose magic is at off is intact, 0 when not, -1 (errno) on a read error */
static int block_at(int fd, off_t off, off_t file_size, unsigned char **blk, size_t *size) {
  unsigned char head[HEAD];
  if (file_size - off < HEAD) return 0;
  if (pread(fd, head, HEAD, off) != HEAD) return -1;
  uint64_t total;
  memcpy(&total, head + SIZE_AT, sizeof total);
  if (total < HEAD || total > MAX_BLOCK || total > (uint64_t)(file_size - off)) return 0;
  unsigned char *b = malloc((size_t)total);
  if (!b) { errno = ENOMEM; return -1; }
  if (pread(fd, b, (size_t)total, off) != (ssize_t)total) { free(b); return -1; }
  if (!block_ok(b, (size_t)total)) { free(b); return 0; }
  *blk = b;
  *size = (size_t)total;
  return 1;
}

int mpt_rl_meta_find(int fd, const char *path, unsigned char **blk, size_t *size, mpt_error *err) {
  *blk = NULL;
  *size = 0;
  struct stat sb;
  if (fstat(fd, &sb) != 0) return mpt_error_set(err, MPT_ERR_IO, "cannot read %s: %s", path, strerror(errno));
  unsigned char *win = malloc(WINDOW);
  if (!win) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int found = 0;
  /* windows overlap by MAGIC_LEN - 1 bytes: a magic across two of them is seen whole in the second */
  for (off_t at = 0; at < sb.st_size && !found;) {
    size_t want = sb.st_size - at < (off_t)WINDOW ? (size_t)(sb.st_size - at) : WINDOW;
    ssize_t got = pread(fd, win, want, at);
    if (got < (ssize_t)want) { found = -1; break; }
    for (const unsigned char *p = win; !found && (p = memmem(p, want - (size_t)(p - win), MAGIC, MAGIC_LEN)) != NULL; p++)
      found = block_at(fd, at + (p - win), sb.st_size, blk, size);
    if (want < WINDOW) break;
    at += WINDOW - (MAGIC_LEN - 1);
  }
  free(win);
  if (found < 0) return mpt_error_set(err, MPT_ERR_IO, "cannot read %s: %s", path, errno ? strerror(errno) : "short read");
  return found;
}
