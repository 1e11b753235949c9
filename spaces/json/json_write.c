/* spaces/json/json_write.c: JSON values written exactly (spaces/json/json_write.h). */
#include "spaces/json/json_write.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

cJSON *mpt_json_exact_number(double x) {
  char buf[40];
  if (!isfinite(x)) return cJSON_CreateNull();
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (strtod(buf, NULL) == x) break;
  }
  return cJSON_CreateRaw(buf);
}

cJSON *mpt_json_exact_int(long long x) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", x);
  return cJSON_CreateRaw(buf);
}
