/* jobs/runlog/runlog_params.c: the run log's parameter tables (jobs/runlog/runlog_params.h): a problem's parameters as
 * tables of names, kinds and values; group /parameters written and read (a dataset per parameter, its kind
 * and position as attributes, the names in order as an attribute of the group); the differences between
 * a log's tables and a problem's, for the message that refuses to resume another problem's log. */
#include "jobs/runlog/runlog_params.h"
#include "jobs/runlog/runlog_h5.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void mpt_rl_params_free(mpt_rl_param *params, int dims) {
  if (!params) return;
  for (int p = 0; p < dims; p++) {
    free(params[p].name);
    free(params[p].num);
    free(params[p].ival);
    if (params[p].str)
      for (int i = 0; i < params[p].n; i++) free(params[p].str[i]);
    free(params[p].str);
  }
  free(params);
}

static const char *kind_name(mpt_runlog_vkind k) {
  return k == MPT_RL_INT ? "int" : k == MPT_RL_FLOAT ? "float" : k == MPT_RL_BOOL ? "bool" : "string";
}

mpt_rl_param *mpt_rl_params_from_problem(const mpt_problem *pr) {
  mpt_rl_param *tab = calloc((size_t)(pr->n_params > 0 ? pr->n_params : 1), sizeof *tab);
  if (!tab) return NULL;
  for (int p = 0; p < pr->n_params; p++) {
    const mpt_param *mp = &pr->params[p];
    mpt_rl_param *t = &tab[p];
    t->name = strdup(mp->name);
    t->n = mp->n_values;
    int all_num = 1, all_int = 1, all_bool = 1;
    for (int i = 0; i < mp->n_values; i++) {
      mpt_vkind k = mp->values[i].kind;
      if (k != MPT_V_INT && k != MPT_V_FLOAT && k != MPT_V_BOOL) all_num = 0;
      if (k != MPT_V_INT && k != MPT_V_BOOL) all_int = 0;
      if (k != MPT_V_BOOL) all_bool = 0;
    }
    t->kind = !all_num ? MPT_RL_STRING : (all_bool && mp->type == MPT_P_BOOL) ? MPT_RL_BOOL
              : (all_int && mp->type != MPT_P_FLOAT) ? MPT_RL_INT : MPT_RL_FLOAT;
    if (!t->name) goto fail;
    if (t->kind == MPT_RL_STRING) {
      t->str = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(char *));
      if (!t->str) goto fail;
      for (int i = 0; i < t->n; i++) {
        int need = mpt_value_str_repr(&mp->values[i], NULL, 0);
        t->str[i] = malloc((size_t)need + 1);
        if (!t->str[i]) goto fail;
        mpt_value_str_repr(&mp->values[i], t->str[i], need + 1);
      }
    } else {
      t->num = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(double));
      if (!t->num) goto fail;
      for (int i = 0; i < t->n; i++) {
        int ok = 0;
        t->num[i] = mpt_value_as_double(&mp->values[i], &ok);
      }
      if (t->kind == MPT_RL_INT) {
        t->ival = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(int64_t));
        if (!t->ival) goto fail;
        for (int i = 0; i < t->n; i++) t->ival[i] = mp->values[i].u.i;
      }
    }
  }
  return tab;
fail:
  mpt_rl_params_free(tab, pr->n_params);
  return NULL;
}

uint32_t mpt_rl_params_crc(const mpt_rl_param *params, int dims) {
  uLong c = crc32(0L, Z_NULL, 0);
  for (int p = 0; p < dims; p++) {
    const mpt_rl_param *t = &params[p];
    int32_t head[2] = {(int32_t)t->kind, (int32_t)t->n};
    c = crc32(c, (const Bytef *)t->name, (uInt)strlen(t->name) + 1);
    c = crc32(c, (const Bytef *)head, sizeof head);
    for (int i = 0; i < t->n; i++) {
      if (t->str) c = crc32(c, (const Bytef *)(t->str[i] ? t->str[i] : ""), (uInt)strlen(t->str[i] ? t->str[i] : "") + 1);
      else if (t->num) c = crc32(c, (const Bytef *)&t->num[i], sizeof t->num[i]);
    }
  }
  return (uint32_t)c;
}

int mpt_rl_params_write(const mpt_rl_param *params, int dims, hid_t file) {
  hid_t g = H5Gcreate2(file, "parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  int rc = 0;
  {
    hsize_t n = (hsize_t)dims;
    hid_t sp = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_NULL);
    const char **names = calloc(n ? n : 1, sizeof(char *));
    for (int p = 0; p < dims && names; p++) names[p] = params[p].name;
    size_t width = 0;
    char *packed = names ? mpt_h5_pack_strings(names, n, &width) : NULL;
    hid_t t = mpt_h5_fixstr_type(width, H5T_CSET_UTF8);
    hid_t a = H5Acreate2(g, "names", t, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || !packed || (n && H5Awrite(a, t, packed) < 0)) rc = -1;
    if (a >= 0) H5Aclose(a);
    free(packed);
    free(names);
    H5Sclose(sp);
    H5Tclose(t);
  }
  for (int p = 0; p < dims && rc == 0; p++) {
    const mpt_rl_param *t = &params[p];
    hsize_t n = (hsize_t)t->n;
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ft, mt;
    const void *data;
    int64_t *iv = NULL;
    int8_t *bv = NULL;
    char *packed = NULL;
    if (t->kind == MPT_RL_STRING) {
      size_t width = 0;
      packed = mpt_h5_pack_strings((const char *const *)t->str, n, &width);
      ft = mpt_h5_fixstr_type(width, H5T_CSET_UTF8);
      mt = H5Tcopy(ft);
      data = packed;
    }
    else if (t->kind == MPT_RL_FLOAT) { ft = H5Tcopy(H5T_IEEE_F64LE); mt = H5Tcopy(H5T_NATIVE_DOUBLE); data = t->num; }
    else if (t->kind == MPT_RL_BOOL) {
      ft = H5Tcopy(H5T_STD_I8LE); mt = H5Tcopy(H5T_NATIVE_INT8);
      bv = calloc(n ? n : 1, 1);
      for (hsize_t i = 0; bv && i < n; i++) bv[i] = t->num[i] != 0;
      data = bv;
    } else {
      ft = H5Tcopy(H5T_STD_I64LE); mt = H5Tcopy(H5T_NATIVE_INT64);
      iv = calloc(n ? n : 1, sizeof(int64_t));
      for (hsize_t i = 0; iv && i < n; i++) iv[i] = t->ival ? t->ival[i] : (int64_t)llround(t->num[i]);
      data = iv;
    }
    hid_t d = H5Dcreate2(g, t->name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0 || !data || (n && H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)) rc = -1;
    if (d >= 0) {
      if (mpt_h5_attr_write_str(d, "type", kind_name(t->kind)) < 0) rc = -1;
      int32_t idx = p;
      if (mpt_h5_attr_write_num(d, "index", H5T_NATIVE_INT32, &idx) < 0) rc = -1;
      H5Dclose(d);
    }
    free(iv);
    free(bv);
    free(packed);
    H5Tclose(ft);
    H5Tclose(mt);
    H5Sclose(sp);
  }
  H5Gclose(g);
  return rc;
}

int mpt_rl_params_read(hid_t file, mpt_rl_param **params, int *dims) {
  hid_t g = H5Gopen2(file, "parameters", H5P_DEFAULT);
  if (g < 0) return -1;
  int rc = 0;
  hid_t a = H5Aopen(g, "names", H5P_DEFAULT);
  if (a < 0) { H5Gclose(g); return -1; }
  hid_t sp = H5Aget_space(a);
  hssize_t n = H5Sget_simple_extent_type(sp) == H5S_NULL ? 0 : H5Sget_simple_extent_npoints(sp);
  H5Sclose(sp);
  *dims = (int)n;
  *params = calloc((size_t)(n > 0 ? n : 1), sizeof **params);
  char **names = calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
  if (!*params || !names || (n > 0 && mpt_h5_read_strings(a, 1, (hsize_t)n, names) < 0)) rc = -1;
  H5Aclose(a);
  for (int p = 0; p < *dims && rc == 0; p++) {
    mpt_rl_param *t = &(*params)[p];
    t->name = strdup(names[p] ? names[p] : "");
    hid_t d = t->name ? H5Dopen2(g, t->name, H5P_DEFAULT) : -1;
    if (d < 0) { rc = -1; break; }
    char *kind = mpt_h5_attr_read_text(d, "type");
    t->kind = !kind ? MPT_RL_STRING : strcmp(kind, "int") == 0 ? MPT_RL_INT : strcmp(kind, "float") == 0 ? MPT_RL_FLOAT
              : strcmp(kind, "bool") == 0 ? MPT_RL_BOOL : MPT_RL_STRING;
    free(kind);
    t->n = (int)mpt_h5_extent(d);
    if (t->kind == MPT_RL_STRING) {
      t->str = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(char *));
      if (!t->str || (t->n && mpt_h5_read_strings(d, 0, (hsize_t)t->n, t->str) < 0)) rc = -1;
    } else {
      t->num = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(double));
      if (t->kind == MPT_RL_INT) { /* exactly, and as doubles from them */
        t->ival = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(int64_t));
        if (!t->num || !t->ival || (t->n && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->ival) < 0)) rc = -1;
        for (int i = 0; rc == 0 && i < t->n; i++) t->num[i] = (double)t->ival[i];
      } else if (!t->num || (t->n && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->num) < 0)) {
        rc = -1;
      }
    }
    H5Dclose(d);
  }
  for (int p = 0; p < n; p++)
    if (names) free(names[p]);
  free(names);
  H5Gclose(g);
  return rc;
}

void mpt_rl_params_diff(const mpt_rl_param *have, int nh, const mpt_rl_param *want, int nw, char *msg, size_t cap) {
  msg[0] = '\0';
  size_t len = 0;
  for (int p = 0; p < nw; p++) {
    int q = -1;
    for (int j = 0; j < nh; j++)
      if (strcmp(have[j].name, want[p].name) == 0) q = j;
    if (q < 0) { snprintf(msg + len, cap - len, "%sparameter '%s' is not in the log", len ? "; " : "", want[p].name); len = strlen(msg); continue; }
    if (q != p) { snprintf(msg + len, cap - len, "%sparameter '%s' is at position %d in the log, %d in the problem", len ? "; " : "", want[p].name, q, p); len = strlen(msg); continue; }
    const mpt_rl_param *a = &have[q], *b = &want[p];
    int same = a->n == b->n && (a->kind == MPT_RL_STRING) == (b->kind == MPT_RL_STRING);
    for (int i = 0; same && i < a->n; i++)
      same = a->kind == MPT_RL_STRING ? strcmp(a->str[i], b->str[i]) == 0
             : a->ival && b->ival     ? a->ival[i] == b->ival[i]
                                      : a->num[i] == b->num[i];
    if (!same) { snprintf(msg + len, cap - len, "%sthe values of parameter '%s' differ", len ? "; " : "", b->name); len = strlen(msg); }
  }
  for (int j = 0; j < nh; j++) {
    int found = 0;
    for (int p = 0; p < nw; p++) found |= strcmp(have[j].name, want[p].name) == 0;
    if (!found) { snprintf(msg + len, cap - len, "%sparameter '%s' of the log is not in the problem", len ? "; " : "", have[j].name); len = strlen(msg); }
  }
}

