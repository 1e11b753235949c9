#!/usr/bin/env bash
# tests/show_cli.sh: `mptune show` and `mptune export --header` end to end on real logs, checked against the
# logs read with h5py (tests/show_check.py): a replayed run (the top table and its JSON: the best found, each
# configuration's best record, times, speed-up over the default; the header compiles and its values are the
# best configuration's), a cpu run with every failure status (counts and reasons), a log with two device
# classes (one section and one #if block each), three simulated classes under mpiexec (each class's portability
# checks counted apart from its search's evaluations), a log a run is writing (read as it stands, the run
# undisturbed), a log cut short (recovered with --problem), and bad input (one message, non-zero exit).
# Needs MPTUNE, MPIEXEC, PYTHON, MPT_SOURCE_DIR, MPT_SHARED_DATA (set by ctest).
set -euo pipefail
: "${MPTUNE:?}" "${MPIEXEC:?}" "${PYTHON:?}" "${MPT_SOURCE_DIR:?}" "${MPT_SHARED_DATA:?}"
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d /tmp/mpt_show_cli_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
check="$PYTHON $MPT_SOURCE_DIR/tests/show_check.py"
conv="$MPT_SHARED_DATA/t1/convolution_milo.json"
a100="$MPT_SHARED_DATA/brute-forced/convolution_A100_T4.json.gz"
mi250x="$MPT_SHARED_DATA/brute-forced/convolution_MI250X_T4.json.gz"
fail() { echo "show_cli: $*" >&2; exit 1; }
run() { # run CMD...: runs it with its output in $tmp/out.txt, shown and failing the test when it fails
  "$@" >"$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; fail "failed: $*"; }
}

# ---- a replayed run: the text table, the JSON, the header ----
run "$MPTUNE" tune "$conv" --simulate "$a100" --strategy random --budget 60 --seed 3 --log "$tmp/run.h5" --progress off
"$MPTUNE" show "$tmp/run.h5" >"$tmp/show.txt" || fail "show run.h5"
cat "$tmp/show.txt"
$check text "$tmp/run.h5" "$tmp/show.txt" 10
"$MPTUNE" show "$tmp/run.h5" --json >"$tmp/show.json" || fail "show --json"
$check json "$tmp/run.h5" "$tmp/show.json" 10 "$conv"
"$MPTUNE" show "$tmp/run.h5" --top 3 --json >"$tmp/top3.json" || fail "show --top 3 --json"
$check json "$tmp/run.h5" "$tmp/top3.json" 3 "$conv"
"$MPTUNE" show "$tmp/run.h5" --top=3 >"$tmp/top3.txt" || fail "show --top=3"
$check text "$tmp/run.h5" "$tmp/top3.txt" 3
run "$MPTUNE" export "$tmp/run.h5" --header "$tmp/best.h"
cat "$tmp/best.h"
grep -q "^wrote $tmp/best.h$" "$tmp/out.txt" || fail "export --header: no 'wrote' line"
grep -q '^ \* objective: time [0-9.e+-]* ms, the best of' "$tmp/best.h" || fail "the header names no objective with its unit"
# the header's values are the best configuration's: static assertions on them compile, a wrong one does not
$check asserts "$tmp/run.h5" "$tmp/asserts.c" 0 >/dev/null
cc -std=c11 -fsyntax-only -include "$tmp/best.h" "$tmp/asserts.c" || fail "the header does not hold the best configuration"
$check asserts "$tmp/run.h5" "$tmp/wrong.c" 0 wrong >/dev/null
if cc -std=c11 -fsyntax-only -include "$tmp/best.h" "$tmp/wrong.c" 2>/dev/null; then fail "a wrong value compiled"; fi
# included twice (its guard), and no definition while a tuner defines kernel_tuner
printf '#include "best.h"\n#include "best.h"\nint x = block_size_x;\n' >"$tmp/twice.c"
cc -std=c11 -fsyntax-only -I"$tmp" "$tmp/twice.c" || fail "the header can not be included twice"
printf '#include "best.h"\n#ifdef block_size_x\n#error defined while tuning\n#endif\n' >"$tmp/tuning.c"
cc -std=c11 -fsyntax-only -Dkernel_tuner=1 -I"$tmp" "$tmp/tuning.c" || fail "the header defines values while tuning"
# --t4 and --header in one export
run "$MPTUNE" export "$tmp/run.h5" --t4 "$tmp/run_T4.json" --header "$tmp/best2.h"
cmp -s "$tmp/best.h" "$tmp/best2.h" || true # the file name is in its comment and guard: compare the defines
diff <(grep '^#define [a-z]' "$tmp/best.h") <(grep '^#define [a-z]' "$tmp/best2.h") || fail "headers differ"
[ -s "$tmp/run_T4.json" ] || fail "no T4 file beside the header"

# ---- a cpu run with every failure status: counts per status and their reasons ----
MPT_CPU_MEMORY_LIMIT_MB=64 run "$MPIEXEC" -n 3 "$MPTUNE" tune "$MPT_SOURCE_DIR/tests/kernels/failing.json" \
  --strategy brute_force --budget 14 --timeout 2 --log "$tmp/fail.h5" --progress off
"$MPTUNE" show "$tmp/fail.h5" >"$tmp/fail.txt" || fail "show fail.h5"
cat "$tmp/fail.txt"
$check text "$tmp/fail.h5" "$tmp/fail.txt" 10
"$MPTUNE" show "$tmp/fail.h5" --json >"$tmp/fail.json" || fail "show fail.h5 --json"
$check json "$tmp/fail.h5" "$tmp/fail.json" 10 "$MPT_SOURCE_DIR/tests/kernels/failing.json"
grep -q 'compile_error  *2  cc exited with status 1: .*mode 1: this variant does not compile' "$tmp/fail.txt" ||
  fail "the compile errors' reason is not shown"
grep -q 'killed by SIGABRT' "$tmp/fail.txt" || fail "the crashes' reasons are not shown"
run "$MPTUNE" export "$tmp/fail.h5" --header "$tmp/fail.h"
$check asserts "$tmp/fail.h5" "$tmp/fail_asserts.c" 0 >/dev/null
cc -std=c11 -fsyntax-only -include "$tmp/fail.h" "$tmp/fail_asserts.c" || fail "fail.h does not hold the best configuration"
cc -std=c11 -fsyntax-only -include "$tmp/fail.h" "$MPT_SOURCE_DIR/tests/kernels/failing.c" || fail "the kernel does not compile with fail.h"

# ---- two device classes: the run resumed on another replayed device ----
cp "$tmp/run.h5" "$tmp/two.h5"
run "$MPTUNE" tune "$conv" --simulate "$mi250x" --budget 120 --log "$tmp/two.h5" --resume --progress off
"$MPTUNE" show "$tmp/two.h5" >"$tmp/two.txt" || fail "show two.h5"
cat "$tmp/two.txt"
grep -q '^device 1 of 2: replay convolution_A100_T4.json.gz (replay), 1 worker: evaluations 60 ' "$tmp/two.txt" || fail "no section for the A100"
grep -q '^device 2 of 2: replay convolution_MI250X_T4.json.gz (replay), 1 worker: evaluations 60 ' "$tmp/two.txt" || fail "no section for the MI250X"
"$MPTUNE" show "$tmp/two.h5" --json >"$tmp/two.json" || fail "show two.h5 --json"
$check json "$tmp/two.h5" "$tmp/two.json" 10 "$conv"
run "$MPTUNE" export "$tmp/two.h5" --header "$tmp/two.h"
cat "$tmp/two.h"
grep -q '^#if defined(TARGET_convolution_A100_T4_json_gz)$' "$tmp/two.h" || fail "no #if block for the A100"
grep -q '^#elif defined(TARGET_convolution_MI250X_T4_json_gz)$' "$tmp/two.h" || fail "no #elif block for the MI250X"
for s in 0 1; do
  $check asserts "$tmp/two.h5" "$tmp/two$s.c" $s >/dev/null
done
cc -std=c11 -fsyntax-only -include "$tmp/two.h" "$tmp/two0.c" || fail "the default is not the first device's best"
cc -std=c11 -fsyntax-only -DTARGET_convolution_A100_T4_json_gz -include "$tmp/two.h" "$tmp/two0.c" || fail "TARGET A100"
cc -std=c11 -fsyntax-only -DTARGET_convolution_MI250X_T4_json_gz -include "$tmp/two.h" "$tmp/two1.c" ||
  fail "TARGET MI250X does not give the MI250X's best"

# ---- three simulated device classes, one worker each: each class's portability checks (other classes' bests
# measured on it) are counted apart from its search's evaluations ----
w6600="$MPT_SHARED_DATA/brute-forced/convolution_W6600_T4.json.gz"
run "$MPIEXEC" -n 4 "$MPTUNE" tune "$conv" --simulate "A100=$a100" --simulate "MI250X=$mi250x" \
  --simulate "W6600=$w6600" --budget 20 --seed 1 --log "$tmp/three.h5" --progress off
grep -q '^class 0 A100: 20 evaluations' "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "the three-class run"; }
"$MPTUNE" show "$tmp/three.h5" >"$tmp/three.txt" || fail "show three.h5"
cat "$tmp/three.txt"
grep -q '^evaluations: 60 (.*) of a budget of 20 per device class, +6 portability checks$' "$tmp/three.txt" ||
  fail "the run's line: 60 evaluations, the 6 portability checks apart"
$check classes "$tmp/three.h5" "$tmp/three.txt"
"$MPTUNE" show "$tmp/three.h5" --json >"$tmp/three.json" || fail "show three.h5 --json"
$check json "$tmp/three.h5" "$tmp/three.json" 10 "$conv"

# ---- a log a run is writing: read as it stands, without its lock; the run goes on undisturbed ----
"$MPTUNE" tune "$conv" --simulate "$a100" --simulate-delay 0.05 --strategy random --budget 30 --seed 4 \
  --log "$tmp/live.h5" --progress off >"$tmp/live.out" 2>&1 &
writer=$!
for _ in $(seq 300); do
  [ -e "$tmp/live.h5.lock" ] && "$PYTHON" -c "import h5py,sys; sys.exit(int(h5py.File(sys.argv[1],'r')['count'][()]) < 3)" \
    "$tmp/live.h5" 2>/dev/null && break
  sleep 0.1
done
"$MPTUNE" show "$tmp/live.h5" >"$tmp/live.txt" || { kill "$writer"; fail "show of a log being written"; }
[ -e "$tmp/live.h5.lock" ] || fail "the writer's lock file went away"
wait "$writer" || { cat "$tmp/live.out"; fail "the run writing the log failed"; }
cat "$tmp/live.txt"
grep -q '^finished: no ' "$tmp/live.txt" || fail "a log being written is shown as finished"
grep -q '^evaluations: 30 (' <("$MPTUNE" show "$tmp/live.h5") || fail "the run did not log its 30 evaluations"

# ---- a log cut short: refused with a hint, recovered with --problem ----
head -c 60000 "$tmp/run.h5" >"$tmp/cut.h5"
if "$MPTUNE" show "$tmp/cut.h5" >/dev/null 2>"$tmp/err.txt"; then fail "a cut log was shown"; fi
[ "$(wc -l <"$tmp/err.txt")" -eq 1 ] && grep -q 'give the run.s problem with --problem FILE' "$tmp/err.txt" ||
  { cat "$tmp/err.txt"; fail "no one-line hint at --problem for a cut log"; }
"$MPTUNE" show "$tmp/cut.h5" --problem "$conv" --json >"$tmp/cut.json" 2>"$tmp/err.txt" || { cat "$tmp/err.txt"; fail "recovery"; }
grep -q 'intact records were recovered by their checksums' "$tmp/err.txt" || fail "no warning of the recovery"
"$PYTHON" -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['recovered'] and 0 < d['records'] < 60 and d['devices'][0]['top'], d['records']" "$tmp/cut.json"

# ---- bad input: one clear message, non-zero exit; a log without a valid observation has no header ----
expect_error() { # expect_error PATTERN CMD...: CMD fails with one line on stderr matching PATTERN
  local pattern=$1
  shift
  if "$@" >"$tmp/o.txt" 2>"$tmp/e.txt"; then fail "succeeded: $*"; fi
  [ "$(wc -l <"$tmp/e.txt")" -ge 1 ] && grep -q -- "$pattern" "$tmp/e.txt" || { cat "$tmp/e.txt"; fail "no '$pattern' from: $*"; }
}
expect_error "cannot open run log $tmp/missing.h5: no such file" "$MPTUNE" show "$tmp/missing.h5"
expect_error "$conv is not an mptune run log" "$MPTUNE" show "$conv"
expect_error "no run log given" "$MPTUNE" show
expect_error "unknown option '--jsn'; did you mean '--json'?" "$MPTUNE" show "$tmp/run.h5" --jsn
expect_error "--top: bad value '0'" "$MPTUNE" show "$tmp/run.h5" --top 0
expect_error "--header $tmp/run.h5 is the run log" "$MPTUNE" export "$tmp/run.h5" --header "$tmp/run.h5"
# a problem whose every configuration failed to compile, replayed from a Kernel Tuner cache file
"$PYTHON" - "$tmp/broken.json" "$tmp/broken_cache.json" <<'EOF'
import json, sys
params = [{"Name": "bx", "Type": "int", "Values": "[16, 32]", "Default": 16},
          {"Name": "by", "Type": "int", "Values": "[1, 2]", "Default": 1}]
json.dump({"General": {"BenchmarkName": "broken"}, "ConfigurationSpace": {"TuningParameters": params, "Conditions": []}},
          open(sys.argv[1], "w"))
cache = {"%d,%d" % (x, y): {"bx": x, "by": y, "time": "CompilationFailedConfig"} for x in (16, 32) for y in (1, 2)}
json.dump({"tune_params_keys": ["bx", "by"], "cache": cache}, open(sys.argv[2], "w"))
EOF
run "$MPTUNE" tune "$tmp/broken.json" --simulate "$tmp/broken_cache.json" --strategy brute_force --budget 2 \
  --log "$tmp/broken.h5" --progress off
"$MPTUNE" show "$tmp/broken.h5" >"$tmp/broken.txt" || fail "show of a log without a valid observation"
grep -q '^best: none (no valid configuration among 2 evaluations)' "$tmp/broken.txt" || { cat "$tmp/broken.txt"; fail "best: none"; }
expect_error "$tmp/broken.h5 has no valid observation (2 evaluations, none valid)" \
  "$MPTUNE" export "$tmp/broken.h5" --header "$tmp/broken.h"
[ ! -e "$tmp/broken.h" ] || fail "a header was written without a valid observation"
"$MPTUNE" show --help | grep -q '^usage: mptune show RUN.h5' || fail "show --help"
"$MPTUNE" --help | grep -q '^  show ' || fail "show is not listed by mptune --help"
echo "show_cli: ok"
