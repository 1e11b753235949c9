/* spaces/json/json_write.h: JSON values written exactly, for every part that writes JSON (the T4 export,
 * `mptune show --json`): cJSON's own printing may drop a double's last digits and reads every integer
 * through a double. */
#ifndef MPT_JSON_WRITE_H
#define MPT_JSON_WRITE_H
#include <cjson/cJSON.h>

/* a number that reads back as exactly x (the shortest of %.15g..%.17g that does); null when not finite */
cJSON *mpt_json_exact_number(double x);
/* an integer as it is (exact past 2**53, where a double is not) */
cJSON *mpt_json_exact_int(long long x);

#endif
