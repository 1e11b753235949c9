/* jobs/cli/cmd_show.h: the two forms `mptune show` (jobs/cli/cmd_show.c) prints a run log's summary
 * (jobs/output/summary.h) in: text (cmd_show_text.c) and one JSON document (cmd_show_json.c). Private to
 * jobs/cli/cmd_show*.c. */
#ifndef MPT_CMD_SHOW_H
#define MPT_CMD_SHOW_H
#include "jobs/output/summary.h"

/* the summary s of the log at path on standard output; 0, or -1 when out of memory */
int mpt_show_text(const char *path, const mpt_summary *s);
int mpt_show_json(const char *path, const mpt_summary *s);

#endif
