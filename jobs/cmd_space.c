/* jobs/cmd_space.c: `mptune space FILE.json [--json] [--list FILE.csv]` (being written). */
#include <stdio.h>
#include "jobs/commands.h"
int mpt_cmd_space(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "mptune space: not built yet\n"); return 1; }
