#!/usr/bin/python3
"""tests/kernel_tuner_cli.py: mptune as a Kernel Tuner user meets it, end to end on the replayed convolution
space. Kernel Tuner's strategy names (bayes_opt, genetic_algorithm, ...) are accepted by `tune --strategy`,
`tune --strategy NAME --help`, `bench --strategy` and a resume, and the run log keeps mptune's own name; bo's
options by Kernel Tuner's names (popsize, method) are read as ours. The T1 Search block gives the strategy
and its options, the Budget block the budget, where the command line does not (the run's first lines say
so); a Search the strategies cannot take is an error at its line and column, unless --strategy is given.
A Kernel Tuner cache of a run still in progress (unterminated) is replayed by tune and bench with one warning.
A replayed file that lacks configurations: with --simulate-missing skip the run goes on to its budget, the
lacking ones logged as missing (not counted, never proposed again, also after a resume), left out of the T4
export, which validates; without it the run stops at the first one, as before. mptune's own example problems
validate against the T1 schema but for the extension docs/KERNELS.md names ("Language": "C").

Environment (set by ctest): MPTUNE, MPT_SHARED_DATA, MPIEXEC. Exit status 0 when everything holds.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import glob
import gzip
import json

import h5py
import jsonschema

MPTUNE = os.environ["MPTUNE"]
DATA = os.environ["MPT_SHARED_DATA"]
T1 = os.path.join(DATA, "t1", "convolution_milo.json")
REPLAY = os.path.join(DATA, "brute-forced", "convolution_A100_T4.json.gz")


def run(args, expect_ok=True):
    p = subprocess.run([MPTUNE, *args], capture_output=True, text=True, timeout=300)
    if expect_ok and p.returncode != 0:
        sys.exit(f"FAIL: mptune {' '.join(args)} exited {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def attr(log, name):
    with h5py.File(log, "r") as f:
        v = f.attrs[name]
        return v.decode() if isinstance(v, bytes) else str(v)


def strategy_names(tmp):
    """Kernel Tuner's strategy names wherever a strategy name is; the log keeps ours"""
    log = os.path.join(tmp, "kt_names.h5")
    p = run(["tune", T1, "--simulate", REPLAY, "--strategy", "bayes_opt", "--option", "popsize=4",
             "--option", "method=poi", "--budget", "12", "--seed", "3", "--log", log, "--no-progress"])
    check(", strategy bo, budget 12," in p.stdout, "the header line names bo: " + p.stdout[:400])
    check(attr(log, "strategy") == "bo", "the log keeps our name: " + attr(log, "strategy"))
    # resumed with Kernel Tuner's name of the same strategy: the same strategy, no note of another one
    p = run(["tune", T1, "--simulate", REPLAY, "--strategy", "bayes_opt", "--budget", "15", "--log", log,
             "--resume", "--no-progress"])
    check("continuing with" not in p.stdout and "evaluations: 15 " in p.stdout, "resume with bayes_opt: " + p.stdout)
    check(attr(log, "strategy") == "bo", "the resumed log keeps our name: " + attr(log, "strategy"))
    # a strategy's options listed under Kernel Tuner's name, with Kernel Tuner's option names
    p = run(["tune", "--strategy", "genetic_algorithm", "--help"])
    check("options of strategy 'ga'" in p.stdout and "popsize" in p.stdout, "--help of genetic_algorithm: " + p.stdout)
    p = run(["tune", "--strategy", "bayes_opt", "--help"])
    check("Kernel Tuner's names of these options, read as ours: popsize (initial_samples)" in p.stdout,
          "--help of bayes_opt: " + p.stdout[-300:])
    p = run(["tune", "--strategy", "bayes", "--help"], expect_ok=False)
    check(p.returncode != 0 and "Kernel Tuner's names: random_sample (random)" in p.stderr, "unknown name: " + p.stderr)
    # bench: Kernel Tuner's names, and a global --option by Kernel Tuner's name of bo's option
    out = os.path.join(tmp, "bench")
    p = run(["bench", "--problem", T1, "--space", REPLAY, "--strategy", "random_sample,bayes_opt", "--option",
             "popsize=3", "--repeats", "1", "--budget", "15", "--out", out, "--no-plot", "--no-progress"])
    check("| space | random_sample | bayes_opt |" in p.stdout, "bench table: " + p.stdout[:300])
    print("ok: Kernel Tuner's strategy names")


def problem(tmp, name, search=None, budget=None):
    """the convolution problem with a Search and a Budget block, written to tmp/name.json; its path and text"""
    with open(T1) as fh:
        doc = json.load(fh)
    if search is not None:
        doc["Search"] = search
    if budget is not None:
        doc["Budget"] = budget
    path = os.path.join(tmp, name + ".json")
    text = json.dumps(doc, indent=1)
    with open(path, "w") as fh:
        fh.write(text)
    return path, text


def line_col(text, needle, skip=0):
    """'LINE:COL' (1-based) of the byte skip bytes into the first occurrence of needle in text"""
    at = text.index(needle) + skip
    return f"{text.count(chr(10), 0, at) + 1}:{at - text.rfind(chr(10), 0, at)}"


def tune(prob, log, *extra, expect_ok=True):
    return run(["tune", prob, "--simulate", REPLAY, "--log", log, "--no-progress", "--seed", "1", *extra], expect_ok)


def t1_blocks(tmp):
    """the Search and Budget blocks give what the command line does not; their faults at their place"""
    ga = {"Name": "genetic_algorithm", "Attributes": [{"Name": "popsize", "Value": 8}, {"Name": "method", "Value": "uniform"}]}
    prob, _ = problem(tmp, "blocks", ga, [{"Type": "ConfigurationCount", "BudgetValue": 30},
                                          {"Type": "TuningDuration", "BudgetValue": 600}])
    log = os.path.join(tmp, "blocks.h5")
    p = tune(prob, log)
    first = p.stdout.splitlines()[:4]
    check(first[:3] == [f"strategy: ga, from {prob}'s Search.Name 'genetic_algorithm' (Attributes: popsize=8, method=uniform)",
                        f"budget: 30 evaluations, from {prob}'s Budget[0] (ConfigurationCount)",
                        f"time budget: 600 s, from {prob}'s Budget[1] (TuningDuration)"], "first lines: " + p.stdout[:600])
    check(", strategy ga, budget 30 (and a time budget)," in first[3], "header line: " + first[3])
    check("evaluations: 30 " in p.stdout, "the run's length: " + p.stdout[-600:])
    check(attr(log, "strategy") == "ga" and attr(log, "options") == "popsize=8,method=uniform" and attr(log, "budget") == "30"
          and float(attr(log, "time_budget")) == 600, "the logged settings")
    # the command line wins, each of its own: --strategy drops the Search block, --budget the ConfigurationCount
    # (TuningDuration stays); --option without --strategy goes after the Attributes, so it wins
    log = os.path.join(tmp, "cli.h5")
    p = tune(prob, log, "--strategy", "random", "--budget", "12")
    check(not p.stdout.startswith("strategy:") and p.stdout.startswith("time budget: 600 s, from ")
          and ", strategy random, budget 12 (and a time budget)," in p.stdout, "command line first: " + p.stdout[:400])
    log = os.path.join(tmp, "opt.h5")
    p = tune(prob, log, "--option", "popsize=5", "--time", "300")
    check(p.stdout.startswith("strategy: ga,") and "time budget" not in p.stdout.split("tune ")[0]
          and attr(log, "options") == "popsize=8,method=uniform,popsize=5" and float(attr(log, "time_budget")) == 300,
          "--option after the Attributes: " + p.stdout[:400])
    # a resume goes on with the logged settings, not the file's
    p = run(["tune", prob, "--simulate", REPLAY, "--log", log, "--no-progress", "--resume", "--budget", "40"])
    check("strategy:" not in p.stdout and "continuing with the strategy" in p.stdout and "evaluations: 40 " in p.stdout,
          "resume: " + p.stdout[:400])
    # a fraction of the valid configurations (4362), rounded up
    prob, _ = problem(tmp, "fraction", None, [{"Type": "ConfigurationFraction", "BudgetValue": 0.01}])
    p = tune(prob, os.path.join(tmp, "fraction.h5"))
    check(p.stdout.startswith(f"budget: 44 evaluations, from {prob}'s Budget[0] (ConfigurationFraction 0.01 of the 4362 "
                              "valid configurations)") and "evaluations: 44 " in p.stdout, "fraction: " + p.stdout[:400])
    # no budget anywhere
    p = run(["tune", T1, "--simulate", REPLAY, "--log", os.path.join(tmp, "none.h5")], expect_ok=False)
    check(p.returncode != 0 and "give an evaluation budget (--budget N) and/or a time budget (--time SECONDS), or a Budget "
          "block in " in p.stderr, "no budget: " + p.stderr)
    # a Search the strategies cannot take: at its line and column, naming the field; --strategy overrides it
    cases = [({"Name": "bayes"}, '"bayes"', 0, "Search.Name: unknown strategy 'bayes'; known strategies: random, "),
             ({"Name": "ga", "Attributes": [{"Name": "maxiter", "Value": 8}]}, '"maxiter"', 0,
              "Search.Attributes[0].Name (maxiter): strategy 'ga': unknown option 'maxiter'; valid options of 'ga': popsize,"),
             ({"Name": "bayes_opt", "Attributes": [{"Name": "popsize", "Value": 0}]}, '"popsize"', 0,
              "Search.Attributes[0].Name (popsize): strategy 'bo': bad value for option 'popsize': 0 is outside 1.."),
             ({"Name": "bo", "Attributes": [{"Name": "methodparams", "Value": {"zeta": 1}}]}, '"Value": {', 9,
              "Search.Attributes[0].Value (methodparams): an object cannot be an option of strategy 'bo'")]
    for i, (search, needle, skip, want) in enumerate(cases):
        prob, text = problem(tmp, f"bad{i}", search, [{"Type": "ConfigurationCount", "BudgetValue": 5}])
        at = line_col(text, needle, skip)
        log = os.path.join(tmp, f"bad{i}.h5")
        p = tune(prob, log, expect_ok=False)
        check(p.returncode == 1 and f"mptune tune: {prob}:{at}: {want}" in p.stderr and not os.path.exists(log),
              f"bad Search {i}: want {prob}:{at}: {want}\ngot: {p.stderr}")
        p = tune(prob, log, "--strategy", "random")
        check("evaluations: 5 " in p.stdout, f"bad Search {i} with --strategy: " + p.stdout[-300:])
    print("ok: the T1 Search and Budget blocks")


def in_progress_cache(tmp):
    """a Kernel Tuner cache still being written: its complete records replayed, one warning saying so"""
    with gzip.open(os.path.join(DATA, "brute-forced", "convolution_A100_kerneltuner.json.gz"), "rt") as fh:
        text = fh.read()
    cut = text.index("\n", len(text) * 99 // 100) + 200  # inside a record
    path = os.path.join(tmp, "running_cache.json")
    with open(path, "w") as fh:
        fh.write(text[:cut])
    n = text[text.index('"cache": {'):cut].count("},\n")
    want = (f"{path}: the cache ends before its closing braces (a Kernel Tuner run still in progress?): read {n} complete "
            "records, the rest ignored")
    p = run(["tune", T1, "--simulate", path, "--strategy", "random", "--budget", "20", "--seed", "2", "--log",
             os.path.join(tmp, "running.h5"), "--no-progress"])
    check(p.stderr.count(want) == 1 and "evaluations: 20 " in p.stdout, f"tune: want {want}\ngot: {p.stderr}")
    p = run(["bench", "--problem", T1, "--space", path, "--strategy", "random", "--repeats", "1", "--budget", "10",
             "--out", os.path.join(tmp, "bench_running"), "--no-plot", "--no-progress"])
    check(p.stderr.count(want) == 1, "bench: " + p.stderr)
    print("ok: a Kernel Tuner cache still in progress")


def log_records(log):
    """(id, status name, reason) of every record of the log, in append order"""
    with h5py.File(log, "r") as f:
        n = int(f["count"][()])
        ev = f["evaluations"][:n]
        names = {v: k for k, v in h5py.check_enum_dtype(f["evaluations"].dtype["status"]).items()}
        return [(int(r["id"]), names[int(r["status"])], r["reason"].decode()) for r in ev]


def simulate_missing(tmp):
    """--simulate-missing skip: what the file lacks is logged as missing and skipped; stop: the run ends there"""
    with gzip.open(REPLAY, "rt") as fh:
        doc = json.load(fh)
    default = {"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1, "read_only": 0,
               "use_padding": 1, "use_shmem": 1, "use_cmem": 1, "filter_height": 15, "filter_width": 15}
    lacking = [r for i, r in enumerate(doc["results"]) if i % 5 == 0 or r["configuration"] == default]
    doc["results"] = [r for i, r in enumerate(doc["results"]) if not (i % 5 == 0 or r["configuration"] == default)]
    part = os.path.join(tmp, "part_T4.json")
    with open(part, "w") as fh:
        json.dump(doc, fh)
    key = lambda conf: tuple(sorted((k, float(v)) for k, v in conf.items()))
    lacks = {key(r["configuration"]) for r in lacking}
    log, t4 = os.path.join(tmp, "skip.h5"), os.path.join(tmp, "skip_T4.json")
    args = ["tune", T1, "--simulate", part, "--strategy", "bo", "--option", "initial_samples=5", "--seed", "4",
            "--log", log]
    p = run(args + ["--simulate-missing", "skip", "--budget", "40", "--t4", t4, "--progress", "lines"])
    recs = log_records(log)
    missing = [r for r in recs if r[1] == "missing"]
    k = len(missing)
    check(k > 0 and len(recs) == 40 + k, f"{len(recs)} records, {k} missing, budget 40")
    check(all(reason == f"not in the replayed file {part} (skipped)" for _, _, reason in missing), "reasons: " + str(missing[:2]))
    check(len({i for i, _, _ in recs}) == len(recs), "a configuration proposed twice")
    check(recs[0][1] == "missing" and "default: not in the replayed file (skipped: no speed-up reported)" in p.stdout,
          "the default configuration is lacking: " + p.stdout[-800:])
    check("stopped: evaluation budget reached" in p.stdout and "evaluations: 40 (" in p.stdout
          and f"skipped: {k} configurations not in the replayed file {part} (logged as missing, not counted)" in p.stdout,
          "summary: " + p.stdout[-800:])
    check(f"missing {k} |" in p.stderr.splitlines()[-1] and "--simulate-missing skip: a run that proposes one logs it as "
          "missing and goes on" in p.stderr, "progress: " + p.stderr[-600:])
    with open(t4) as fh:
        exported = json.load(fh)
    with open(os.path.join(DATA, "schemas", "T4-results-1.0.0.json")) as fh:
        jsonschema.validate(exported, json.load(fh))
    check(len(exported["results"]) == 40 and not any(key(r["configuration"]) in lacks for r in exported["results"]),
          "the export holds the missing configurations")
    # resumed: a budget above the 40 evaluations extends it however many missing records the log holds (they
    # are no evaluations), and none of the missing ones is proposed again
    check(len(recs) > 45, f"{len(recs)} records: too few missing ones for the check below")
    p = run(args + ["--simulate-missing", "skip", "--budget", "45", "--resume"])
    again = log_records(log)
    check(f"note: {log} had finished with 40 evaluations; extending it to 45" in p.stdout and again[:len(recs)] == recs
          and len({i for i, _, _ in again}) == len(again) and len([r for r in again if r[1] != "missing"]) == 45,
          "resume: " + p.stdout[-500:])
    # two workers: the same accounting when the missing ones come back from other ranks
    log3 = os.path.join(tmp, "skip3.h5")
    p = subprocess.run([os.environ["MPIEXEC"], "-n", "3", MPTUNE, "tune", T1, "--simulate", part, "--simulate-missing",
                        "skip", "--strategy", "random", "--seed", "5", "--budget", "50", "--log", log3, "--no-progress"],
                       capture_output=True, text=True, timeout=300)
    recs3 = log_records(log3)
    k3 = len([r for r in recs3 if r[1] == "missing"])
    check(p.returncode == 0 and k3 > 0 and len(recs3) == 50 + k3 and len({i for i, _, _ in recs3}) == len(recs3)
          and f"skipped: {k3} configurations" in p.stdout and "evaluations: 50 (" in p.stdout,
          f"-n 3: {len(recs3)} records, {k3} missing: {p.stdout[-600:]}{p.stderr[-600:]}")
    # without the option (stop): the run ends at the first configuration the file lacks, resumable, none logged
    log2 = os.path.join(tmp, "stop.h5")
    p = run(["tune", T1, "--simulate", part, "--strategy", "random", "--budget", "40", "--seed", "4", "--log", log2,
             "--no-progress"], expect_ok=False)
    check(p.returncode == 1 and f"replay file {part} has no record of configuration" in p.stderr
          and "it can be continued with --resume" in p.stderr, "stop: " + p.stderr[-500:])
    check(all(st != "missing" for _, st, _ in log_records(log2)), "stop logged a missing record")
    p = run(["tune", T1, "--budget", "5", "--log", os.path.join(tmp, "x.h5"), "--simulate-missing", "skip"], expect_ok=False)
    check(p.returncode != 0 and "--simulate-missing needs --simulate FILE" in p.stderr, p.stderr)
    p = run(args + ["--simulate-missing", "maybe", "--budget", "5", "--force"], expect_ok=False)
    check(p.returncode != 0 and "--simulate-missing maybe: expected stop or skip" in p.stderr, p.stderr)
    print(f"ok: --simulate-missing ({k} configurations skipped)")


def examples_t1_schema():
    """examples/*/*.json against the T1 schema: the one fault allowed is "Language": "C" (mptune's extension)"""
    with open(os.path.join(DATA, "schemas", "T1-input-1.0.0.json")) as fh:
        validator = jsonschema.Draft7Validator(json.load(fh))
    src = os.environ.get("MPT_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    examples = sorted(glob.glob(os.path.join(src, "examples", "*", "*.json")))
    check(len(examples) >= 4, f"examples: {examples}")
    for path in examples:
        with open(path) as fh:
            doc = json.load(fh)
        faults = [(list(e.path), e.instance) for e in validator.iter_errors(doc)]
        check(all(f == (["KernelSpecification", "Language"], "C") for f in faults), f"{path}: {faults}")
    print(f"ok: {len(examples)} example problems valid T1 but for \"Language\": \"C\"")


def main(tmp):
    strategy_names(tmp)
    t1_blocks(tmp)
    in_progress_cache(tmp)
    simulate_missing(tmp)
    examples_t1_schema()


if __name__ == "__main__":
    tmpdir = tempfile.mkdtemp(prefix="mpt_kt_")
    try:
        main(tmpdir)
    finally:
        if not os.environ.get("MPT_KEEP_TMP"):
            shutil.rmtree(tmpdir, ignore_errors=True)
