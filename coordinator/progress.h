/* coordinator/progress.h: the progress line on stderr: evaluations done / budget, valid / failed (/ missing), best
 * so far, evaluations per second, ETA. Redrawn in place (\r) on a terminal (also when stderr goes
 * through mpiexec to one); periodic plain lines (every 5 s or 10 % of the budget) otherwise. With one rank
 * the coordinator also redraws it during an evaluation (running_since: "| evaluating for m:ss"). */
#ifndef MPT_PROGRESS_H
#define MPT_PROGRESS_H
#include <stdint.h>
#include <stdio.h>

typedef enum mpt_progress_mode { MPT_PROGRESS_AUTO, MPT_PROGRESS_TTY, MPT_PROGRESS_LINES, MPT_PROGRESS_OFF } mpt_progress_mode;

typedef struct mpt_progress {
  FILE *f;
  int tty;               /* redraw in place */
  int off;
  int64_t budget;        /* total evaluations (0: unknown) */
  double time_budget;    /* seconds (0: none) */
  int64_t done0;         /* done when this session started (resume) */
  double t0;             /* monotonic start of this session */
  double last_draw;
  int64_t last_decile;
  int drawn;             /* a \r line is on screen */
  int64_t last_done;     /* done count of the last line drawn (-1: none) */
  double interval;       /* plain-line period (s) */
  double running_since;  /* start of the evaluation running now, with one rank (0: none): the line says for
                            how long it has run once that is a second or more */
  const char *doing;     /* what a long ask is doing (NULL: nothing), said at the end of the line */
  int64_t missing;       /* configurations a replayed file lacks, skipped (set by the caller): "missing N" after
                            valid and failed when > 0 */
  const char *classes;   /* a run of several device classes: each class's part (" | A100 12/40 best 0.93 ms 3.1/s ETA
                            0:05 | ..."), set by the caller, said at the end of the line (NULL: none) */
} mpt_progress;

/* 1 when f is a terminal, or f is stderr piped to an mpiexec/mpirun/srun whose stderr is one. */
int mpt_progress_terminal(FILE *f);

void mpt_progress_init(mpt_progress *p, FILE *f, mpt_progress_mode mode, int64_t budget, double time_budget,
                       int64_t done0, double now);
/* Formats the line into buf (no newline); returns its length. */
int mpt_progress_format(const mpt_progress *p, double now, int64_t done, int64_t valid, int64_t failed,
                        double best, char *buf, int cap);
/* 1 when mpt_progress_update would draw now without force (a caller formats what it adds to the line then). */
int mpt_progress_due(const mpt_progress *p, double now, int64_t done);
/* Draws when due (force: draw now). */
void mpt_progress_update(mpt_progress *p, double now, int64_t done, int64_t valid, int64_t failed,
                         double best, int force);
/* A duration as m:ss or h:mm:ss ("?" when negative or not finite); returns the length. */
int mpt_progress_duration(double seconds, char *buf, int cap);
/* Final line (ends the \r line with a newline). */
void mpt_progress_finish(mpt_progress *p, double now, int64_t done, int64_t valid, int64_t failed, double best);

#endif
