#!/usr/bin/env bash
# tests/cpu_bad_input.sh: bad input to `mptune tune` with the cpu evaluator under mpiexec.mpich -n 3: a
# missing kernel file, a kernel name that is not in the file, an argument size expression that fails, a
# Generator with a syntax error, a non-C language, a CompilerOptions library that does not exist and a kernel
# with a syntax error (the compiler's error lines, the option named), a misspelt key, a number no double holds
# (a Default, a ProblemSize, a FillValue). Each: non-zero exit, one clear message naming the field, no run log
# left behind.
# Outputs that would replace a file the problem reads (its kernel source, a BinaryRaw DataSource, as --log or
# --t4, under collect and tune, by a relative or another path) or that cannot be written (--t4 in a missing
# directory) are refused before any evaluation: the file unchanged, no run log. So is --objective energy with the
# evaluator auto picks for a C kernel (cpu: no power observer).
set -euo pipefail
: "${MPTUNE:?}" "${MPIEXEC:?}" "${MPT_SOURCE_DIR:?}"
tmp=$(mktemp -d /tmp/mpt_cpu_bad_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$MPT_SOURCE_DIR/tests/kernels/failing.c" "$tmp/"
src="$MPT_SOURCE_DIR/tests/kernels/failing.json"

fails() { # name, expected message part, mptune args (run in $tmp under mpiexec -n 3): non-zero, not hung, the message
  local name=$1 want=$2
  shift 2
  set +e
  (cd "$tmp" && timeout 120 "$MPIEXEC" -n 3 "$MPTUNE" "$@") >"$tmp/$name.out" 2>&1
  local rc=$?
  set -e
  cat "$tmp/$name.out"
  [ "$rc" -ne 0 ] || { echo "$name: exit status 0"; exit 1; }
  [ "$rc" -ne 124 ] || { echo "$name: hung"; exit 1; }
  grep -qF -- "$want" "$tmp/$name.out" || { echo "$name: message lacks '$want'"; exit 1; }
}

check() { # name, sed expression, expected message part
  local name=$1 expr=$2 want=$3
  sed "$expr" "$src" >"$tmp/$name.json"
  cmp -s "$src" "$tmp/$name.json" && { echo "$name: the edit did not apply"; exit 1; }
  fails "$name" "$want" tune "$name.json" --budget 5 --log "$name.h5"
  [ ! -e "$tmp/$name.h5" ] || { echo "$name: a run log was left behind"; exit 1; }
  echo "$name: ok"
}
check missing_file 's/"KernelFile": "failing.c"/"KernelFile": "nothere.c"/' \
  "KernelSpecification.KernelFile: cannot read"
check missing_kernel 's/"KernelName": "twice"/"KernelName": "thrice"/' \
  "KernelSpecification.KernelName: kernel 'thrice' not found in"
check bad_size 's|"Size": "ProblemSize\[0\]", "FillType": "Generator"|"Size": "ProblemSize[0] // (len(mode) - 7)", "FillType": "Generator"|' \
  "KernelSpecification.Arguments[1].Size: 'ProblemSize[0] // (len(mode) - 7)' failed: ZeroDivisionError"
# the expression shown under the message with a caret under the '//' that failed
grep -qxF -A1 "    ProblemSize[0] // (len(mode) - 7)" "$tmp/bad_size.out" &&
  grep -A1 -xF "    ProblemSize[0] // (len(mode) - 7)" "$tmp/bad_size.out" | tail -1 | grep -qx "                   ^" ||
  { echo "bad_size: no caret under the '//'"; exit 1; }
check bad_generator 's|"DataSource": "i % 17 \* 0.5"|"DataSource": "i % 17 * )"|' \
  "KernelSpecification.Arguments[1].DataSource: unexpected ')'"
# a CUDA kernel on the cpu evaluator named (the default, auto, would bind a GPU)
sed 's/"Language": "C"/"Language": "CUDA"/' "$src" >"$tmp/not_c.json"
fails not_c "the cpu evaluator runs C kernels" tune not_c.json --evaluator cpu --budget 5 --log not_c.h5
[ ! -e "$tmp/not_c.h5" ] || { echo "not_c: a run log was left behind"; exit 1; }
# a default that does not compile: the compiler's own error lines, not only its last ('collect2: error: ld returned
# 1 exit status'); a CompilerOptions entry the compiler names (a -l library it cannot find) is named with its place
check no_such_lib 's/"Language": "C",/"Language": "C", "CompilerOptions": ["-O2", "-lnosuchlib_mptune"],/' \
  "cannot find -lnosuchlib_mptune"
grep -Eq "^mptune tune: no_such_lib\.json:11:[0-9]+: KernelSpecification\.CompilerOptions\[1\]: the compiler refuses \"-lnosuchlib_mptune\"" \
  "$tmp/no_such_lib.out" || { echo "no_such_lib: CompilerOptions[1] and its line not named"; exit 1; }
grep -q "ld returned 1 exit status" "$tmp/no_such_lib.out" || { echo "no_such_lib: the compiler's last line is missing"; exit 1; }
# a syntax error in the kernel: its first error line, with the line number, and no CompilerOptions blamed
awk '/^void twice\(/ { print "int helper(int x) { return x }" } { print }' "$tmp/failing.c" >"$tmp/syntax.c"
bad_line=$(grep -n '^int helper' "$tmp/syntax.c" | cut -d: -f1)
check syntax_error 's/"KernelFile": "failing.c"/"KernelFile": "syntax.c"/' "does not compile, so there is no reference output"
grep -Eq "syntax\.c:$bad_line:[0-9]+: error: expected" "$tmp/syntax_error.out" &&
  ! grep -q "CompilerOptions" "$tmp/syntax_error.out" || { echo "syntax_error: no first error line at line $bad_line"; exit 1; }
check misspelt_key 's/"Arguments"/"Argumnets"/' \
  "KernelSpecification.Argumnets: unknown key; did you mean 'Arguments'?"
check default_inf 's/"Default": 0}/"Default": 1e999999}/' \
  "default_inf.json:5:85: ConfigurationSpace.TuningParameters[0].Default: number 1e999999 is out of range (not representable as a double)"
check problem_size_inf 's/"ProblemSize": \[1000\]/"ProblemSize": [1e400]/' \
  "problem_size_inf.json:24:21: KernelSpecification.ProblemSize[0]: number 1e400 is out of range"
check fill_value_inf 's/"FillValue": 1000}/"FillValue": -1e999}/' \
  "fill_value_inf.json:22:75: KernelSpecification.Arguments[2].FillValue: number -1e999 is out of range"

# an unknown option, last or not, is unknown (not "needs a value"), with the option meant
cp "$src" "$tmp/opts.json"
fails unknown_last "unknown option '--straegy'; did you mean '--strategy'? (see mptune tune --help)" tune opts.json --straegy
fails unknown_mid "unknown option '--bogus' (see mptune tune --help)" tune opts.json --bogus 3 --budget 5
fails collect_strategy "unknown option '--strategy' (see mptune collect --help)" collect opts.json --strategy bo
fails unknown_strategy_help "unknown strategy 'nope'; known strategies: random," tune --strategy nope --help
fails too_many_iterations "--iterations: bad value '33' (at most 32 timed runs per evaluation)" tune opts.json --iterations 33
echo "unknown options: ok"

# ---- outputs: refused up front, nothing written ----
cp "$src" "$tmp/ok.json"
sed 's|"FillType": "Generator", "DataSource": "i % 17 \* 0.5"|"FillType": "BinaryRaw", "DataSource": "in.bin"|' \
  "$src" >"$tmp/raw.json"
cmp -s "$src" "$tmp/raw.json" && { echo "raw: the edit did not apply"; exit 1; }
head -c 4000 /dev/zero >"$tmp/in.bin"
cp "$tmp/failing.c" "$tmp/failing.c.orig"
cp "$tmp/in.bin" "$tmp/in.bin.orig"
refused() { # name, expected message part, mptune args (run in $tmp)...
  local name=$1
  fails "$@"
  [ "$(grep -c '^mptune' "$tmp/$name.out")" -eq 1 ] || { echo "$name: not one message"; exit 1; }
  grep -q '^evaluations:\|^best:' "$tmp/$name.out" && { echo "$name: it ran"; exit 1; }
  cmp -s "$tmp/failing.c" "$tmp/failing.c.orig" || { echo "$name: the kernel source was changed"; exit 1; }
  cmp -s "$tmp/in.bin" "$tmp/in.bin.orig" || { echo "$name: the BinaryRaw file was changed"; exit 1; }
  [ ! -e "$tmp/run.h5" ] || { echo "$name: a run log was left behind"; exit 1; }
  echo "$name: ok"
}
kernel="is the kernel source (KernelSpecification.KernelFile)"
refused collect_t4_kernel "--t4 failing.c $kernel: it would be replaced by the T4 export" \
  collect ok.json --log run.h5 --t4 failing.c
refused tune_log_kernel "--log ./failing.c $kernel: it would be replaced by the run log" \
  tune ok.json --budget 5 --log ./failing.c --force
refused tune_log_kernel_abs "--log $tmp/failing.c $kernel" tune ok.json --budget 5 --log "$tmp/failing.c" --resume
refused tune_t4_raw "--t4 in.bin is the BinaryRaw DataSource of argument 'in': it would be replaced by the T4 export" \
  tune raw.json --budget 5 --log run.h5 --t4 in.bin
refused collect_t4_nodir "--t4 nodir/x.json: cannot write there: directory 'nodir' does not exist" \
  collect ok.json --log run.h5 --t4 nodir/x.json
refused tune_t4_notdir "--t4 failing.c/x.json: cannot write there" tune ok.json --budget 5 --log run.h5 --t4 failing.c/x.json
refused tune_t4_dir "--t4 .: is a directory" tune ok.json --budget 5 --log run.h5 --t4 .
refused tune_log_nodir "--log nodir/run.h5: cannot write there: directory 'nodir' does not exist" \
  tune ok.json --budget 5 --log nodir/run.h5
# a file the kernel source #includes is an input too (the #include line as the compiler reads it)
{ printf '#include "helper.h"\n'; cat "$tmp/failing.c"; } >"$tmp/inc_kernel.c"
echo '/* helper.h: included by inc_kernel.c */' >"$tmp/helper.h"
cp "$tmp/helper.h" "$tmp/helper.h.orig"
sed 's/"KernelFile": "failing.c"/"KernelFile": "inc_kernel.c"/' "$src" >"$tmp/inc.json"
refused tune_log_include "--log helper.h is a file the kernel source #includes (\"helper.h\"): it would be replaced by the run log" \
  tune inc.json --budget 5 --log helper.h --force
cmp -s "$tmp/helper.h" "$tmp/helper.h.orig" || { echo "tune_log_include: the header was changed"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then # root writes anywhere
  mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
  refused tune_t4_readonly "--t4 ro/x.json: cannot write there: directory 'ro' is not writable" \
    tune ok.json --budget 5 --log run.h5 --t4 ro/x.json
fi
# an objective that needs the energy of each launch, with the default evaluator (auto), which picks cpu for this C
# kernel: the cpu evaluator has no power observer (before, every evaluation was logged as a runtime_error, exit 0)
refused energy_auto "--objective energy needs the energy of each launch: the cpu evaluator (--evaluator auto picks it \
for the kernel of ok.json) has no power observer" tune ok.json --objective energy --budget 5 --log run.h5
# the same problem with outputs elsewhere runs, and --t4 /dev/null is written in place
(cd "$tmp" && timeout 120 "$MPIEXEC" -n 3 "$MPTUNE" tune raw.json --budget 2 --log run.h5 --t4 /dev/null --progress off) \
  >"$tmp/raw_ok.out" 2>&1 || { cat "$tmp/raw_ok.out"; echo "raw: a good run failed"; exit 1; }
grep -q '^t4: /dev/null' "$tmp/raw_ok.out" || { cat "$tmp/raw_ok.out"; echo "raw: no T4 line"; exit 1; }

# the options of a strategy, all of them, described: what an unknown --option points to
out=$("$MPTUNE" tune --strategy bo --help)
n_keys=$(grep -c '^  [a-z_]* (' <<<"$out" || true)
grep -q "^options of strategy 'bo' (--option key=value):" <<<"$out" &&
  grep -q '^  fit_hyperparameters (bool, default 0): fit lengthscales' <<<"$out" && [ "$n_keys" -ge 35 ] ||
  { echo "tune --strategy bo --help: $n_keys options listed"; echo "$out" | head -5; exit 1; }
echo "tune --strategy bo --help: $n_keys options"
echo "cpu_bad_input: ok"
