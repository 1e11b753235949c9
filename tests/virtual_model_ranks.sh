#!/usr/bin/env bash
# tests/virtual_model_ranks.sh: `mptune tune --virtual-workers N --model-ranks K` end to end (bo on the A100
# convolution space): with --virtual-time cpu rank 0's work goes on the virtual clock as the critical path of rank 0
# and the model ranks (strategies/bo/bo_dist.h, mpt_bo_model_clock), and the projection line says which clock it
# used: that one, rank 0's CPU time without model ranks, wall time by default.
# Env (from ctest): MPTUNE, MPIEXEC, MPT_SHARED_DATA.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${MPTUNE:?}" "${MPT_SHARED_DATA:?}"
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
P=$MPT_SHARED_DATA/t1/convolution_milo.json
T4=$MPT_SHARED_DATA/brute-forced/convolution_A100_T4.json.gz
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

run() { # run NAME NP [options...]: a projection of bo, 60 evaluations on 8 virtual workers
  local name=$1 np=$2; shift 2
  "$MPIEXEC" -n "$np" "$MPTUNE" tune "$P" --simulate "$T4" --virtual-workers 8 --strategy bo --budget 60 --seed 3 \
    --log "$T/$name.h5" --progress off "$@" >"$T/$name.out" 2>"$T/$name.err" || { cat "$T/$name.out" "$T/$name.err"; fail "$name failed"; }
  grep '^projected: 8 workers, ' "$T/$name.out" || fail "$name: no projection line"
}
line=$(run path 3 --model-ranks 2 --virtual-time cpu)
echo "$line" | grep -q '; clock: critical path of rank 0 and the model ranks (CPU time)' || fail "not the critical path: $line"
echo "$line" | grep -Eq 'asks 0\.0*[1-9][0-9]* s|asks [1-9][0-9.]* s' || fail "no ask time on the clock: $line"
line=$(run wall 3 --model-ranks 2)
echo "$line" | grep -q '; clock: wall time' || fail "not wall time: $line"
line=$(run cpu 1 --virtual-time cpu)
echo "$line" | grep -q "; clock: rank 0's CPU time" || fail "not rank 0's CPU time: $line"
echo "virtual_model_ranks: ok"
