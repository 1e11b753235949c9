/* mpi/wire.c: the wire protocol between coordinator and workers (tags, payloads, non-busy waits,
 * go/no-go, device gathering). See mpi/wire.h. */
#include "mpi/wire.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "spaces/sys/clock.h"

void mpt_backoff_init(mpt_backoff *b, long min_ns, long max_ns) {
  if (min_ns < 1000) min_ns = 1000;
  if (max_ns < min_ns) max_ns = min_ns;
  b->min_ns = min_ns;
  b->max_ns = max_ns;
  b->hold_until = 0;
  mpt_backoff_reset(b);
}

void mpt_backoff_reset(mpt_backoff *b) {
  b->ns = b->min_ns;
  b->idle_since = mpt_wire_now();
}

void mpt_backoff_hold(mpt_backoff *b, double seconds) {
  mpt_backoff_reset(b);
  b->hold_until = b->idle_since + seconds;
}

/* the longest nap allowed now: max_ns, or after a long idle wait a share of the time waited */
static long backoff_cap(const mpt_backoff *b, double now) {
  double waited = now - b->idle_since;
  if (waited < MPT_BACKOFF_IDLE_AFTER_S) return b->max_ns;
  double share = waited * MPT_BACKOFF_IDLE_FRAC * 1e9;
  long cap = share < (double)MPT_BACKOFF_IDLE_MAX_NS ? (long)share : MPT_BACKOFF_IDLE_MAX_NS;
  return cap > b->max_ns ? cap : b->max_ns;
}

/* one nap of b->ns, or less when `limit` (a mpt_wire_now time, 0: none) comes first */
static void backoff_nap(mpt_backoff *b, double limit) {
  long ns = b->ns;
  if (limit > 0) {
    double left = (limit - mpt_wire_now()) * 1e9;
    if (left < (double)ns) ns = left > 1000 ? (long)left : 1000;
  }
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  nanosleep(&ts, NULL); /* EINTR (a signal) just ends the nap early: the caller re-checks */
  double now = mpt_wire_now();
  if (b->hold_until > 0) {
    if (now < b->hold_until) return;
    b->hold_until = 0;
  }
  b->ns += b->ns / 4; /* x1.25: fine-grained while a reply is likely, longer naps when idle for long */
  long cap = backoff_cap(b, now);
  if (b->ns > cap) b->ns = cap;
}

void mpt_backoff_sleep(mpt_backoff *b) { backoff_nap(b, 0); }

double mpt_wire_now(void) { return mpt_clock_mono_s(); }

int mpt_wire_probe_wait(MPI_Comm comm, int source, int tag, double timeout_s, mpt_backoff *b,
                        volatile const int *stop, MPI_Status *st) {
  double t_end = timeout_s >= 0 ? mpt_wire_now() + timeout_s : 0;
  for (;;) {
    int flag = 0;
    MPI_Iprobe(source, tag, comm, &flag, st);
    if (flag) {
      mpt_backoff_reset(b);
      return 1;
    }
    if (stop && *stop) return 0;
    if (timeout_s >= 0 && mpt_wire_now() >= t_end) return 0;
    backoff_nap(b, timeout_s >= 0 ? t_end : 0);
  }
}

void mpt_wire_wait(MPI_Request *req, mpt_backoff *b) {
  for (;;) {
    int flag = 0;
    MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    if (flag) return;
    mpt_backoff_sleep(b);
  }
}

static int recv_bytes(MPI_Comm comm, const MPI_Status *st, void *buf, int size, int tag) {
  int count = 0;
  MPI_Get_count(st, MPI_BYTE, &count);
  if (st->MPI_TAG != tag || count != size) {
    /* drain it anyway so the protocol does not stall, then report */
    char *tmp = malloc(count > 0 ? (size_t)count : 1);
    MPI_Recv(tmp, count, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, comm, MPI_STATUS_IGNORE);
    free(tmp);
    return MPT_ERR_INTERNAL;
  }
  MPI_Recv(buf, size, MPI_BYTE, st->MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE);
  return 0;
}

int mpt_wire_recv_obs(MPI_Comm comm, const MPI_Status *st, mpt_obs *o) {
  int rc = recv_bytes(comm, st, o, (int)sizeof *o, MPT_TAG_RESULT);
  if (rc == 0) o->reason[MPT_OBS_REASON - 1] = '\0';
  return rc;
}

int mpt_wire_recv_work(MPI_Comm comm, const MPI_Status *st, mpt_wire_work *w) {
  return recv_bytes(comm, st, w, (int)sizeof *w, MPT_TAG_WORK);
}

int mpt_wire_recv_stop(MPI_Comm comm, const MPI_Status *st, int *code) {
  return recv_bytes(comm, st, code, (int)sizeof *code, MPT_TAG_STOP);
}

int mpt_wire_recv_fatal(MPI_Comm comm, const MPI_Status *st, mpt_wire_fatal *f) {
  int rc = recv_bytes(comm, st, f, (int)sizeof *f, MPT_TAG_FATAL);
  if (rc == 0) f->msg[sizeof f->msg - 1] = '\0';
  return rc;
}

int mpt_wire_recv_signalled(MPI_Comm comm, const MPI_Status *st, int *sig) {
  return recv_bytes(comm, st, sig, (int)sizeof *sig, MPT_TAG_SIGNALLED);
}

int mpt_wire_recv_drop(MPI_Comm comm, const MPI_Status *st) {
  int zero = 0;
  return recv_bytes(comm, st, &zero, (int)sizeof zero, MPT_TAG_DROP);
}

int mpt_wire_send_work(MPI_Comm comm, int worker, const mpt_wire_work *w, MPI_Request *req) {
  return MPI_Isend(w, (int)sizeof *w, MPI_BYTE, worker, MPT_TAG_WORK, comm, req) == MPI_SUCCESS
             ? 0 : MPT_ERR_INTERNAL;
}

int mpt_wire_send_obs(MPI_Comm comm, int coordinator, const mpt_obs *o, MPI_Request *req) {
  return MPI_Isend(o, (int)sizeof *o, MPI_BYTE, coordinator, MPT_TAG_RESULT, comm, req) == MPI_SUCCESS
             ? 0 : MPT_ERR_INTERNAL;
}

int mpt_wire_send_signalled(MPI_Comm comm, int coordinator, const int *sig, MPI_Request *req) {
  return MPI_Isend(sig, (int)sizeof *sig, MPI_BYTE, coordinator, MPT_TAG_SIGNALLED, comm, req) == MPI_SUCCESS
             ? 0 : MPT_ERR_INTERNAL;
}

void mpt_wire_drop_one(MPI_Comm comm, int worker) {
  MPI_Request req;
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  int zero = 0;
  MPI_Isend(&zero, (int)sizeof zero, MPI_BYTE, worker, MPT_TAG_DROP, comm, &req);
  mpt_wire_wait(&req, &b);
}

void mpt_wire_stop_one(MPI_Comm comm, int worker, int code) {
  MPI_Request req;
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  MPI_Isend(&code, 1, MPI_INT, worker, MPT_TAG_STOP, comm, &req);
  mpt_wire_wait(&req, &b);
}

void mpt_wire_stop_all(MPI_Comm comm, int code) {
  int size;
  MPI_Comm_size(comm, &size);
  if (size <= 1) return;
  MPI_Request *req = malloc(sizeof *req * (size_t)size);
  int *codes = malloc(sizeof *codes * (size_t)size);
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  if (!req || !codes) { /* fall back to one at a time */
    for (int r = 1; r < size; r++) mpt_wire_stop_one(comm, r, code);
  } else {
    for (int r = 1; r < size; r++) {
      codes[r] = code;
      MPI_Isend(&codes[r], 1, MPI_INT, r, MPT_TAG_STOP, comm, &req[r]);
    }
    for (int r = 1; r < size; r++) mpt_wire_wait(&req[r], &b);
  }
  free(req);
  free(codes);
}

int mpt_wire_gonogo(MPI_Comm comm, int rc, mpt_error *err) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* lowest failing rank's code: encode (rank, code) so MIN picks the lowest failing rank */
  int mine = rc < 0 ? rank : size, first;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return 0;
  int code = rc;
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  /* messages to rank 0 */
  enum { M = 1024 };
  char msg[M];
  memset(msg, 0, sizeof msg);
  if (rc < 0) snprintf(msg, sizeof msg, "%s", err && err->msg[0] ? err->msg : "failed");
  char *all = rank == 0 ? calloc((size_t)size, M) : NULL;
  char dummy[M];
  MPI_Gather(msg, M, MPI_CHAR, all ? all : dummy, M, MPI_CHAR, 0, comm);
  if (rank == 0) {
    if (!all) return mpt_error_set(err, code, "rank %d failed (and out of memory for its message)", first);
    int n_fail = 0, same = 1;
    const char *ref = NULL;
    for (int r = 0; r < size; r++) {
      const char *m = all + (size_t)r * M;
      if (!m[0]) continue;
      n_fail++;
      if (!ref) ref = m;
      else if (strcmp(ref, m) != 0) same = 0;
    }
    if (same || n_fail == 1) {
      mpt_error_set(err, code, "%s", ref ? ref : "failed");
    } else { /* different messages: each distinct one once, with the ranks that reported it */
      char buf[sizeof err->msg];
      int len = 0, shown = 0;
      buf[0] = '\0';
      char *done = calloc((size_t)size, 1);
      for (int r = 0; r < size && shown < 4 && done; r++) {
        const char *m = all + (size_t)r * M;
        if (!m[0] || done[r]) continue;
        char ranks[256];
        int rl = 0, nr = 0;
        for (int q = r; q < size; q++) {
          if (done[q] || strcmp(all + (size_t)q * M, m) != 0) continue;
          done[q] = 1;
          if (nr < 8 && rl < (int)sizeof ranks) rl += snprintf(ranks + rl, sizeof ranks - (size_t)rl, "%s%d", nr ? ", " : "", q);
          else if (nr == 8 && rl < (int)sizeof ranks) rl += snprintf(ranks + rl, sizeof ranks - (size_t)rl, ", ...");
          nr++;
        }
        len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s %s: %s", shown ? "\n" : "", nr > 1 ? "ranks" : "rank", ranks, m);
        if (len >= (int)sizeof buf) { len = (int)sizeof buf - 1; break; }
        shown++;
      }
      free(done);
      mpt_error_set(err, code, "%s", buf);
    }
    free(all);
  }
  return code;
}

int mpt_wire_gather_devices(MPI_Comm comm, const mpt_device_info *mine, mpt_device_info *all) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  mpt_device_info dummy;
  int rc = MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, rank == 0 ? (void *)all : (void *)&dummy,
                      (int)sizeof *mine, MPI_BYTE, 0, comm);
  return rc == MPI_SUCCESS ? 0 : MPT_ERR_INTERNAL;
}
