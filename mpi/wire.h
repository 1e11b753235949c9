/* mpi/wire.h: the wire protocol between the coordinator (rank 0) and the workers: message tags and
 * payloads (a config id out, an mpt_obs back), non-busy waiting (MPI_Iprobe/MPI_Test + nanosleep with
 * an adaptive back-off: MPICH's blocking MPI_Recv/MPI_Wait spin a core), the go/no-go broadcast that
 * makes every rank stop together when any rank found an error before the run, and the gathering of
 * the device table. Only config ids and observations cross the wire. */
#ifndef MPT_WIRE_H
#define MPT_WIRE_H
#include <mpi.h>
#include <stdint.h>
#include "spaces/sys/obs.h"
#include "spaces/sys/error.h"
#include "evaluators/evaluator.h"

enum {
  MPT_TAG_WORK = 0x4d01,   /* coordinator -> worker: one mpt_wire_work */
  MPT_TAG_RESULT,          /* worker -> coordinator: one mpt_obs (bytes) */
  MPT_TAG_STOP,            /* coordinator -> worker: one int, the exit status the worker returns */
  MPT_TAG_FATAL,           /* worker -> coordinator: mpt_wire_fatal, the evaluator cannot go on */
  MPT_TAG_SIGNALLED,       /* worker -> coordinator: one int, the signal (SIGINT, SIGTERM) the worker received
                              itself; it takes no more work from then on */
  MPT_TAG_DROP,            /* coordinator -> worker: one int (0); the run is stopping: the worker answers every
                              configuration it holds but has not started with a cancelled observation */
};

/* One piece of work: the config id and the search it belongs to (one search per (job, device class): the
 * coordinator's index), so that a worker can serve more than one search. */
typedef struct mpt_wire_work {
  int64_t id;
  int32_t search;
  int32_t job;
} mpt_wire_work;

/* Sent by a worker whose evaluator returned an error (not a failed variant: a broken evaluator). */
typedef struct mpt_wire_fatal {
  int64_t id;              /* the config it was evaluating */
  int32_t code;            /* MPT_ERR_* */
  int32_t pad;
  char msg[1024];
} mpt_wire_fatal;

/* Adaptive back-off for polling waits: sleeps min_ns first, growing by 1/4 per nap up to max_ns (reached
 * after ~14 naps, ~4 ms); reset on activity. A hold keeps the naps at min_ns for a while (a worker
 * that just sent a result expects the next id within a millisecond or so). After MPT_BACKOFF_IDLE_AFTER_S
 * without activity the cap grows with the time waited: a nap is at most MPT_BACKOFF_IDLE_FRAC of it
 * (so noticing a message late costs at most 2 % of the wait) and at most MPT_BACKOFF_IDLE_MAX_NS. A long
 * idle wait then wakes ~50 times a second instead of 1000: this matters where a wake-up (syscalls,
 * MPICH's progress engine) is slow, as on some virtual machines. */
typedef struct mpt_backoff { long ns, min_ns, max_ns; double hold_until, idle_since; } mpt_backoff;
#define MPT_BACKOFF_MIN_NS 50000L       /* 50 us */
#define MPT_BACKOFF_MAX_NS 1000000L     /* 1 ms */
#define MPT_BACKOFF_HOLD_S 0.003        /* worker: fine-grained polling for 3 ms after a result */
#define MPT_BACKOFF_IDLE_AFTER_S 0.1    /* idle this long: the cap grows with the wait */
#define MPT_BACKOFF_IDLE_FRAC 0.02      /* ... to this fraction of the time waited */
#define MPT_BACKOFF_IDLE_MAX_NS 20000000L /* ... at most 20 ms */
void mpt_backoff_init(mpt_backoff *b, long min_ns, long max_ns);
void mpt_backoff_reset(mpt_backoff *b);
/* reset, and keep the naps at min_ns for the next `seconds` */
void mpt_backoff_hold(mpt_backoff *b, double seconds);
void mpt_backoff_sleep(mpt_backoff *b);

/* Monotonic clock in seconds. */
double mpt_wire_now(void);

/* Waits for a message matching (source, tag) without spinning. Returns 1 when one is there (st is
 * filled, the message is not received yet), 0 when `timeout_s` (<0: none) elapsed or *stop became
 * non-zero (stop may be NULL). */
int mpt_wire_probe_wait(MPI_Comm comm, int source, int tag, double timeout_s, mpt_backoff *b,
                        volatile const int *stop, MPI_Status *st);
/* Completes a request without spinning (MPI_Test + back-off). */
void mpt_wire_wait(MPI_Request *req, mpt_backoff *b);

/* Receives the message announced by st (already probed, so MPI_Recv returns at once). */
int mpt_wire_recv_obs(MPI_Comm comm, const MPI_Status *st, mpt_obs *o);
int mpt_wire_recv_work(MPI_Comm comm, const MPI_Status *st, mpt_wire_work *w);
int mpt_wire_recv_stop(MPI_Comm comm, const MPI_Status *st, int *code);
int mpt_wire_recv_fatal(MPI_Comm comm, const MPI_Status *st, mpt_wire_fatal *f);
int mpt_wire_recv_signalled(MPI_Comm comm, const MPI_Status *st, int *sig);
int mpt_wire_recv_drop(MPI_Comm comm, const MPI_Status *st);

/* Non-blocking sends. The buffer must stay untouched until the request completes. */
int mpt_wire_send_work(MPI_Comm comm, int worker, const mpt_wire_work *w, MPI_Request *req);
int mpt_wire_send_obs(MPI_Comm comm, int coordinator, const mpt_obs *o, MPI_Request *req);
int mpt_wire_send_signalled(MPI_Comm comm, int coordinator, const int *sig, MPI_Request *req);
/* Sends STOP(code) to every rank 1..size-1 and waits (without spinning) for the sends to complete. */
void mpt_wire_stop_all(MPI_Comm comm, int code);
/* Sends DROP to one worker, completed without spinning. */
void mpt_wire_drop_one(MPI_Comm comm, int worker);
/* Sends STOP(code) to one worker, completed without spinning. */
void mpt_wire_stop_one(MPI_Comm comm, int worker, int code);

/* Go/no-go (collective over comm): every rank passes its own result (0 or <0 with err filled). Returns
 * 0 on every rank when all succeeded; otherwise the first failing rank's code on every rank, and on
 * rank 0 err holds the message(s) (prefixed "rank N: " when ranks failed differently). Never hangs:
 * one MPI_Allreduce and one MPI_Gather. */
int mpt_wire_gonogo(MPI_Comm comm, int rc, mpt_error *err);

/* Gathers every rank's device info on rank 0 (collective). `all` (size entries) is used on rank 0. */
int mpt_wire_gather_devices(MPI_Comm comm, const mpt_device_info *mine, mpt_device_info *all);

#endif
