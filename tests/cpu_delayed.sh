#!/usr/bin/env bash
# tests/cpu_delayed.sh: a timed run the scheduler delayed is run again (evaluators/cpu/cpu_child.c). The kernel of
# tests/kernels/delayed.c makes its first timed run wait for its core for about 20 ms (a thread of its own spinning
# beside it on one core, as a loaded node's other processes do); the cpu evaluator sees the wait (the threads'
# runqueue time, /proc/self/task/*/schedstat) and sets that run aside: every logged time is the kernel's (well
# under a millisecond) while the evaluation's benchmark time still holds the delayed run. Before, the delayed run
# was logged (about 20-40 ms against 0.1 us), and with it an objective 10^5 times the kernel's. On one rank and on
# a worker; isolation=fork gives each evaluation a process of its own (the kernel counts its calls).
set -euo pipefail
: "${MPTUNE:?}" "${MPIEXEC:?}" "${PYTHON:?}" "${MPT_SOURCE_DIR:?}"
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d /tmp/mpt_cpu_delayed_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for np in 1 2; do
  "$MPIEXEC" -n $np "$MPTUNE" tune "$MPT_SOURCE_DIR/tests/kernels/delayed.json" --strategy brute_force --budget 1 \
    --confirm 0 --evaluator-option isolation=fork --log "$tmp/d$np.h5" --progress off >"$tmp/out.txt" 2>&1 ||
    { cat "$tmp/out.txt"; exit 1; }
  "$PYTHON" - "$tmp/d$np.h5" "$np" <<'PY'
import sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    r = f["evaluations"][0]
    times = r["times"][: r["n_times"]].tolist()
    print(f"-n {sys.argv[2]}: times {times} ms, benchmark {r['benchmark_ms']:.1f} ms")
    assert r["status"] == 0 and len(times) == 3, (r["status"], times)
    assert r["benchmark_ms"] >= 15, "the kernel's delayed run did not happen (the test would prove nothing)"
    assert max(times) < 1, f"a delayed run was logged: {times}"
PY
done
echo "cpu_delayed: ok"
