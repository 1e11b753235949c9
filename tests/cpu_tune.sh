#!/usr/bin/env bash
# tests/cpu_tune.sh: end to end with the cpu evaluator under `mpiexec.mpich -n 3` (rank 0 coordinates,
# two workers compile and time): (1) the matrix-multiply example: every evaluation compiles, verifies and
# times, the log holds real compile and benchmark times and the per-iteration times, and the best
# configuration is faster than the default one (measured by mptune too); (2) the purpose-made failing
# kernel, every configuration (brute force): compile_error, wrong_result, crash (SIGSEGV, SIGABRT,
# memory exhaustion) and timeout are logged with their reasons and the run finishes its budget; (3) an OpenMP
# kernel; (4) the scratch directories a SIGKILLed run left are removed by the next run.
# Needs MPTUNE, MPIEXEC, PYTHON, MPT_SOURCE_DIR (set by ctest).
set -euo pipefail
: "${MPTUNE:?}" "${MPIEXEC:?}" "${PYTHON:?}" "${MPT_SOURCE_DIR:?}"
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d /tmp/mpt_cpu_tune_XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# ---- (1) the example ----
"$MPIEXEC" -n 3 "$MPTUNE" tune "$MPT_SOURCE_DIR/examples/cpu/matmul.json" --strategy random --budget 10 \
  --seed 5 --log "$tmp/run.h5" >"$tmp/out.txt" 2>"$tmp/err.txt" || { cat "$tmp/out.txt" "$tmp/err.txt"; exit 1; }
cat "$tmp/out.txt"
grep -q '^best: ' "$tmp/out.txt"
grep -q "^log: $tmp/run.h5" "$tmp/out.txt"
# a tuning run measures the default configuration first and reports the speed-up over it
grep -q '^default: ' "$tmp/out.txt"
grep -Eq '^speed-up over default: [0-9.]+x$' "$tmp/out.txt"
# every objective in the summary with its unit
grep -Eq '^objective: [0-9.e+-]+ ms$' "$tmp/out.txt"
grep -Eq '^default objective: [0-9.e+-]+ ms$' "$tmp/out.txt"

# the default configuration, measured the same way: a copy of the problem whose only configuration is
# the Default (unless the run already evaluated it)
"$PYTHON" - "$MPT_SOURCE_DIR/examples/cpu/matmul.json" "$tmp/default.json" <<'EOF'
import json, os, sys
src, dst = sys.argv[1], sys.argv[2]
t1 = json.load(open(src))
for p in t1["ConfigurationSpace"]["TuningParameters"]:
    p["Values"] = "[%r]" % p["Default"]
ks = t1["KernelSpecification"]
ks["KernelFile"] = os.path.join(os.path.dirname(os.path.abspath(src)), ks["KernelFile"])
json.dump(t1, open(dst, "w"))
EOF
"$MPIEXEC" -n 2 "$MPTUNE" tune "$tmp/default.json" --strategy brute_force --budget 1 --log "$tmp/default.h5" \
  >"$tmp/dout.txt" 2>&1 || { cat "$tmp/dout.txt"; exit 1; }

"$PYTHON" - "$tmp/run.h5" "$tmp/default.h5" "$MPT_SOURCE_DIR/examples/cpu/matmul.json" <<'EOF'
import json, sys
import h5py, numpy as np
run, default_log, t1path = sys.argv[1:4]
t1 = json.load(open(t1path))
default = {p["Name"]: p["Default"] for p in t1["ConfigurationSpace"]["TuningParameters"]}

def load(path):
    with h5py.File(path, "r", swmr=True) as f:
        names = [n if isinstance(n, str) else n.decode() for n in f["parameters"].attrs["names"]]
        values = {n: f["parameters"][n][:] for n in names}
        ev = f["evaluations"][:]
        ev = ev[ev["id"] >= 0]
        status = h5py.check_enum_dtype(f["evaluations"].dtype["status"])
        devices = f["devices"][:]
        return names, values, ev, status, devices

names, values, ev, status, devices = load(run)
assert len(ev) == 10, len(ev)
assert len(set(ev["id"].tolist())) == 10
for r in ev:
    reason = r["reason"].decode() if isinstance(r["reason"], bytes) else r["reason"]
    assert r["status"] == status["ok"], (r["id"], r["status"], reason)
    n = int(r["n_times"])
    assert n == 7, n
    t = r["times"][:n]
    assert (t > 0).all()
    assert abs(r["objective"] - t.mean()) < 1e-9 * max(1, t.mean())
    assert abs(r["median"] - np.median(t)) < 1e-9 * max(1, t.mean())
    assert r["compile_ms"] > 10, r["compile_ms"]          # a real compile with cc -O3
    assert r["benchmark_ms"] >= t.sum(), (r["benchmark_ms"], t.sum())
    assert r["rank"] in (1, 2)
assert set(ev["rank"].tolist()) == {1, 2}, "both workers evaluated"
assert len(devices) == 2 and all((d["vendor"].decode() if isinstance(d["vendor"], bytes) else d["vendor"]) == "CPU"
                                 for d in devices)
best = ev[np.argmin(ev["objective"])]
best_cfg = {n: values[n][best["config"][p]].item() for p, n in enumerate(names)}

# the default's time: from the run when it evaluated it, else from the one-configuration run
dflt = None
for r in ev:
    if {n: values[n][r["config"][p]].item() for p, n in enumerate(names)} == default:
        dflt = r["objective"]
if dflt is None:
    _, _, dev, dstatus, _ = load(default_log)
    assert len(dev) == 1 and dev[0]["status"] == dstatus["ok"]
    dflt = dev[0]["objective"]
print("default %.3f ms, best %.3f ms (%s): speed-up %.2fx" % (dflt, best["objective"], best_cfg, dflt / best["objective"]))
assert best["objective"] < dflt, "the best configuration is not faster than the default"
EOF

# ---- (2) failures: every configuration of the failing kernel ----
MPT_CPU_MEMORY_LIMIT_MB=64 "$MPIEXEC" -n 3 "$MPTUNE" tune "$MPT_SOURCE_DIR/tests/kernels/failing.json" \
  --strategy brute_force --budget 14 --timeout 2 --log "$tmp/fail.h5" >"$tmp/fout.txt" 2>&1 \
  || { cat "$tmp/fout.txt"; exit 1; }
grep -qE '^stopped: (evaluation budget reached|every configuration evaluated)' "$tmp/fout.txt" || { cat "$tmp/fout.txt"; exit 1; }
"$PYTHON" - "$tmp/fail.h5" <<'EOF'
import os
import sys
import h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    names = [n if isinstance(n, str) else n.decode() for n in f["parameters"].attrs["names"]]
    mode_values = f["parameters"]["mode"][:]
    ev = f["evaluations"][:]
    ev = ev[ev["id"] >= 0]
    st = {v: k for k, v in h5py.check_enum_dtype(f["evaluations"].dtype["status"]).items()}
    assert f.attrs["finished"] == 1
assert len(ev) == 14 and len(set(ev["id"].tolist())) == 14, len(ev)
expected = {0: ("ok", ""), 1: ("compile_error", "mode 1: this variant does not compile"),
            2: ("wrong_result", "out: 1 of 1000 values differ"), 3: ("crash", "SIGSEGV"),
            4: ("timeout", "killed"), 5: ("crash", "SIGSEGV"), 6: ("crash", "SIGABRT")}
if os.environ.get("MPT_SANITIZE") == "1":  # no RLIMIT_AS under AddressSanitizer: the hog runs until killed
    expected[5] = ("timeout", "killed")
for r in ev:
    mode = int(mode_values[r["config"][names.index("mode")]])
    reason = r["reason"].decode() if isinstance(r["reason"], bytes) else r["reason"]
    want, part = expected[mode]
    print("mode %d: %s: %s" % (mode, st[r["status"]], reason.splitlines()[0] if reason else ""))
    assert st[r["status"]] == want, (mode, st[r["status"]], reason)
    assert part in reason, (mode, reason)
EOF
# ---- (3) an OpenMP kernel (two threads): every variant correct, on one rank and on a worker (unloading a
# variant under its running thread pool crashed the child: most variants logged as crash)
# OMP_WAIT_POLICY=passive: the pool's idle threads sleep instead of spinning, so on a loaded CI machine (2 cores,
# rank 0 and the worker polling beside them) a variant's calls are not starved into the evaluation timeout; the
# pool still outlives each call, which is what this part tests
for np in 1 2; do
  OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 "$MPIEXEC" -n $np "$MPTUNE" tune "$MPT_SOURCE_DIR/tests/kernels/omp.json" --strategy brute_force \
    --budget 24 --log "$tmp/omp$np.h5" --progress off >"$tmp/omp.txt" 2>&1 || { cat "$tmp/omp.txt"; exit 1; }
  grep -q "^evaluations: 24 (24 valid, 0 failed)" "$tmp/omp.txt" || { cat "$tmp/omp.txt"; echo "omp -n $np: failures"; exit 1; }
done
# ---- (4) a SIGKILLed run leaves its workers' scratch directories (close never ran); the next run removes them,
# says so, and leaves none of its own (scratch in a TMPDIR of this test's own)
scratch="$tmp/scratch"
mkdir "$scratch"
TMPDIR="$scratch" setsid "$MPIEXEC" -n 3 "$MPTUNE" tune "$MPT_SOURCE_DIR/examples/cpu/matmul.json" --strategy random \
  --budget 500 --log "$tmp/killed.h5" --progress off >"$tmp/killed.txt" 2>&1 &
run=$!
for _ in $(seq 600); do # until both workers have made their scratch directories and the run has begun
  [ -e "$tmp/killed.h5" ] && [ "$(ls -d "$scratch"/mptune-cpu-r* 2>/dev/null | wc -l)" -eq 2 ] && break
  sleep 0.1
done
sleep 1
kill -KILL -- "-$run"
wait "$run" 2>/dev/null || true
for _ in $(seq 100); do pgrep -f -- "--log $tmp/killed.h5" >/dev/null || break; sleep 0.1; done
for pid in $(pgrep -f -- "--log $tmp/killed.h5" || true); do kill -KILL "$pid" 2>/dev/null || true; done
left=$(ls -d "$scratch"/mptune-cpu-r* 2>/dev/null | wc -l)
[ "$left" -eq 2 ] || { cat "$tmp/killed.txt"; ls -la "$scratch"; echo "killed run: $left scratch directories left, expected 2"; exit 1; }
TMPDIR="$scratch" "$MPIEXEC" -n 3 "$MPTUNE" tune "$MPT_SOURCE_DIR/examples/cpu/matmul.json" --strategy random \
  --budget 2 --log "$tmp/next.h5" --progress off >"$tmp/next.txt" 2>&1 || { cat "$tmp/next.txt"; exit 1; }
removed=$({ grep -o 'removed [0-9]* scratch director[a-z]* of killed runs (their process is gone) in '"$scratch" \
  "$tmp/next.txt" || true; } | awk '{s += $2} END {print s + 0}')
[ "$removed" -eq 2 ] && [ -z "$(ls -A "$scratch")" ] ||
  { cat "$tmp/next.txt"; ls -la "$scratch"; echo "the next run removed $removed of the 2 stale scratch directories"; exit 1; }
echo "stale scratch directories of a killed run: removed by the next run"
echo "cpu_tune: ok"
