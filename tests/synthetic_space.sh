#!/usr/bin/env bash
# tests/synthetic_space.sh: scripts/synthetic_space.py (synthetic brute-forced spaces for strategy
# benchmarks on problems without measured data): over the valid configurations of convolution_milo it
# writes a T4 file that the T4 results schema accepts, the same file for the same seed and another for
# another seed, with failures in the measured files' form; `mptune bench` replays it with every
# configuration found (no record missing) and bo beats random search on it.
# Env (from ctest): MPTUNE, MPT_SHARED_DATA, MPT_SOURCE_DIR, PYTHON.
. "$(dirname "$0")/synthetic_common.sh"
P=$MPT_SHARED_DATA/t1/convolution_milo.json

"$MPTUNE" space "$P" --list "$T/list.csv" >/dev/null || fail "mptune space --list"
"$PY" "$G" "$T/list.csv" "$T/a_T4.json.gz" 7 || { rc=$?; fail "generator exited $rc"; }
"$PY" "$G" "$T/list.csv" "$T/b_T4.json.gz" 7 >/dev/null || fail "generator (again)"
"$PY" "$G" "$T/list.csv" "$T/c_T4.json.gz" 8 >/dev/null || fail "generator (seed 8)"
cmp -s <(zcat "$T/a_T4.json.gz") <(zcat "$T/b_T4.json.gz") || fail "same seed, different files"
cmp -s <(zcat "$T/a_T4.json.gz") <(zcat "$T/c_T4.json.gz") && fail "seeds 7 and 8 gave the same file"
"$PY" - "$T/a_T4.json.gz" "$MPT_SHARED_DATA/schemas/T4-results-1.0.0.json" "$T/list.csv" <<'PY' || fail "T4 content"
import csv, gzip, json, sys
import jsonschema
d = json.load(gzip.open(sys.argv[1], "rt"))
jsonschema.validate(d, json.load(open(sys.argv[2])))
n = sum(1 for _ in open(sys.argv[3])) - 1
res = d["results"]
assert len(res) == n, (len(res), n)
bad = [r for r in res if r["invalidity"] != "correct"]
ok = [r for r in res if r["invalidity"] == "correct"]
assert 0.02 * n < len(bad) < 0.5 * n, len(bad)
assert all(r["measurements"][0]["value"] == "RuntimeFailedConfig" and r["correctness"] == 0 for r in bad)
t = sorted(r["measurements"][0]["value"] for r in ok)
med = t[len(t) // 2]
assert t[0] > 0 and t[-1] > 5 * med and sum(t) / len(t) > med, ("heavy tail", t[0], med, t[-1])
PY
"$MPTUNE" bench --problem "$P" --space "$T/a_T4.json.gz" --strategy random,bo --repeats 4 --budget 60 --seed 3 \
  --no-plot --out "$T/bench" >"$T/bench.out" 2>"$T/bench.err" || { cat "$T/bench.err"; fail "mptune bench exited"; }
grep -q 'configurations' "$T/bench.out" || fail "bench: no space header"
"$PY" - "$T/bench/runs.csv" <<'PY' || fail "bench scores"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
m = {s: sum(float(r["score"]) for r in rows if r["strategy"] == s) / 4 for s in ("random", "bo")}
print(m)
assert m["bo"] > m["random"] + 0.2, m
PY
echo "synthetic_space: ok"
