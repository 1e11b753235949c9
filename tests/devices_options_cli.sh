#!/usr/bin/env bash
# tests/devices_options_cli.sh: evaluator options at the command line: `mptune tune --evaluator NAME --help` lists an
# evaluator's table; a bad --evaluator-option (unknown key, bad value) is one message before anything runs, no log
# left; a good one runs (the cpu evaluator on the matmul example, a fresh child per variant). `--evaluator auto`
# with --simulate replays.
set -euo pipefail
: "${MPTUNE:?}" "${MPIEXEC:?}" "${MPT_SOURCE_DIR:?}"
tmp=$(mktemp -d /tmp/mpt_evopt_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cp "$MPT_SOURCE_DIR"/examples/cpu/matmul.* "$tmp/"
cd "$tmp"

"$MPTUNE" tune --evaluator cpu --help >help.txt
grep -q "^options of evaluator 'cpu' (--evaluator-option key=value):" help.txt || fail "cpu's options not listed"
grep -q "^  isolation (string, default server, one of server|fork): " help.txt || fail "isolation not listed"
"$MPTUNE" tune --help | grep -q -- "--evaluator-option key=value" || fail "--evaluator-option not in tune --help"
if "$MPTUNE" tune --evaluator nope --help 2>err.txt; then fail "an unknown evaluator's help succeeded"; fi
grep -q "unknown evaluator 'nope' (known: auto, sim, cpu, cuda, hip)" err.txt || fail "unknown evaluator: $(cat err.txt)"

bad() { # expected message, arguments
  local want=$1
  shift
  if "$MPIEXEC" -n 2 "$MPTUNE" tune matmul.json --budget 2 --log bad.h5 --progress off "$@" >out.txt 2>&1; then
    fail "$* succeeded"
  fi
  cat out.txt
  grep -qF -- "$want" out.txt || fail "$*: no '$want'"
  [ "$(grep -c "mptune tune:" out.txt)" = 1 ] || fail "$*: not one message"
  [ ! -e bad.h5 ] || fail "$*: a log was left"
}
bad "evaluator 'auto': unknown option 'isolaton'; did you mean 'isolation'?" --evaluator-option isolaton=fork
bad "evaluator 'cpu': bad value for option 'isolation': 'thread' is not one of server|fork" --evaluator cpu \
  --evaluator-option isolation=thread
bad "evaluator 'cpu': unknown option 'compile_options'" --evaluator cpu --evaluator-option compile_options=-O3
bad "evaluator 'sim' takes no options" --simulate matmul.json --evaluator-option isolation=fork

"$MPIEXEC" -n 2 "$MPTUNE" tune matmul.json --strategy random --budget 3 --log good.h5 --progress off \
  --evaluator-option isolation=fork --evaluator-option memory_limit_mb=4096 >good.txt 2>&1 || { cat good.txt; fail "the run failed"; }
grep -q "evaluations: 3 (3 valid" good.txt || { cat good.txt; fail "not 3 valid evaluations"; }
# auto with a replayed file is the replay evaluator, whatever the kernel's language
data=${MPT_SHARED_DATA:-$MPT_SOURCE_DIR/../shared/data}
"$MPTUNE" tune "$data/t1/convolution_milo.json" --evaluator auto --simulate "$data/brute-forced/convolution_A100_T4.json.gz" \
  --budget 3 --log sim.h5 --progress off >sim.txt 2>&1 || { cat sim.txt; fail "auto with --simulate failed"; }
grep -Eq "^0 .* replay .* sim$" sim.txt || { cat sim.txt; fail "auto with --simulate did not replay"; }
echo ok
