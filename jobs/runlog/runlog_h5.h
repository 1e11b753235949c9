/* jobs/runlog/runlog_h5.h: HDF5 helpers shared by the run log's files (jobs/runlog/); not a public interface. */
#ifndef MPT_RUNLOG_H5_H
#define MPT_RUNLOG_H5_H
#include <hdf5.h>
#include <stddef.h>

/* HDF5 prints no error stacks; the most specific message of its last failure since mpt_h5_quiet is
 * kept: mpt_h5_last_error() ("" when none) */
void mpt_h5_quiet(void);
const char *mpt_h5_last_error(void);

hid_t mpt_h5_vlstr_type(void);        /* variable-length UTF-8 string (format-2 logs) */
hid_t mpt_h5_fixstr_type(size_t n, H5T_cset_t cset); /* n bytes, NUL-terminated */

/* a scalar string attribute, fixed-length (the text and its NUL), UTF-8; 0 or -1 */
int mpt_h5_attr_write_str(hid_t obj, const char *name, const char *value);
/* a scalar numeric attribute of the given type; 0 or -1 */
int mpt_h5_attr_write_num(hid_t obj, const char *name, hid_t type, const void *value);
/* an attribute as text (strings as they are, numbers printed exactly); malloc'd, NULL if absent */
char *mpt_h5_attr_read_text(hid_t obj, const char *name);

/* n strings side by side, each in *width bytes (the longest and its NUL); malloc'd */
char *mpt_h5_pack_strings(const char *const *str, hsize_t n, size_t *width);
/* the n strings of an attribute (is_attr) or dataset, fixed- or variable-length, as malloc'd copies */
int mpt_h5_read_strings(hid_t obj, int is_attr, hsize_t n, char **out);

hsize_t mpt_h5_extent(hid_t d);       /* rows of a 1-D dataset (0 if not simple) */
/* a 1-D dataset holding exactly n rows; 0 or -1 */
int mpt_h5_write_table(hid_t file, const char *name, hid_t type, const void *rows, hsize_t n);
/* all rows of a 1-D dataset (malloc'd, *n_out rows), NULL when absent or unreadable */
void *mpt_h5_read_table(hid_t file, const char *name, hid_t type, size_t row, int *n_out);

#endif
