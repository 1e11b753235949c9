/* jobs/output/export_classes.c: the T4 export of a run of several device classes (jobs/runlog/runlog.h):
 * one T4 file per class, named after the class (run_T4.json: run_T4.a100.json), each holding that class's
 * records only; a run of one class keeps its one file. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/output/outfile.h"
#include "jobs/runlog/runlog.h"

void mpt_runlog_t4_class_path(const char *t4_path, const char *name, char *buf, size_t cap) {
  char slug[64];
  size_t n = 0;
  for (const char *c = name; *c && n + 1 < sizeof slug; c++) { /* lower-case letters and digits, '-' between */
    int ok = isalnum((unsigned char)*c);
    if (ok) slug[n++] = (char)tolower((unsigned char)*c);
    else if (n && slug[n - 1] != '-') slug[n++] = '-';
  }
  while (n && slug[n - 1] == '-') n--;
  slug[n] = '\0';
  size_t len = strlen(t4_path);
  size_t stem = len > 5 && strcmp(t4_path + len - 5, ".json") == 0 ? len - 5 : len;
  snprintf(buf, cap, "%.*s.%s%s", (int)stem, t4_path, n ? slug : "class", stem < len ? ".json" : "");
}

/* the class names of the log's classes attribute (one a line, the name before the first tab) */
static int class_names(const char *text, char names[][64], int max) {
  int n = 0;
  for (const char *line = text; line && *line && n < max;) {
    const char *nl = strchr(line, '\n');
    size_t len = strcspn(line, "\t\n");
    snprintf(names[n++], 64, "%.*s", (int)len, line);
    line = nl ? nl + 1 : NULL;
  }
  return n;
}

int mpt_runlog_write_t4_classes(mpt_runlog *log, const char *t4_path, FILE *report, const char *label, mpt_error *err) {
  char names[64][64], path[4096];
  int n = class_names(mpt_runlog_meta(log, "classes"), names, 64);
  if (n <= 1 || mpt_outfile_special(t4_path)) {
    int rc = mpt_runlog_write_t4(log, t4_path, err);
    if (rc == 0 && report && label) fprintf(report, "%s %s\n", label, t4_path);
    return rc;
  }
  for (int k = 0; k < n; k++) {
    mpt_runlog_t4_class_path(t4_path, names[k], path, sizeof path);
    int rc = mpt_runlog_write_t4_class(log, path, k, err);
    if (rc < 0) return rc;
    if (report && label) fprintf(report, "%s %s (class %s)\n", label, path, names[k]);
  }
  return 0;
}

int mpt_runlog_export_t4_classes(const char *log_path, const char *t4_path, FILE *report, const char *label,
                                 mpt_error *err) {
  mpt_runlog *log;
  int rc = mpt_runlog_open_readonly(log_path, &log, err);
  if (rc < 0) return rc;
  rc = mpt_runlog_write_t4_classes(log, t4_path, report, label, err);
  mpt_runlog_close(log);
  return rc;
}
