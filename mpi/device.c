/* mpi/device.c: node-local worker rank (device binding), CPU/evaluator device descriptions and the
 * device table. See mpi/device.h. */
#include "mpi/device.h"
#include "mpi/device_class.h"
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int mpt_device_local_rank(MPI_Comm comm, int is_worker, int *local_rank, int *local_count) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node = MPI_COMM_NULL, workers = MPI_COMM_NULL;
  *local_rank = -1;
  *local_count = 0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return MPT_ERR_INTERNAL;
  int nrank;
  MPI_Comm_rank(node, &nrank);
  if (MPI_Comm_split(node, is_worker ? 0 : MPI_UNDEFINED, nrank, &workers) != MPI_SUCCESS) {
    MPI_Comm_free(&node);
    return MPT_ERR_INTERNAL;
  }
  if (workers != MPI_COMM_NULL) {
    MPI_Comm_rank(workers, local_rank);
    MPI_Comm_size(workers, local_count);
    MPI_Comm_free(&workers);
  }
  MPI_Comm_free(&node);
  return 0;
}

static void copy_str(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

static void trim(char *s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
  size_t i = 0;
  while (s[i] == ' ' || s[i] == '\t') i++;
  if (i) memmove(s, s + i, n - i + 1);
}

/* "model name" (x86), else "Model"/"cpu model"/"Hardware" (other architectures) */
static void cpu_model(char *out, size_t cap) {
  copy_str(out, cap, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  static const char *const keys[] = {"model name", "Model", "cpu model", "Hardware", "cpu"};
  int best = (int)(sizeof keys / sizeof keys[0]);
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (!colon) continue;
    *colon = '\0';
    char key[128];
    copy_str(key, sizeof key, line);
    trim(key);
    for (int k = 0; k < best; k++) {
      if (strcmp(key, keys[k]) == 0) {
        char val[384];
        copy_str(val, sizeof val, colon + 1);
        trim(val);
        if (val[0]) {
          copy_str(out, cap, val);
          best = k;
        }
        break;
      }
    }
    if (best == 0) break;
  }
  fclose(f);
}

void mpt_device_cpu(mpt_device_info *d, int rank, const char *evaluator) {
  memset(d, 0, sizeof *d);
  d->rank = rank;
  d->index = -1;
  if (gethostname(d->host, sizeof d->host) != 0) copy_str(d->host, sizeof d->host, "unknown");
  d->host[sizeof d->host - 1] = '\0';
  copy_str(d->vendor, sizeof d->vendor, "CPU");
  cpu_model(d->name, sizeof d->name);
  struct utsname u;
  if (uname(&u) == 0) copy_str(d->arch, sizeof d->arch, u.machine);
  else copy_str(d->arch, sizeof d->arch, "unknown");
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  d->memory_gib = (pages > 0 && psize > 0) ? (double)pages * (double)psize / (1024.0 * 1024.0 * 1024.0) : 0;
  copy_str(d->evaluator, sizeof d->evaluator, evaluator ? evaluator : "");
}

void mpt_device_describe(const mpt_evaluator *ev, int rank, mpt_device_info *d) {
  if (!ev || (!ev->device.vendor[0] && !ev->device.name[0])) {
    mpt_device_cpu(d, rank, ev && ev->type ? ev->type->name : NULL);
    mpt_device_class_assign(d, NULL);
    return;
  }
  *d = ev->device;
  d->rank = rank;
  if (!d->host[0] && gethostname(d->host, sizeof d->host) != 0) copy_str(d->host, sizeof d->host, "unknown");
  d->host[sizeof d->host - 1] = '\0';
  if (!d->evaluator[0] && ev->type) copy_str(d->evaluator, sizeof d->evaluator, ev->type->name);
  if (!d->arch[0]) {
    struct utsname u;
    if (strcmp(d->vendor, "CPU") == 0 && uname(&u) == 0) copy_str(d->arch, sizeof d->arch, u.machine);
  }
  mpt_device_class_assign(d, NULL);
}

void mpt_device_visible(char *buf, int cap) {
  static const char *const vars[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"};
  int len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (!v || len >= cap) continue;
    len += snprintf(buf + len, (size_t)(cap - len), "%s%s=%s", len ? " " : "", vars[i], v);
  }
}

void mpt_device_table_print(FILE *f, const mpt_device_info *d, int n) {
  fprintf(f, "%-5s %-16s %-8s %-6s %-40s %-10s %9s  %s\n", "rank", "host", "vendor", "device", "name",
          "arch", "memory", "evaluator");
  for (int i = 0; i < n; i++) {
    if (d[i].rank < 0) continue;
    char idx[16];
    if (d[i].index >= 0) snprintf(idx, sizeof idx, "%d", d[i].index);
    else snprintf(idx, sizeof idx, "-");
    fprintf(f, "%-5d %-16.64s %-8.32s %-6s %-40.128s %-10.32s %6.1f GiB  %.16s\n", d[i].rank, d[i].host,
            d[i].vendor, idx, d[i].name, d[i].arch, d[i].memory_gib, d[i].evaluator);
  }
}
