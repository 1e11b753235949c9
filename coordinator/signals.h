/* coordinator/signals.h: SIGINT/SIGTERM handling for a run (Slurm sends SIGTERM before killing a job;
 * mpiexec.mpich forwards both to every rank). The handler only records the signal; the coordinator
 * stops dispatching, finishes or cancels what is in flight, flushes the log and exits cleanly. Workers
 * install it too so a forwarded signal does not kill them mid-evaluation. */
#ifndef MPT_SIGNALS_H
#define MPT_SIGNALS_H

/* Installs handlers for SIGINT and SIGTERM (idempotent). */
void mpt_signals_install(void);
/* Restores the default actions. */
void mpt_signals_restore(void);
/* Number of SIGINT/SIGTERM received since install, and the last one's number (0 if none). */
int mpt_signals_count(void);
int mpt_signals_last(void);
/* Monotonic time (spaces/sys/clock.h) of the first signal, 0 before one. */
double mpt_signals_first_s(void);
/* Address of the flag the handler sets (non-zero after a signal): for polling waits. */
volatile const int *mpt_signals_flag(void);

#endif
