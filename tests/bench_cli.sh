#!/usr/bin/env bash
# tests/bench_cli.sh: end-to-end test of `mptune bench`: tables, curves.csv/runs.csv/summary.csv and the
# PNG; the same scores, curves and runs under mpiexec.mpich -n 4 as with one rank; variants and
# --option; the progress line; a space too small for a score; rank 0's memory bounded by one (space,
# strategy)'s traces; bad input (unknown strategy, missing file, budget 0, ...) gives a clear message and
# a non-zero exit; an --out where an output would replace an input, or that cannot be written, or a
# missing plot script, is refused before any run.
# Env (from ctest): MPTUNE, MPIEXEC, MPT_SHARED_DATA, PYTHON.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
: "${MPTUNE:?}" "${MPIEXEC:?}" "${MPT_SHARED_DATA:?}"
D=$MPT_SHARED_DATA
P=$D/t1/convolution_milo.json
A=$D/brute-forced/convolution_A100_T4.json.gz
W=$D/brute-forced/convolution_W6600_T4.json.gz
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OPENBLAS_NUM_THREADS=1

ARGS=(bench --problem "$P" --space "$A" --space "$W" --strategy random,ga:constraint_aware=0,popsize=10
      --strategy sa --option T=2 --repeats 3 --budget 60 --seed 5)

# ---- one rank, with the plot
"$MPTUNE" "${ARGS[@]}" --out "$T/one/sub" >"$T/one.out" 2>"$T/one.err" || { rc=$?; cat "$T/one.err"; fail "mptune bench -n 1 exited $rc"; }
cat "$T/one.out"
grep -q '^| space | random | ga:constraint_aware=0,popsize=10 | sa |$' "$T/one.out" || fail "score table header"
grep -q '^| A100 | ' "$T/one.out" || fail "no A100 row (labels without the common prefix)"
grep -q '^| W6600 | ' "$T/one.out" || fail "no W6600 row"
grep -q '^| mean | ' "$T/one.out" || fail "no mean row"
grep -q 'best@20 | best@60 | optimum found | failed evals (mean) | ask ms (median)' "$T/one.out" || fail "detail table header"
for f in curves.csv runs.csv summary.csv bench.png; do [ -s "$T/one/sub/$f" ] || fail "$f not written"; done
head -c 8 "$T/one/sub/bench.png" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a' || fail "bench.png is not a PNG"
[ "$(wc -l <"$T/one/sub/curves.csv")" -eq $((2 * 3 * 60 + 1)) ] || fail "curves.csv: expected 361 lines"
[ "$(wc -l <"$T/one/sub/runs.csv")" -eq $((2 * 3 * 3 + 1)) ] || fail "runs.csv: expected 19 lines"
[ "$(wc -l <"$T/one/sub/summary.csv")" -eq $((2 * 3 + 1)) ] || fail "summary.csv: expected 7 lines"
# CSV content: every run made 60 evaluations; seeds are seed + repeat; curves are monotone, q25<=median<=q75
"${PYTHON:-/usr/bin/python3}" - "$T/one/sub" <<'EOF' || fail "CSV content"
import csv, sys, math
d = sys.argv[1]
runs = list(csv.DictReader(open(d + "/runs.csv")))
assert {r["strategy"] for r in runs} == {"random", "ga:constraint_aware=0,popsize=10", "sa"}, runs[0]
for r in runs:
    assert int(r["evaluations"]) == 60 and int(r["seed"]) == 5 + int(r["repeat"]), r
    assert -50 < float(r["score"]) <= 1.0 + 1e-12, r
cur = list(csv.DictReader(open(d + "/curves.csv")))
prev = {}
for c in cur:
    key = (c["space"], c["strategy"])
    med, q25, q75, e = (float(c[k]) for k in ("median", "q25", "q75", "e_random"))
    assert q25 <= med <= q75 and float(c["optimum"]) <= min(q25, e), c
    if key in prev:
        assert med <= prev[key][0] + 1e-12 and e <= prev[key][1] + 1e-12, c
    prev[key] = (med, e)
summ = list(csv.DictReader(open(d + "/summary.csv")))
for s in summ:
    mine = [float(r["score"]) for r in runs if r["space"] == s["space"] and r["strategy"] == s["strategy"]]
    assert abs(sum(mine) / len(mine) - float(s["score_mean"])) < 1e-6, s
EOF

# ---- four ranks: same scores, curves and runs (ask times aside)
"$MPIEXEC" -n 4 "$MPTUNE" "${ARGS[@]}" --out "$T/four" --no-plot >"$T/four.out" 2>"$T/four.err" \
  || { rc=$?; cat "$T/four.err"; fail "mpiexec -n 4 mptune bench exited $rc"; }
grep -q 'on 4 ranks' "$T/four.out" || fail "-n 4 run does not report 4 ranks"
[ ! -e "$T/four/bench.png" ] || fail "--no-plot wrote a PNG"
sed -n '/^## Scores/,/^### /p' "$T/one.out" >"$T/t1"
sed -n '/^## Scores/,/^### /p' "$T/four.out" >"$T/t4"
diff "$T/t1" "$T/t4" || fail "score table differs between -n 1 and -n 4"
cmp "$T/one/sub/curves.csv" "$T/four/curves.csv" || fail "curves.csv differs between -n 1 and -n 4"
diff <(cut -d, -f1-10 "$T/one/sub/runs.csv") <(cut -d, -f1-10 "$T/four/runs.csv") || fail "runs.csv differs"
diff <(cut -d, -f1-9 "$T/one/sub/summary.csv") <(cut -d, -f1-9 "$T/four/summary.csv") || fail "summary.csv differs"

# ---- progress: off by default when stderr is not a terminal; --progress gives rank 0's runs, rate and ETA
grep -q 'runs/s' "$T/one.err" && fail "progress lines without --progress on a non-terminal"
"$MPTUNE" bench --space "$P:$A" --strategy random --repeats 3 --budget 20 --progress --progress-every 0 --no-plot \
  --out "$T/p" >/dev/null 2>"$T/p.err" || { cat "$T/p.err"; fail "--progress"; }
[ "$(grep -c '^mptune bench: rank 0: [0-9]*/3 runs (.*%) | .* runs/s | elapsed [0-9:]* ETA [0-9:?]*$' "$T/p.err")" -eq 3 ] \
  || { cat "$T/p.err"; fail "--progress-every 0: expected one line per run"; }
tail -n 1 "$T/p.err" | grep -q 'rank 0: 3/3 runs (100%)' || fail "no final progress line"

# ---- PROBLEM:DATA form, batch, budget below the score step
"$MPTUNE" bench --space "$P:$A" --strategy random --repeats 2 --budget 10 --batch 4 --out "$T/b" --no-plot >"$T/b.out" 2>&1 \
  || { cat "$T/b.out"; fail "PROBLEM:DATA form"; }
grep -q '^| convolution_A100 | ' "$T/b.out" || fail "single-space label"
grep -q 'batch 4' "$T/b.out" || fail "batch not reported"


# ---- spaces whose short labels would be equal (A100 in two folders, A100 as T4 and as a Kernel Tuner cache):
# each labelled by the shortest path suffix that names its file, in the table and the CSVs (they were
# A100, A100#1, A100#2); a file given twice keeps #N
mkdir -p "$T/dx" "$T/dy"
cp "$A" "$T/dx/" && cp "$A" "$T/dy/" || fail "copy $A"
"$MPTUNE" bench --problem "$P" --space "$T/dx/convolution_A100_T4.json.gz" --space "$T/dy/convolution_A100_T4.json.gz" \
  --space "$D/brute-forced/convolution_A100_kerneltuner.json.gz" --space "$A" --space "$T/dx/convolution_A100_T4.json.gz" \
  --strategy random --repeats 1 --budget 20 --out "$T/lab" --no-plot >"$T/lab.out" 2>&1 || { cat "$T/lab.out"; fail "same labels"; }
for l in dx/convolution_A100_T4.json.gz dy/convolution_A100_T4.json.gz convolution_A100_kerneltuner.json.gz \
         brute-forced/convolution_A100_T4.json.gz 'dx/convolution_A100_T4.json.gz#4'; do
  grep -qF "| $l | " "$T/lab.out" || { cat "$T/lab.out"; fail "no row labelled $l"; }
  grep -qF "\"$l\",\"random\"" "$T/lab/summary.csv" || fail "summary.csv: no space $l"
done
# ---- a space so small that random search finds its optimum by the first score term: no score (n/a,
# with a warning), its best@k still shown, and the mean row over the spaces that have one
cat >"$T/tiny.json" <<'EOF'
{"ConfigurationSpace": {"TuningParameters": [{"Name": "a", "Type": "int", "Values": "[1, 2, 3]"},
 {"Name": "b", "Type": "int", "Values": "[1, 2]"}], "Conditions": [{"Expression": "a * b != 6"}]}}
EOF
"$MPTUNE" space "$T/tiny.json" --list "$T/tiny.csv" >/dev/null || fail "mptune space --list (tiny)"
"${PYTHON:-/usr/bin/python3}" "$(dirname "$0")/../scripts/synthetic_space.py" "$T/tiny.csv" "$T/tiny_T4.json.gz" 1 >/dev/null \
  || fail "synthetic_space.py (tiny)"
"$MPTUNE" bench --space "$T/tiny.json:$T/tiny_T4.json.gz" --space "$P:$A" --strategy random --repeats 2 --budget 40 \
  --out "$T/tiny" --no-plot >"$T/tiny.out" 2>"$T/tiny.err" || { cat "$T/tiny.err"; fail "bench with a tiny space"; }
grep -q "tiny_T4.json.gz: no score: random search is expected to find the optimum within 20 evaluations (5 configurations)" \
  "$T/tiny.err" || { cat "$T/tiny.err"; fail "no warning for the tiny space"; }
grep -q '^| tiny | n/a |$' "$T/tiny.out" || fail "tiny space's score is not n/a"
grep -q '^| random | n/a | n/a | 0.542' "$T/tiny.out" || fail "tiny space's detail row"
a100=$(sed -n 's/^| convolution_A100 | \(.*\) |$/\1/p' "$T/tiny.out")
grep -q "^| mean | $a100 |\$" "$T/tiny.out" || fail "mean row is not over the spaces with a score ($a100)"

# ---- bad input: message on stderr, non-zero exit, nothing on stdout
bad() { # expected-message args...
  local msg=$1; shift
  "$@" >"$T/bad.out" 2>"$T/bad.err" && fail "exit 0 for: $*"
  grep -qF -- "$msg" "$T/bad.err" || { cat "$T/bad.err"; fail "message '$msg' missing for: $*"; }
  grep -q 'Segmentation\|Assertion\|core dumped' "$T/bad.err" && fail "crash for: $*"
  [ ! -s "$T/bad.out" ] || fail "stdout not empty for: $*"
}
bad "unknown strategy 'nope'" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random,nope --out "$T/x"
bad "no_such_file.json.gz" "$MPTUNE" bench --problem "$P" --space "$D/no_such_file.json.gz" --strategy random --out "$T/x"
bad "no_such_problem.json" "$MPTUNE" bench --problem "$D/no_such_problem.json" --space "$A" --strategy random --out "$T/x"
bad "--budget: bad value '0'" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --budget 0 --out "$T/x"
bad "--repeats: bad value 'x'" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --repeats x --out "$T/x"
bad "no T1 problem" "$MPTUNE" bench --space "$A" --strategy random --out "$T/x"
bad "no --strategy" "$MPTUNE" bench --problem "$P" --space "$A" --out "$T/x"
bad "no selected strategy has option 'popsize'" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --option popsize=3 --out "$T/x"
bad "ga:bogus=1" "$MPTUNE" bench --problem "$P" --space "$A" --strategy ga:bogus=1 --out "$T/x"
bad "follows no NAME:key=value" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random,popsize=3 --out "$T/x"
bad "--progress-every: bad value 'soon'" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --progress-every soon --out "$T/x"
bad "--batch: bad value '0'" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --batch 0 --out "$T/x"
# an option where a value belongs: the value was left out (not taken as a file named --strategy)
bad "--space needs a value, but is followed by the option '--strategy'" "$MPTUNE" bench --problem "$P" --space --strategy random --out "$T/x"
bad "--out needs a value" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --out
# an unknown option is unknown wherever it stands (last: not "needs a value"), with the option meant
bad "unknown option '--repat'; did you mean '--repeats'? (see mptune bench --help)" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --repat
bad "unknown option '--bogus' (see mptune bench --help)" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --bogus 3
# under mpiexec: the message once, non-zero exit
bad "unknown strategy 'nope'" "$MPIEXEC" -n 2 "$MPTUNE" bench --problem "$P" --space "$A" --strategy nope --out "$T/x"
[ "$(grep -c "unknown strategy 'nope'" "$T/bad.err")" -eq 1 ] || fail "message not printed once under -n 2"
[ ! -e "$T/x" ] || fail "bad input created the output directory"

# ---- an output in --out that would replace an input (the problem, a --space file, a PROBLEM:DATA problem, the
# plot script) is refused before anything runs or is written; the inputs unchanged
clash() { # expected-message dir inputs-to-check -- args...: the message, the inputs unchanged, nothing new in dir
  local msg=$1 dir=$2 files=()
  shift 2
  while [ "$1" != -- ]; do files+=("$1"); shift; done
  shift
  # (a copy of a read-only data file is read-only too: replaced, not written into, by the next clash)
  for f in "${files[@]}"; do rm -f "$T/orig.$(basename "$f")"; cp "$f" "$T/orig.$(basename "$f")" || fail "cannot copy $f"; done
  local before
  before=$(ls -A "$dir")
  bad "$msg" "$@"
  for f in "${files[@]}"; do cmp -s "$f" "$T/orig.$(basename "$f")" || fail "$f was changed by: $*"; done
  [ "$(ls -A "$dir")" = "$before" ] || fail "$dir: files written by: $*"
}
mkdir "$T/o10" "$T/o2" "$T/o3"
cp "$P" "$T/o10/summary.csv"
cp "$A" "$T/o10/runs.csv"
cp "$A" "$T/o2/curves.csv"
cp "$A" "$T/o3/bench.png"
cp "$A" "$T/o3/runs.csv.tmp"
clash "--out $T/o10: writing runs.csv there would replace the --space file $T/o10/runs.csv (choose another --out)" \
  "$T/o10" "$T/o10/summary.csv" "$T/o10/runs.csv" -- \
  "$MPTUNE" bench --problem "$T/o10/summary.csv" --space "$T/o10/runs.csv" --strategy random --repeats 2 --budget 40 --out "$T/o10" --no-plot
clash "writing summary.csv there would replace the problem file $T/o10/summary.csv" "$T/o10" "$T/o10/summary.csv" -- \
  "$MPTUNE" bench --problem "$T/o10/summary.csv" --space "$A" --strategy random --repeats 2 --budget 40 --out "$T/o10" --no-plot
clash "writing curves.csv there would replace the --space file $T/o2/curves.csv" "$T/o2" "$T/o2/curves.csv" -- \
  "$MPTUNE" bench --problem "$P" --space "$T/o2/curves.csv" --strategy random --repeats 2 --budget 40 --out "$T/o2/" --no-plot
(cd "$T" && clash "writing curves.csv there would replace the --space file ./o2/curves.csv" o2 o2/curves.csv -- \
  "$MPIEXEC" -n 2 "$MPTUNE" bench --space "$P:./o2/curves.csv" --strategy random --repeats 2 --budget 40 --out "$T/o2" --no-plot) \
  || exit 1
[ "$(grep -c "would replace" "$T/bad.err")" -eq 1 ] || fail "clash message not printed once under -n 2"
clash "writing summary.csv there would replace the problem of --space $T/o10/summary.csv" "$T/o10" "$T/o10/summary.csv" -- \
  "$MPTUNE" bench --space "$T/o10/summary.csv:$A" --strategy random --repeats 2 --budget 40 --out "$T/o10" --no-plot
clash "writing bench.png there would replace the --space file $T/o3/bench.png" "$T/o3" "$T/o3/bench.png" -- \
  "$MPTUNE" bench --problem "$P" --space "$T/o3/bench.png" --strategy random --repeats 2 --budget 40 --out "$T/o3"
# a file named like the old temporary name of an output (runs.csv.tmp) is an input like any other: the outputs
# are written under names of their own (NAME.tmp.XXXXXX), so it is read and left as it is
"$MPTUNE" bench --problem "$P" --space "$T/o3/runs.csv.tmp" --strategy random --repeats 2 --budget 40 --out "$T/o3" \
  --no-plot > "$T/tmpname.out" 2>&1 || { cat "$T/tmpname.out"; fail "bench with a --space file named runs.csv.tmp in --out"; }
cmp -s "$A" "$T/o3/runs.csv.tmp" || fail "the --space file runs.csv.tmp in --out was changed"
[ -s "$T/o3/runs.csv" ] || fail "runs.csv not written beside runs.csv.tmp"
ls "$T/o3" | grep -q '\.tmp\.' && fail "a temporary output file was left in --out"
rm -f "$T/o3/curves.csv" "$T/o3/runs.csv" "$T/o3/summary.csv"
cp "$(dirname "$0")/../scripts/plot_bench.py" "$T/o3/curves.csv"
clash "writing curves.csv there would replace the plot script $T/o3/curves.csv" "$T/o3" "$T/o3/curves.csv" -- \
  "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --repeats 2 --budget 40 --out "$T/o3" --plot-script "$T/o3/curves.csv"
rm "$T/o3/curves.csv"
# without the PNG, bench.png is no output: the same --out runs
"$MPTUNE" bench --problem "$P" --space "$T/o3/bench.png" --strategy random --repeats 2 --budget 20 --out "$T/o3" --no-plot \
  >"$T/o3.out" 2>&1 || { cat "$T/o3.out"; fail "--no-plot with a --space named bench.png in --out"; }
cmp -s "$T/o3/bench.png" "$A" || fail "--no-plot replaced bench.png"

# ---- --out that cannot be written, a plot script that is not there: refused before any run, naming the path
touch "$T/afile"
bad "--out: cannot create $T/afile/sub: Not a directory" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --out "$T/afile/sub" --no-plot
bad "plot: /nonexistent.py (\$MPT_PLOT_BENCH) not found" env MPT_PLOT_BENCH=/nonexistent.py "$MPTUNE" bench --problem "$P" --space "$A" \
  --strategy random --repeats 2 --budget 20 --out "$T/np"
[ ! -e "$T/np" ] || fail "a missing plot script is found only after the runs"
bad "plot: $T/none.py (--plot-script) not found" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --out "$T/np" \
  --plot-script "$T/none.py"
if [ "$(id -u)" -ne 0 ]; then # root writes anywhere
  mkdir "$T/ro" && chmod 555 "$T/ro"
  bad "--out: directory $T/ro is not writable" "$MPTUNE" bench --problem "$P" --space "$A" --strategy random --out "$T/ro" --no-plot
fi
# ---- rank 0 holds the traces (best-so-far per evaluation) of one (space, strategy) at a time, not of all: with
# 8 of them (one space named 8 times), 50 repeats of budget 20000 (8 MB of best-so-far per pair) add less than
# 4 x 8 MB to its peak memory over 1 repeat (about 13 MB: one pair's traces and ask times; it was 78 MB, all
# 8 pairs'); not under AddressSanitizer (its quarantine keeps freed memory)
peak_kb() { # args...: the peak resident memory of `mptune args...` in KB
  "${PYTHON:-/usr/bin/python3}" -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else "failed")' "$MPTUNE" "$@"
}
if [ "${MPT_SANITIZE:-0}" != 1 ]; then
  EIGHT=(--problem "$P" --space "$A" --space "$A" --space "$A" --space "$A" --space "$A" --space "$A" --space "$A"
         --space "$A" --strategy random --budget 20000 --no-plot --no-progress --out "$T/mem")
  one=$(peak_kb bench "${EIGHT[@]}" --repeats 1)
  fifty=$(peak_kb bench "${EIGHT[@]}" --repeats 50)
  case "$one$fifty" in *failed*) fail "bench for the memory check failed";; esac
  [ $((fifty - one)) -lt $((4 * 50 * 20000 * 8 / 1024)) ] \
    || fail "rank 0's peak memory grows with the (space, strategy) pairs: $one KB (1 repeat), $fifty KB (50 repeats)"
fi
"$MPTUNE" bench --help | grep -q 'seed S + r' || fail "--help does not document the seeds"
echo "bench_cli: OK"
