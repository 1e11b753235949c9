#!/usr/bin/env bash
# tests/fuzz/fuzz.sh [SECONDS [HARNESS...]]: builds the libFuzzer binaries with clang in build-fuzz (-DMPT_FUZZ=ON:
# every part instrumented, with ASan and UBSan; the gcc builds are untouched) and runs each harness (expr, t1,
# replay; all by default) for SECONDS (default 60), starting from its seeds: the hand-written ones in
# tests/fuzz/seeds/HARNESS and small ones made from ../shared/data (seeds.py). New inputs are kept in
# build-fuzz/fuzz-corpus/HARNESS (a later run goes on from them), findings in build-fuzz/fuzz-artifacts/.
# Exit status: 0, or libFuzzer's (non-zero) for the first harness with a finding (a crash, a leak, a broken
# invariant); slow and large inputs are kept in build-fuzz/fuzz-artifacts without ending the run.
# Env: MPT_FUZZ_CC (default clang), MPT_SHARED_DATA, MPT_FUZZ_JOBS (fuzzing processes per harness, default 1),
# MPT_FUZZ_ARGS (more libFuzzer options).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(expr t1 replay)
dir=build-fuzz
export MPT_SHARED_DATA=${MPT_SHARED_DATA:-$(cd .. && pwd)/shared/data}
PY=/usr/bin/python3

CC=${MPT_FUZZ_CC:-clang} cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPT_FUZZ=ON \
  -DMPI_C_COMPILER=/usr/bin/mpicc.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich >/dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=(--target "fuzz_$h"); done
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"

mkdir -p "$dir/fuzz-artifacts"
for h in "${harnesses[@]}"; do
  seeds="$dir/fuzz-seeds/$h"
  rm -rf "$seeds"
  "$PY" tests/fuzz/seeds.py write "$h" "$seeds" --small
  mapfile -t inputs < <("$PY" tests/fuzz/seeds.py inputs "$h" --small)
  mkdir -p "$dir/fuzz-corpus/$h"
  echo "fuzz.sh: fuzz_$h for ${secs} s"
  # fork mode (-fork, child processes): an input that runs longer than -timeout or needs more than -rss_limit_mb
  # is kept in the artifacts and the run goes on (the expression language has inputs that are slow or large
  # by design: README.md here); a crash, a leak or a broken invariant ends it with a non-zero status. The
  # corpus folder first: new inputs go there.
  rc=0
  "$dir/tests/fuzz/fuzz_$h" -fork="${MPT_FUZZ_JOBS:-1}" -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$secs" \
    -timeout=10 -rss_limit_mb=2560 -print_final_stats=1 \
    -dict="tests/fuzz/$h.dict" -artifact_prefix="$dir/fuzz-artifacts/$h-" ${MPT_FUZZ_ARGS:-} \
    "$dir/fuzz-corpus/$h" "$seeds" "${inputs[@]}" || rc=$?
  # fork mode exits with its last job's status: 70 (a timeout) and 71 (out of memory) were ignored
  if [ "$rc" -eq 70 ] || [ "$rc" -eq 71 ]; then
    kept=$(ls "$dir/fuzz-artifacts" | grep -E "^$h-(timeout|oom)-" || true)
    echo "fuzz.sh: fuzz_$h: slow or large inputs kept (not failures):" $kept
  elif [ "$rc" -ne 0 ]; then
    echo "fuzz.sh: fuzz_$h found a bug (exit status $rc): the input is in $dir/fuzz-artifacts/" >&2
    exit "$rc"
  fi
done
