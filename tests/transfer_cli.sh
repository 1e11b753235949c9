#!/usr/bin/env bash
# tests/transfer_cli.sh: transfer between GPUs end to end on the real brute-forced files. `mptune tune
# --simulate A4000 --prior A6000` with prior_order evaluates, after the default configuration, A6000's fastest
# configurations in order, and the log's "priors" attribute names the file; a run log works as a prior too;
# bad --prior files are refused with one message naming the file (and the field or problem), nothing logged.
# `mptune bench --prior-from-others` scores the blind prior order as issue 31 quotes (A100 -0.238, MI250X
# 1.000), `--transfer online` runs, and misuse of the two options is refused.
# Env (from ctest): MPTUNE, MPT_SHARED_DATA, PYTHON.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${MPTUNE:?}" "${MPT_SHARED_DATA:?}"
PY=${PYTHON:-/usr/bin/python3}
D=$MPT_SHARED_DATA
P=$D/t1/convolution_milo.json
BF=$D/brute-forced
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# ---- tune --prior: prior_order follows the A6000 file on the simulated A4000
"$MPTUNE" tune "$P" --simulate "$BF/convolution_A4000_T4.json.gz" --prior "$BF/convolution_A6000_T4.json.gz" \
  --strategy prior_order --budget 6 --seed 1 --log "$T/run.h5" --progress off >"$T/out" 2>&1 || { cat "$T/out"; fail "tune --prior"; }
"$PY" - "$T/run.h5" "$BF/convolution_A6000_T4.json.gz" <<'PYEOF' || fail "the log's priors attribute does not name the file"
import h5py, sys
pri = h5py.File(sys.argv[1], "r").attrs["priors"]
pri = pri.decode() if isinstance(pri, bytes) else str(pri)
assert sys.argv[2] in pri and "4362 records" in pri, pri
PYEOF
"$MPTUNE" export "$T/run.h5" --t4 "$T/run_T4.json" >/dev/null 2>&1 || fail "export"
"$PY" - "$T/run_T4.json" "$BF/convolution_A6000_T4.json.gz" <<'PYEOF' || fail "the evaluations are not A6000's fastest in order"
import gzip, json, sys
run = json.load(open(sys.argv[1]))["results"]
times = []
for r in json.load(gzip.open(sys.argv[2]))["results"]:
    t = [m["value"] for m in r.get("measurements", []) if m["name"] == "time"]
    if r.get("invalidity", "correct") == "correct" and t:
        times.append((t[0], r["configuration"]))
times.sort(key=lambda x: x[0])
got = [r["configuration"] for r in run[1:6]]
want = [c for _, c in times[:5]]
assert got == want, (got, want)
PYEOF

# ---- a run log as the prior
"$MPTUNE" tune "$P" --simulate "$BF/convolution_A6000_T4.json.gz" --prior "$T/run.h5" --strategy bo --budget 12 --seed 2 \
  --log "$T/run2.h5" --progress off >"$T/out2" 2>&1 || { cat "$T/out2"; fail "tune --prior RUNLOG"; }
grep -q "a run log" <("$PY" -c "import h5py,sys; print(h5py.File(sys.argv[1],'r').attrs['priors'])" "$T/run2.h5") \
  || fail "the run log prior is not recorded"

# ---- bad priors: one message naming the file, non-zero exit, no log
bad() { # expected substring, the --prior file
  "$MPTUNE" tune "$P" --simulate "$BF/convolution_A4000_T4.json.gz" --prior "$2" --strategy bo --budget 5 \
    --log "$T/bad.h5" --progress off >"$T/bad.out" 2>&1 && fail "--prior $2 accepted"
  grep -q -- "$1" "$T/bad.out" || { cat "$T/bad.out"; fail "no '$1' in the message for --prior $2"; }
  [ ! -e "$T/bad.h5" ] || fail "a log was written for --prior $2"
}
bad "--prior $T/missing.json: cannot open" "$T/missing.json"
bad "--prior $D/t1/gemm_milo.json" "$D/t1/gemm_milo.json"
echo '{"results": [{"configuration": {"block_size_x": 16}, "times": {}}]}' >"$T/other.json"
bad "--prior $T/other.json" "$T/other.json"
"$MPTUNE" tune "$D/t1/gemm_milo.json" --simulate "$BF/convolution_A4000_T4.json.gz" --prior "$T/run.h5" --budget 3 \
  --log "$T/bad.h5" --progress off >"$T/bad.out" 2>&1 && fail "a prior log of another problem was accepted"
grep -q -- "--prior $T/run.h5" "$T/bad.out" || { cat "$T/bad.out"; fail "the other problem's log is not named"; }

# ---- bench: the blind prior order scores what issue 31 quotes; online runs; misuse refused
S=""
for g in A100 A4000 A6000 MI250X W6600 W7800; do S="$S --space $BF/convolution_${g}_T4.json.gz"; done
"$MPTUNE" bench --problem "$P" $S --strategy prior_order --repeats 1 --budget 220 --prior-from-others --no-plot \
  --out "$T/b1" >"$T/b1.out" 2>&1 || { cat "$T/b1.out"; fail "bench --prior-from-others"; }
grep -q '^| A100 | -0.238 |$' "$T/b1.out" || { cat "$T/b1.out"; fail "A100 prior order is not -0.238"; }
grep -q '^| MI250X | 1.000 |$' "$T/b1.out" || fail "MI250X prior order is not 1.000"
"$MPTUNE" bench --problem "$P" $S --strategy random,bo:transfer=0 --repeats 1 --budget 30 --transfer online --no-plot \
  --out "$T/b2" >"$T/b2.out" 2>&1 || { cat "$T/b2.out"; fail "bench --transfer online"; }
"$MPTUNE" bench --problem "$P" $S --strategy random --transfer online --prior-from-others --no-plot --out "$T/b3" \
  >"$T/b3.out" 2>&1 && fail "--transfer online with --prior-from-others accepted"
grep -q "exclude each other" "$T/b3.out" || fail "no message for both transfer options"
"$MPTUNE" bench --problem "$P" --space "$BF/convolution_A100_T4.json.gz" --strategy random --prior-from-others \
  --no-plot --out "$T/b4" >"$T/b4.out" 2>&1 && fail "--prior-from-others with one space accepted"
grep -q "needs at least two --space" "$T/b4.out" || fail "no message for one space"
"$MPTUNE" bench --problem "$P" $S --strategy random --transfer sideways --no-plot --out "$T/b5" >"$T/b5.out" 2>&1 \
  && fail "--transfer sideways accepted"
grep -q "expected online or none" "$T/b5.out" || fail "no message for a bad --transfer"
echo "transfer_cli: ok"
