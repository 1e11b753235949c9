/* jobs/runlog/runlog_h5.c: the HDF5 helpers of the run log (jobs/runlog/): HDF5's last error as text, string
 * types, attributes written and read as text, string arrays (fixed-length or, in format-2 logs,
 * variable-length), 1-D tables. Private to the files of jobs/runlog/ (jobs/runlog/runlog_h5.h). */
#include "jobs/runlog/runlog_h5.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* HDF5 prints nothing; the most specific message of its last failure is kept (mpt_h5_last_error) */
static char h5_last[160];

/* keeps the innermost message on one line; of a failed system call only its error text ("No space left
 * on device"), not the time, descriptor and buffer HDF5 lists with it */
static herr_t keep_innermost(unsigned n, const H5E_error2_t *e, void *data) {
  (void)data;
  if (n != 0 || !e || !e->desc) return 0;
  const char *d = e->desc, *sys = strstr(d, "error message = '");
  if (sys) {
    sys += strlen("error message = '");
    const char *end = strchr(sys, '\'');
    snprintf(h5_last, sizeof h5_last, "%.*s", (int)(end ? end - sys : (ptrdiff_t)strlen(sys)), sys);
  } else {
    snprintf(h5_last, sizeof h5_last, "%s", d);
  }
  for (char *c = h5_last; *c; c++)
    if (*c == '\n' || *c == '\r') *c = ' ';
  return 0;
}

static herr_t note_h5_error(hid_t stack, void *data) {
  (void)data;
  h5_last[0] = '\0';
  H5Ewalk2(stack, H5E_WALK_UPWARD, keep_innermost, NULL);
  return 0;
}

void mpt_h5_quiet(void) {
  H5Eset_auto2(H5E_DEFAULT, note_h5_error, NULL);
  h5_last[0] = '\0';
}

const char *mpt_h5_last_error(void) { return h5_last; }

hid_t mpt_h5_vlstr_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

hid_t mpt_h5_fixstr_type(size_t n, H5T_cset_t cset) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, n);
  H5Tset_strpad(t, H5T_STR_NULLTERM);
  H5Tset_cset(t, cset);
  return t;
}

/* a string attribute, fixed-length (its size: the text and its NUL): stored in the object header, under
 * its checksum, not in the unchecked global heap that variable-length strings use */
int mpt_h5_attr_write_str(hid_t obj, const char *name, const char *value) {
  const char *v = value ? value : "";
  hid_t t = mpt_h5_fixstr_type(strlen(v) + 1, H5T_CSET_UTF8), sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, t, v);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
  return rc < 0 ? -1 : 0;
}

int mpt_h5_attr_write_num(hid_t obj, const char *name, hid_t type, const void *value) {
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, type, value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(sp);
  return rc < 0 ? -1 : 0;
}

/* reads an attribute as text (strings as they are, numbers printed exactly); malloc'd, NULL if absent */
char *mpt_h5_attr_read_text(hid_t obj, const char *name) {
  if (H5Aexists(obj, name) <= 0) return NULL;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return NULL;
  hid_t ft = H5Aget_type(a);
  char *out = NULL;
  char b[64];
  H5T_class_t cls = H5Tget_class(ft);
  if (cls == H5T_STRING) {
    if (mpt_h5_read_strings(a, 1, 1, &out) < 0) { free(out); out = NULL; }
  } else if (cls == H5T_INTEGER) {
    if (H5Tget_sign(ft) == H5T_SGN_NONE) {
      unsigned long long v = 0;
      if (H5Aread(a, H5T_NATIVE_ULLONG, &v) >= 0) { snprintf(b, sizeof b, "%llu", v); out = strdup(b); }
    } else {
      long long v = 0;
      if (H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0) { snprintf(b, sizeof b, "%lld", v); out = strdup(b); }
    }
  } else if (cls == H5T_FLOAT) {
    double v = 0;
    if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0) { snprintf(b, sizeof b, "%.17g", v); out = strdup(b); }
  }
  H5Tclose(ft);
  H5Aclose(a);
  return out;
}

hsize_t mpt_h5_extent(hid_t d) {
  hid_t fs = H5Dget_space(d);
  hsize_t dim = 0;
  if (H5Sget_simple_extent_type(fs) == H5S_SIMPLE) H5Sget_simple_extent_dims(fs, &dim, NULL);
  H5Sclose(fs);
  return dim;
}

/* a 1-D dataset holding exactly n rows */
int mpt_h5_write_table(hid_t file, const char *name, hid_t type, const void *rows, hsize_t n) {
  hsize_t dim = n;
  hid_t sp = H5Screate_simple(1, &dim, NULL);
  hid_t d = H5Dcreate2(file, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = d < 0 ? -1 : (n ? H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) : 0);
  if (d >= 0) H5Dclose(d);
  H5Sclose(sp);
  return rc < 0 ? -1 : 0;
}

void *mpt_h5_read_table(hid_t file, const char *name, hid_t type, size_t row, int *n_out) {
  *n_out = 0;
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return NULL;
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) return NULL;
  hsize_t n = mpt_h5_extent(d);
  void *rows = calloc(n ? n : 1, row);
  if (rows && n && H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0) { free(rows); rows = NULL; }
  H5Dclose(d);
  if (rows) *n_out = (int)n;
  return rows;
}

/* n strings side by side, each in *width bytes (the longest and its NUL), for a fixed-length string type */
char *mpt_h5_pack_strings(const char *const *str, hsize_t n, size_t *width) {
  size_t w = 1;
  for (hsize_t i = 0; i < n; i++) {
    size_t len = str[i] ? strlen(str[i]) + 1 : 1;
    if (len > w) w = len;
  }
  char *out = calloc(n ? n : 1, w);
  for (hsize_t i = 0; out && i < n; i++)
    if (str[i]) memcpy(out + i * w, str[i], strlen(str[i]));
  *width = w;
  return out;
}

/* reads n strings of an attribute (is_attr) or a dataset, variable-length (format 2) or fixed-length
 * (format 3), into malloc'd copies; 0 or -1 */
int mpt_h5_read_strings(hid_t obj, int is_attr, hsize_t n, char **out) {
  hid_t ft = is_attr ? H5Aget_type(obj) : H5Dget_type(obj);
  if (ft < 0) return -1;
  int rc = 0;
  if (H5Tget_class(ft) != H5T_STRING) rc = -1;
  else if (H5Tis_variable_str(ft) > 0) {
    hid_t mt = mpt_h5_vlstr_type();
    char **tmp = calloc(n ? n : 1, sizeof(char *));
    if (!tmp || (n && (is_attr ? H5Aread(obj, mt, tmp) : H5Dread(obj, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp)) < 0)) rc = -1;
    for (hsize_t i = 0; tmp && i < n; i++) {
      if (rc == 0 && !(out[i] = strdup(tmp[i] ? tmp[i] : ""))) rc = -1;
      if (tmp[i]) H5free_memory(tmp[i]);
    }
    free(tmp);
    H5Tclose(mt);
  } else {
    size_t w = H5Tget_size(ft) + 1; /* one more: a NUL even when a value fills its width */
    hid_t mt = mpt_h5_fixstr_type(w, H5Tget_cset(ft)); /* HDF5 converts no character sets */
    char *buf = w < ((size_t)1 << 30) ? calloc(n ? n : 1, w) : NULL;
    if (!buf || (n && (is_attr ? H5Aread(obj, mt, buf) : H5Dread(obj, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)) < 0)) rc = -1;
    for (hsize_t i = 0; rc == 0 && i < n; i++) {
      buf[i * w + w - 1] = '\0';
      if (!(out[i] = strdup(buf + i * w))) rc = -1;
    }
    free(buf);
    H5Tclose(mt);
  }
  H5Tclose(ft);
  return rc;
}

