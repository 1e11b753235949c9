#!/usr/bin/env bash
# tests/virtual_cli.sh: `mptune tune --virtual-workers N` end to end on the A100 convolution space: the summary's
# projection line and rate line agree, the log holds the budget's records from N workers and is marked
# evaluator sim-virtual, --time counts virtual seconds, it is not resumed (neither as a projection nor by a real run), and misuse (no
# --simulate, --resume, another evaluator, several ranks) is one clear message and a non-zero exit.
# Env (from ctest): MPTUNE, MPIEXEC, MPT_SHARED_DATA, PYTHON.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${MPTUNE:?}" "${MPT_SHARED_DATA:?}"
PY=${PYTHON:-/usr/bin/python3}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
P=$MPT_SHARED_DATA/t1/convolution_milo.json
T4=$MPT_SHARED_DATA/brute-forced/convolution_A100_T4.json.gz
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

"$MPTUNE" tune "$P" --simulate "$T4" --virtual-workers 12 --simulate-delay 0.5 --strategy ga --budget 150 --seed 3 \
  --log "$T/v.h5" --progress lines >"$T/out" 2>"$T/err" || { cat "$T/out" "$T/err"; fail "projection failed"; }
grep -q '^projected: 12 workers, makespan [0-9.]* s, utilization [0-9.]* %' "$T/out" || fail "no projection line"
grep -q '^evaluations: 150 ' "$T/out" || fail "not the budget's 150 evaluations"
grep -q 'virtual: utilization' "$T/err" || fail "no projection on the progress line"
"$PY" - "$T/v.h5" "$T/out" <<'PYEOF' || fail "the log does not match the projection"
import re, sys, h5py, numpy as np
log, out = sys.argv[1], open(sys.argv[2]).read()
with h5py.File(log, "r") as f:
    assert f.attrs["evaluator"] in (b"sim-virtual", "sim-virtual"), f.attrs["evaluator"]
    obs = f["evaluations"][: int(f["count"][()])]
ids, ranks = obs["id"], obs["rank"]
assert len(ids) == 150 and len(set(ids.tolist())) == 150, "budget or duplicates"
assert ranks.min() >= 1 and ranks.max() <= 12, (ranks.min(), ranks.max())
busy = float(np.sum(obs["t_end"] - obs["t_start"]))
makespan = float(re.search(r"makespan ([0-9.]+) s", out).group(1))
util = float(re.search(r"utilization ([0-9.]+) %", out).group(1))
assert abs(100 * busy / (12 * makespan) - util) < 0.1, (busy, makespan, util)
assert abs(float(obs["t_end"].max() - obs["t_start"].min()) - makespan) < 0.01 + 0.001 * makespan
PYEOF

# --time counts virtual seconds: no evaluation starts after it (those in flight finish)
"$MPTUNE" tune "$P" --simulate "$T4" --virtual-workers 8 --budget 500 --time 30 --log "$T/t.h5" --progress off >"$T/out" \
  2>"$T/err" || fail "projection with --time failed"
grep -q '^stopped: time budget reached on the virtual clock' "$T/out" || fail "no virtual time stop"
"$PY" - "$T/t.h5" <<'PYEOF' || fail "an evaluation started after the virtual time budget"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    obs = f["evaluations"][: int(f["count"][()])]
t0 = obs["t_start"].min()
assert 0 < len(obs) < 500 and (obs["t_start"] - t0).max() < 30.001, (len(obs), (obs["t_start"] - t0).max())
PYEOF

expect_error() { # expect_error PATTERN CMD...: a non-zero exit and PATTERN on stderr
  local pat=$1; shift
  "$@" >"$T/o" 2>"$T/e" && fail "accepted: $*"
  grep -q -- "$pat" "$T/e" || { cat "$T/e"; fail "no '$pat' for: $*"; }
}
expect_error "is a projection on a virtual clock" "$MPTUNE" tune "$P" --simulate "$T4" --log "$T/v.h5" --resume --budget 200
expect_error "a projection starts afresh" "$MPTUNE" tune "$P" --simulate "$T4" --virtual-workers 4 --log "$T/v.h5" --resume
expect_error "needs --simulate" "$MPTUNE" tune "$P" --virtual-workers 4 --budget 10 --log "$T/n.h5"
expect_error "evaluator sim, not 'cpu'" "$MPTUNE" tune "$P" --simulate "$T4" --evaluator cpu --virtual-workers 4 --budget 10 --log "$T/n.h5"
expect_error "bad value" "$MPTUNE" tune "$P" --simulate "$T4" --virtual-workers 0 --budget 10 --log "$T/n.h5"
expect_error "runs on one rank" "$MPIEXEC" -n 2 "$MPTUNE" tune "$P" --simulate "$T4" --virtual-workers 4 --budget 10 --log "$T/n.h5"
[ ! -e "$T/n.h5" ] || fail "a refused run left a log"
echo "virtual_cli: ok"
