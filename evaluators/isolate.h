/* evaluators/isolate.h: running evaluations in a child process of the worker, so that a variant that
 * crashes, hangs or exhausts memory cannot take down the worker. A child is forked and serves
 * requests over a socket pair (length-prefixed messages); when it dies (signal, exit) or misses its
 * deadline (then it is killed with SIGKILL) the call reports a crash or a timeout and the next call
 * forks a new child. In one-shot mode every call gets a fresh child. A crash by SIGSEGV or SIGBUS comes with
 * its faulting address, noted by a handler in the child. The child gets RLIMIT_AS, dies
 * with its parent (PR_SET_PDEATHSIG) and never returns into the caller's code (it leaves with _exit).
 * Also: running an external command (a compiler) with a timeout and its output captured.
 * Reusable by every evaluator (cpu, cuda, hip). */
#ifndef MPT_ISOLATE_H
#define MPT_ISOLATE_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "spaces/sys/error.h"
#include "spaces/sys/watch.h"

typedef struct mpt_isolate mpt_isolate;

/* Runs in the child for each request: reads req, writes up to resp_cap bytes to resp and returns the
 * response length (>= 0); a negative return makes the child exit (reported as a crash). */
typedef long (*mpt_isolate_serve_fn)(void *ctx, const void *req, size_t req_len, void *resp,
                                     size_t resp_cap);
/* Runs once in every new child before its first request (e.g. to create a GPU context); returns 0,
 * or non-zero to make the child exit. May be NULL. */
typedef int (*mpt_isolate_init_fn)(void *ctx);

typedef struct mpt_isolate_opts {
  size_t mem_limit;      /* RLIMIT_AS of the child: bytes on top of the parent's address-space size
                            at fork; 0: no limit (always none under AddressSanitizer) */
  int one_shot;          /* 1: a new child for every call; 0: one child serves until it dies */
  size_t max_request;    /* largest request/response in bytes (0: 1 MiB) */
  mpt_watch watch;       /* asked at least every 100 ms while a call waits for the child; once it says stop
                            the child is killed and the call reports MPT_ISO_CANCELLED. {NULL}: none */
} mpt_isolate_opts;

typedef enum mpt_iso_outcome {
  MPT_ISO_OK = 0,        /* the child answered */
  MPT_ISO_CRASH,         /* the child died: signal (or exit) before answering */
  MPT_ISO_TIMEOUT,       /* no answer before the deadline; the child was killed */
  MPT_ISO_CANCELLED      /* the watch (mpt_isolate_opts.watch) said stop first; the child was killed */
} mpt_iso_outcome;

typedef struct mpt_isolate_result {
  int outcome;           /* mpt_iso_outcome */
  int signal;            /* the signal that killed the child (CRASH), 0 when it exited */
  int exit_status;       /* its exit status when it exited */
  int mem_limit_hit;     /* CRASH by SIGSEGV/SIGBUS with a mem_limit set and plausibly reached: at the fault
                            the child's address space had come within 10 % of mem_limit of its RLIMIT_AS, or the faulting
                            thread's last failed call had failed for want of memory (errno ENOMEM: a malloc
                            that returned NULL) */
  int fault_known;       /* CRASH by SIGSEGV/SIGBUS that the child's handler saw: fault_code, fault_addr hold them */
  int fault_code;        /* the signal's si_code (SEGV_MAPERR, SEGV_ACCERR, SI_KERNEL, BUS_ADRALN, ...) */
  uintptr_t fault_addr;  /* its si_addr: the faulting address (0 for a general-protection fault on x86-64) */
  double seconds;        /* wall time of the call */
  char reason[256];      /* "killed by SIGSEGV (Segmentation fault)", "no answer after 2.0 s: killed" */
} mpt_isolate_result;

/* Creates the isolation (the first child is forked on the first call). */
int mpt_isolate_create(const mpt_isolate_opts *opts, mpt_isolate_serve_fn serve,
                       mpt_isolate_init_fn init, void *ctx, mpt_isolate **out, mpt_error *err);
/* Sends one request and waits for the answer at most timeout_s seconds (<= 0: no limit).
 * Returns 0 when the call took place (see res->outcome; the response is valid only for MPT_ISO_OK),
 * <0 when isolation itself failed (fork, socket). */
int mpt_isolate_call(mpt_isolate *iso, const void *req, size_t req_len, void *resp, size_t resp_cap,
                     size_t *resp_len, double timeout_s, mpt_isolate_result *res, mpt_error *err);
/* Stops the child (if any) and frees. */
void mpt_isolate_destroy(mpt_isolate *iso);
/* number of children forked so far */
int mpt_isolate_forks(const mpt_isolate *iso);
/* pid of the current child, 0 when none */
pid_t mpt_isolate_pid(const mpt_isolate *iso);

/* Runs argv (searched in PATH) with stdin from /dev/null and stdout+stderr captured into out
 * (NUL-terminated, truncated to cap-1 bytes, the rest drained). Waits at most timeout_s (<= 0: no
 * limit), then kills it. *status: exit status (0..255), 128+signal when killed by a signal, -1 on
 * timeout. Returns <0 only when the command cannot be started at all (err names it). */
int mpt_run_command(char *const argv[], double timeout_s, char *out, size_t cap, int *status,
                    double *seconds, mpt_error *err);

/* mpt_run_command with the environment envp (e.g. a private TMPDIR for a compiler), watched: watch (NULL:
 * none) is asked at least every 100 ms while the command runs, and once it says stop the command is killed
 * (*status -2) */
int mpt_run_command_env(char *const argv[], char *const envp[], const mpt_watch *watch, double timeout_s, char *out,
                        size_t cap, int *status, double *seconds, mpt_error *err);

/* In this process from now on (on: 1), commands run in the caller's process group instead of one of their own: a
 * compile-ahead process (evaluators/ahead.c) is its own group, which the worker stops through timed runs and
 * kills at the end, so the compiler it runs must be in it. A timeout then kills the command (its children go
 * with the caller's group). */
void mpt_run_command_in_caller_group(int on);


/* Called by a serve function in the child: the child ends after this answer (its state cannot serve
 * another call: threads a variant left running), and the next call starts a fresh one. */
void mpt_isolate_retire(void);

#endif
