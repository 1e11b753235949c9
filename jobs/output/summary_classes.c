/* jobs/output/summary_classes.c: the device classes of a summary (jobs/output/summary.h): the classes of the log's
 * device table in its order (vendor, name, arch), the workers of each, which class each (session, rank) was
 * bound to and so which class evaluated a record (in a log of several classes, its classes and each record's
 * device_class instead), and each class's TARGET_ macro name for the header (after its device, or its class on a
 * device model it shares). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/output/summary.h"
#include "jobs/output/summary_priv.h"

static int same_class(const mpt_summary_device *d, const mpt_device_info *i) {
  return strcmp(d->vendor, i->vendor) == 0 && strcmp(d->name, i->name) == 0 && strcmp(d->arch, i->arch) == 0;
}

/* s->devices grown by one class (vendor, name, arch of info); its index or -1 */
static int add_class(mpt_summary *s, const mpt_device_info *info) {
  mpt_summary_device *d = realloc(s->devices, sizeof *d * (size_t)(s->n_devices + 1));
  if (!d) return -1;
  s->devices = d;
  d = &s->devices[s->n_devices];
  memset(d, 0, sizeof *d);
  snprintf(d->vendor, sizeof d->vendor, "%s", info->vendor);
  snprintf(d->name, sizeof d->name, "%s", info->name);
  snprintf(d->arch, sizeof d->arch, "%s", info->arch);
  d->default_objective = NAN;
  d->default_id = d->confirmed_best_id = -1;
  d->confirmed_best = d->confirmed_default = d->confirmed_speedup = NAN;
  return s->n_devices++;
}

/* prefix, then text with its surrounding blanks stripped and every run of other characters than ASCII letters and
 * digits as one '_': Kernel Tuner's device names in its headers (re.sub('[^0-9a-zA-Z]+', '_', name.strip())) */
static void sanitized(char *out, size_t cap, const char *prefix, const char *text) {
  const unsigned char *c = (const unsigned char *)text, *end = c + strlen(text);
  while (*c && isspace(*c)) c++;
  while (end > c && isspace(end[-1])) end--;
  size_t n = (size_t)snprintf(out, cap, "%s", prefix);
  for (int gap = 0; c < end && n + 2 < cap; c++) {
    int keep = *c < 0x80 && isalnum(*c);
    if (!keep && !gap) out[n++] = '_';
    if (keep) out[n++] = (char)*c;
    gap = !keep;
  }
  out[n] = '\0';
}

/* 1 when another class of s than c has the device name of c (as sanitized: the same macro) */
static int shares_device_name(const mpt_summary *s, int c) {
  char mine[200], other[200];
  sanitized(mine, sizeof mine, "", s->devices[c].name);
  for (int e = 0; e < s->n_devices; e++) {
    if (e == c) continue;
    sanitized(other, sizeof other, "", s->devices[e].name);
    if (strcmp(mine, other) == 0) return 1;
  }
  return 0;
}

/* TARGET_<name> for every class; classes on one device model named after their class where the log names its
 * classes (--simulate CLASS=FILE, --class-ranks CLASS=...), else told apart by their architecture; then by their
 * number where names still agree */
void mpt_summary_name_targets(mpt_summary *s) {
  for (int c = 0; c < s->n_devices; c++) {
    mpt_summary_device *d = &s->devices[c];
    int by_class = d->class_name[0] && shares_device_name(s, c);
    char both[200];
    sanitized(d->target, sizeof d->target, "TARGET_", by_class ? d->class_name : d->name);
    for (int pass = by_class; pass < 2; pass++) {
      int clash = 0;
      for (int e = 0; e < c; e++) clash |= strcmp(s->devices[e].target, d->target) == 0;
      if (!clash) break;
      if (pass == 0) {
        snprintf(both, sizeof both, "%s %s", d->name, d->arch);
        sanitized(d->target, sizeof d->target, "TARGET_", both);
      } else {
        size_t n = strlen(d->target);
        snprintf(d->target + n, sizeof d->target - n, "_%d", c + 1);
      }
    }
  }
}

/* field k (from 0) of a tab-separated line into buf */
static void tab_field(const char *line, int k, char *buf, size_t cap) {
  for (; k > 0 && line[strcspn(line, "\t\n")] == '\t'; k--) line += strcspn(line, "\t\n") + 1;
  snprintf(buf, cap, "%.*s", k ? 0 : (int)strcspn(line, "\t\n"), line);
}

/* a log of several classes (its attribute "classes": "name<TAB>vendor<TAB>device name<TAB>arch" a line,
 * docs/RUNLOG.md): its classes as s->devices in their order, each with its device; 0, or -1 when out of memory */
static int log_classes(mpt_summary *s, mpt_summary_class_map *m) {
  const char *text = mpt_runlog_meta(s->log, "classes"), *nl = text ? strchr(text, '\n') : NULL;
  if (!nl || !nl[1]) return 0; /* one class (or a log before classes were recorded): grouped by device */
  for (const char *line = text; line && *line; line = (nl = strchr(line, '\n')) ? nl + 1 : NULL) {
    mpt_device_info info;
    memset(&info, 0, sizeof info);
    tab_field(line, 1, info.vendor, sizeof info.vendor);
    tab_field(line, 2, info.name, sizeof info.name);
    tab_field(line, 3, info.arch, sizeof info.arch);
    int c = add_class(s, &info);
    if (c < 0) return -1;
    tab_field(line, 0, s->devices[c].class_name, sizeof s->devices[c].class_name);
  }
  m->by_log_class = s->n_devices;
  return 0;
}

/* the classes of the device table, in its order (or the log's classes), and which class each (session, rank) was
 * bound to */
int mpt_summary_map_classes(mpt_summary *s, mpt_summary_class_map *m) {
  memset(m, 0, sizeof *m);
  m->unknown = -1;
  if (log_classes(s, m) < 0) return -1;
  m->n_rows = mpt_runlog_n_devices(s->log);
  m->row_rank = calloc((size_t)m->n_rows + 1, sizeof(int));
  m->row_class = calloc((size_t)m->n_rows + 1, sizeof(int));
  if (!m->row_rank || !m->row_class) return -1;
  for (int r = 0; r < m->n_rows; r++) {
    mpt_device_info info;
    int32_t sess;
    mpt_runlog_device(s->log, r, &info, &sess);
    int c = 0;
    while (!m->by_log_class && c < s->n_devices && !same_class(&s->devices[c], &info)) c++;
    if (m->by_log_class) c = -1; /* a row names no class: its records do */
    else if (c == s->n_devices && add_class(s, &info) < 0) return -1;
    int seen = 0; /* a worker counted once per class, whatever its sessions */
    for (int q = 0; q < r; q++) seen |= m->row_class[q] == c && m->row_rank[q] == info.rank;
    if (!seen && c >= 0) s->devices[c].workers++;
    m->row_rank[r] = info.rank;
    m->row_class[r] = c;
    if (sess >= 0 && sess < 4096 && sess >= m->n_sess) m->n_sess = sess + 1;
    if (info.rank >= 0 && info.rank < 65536 && info.rank >= m->n_ranks) m->n_ranks = info.rank + 1;
  }
  m->at = malloc(sizeof(int) * (size_t)(m->n_sess * m->n_ranks + 1));
  m->seen = calloc((size_t)(m->by_log_class * m->n_ranks + 1), 1);
  if (!m->at || !m->seen) return -1;
  for (int k = 0; k < m->n_sess * m->n_ranks; k++) m->at[k] = -1;
  for (int r = 0; r < m->n_rows; r++) {
    mpt_device_info info;
    int32_t sess;
    mpt_runlog_device(s->log, r, &info, &sess);
    if (sess >= 0 && sess < m->n_sess && info.rank >= 0 && info.rank < m->n_ranks)
      m->at[sess * m->n_ranks + info.rank] = m->row_class[r];
  }
  return 0;
}

void mpt_summary_free_map(mpt_summary_class_map *m) {
  free(m->at);
  free(m->row_rank);
  free(m->row_class);
  free(m->seen);
}

/* the class of o: in a log of several classes the one its device_class names (its worker counted there once);
 * else the class of the worker that evaluated it: its session's row, else a row of its rank in another session;
 * else "unknown" (added once); -1 when out of memory */
int mpt_summary_class_of(mpt_summary *s, mpt_summary_class_map *m, const mpt_obs *o, int32_t session) {
  int c = o->device_class;
  if (m->by_log_class && c >= 0 && c < m->by_log_class) {
    if (o->rank >= 0 && o->rank < m->n_ranks && !m->seen[c * m->n_ranks + o->rank]) {
      m->seen[c * m->n_ranks + o->rank] = 1;
      s->devices[c].workers++;
    }
    return c;
  }
  if (!m->by_log_class && session >= 0 && session < m->n_sess && o->rank >= 0 && o->rank < m->n_ranks) {
    int row = m->at[session * m->n_ranks + o->rank];
    if (row >= 0) return row;
  }
  for (int r = m->n_rows - 1; r >= 0 && !m->by_log_class; r--)
    if (m->row_rank[r] == o->rank) return m->row_class[r];
  if (m->unknown < 0) {
    mpt_device_info none;
    memset(&none, 0, sizeof none);
    snprintf(none.vendor, sizeof none.vendor, "unknown");
    snprintf(none.name, sizeof none.name, "unknown device");
    m->unknown = add_class(s, &none);
  }
  return m->unknown;
}
