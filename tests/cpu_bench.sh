#!/usr/bin/env bash
# tests/cpu_bench.sh BUILD_DIR [BUDGET]: the cpu evaluator's figures for docs/PERFORMANCE.md (a
# benchmark, not a test): (1) the cost of one isolated call, serving child vs fork per evaluation
# (bench_cpu_isolate); (2) per example (examples/cpu/*.json), a random-search run with one worker
# (mpiexec.mpich -n 2): mean compile, benchmark and framework time per evaluation, evaluations/s, and the
# default configuration's time against the best found.
set -euo pipefail
b=${1:?usage: tests/cpu_bench.sh BUILD_DIR [BUDGET]}
budget=${2:-30}
cd "$(dirname "$0")/.."
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d /tmp/mpt_cpu_bench_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for mib in 16 128 512; do "$b/tests/bench_cpu_isolate" "$mib" 100; done
for ex in matmul convolution; do
  /usr/bin/python3 - "examples/cpu/$ex.json" "$tmp/default.json" <<'PY'
import json, os, sys
t1 = json.load(open(sys.argv[1]))
for p in t1["ConfigurationSpace"]["TuningParameters"]:
    p["Values"] = "[%r]" % p["Default"]
t1["KernelSpecification"]["KernelFile"] = os.path.abspath(os.path.join(os.path.dirname(sys.argv[1]), t1["KernelSpecification"]["KernelFile"]))
json.dump(t1, open(sys.argv[2], "w"))
PY
  mpiexec.mpich -n 2 "$b/mptune" tune "$tmp/default.json" --strategy brute_force --budget 1 --log "$tmp/$ex-default.h5" >/dev/null 2>&1
  mpiexec.mpich -n 2 "$b/mptune" tune "examples/cpu/$ex.json" --strategy random --budget "$budget" --seed 1 \
    --log "$tmp/$ex.h5" >/dev/null 2>&1
  /usr/bin/python3 - "$ex" "$tmp/$ex.h5" "$tmp/$ex-default.h5" <<'PY'
import sys, h5py, numpy as np
ex, run, d = sys.argv[1:4]
def ev(p):
    with h5py.File(p, "r", swmr=True) as f:
        e = f["evaluations"][:]
        return e[e["id"] >= 0], f.attrs["start_unix"]
e, _ = ev(run)
ok = e[e["status"] == 0]
wall = e["t_end"].max() - e["t_start"].min()
de, _ = ev(d)
print("%-12s %d evaluations (%d ok) in %.1f s = %.2f eval/s | per evaluation: compile %.0f ms, benchmark %.0f ms "
      "(kernel %.2f ms x 8 runs), framework %.1f ms | default %.2f ms, best %.2f ms, speed-up %.1fx"
      % (ex, len(e), len(ok), wall, len(e) / wall, e["compile_ms"].mean(), e["benchmark_ms"].mean(),
         ok["objective"].mean(), e["framework_ms"].mean(), de["objective"][0], ok["objective"].min(),
         de["objective"][0] / ok["objective"].min()))
PY
done
