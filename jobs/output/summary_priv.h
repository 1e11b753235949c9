/* jobs/output/summary_priv.h: what the phases of building a summary (jobs/output/summary.h) share: the parameter
 * values (summary_values.c), the device classes (summary_classes.c) and the records (summary_records.c), put
 * together by summary.c. Private to jobs/output/summary*.c. */
#ifndef MPT_SUMMARY_PRIV_H
#define MPT_SUMMARY_PRIV_H
#include <stdint.h>
#include "jobs/output/summary.h"

/* s->names, n_values, values from the log (the problem's values when it matches the tables) and
 * s->default_config; 0 or an error (out of memory) */
int mpt_summary_load_values(mpt_summary *s, mpt_error *err);

/* which device class each worker of each session was bound to */
typedef struct mpt_summary_class_map {
  int n_sess, n_ranks;
  int *at;       /* at[session * n_ranks + rank]: class of that worker, -1 none */
  int *row_rank; /* per row of the device table: its rank and class (fallback for records outside at[]) */
  int *row_class;
  int n_rows;
  int unknown;   /* the class of records no row names, -1 until one is seen */
  int by_log_class; /* a log of several classes: how many (s->devices[0..by_log_class) are they, in their order) */
  unsigned char *seen; /* then seen[class * n_ranks + rank]: that worker evaluated a record of the class */
} mpt_summary_class_map;

/* the classes of the device table, in its order, as s->devices (their workers counted), and which class each
 * (session, rank) was bound to; in a log of several classes (its attribute "classes"), its classes in their order
 * instead (each with its device; workers counted as their records are seen); 0, or -1 when out of memory */
int mpt_summary_map_classes(mpt_summary *s, mpt_summary_class_map *m);
void mpt_summary_free_map(mpt_summary_class_map *m);
/* the class of o: in a log of several classes the one its device_class names; else the class of the worker that
 * evaluated o: its session's row, else a row of its rank in another session; else "unknown" (added once); -1 when
 * out of memory */
int mpt_summary_class_of(mpt_summary *s, mpt_summary_class_map *m, const mpt_obs *o, int32_t session);
/* TARGET_<name> for every class, told apart by their architecture and then their number where names agree */
void mpt_summary_name_targets(mpt_summary *s);

/* the two passes over the log's records: the counts per class and its `top` best configurations (s->records,
 * the classes' counts, default, failures, top); 0 or an error (reading the log, out of memory) */
int mpt_summary_read_records(mpt_summary *s, int top, mpt_error *err);
/* each best configuration's speed-up over its class's default, and s->n_with_records */
void mpt_summary_speedups(mpt_summary *s);
/* a search record of the log's class device_class lies in class cls here (summary_confirmed.c: the class its
 * confirmations are shown in); 0, or -1 when out of memory */
int mpt_summary_note_log_class(mpt_summary *s, int32_t device_class, int cls);
/* the confirmation of each class with records (summary_confirmed.c), read with at least
 * MPT_SUMMARY_CONFIRM_TOP best configurations kept (which tell the finalists from the default measured again
 * apart); 0 or an error (reading the log, out of memory) */
#define MPT_SUMMARY_CONFIRM_TOP 33
int mpt_summary_read_confirmations(mpt_summary *s, mpt_error *err);

#endif
