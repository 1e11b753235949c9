#!/usr/bin/env bash
# tests/replay_cli.sh: end-to-end checks of the replay loader through `mptune bench --space` and
# `mptune tune --simulate` on the real brute-forced files, damaged the way the bug reports did: text
# after the JSON document is an error at the line and column Python's json module names (non-zero
# exit), a trailing newline is not; records marked valid without an objective (Kernel Tuner entries
# without 'time', T4 records "correct" with no measurements) give one warning with their count. A
# misspelt KernelSpecification key is refused by tune --simulate, devices and bench too.
# Env (from ctest): MPTUNE, MPT_SHARED_DATA, PYTHON.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${MPTUNE:?}" "${MPT_SHARED_DATA:?}"
PY=${PYTHON:-/usr/bin/python3}
D=$MPT_SHARED_DATA
P=$D/t1/convolution_milo.json
T4=$D/brute-forced/convolution_A100_T4.json.gz
KT=$D/brute-forced/convolution_A100_kerneltuner.json.gz
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

bench() { "$MPTUNE" bench --problem "$P" --space "$1" --strategy random --repeats 1 --budget 20 --out "$T/out" \
  --no-plot >"$T/bench.out" 2>"$T/bench.err"; }
# "FILE:LINE:COL" where Python's json module finds extra data in FILE, else fails
extra_at() {
  "$PY" - "$1" <<'EOF'
import json, sys
try:
    json.load(open(sys.argv[1]))
except json.JSONDecodeError as e:
    assert e.msg == "Extra data", e.msg
    print(f"{sys.argv[1]}:{e.lineno}:{e.colno}")
    sys.exit(0)
sys.exit(1)
EOF
}

# ---- text after the document: an error naming file, line and column; whitespace is fine
(zcat "$T4"; echo '} ]] trailing junk') >"$T/trail_T4.json"
(zcat "$KT"; echo 'junk') >"$T/trail_kt.json"
for f in "$T/trail_T4.json" "$T/trail_kt.json"; do
  at=$(extra_at "$f") || fail "python finds no extra data in $f"
  bench "$f" && fail "bench accepted $f"
  grep -qF "mptune bench: --space $f: $at: malformed JSON: extra data after the end of the document" "$T/bench.err" \
    || { cat "$T/bench.err"; fail "bench: no extra-data error at $at"; }
  "$MPTUNE" tune "$P" --simulate "$f" --strategy random --budget 5 --log "$T/tune.h5" >"$T/tune.out" 2>"$T/tune.err" \
    && fail "tune --simulate accepted $f"
  grep -qF "$at: malformed JSON: extra data" "$T/tune.err" || { cat "$T/tune.err"; fail "tune: no extra-data error at $at"; }
done
(zcat "$T4"; printf '\n \n') >"$T/newline_T4.json"
bench "$T/newline_T4.json" || { cat "$T/bench.err"; fail "bench refused trailing whitespace"; }
[ -s "$T/bench.err" ] && { cat "$T/bench.err"; fail "bench said something about trailing whitespace"; }

# ---- records marked valid without an objective: one warning with the count and the first configuration
"$PY" - "$KT" "$T4" "$T" <<'EOF' >"$T/counts" || fail "making the files without objectives"
import gzip, json, sys
kt, t4, out = sys.argv[1:]
d = json.load(gzip.open(kt))
n_kt = 0
for i, v in enumerate(d["cache"].values()):
    if i % 3 == 0:
        v.pop("time", None)
        n_kt += 1
json.dump(d, open(out + "/notime_kt.json", "w"))
d = json.load(gzip.open(t4))
n_t4 = 0
for i, r in enumerate(d["results"]):
    if i % 3 == 0 and r["invalidity"] == "correct":
        r["measurements"] = []
        n_t4 += 1
json.dump(d, open(out + "/nomeas_T4.json", "w"))
print(n_kt, n_t4)
EOF
read -r n_kt n_t4 <"$T/counts"
first="(the first: block_size_x=16,block_size_y=1,tile_size_x=1,tile_size_y=1,read_only=0,use_padding=0,use_shmem=0,use_cmem=1,filter_height=15,filter_width=15); they count as failed evaluations"
for c in "notime_kt.json $n_kt" "nomeas_T4.json $n_t4"; do
  set -- $c
  bench "$T/$1" || { cat "$T/bench.err"; fail "bench refused $1"; }
  want="mptune bench: warning: --space $T/$1: $2 records marked valid have no usable objective 'time' $first"
  grep -qxF "$want" "$T/bench.err" || { cat "$T/bench.err"; fail "no warning for $1: $want"; }
  [ "$(wc -l <"$T/bench.err")" -eq 1 ] || { cat "$T/bench.err"; fail "more than one line on stderr for $1"; }
  # tune --simulate says the same once (the first worker), and runs
  "$MPTUNE" tune "$P" --simulate "$T/$1" --strategy random --budget 5 --force --log "$T/tune.h5" --progress off \
    >"$T/tune.out" 2>"$T/tune.err" || { cat "$T/tune.err"; fail "tune --simulate refused $1"; }
  want="mptune: warning: --simulate $T/$1: $2 records marked valid have no usable objective 'time' $first"
  grep -qxF "$want" "$T/tune.err" || { cat "$T/tune.err"; fail "tune: no warning for $1: $want"; }
  [ "$(wc -l <"$T/tune.err")" -eq 1 ] || { cat "$T/tune.err"; fail "tune: more than one line on stderr for $1"; }
done
# ---- a file without records of some valid configurations: tune --simulate warns once up front (what
# becomes of such a configuration in a run: it ends there, resumable), and stops at the first one it meets
"$PY" - "$T4" "$T/part_T4.json" <<'EOF' || fail "making the partial file"
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
d["results"] = d["results"][:-50]
json.dump(d, open(sys.argv[2], "w"))
EOF
"$MPTUNE" tune "$P" --simulate "$T/part_T4.json" --strategy brute_force --budget 5000 --force --log "$T/part.h5" \
  --progress off >"$T/tune.out" 2>"$T/tune.err" && fail "tune --simulate went past a missing record"
grep -qxF "mptune: warning: --simulate $T/part_T4.json: 50 of the space's 4362 valid configurations have no record (a run that proposes one stops there, resumable with a file that has it)" \
  "$T/tune.err" || { cat "$T/tune.err"; fail "tune: no coverage warning for the partial file"; }
grep -q "has no record of configuration" "$T/tune.err" || { cat "$T/tune.err"; fail "tune: no message at the missing record"; }
# ---- --name=value is --name value, for every command (export, tune, bench alike)
"$MPTUNE" tune "$P" --simulate="$T4" --strategy=bo --option=initial_samples=3 --budget=7 --log="$T/eq.h5" \
  --progress=off >"$T/tune.out" 2>"$T/tune.err" || { cat "$T/tune.err"; fail "tune with --name=value options"; }
"$MPTUNE" export "$T/eq.h5" --t4="$T/eq_T4.json" >/dev/null || fail "export --t4=FILE"
"$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['results'])==7, len(d['results'])" "$T/eq_T4.json" \
  || fail "tune --budget=7 did not make 7 evaluations"
"$MPTUNE" tune "$P" --simulate="$T4" --budget=x >"$T/tune.out" 2>"$T/tune.err" && fail "tune --budget=x accepted"
grep -qF -- "--budget: bad value 'x'" "$T/tune.err" || { cat "$T/tune.err"; fail "tune --budget=x: no message naming it"; }
# ---- a budget larger than the space: the progress line counts to the space's size (it showed the budget)
"$MPTUNE" tune "$P" --simulate "$T4" --strategy brute_force --budget 9999 --log "$T/big.h5" --progress lines \
  >"$T/tune.out" 2>"$T/tune.err" || { cat "$T/tune.err"; fail "tune --budget 9999"; }
grep -q "^progress: 4362/4362 evaluations" "$T/tune.err" || { tail -3 "$T/tune.err"; fail "the progress line's whole is not the space"; }
# ---- a misspelt KernelSpecification key: tune --simulate refuses it as tune with a real evaluator and
# mptune space do (it ran, the spec unread), no log left behind
sed 's/"Arguments"/"Argumnets"/' "$P" >"$T/misspelt.json"
"$MPTUNE" tune "$T/misspelt.json" --simulate "$T4" --budget 3 --log "$T/misspelt.h5" --progress off \
  >"$T/tune.out" 2>"$T/tune.err" && fail "tune --simulate accepted a misspelt KernelSpecification key"
grep -qF "misspelt.json:136:9: KernelSpecification.Argumnets: unknown key; did you mean 'Arguments'?" "$T/tune.err" \
  || { cat "$T/tune.err"; fail "tune --simulate: no message naming the misspelt key"; }
[ ! -e "$T/misspelt.h5" ] || fail "tune --simulate left a log behind for a misspelt key"
# ... and so do devices with the problem (it opens the evaluator as tune does) and bench (its runs simulate
# tune --simulate's); both accepted it
"$MPTUNE" devices "$T/misspelt.json" --simulate "$T4" >"$T/dev.out" 2>"$T/dev.err" \
  && fail "devices --simulate accepted a misspelt KernelSpecification key"
grep -qF "misspelt.json:136:9: KernelSpecification.Argumnets: unknown key; did you mean 'Arguments'?" "$T/dev.err" \
  || { cat "$T/dev.err"; fail "devices --simulate: no message naming the misspelt key"; }
"$MPTUNE" bench --problem "$T/misspelt.json" --space "$T4" --strategy random --repeats 1 --budget 5 --out "$T/mbench" \
  --no-plot >"$T/bench.out" 2>"$T/bench.err" && fail "bench accepted a misspelt KernelSpecification key"
grep -qF "misspelt.json:136:9: KernelSpecification.Argumnets: unknown key; did you mean 'Arguments'?" "$T/bench.err" \
  || { cat "$T/bench.err"; fail "bench: no message naming the misspelt key"; }
[ ! -e "$T/mbench" ] || fail "bench made its --out directory for a misspelt key"

# ---- --resume remembers --t4 (not standard output), and the summary says when the default's time is an
# earlier session's
tune() { "$MPTUNE" tune "$P" --simulate "$T4" --log "$T/run.h5" --no-progress "$@"; }
records() { "$PY" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['results']))" "$1"; }
tune --strategy random --budget 20 --seed 1 --t4 "$T/run_T4.json" >"$T/r1.out" 2>&1 || { cat "$T/r1.out"; fail "tune --t4"; }
grep -q "^note: the default was measured" "$T/r1.out" && fail "a first session says its default is an earlier one's"
# (--confirm 0: a confirmation measures the default again in this session and the speed-up is over that one,
# without the note: tests/confirm_e2e.py)
tune --resume --budget 40 --confirm 0 >"$T/r2.out" 2>&1 || { cat "$T/r2.out"; fail "tune --resume"; }
[ "$(records "$T/run_T4.json")" = 40 ] || { cat "$T/r2.out"; fail "--resume without --t4 did not rewrite run_T4.json with 40 records"; }
grep -qxF "t4: $T/run_T4.json (as the first session asked)" "$T/r2.out" || { cat "$T/r2.out"; fail "no t4 line naming the recorded path"; }
grep -qE "^note: the default was measured in an earlier session \(session 1, [^,]+, [0-9]{4}-[0-9]{2}-[0-9]{2}T[^)]*\); a speed-up across sessions compares times taken under possibly different load$" "$T/r2.out" \
  || { cat "$T/r2.out"; fail "no note that the default was measured in an earlier session"; }
tune --resume --budget 50 --t4 - >"$T/r3.out" 2>"$T/r3.err" || { cat "$T/r3.err"; fail "tune --resume --t4 -"; }
[ "$(records "$T/run_T4.json")" = 40 ] || fail "--t4 - wrote the recorded file"
tune --resume --budget 60 --t4 "$T/other_T4.json" >"$T/r4.out" 2>&1 || { cat "$T/r4.out"; fail "tune --resume --t4 other"; }
tune --resume --budget 70 >"$T/r5.out" 2>&1 || { cat "$T/r5.out"; fail "tune --resume after --t4 other"; }
[ "$(records "$T/other_T4.json")" = 70 ] && [ "$(records "$T/run_T4.json")" = 40 ] \
  || { cat "$T/r5.out"; fail "a --t4 given on --resume was not the one the next --resume wrote"; }
echo "replay_cli: ok"
