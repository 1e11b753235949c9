#!/usr/bin/python3
"""tests/t4_validate.py: end to end check of the run log and `mptune export`.

Runs `mptune tune --simulate` on a brute-forced space, reads the HDF5 log with h5py following
docs/RUNLOG.md, exports it with `mptune export --t4`, validates the T4 file against the T4 results
schema (python3-jsonschema), and checks it against the log (same evaluations, append order) and
against the replayed file (same statuses and objectives). Also checks the export's error messages
(missing log, a file that is not a log) and that no output is left behind on failure.

Environment (set by ctest): MPTUNE, MPT_SHARED_DATA. Exit status 0 when everything holds.
"""
import glob
import gzip
import json
import math
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import h5py
import jsonschema
import numpy as np

MPTUNE = os.environ["MPTUNE"]
DATA = os.environ["MPT_SHARED_DATA"]
T1 = os.path.join(DATA, "t1", "convolution_milo.json")
REPLAY = os.path.join(DATA, "brute-forced", "convolution_A6000_T4.json.gz")
SCHEMA = os.path.join(DATA, "schemas", "T4-results-1.0.0.json")

INVALIDITY = {"ok": "correct", "compile_error": "compile", "runtime_error": "runtime",
              "launch_error": "runtime", "crash": "runtime", "timeout": "timeout",
              "wrong_result": "correctness", "invalid": "constraints"}


def run(cmd, expect_ok=True):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if expect_ok and p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}")
    return p


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def key(conf, names):
    return tuple(float(conf[n]) if not isinstance(conf[n], str) else conf[n] for n in names)


def left_tmp(path):
    """a temporary file of an output (PATH.tmp.XXXXXX, jobs/output/outfile.c) left beside it"""
    return bool(glob.glob(glob.escape(path) + ".tmp*"))


def main(tmp):
    log = os.path.join(tmp, "run.h5")
    t4 = os.path.join(tmp, "run_T4.json")
    budget = 120
    run([MPTUNE, "tune", T1, "--strategy", "random", "--budget", str(budget), "--seed", "5",
         "--simulate", REPLAY, "--log", log, "--no-progress"])

    # --- the log, read as docs/RUNLOG.md says
    with h5py.File(log, "r") as f:
        text = lambda v: v.decode() if isinstance(v, (bytes, np.bytes_)) else str(v)  # fixed-length: bytes
        check(text(f.attrs["mptune_format"]) == "mptune-runlog", "format mark")
        check(int(f.attrs["format_version"]) == 4, "format version")
        check(int(f.attrs["finished"]) == 1, "finished attribute")
        sr = text(f.attrs["stop_reason"])
        check(sr == "budget", f"stop reason '{sr}'")
        names = [n if isinstance(n, str) else n.decode() for n in f["parameters"].attrs["names"]]
        values = {n: f["parameters"][n][:] for n in names}
        n = int(f["count"][()])
        allrecs = f["evaluations"][:]
        check(bool(np.all(allrecs["id"][n:] == -1)), "records beyond /count")
        ev = allrecs[:n]
        check(bool(np.all(ev["id"] >= 0)), "unwritten record within /count")
        smap = h5py.check_enum_dtype(f["evaluations"].dtype["status"])
        inv = {v: k for k, v in smap.items()}
        check(len(ev) == budget, f"log holds {len(ev)} evaluations, budget {budget}")
        check(len(set(ev["id"].tolist())) == budget, "duplicate ids in the log")
        check(len(f["devices"]) >= 1, "device table is empty")
        log_rows = []
        for r in ev:
            conf = {n: values[n][r["config"][p]] for p, n in enumerate(names)}
            log_rows.append((conf, inv[int(r["status"])], float(r["objective"])))

    # --- export and schema validation
    p = run([MPTUNE, "export", log, "--t4", t4])
    check(os.path.exists(t4) and not left_tmp(t4), "export output missing or .tmp left")
    with open(t4) as fh:
        doc = json.load(fh)
    with open(SCHEMA) as fh:
        schema = json.load(fh)
    jsonschema.validate(doc, schema)
    check(doc["schema_version"] == "1.0.0", "schema_version")
    check("timeunit" in doc["metadata"], "metadata.timeunit")
    res = doc["results"]
    check(len(res) == budget, f"export has {len(res)} results, log {budget}")
    for r in res:
        for k in ("timestamp", "configuration", "times", "invalidity", "correctness", "measurements", "objectives"):
            check(k in r, f"result lacks {k}")
        for k in ("compilation", "framework", "search_algorithm", "validation"):
            check(k in r["times"], f"times lacks {k}")
        check(r["objectives"] == ["time"], "objectives")
        check(r["measurements"][0]["name"] == "time" and r["measurements"][0]["unit"] == "ms", "measurement")
    # same order and content as the log
    for (conf, status, obj), r in zip(log_rows, res):
        check(all(float(r["configuration"][n]) == float(conf[n]) for n in names), "configuration differs from the log")
        check(r["invalidity"] == INVALIDITY[status], f"invalidity {r['invalidity']} for status {status}")
        if status == "ok":
            check(r["measurements"][0]["value"] == obj, "objective differs from the log")
            check(r["correctness"] == 1, "correctness")
    stamps = [r["timestamp"] for r in res]
    check(stamps == sorted(stamps), "results are not in the order they finished")

    # --- against the replayed brute-forced file
    with gzip.open(REPLAY, "rt") as fh:
        bf = json.load(fh)
    ref = {key(r["configuration"], names): r for r in bf["results"]}
    for r in res:
        b = ref[key(r["configuration"], names)]
        check(r["invalidity"] == b["invalidity"], "status differs from the replayed file")
        if b["invalidity"] == "correct":
            check(math.isclose(r["measurements"][0]["value"], b["measurements"][0]["value"], rel_tol=0, abs_tol=0),
                  "objective differs from the replayed file")
            check(r["times"]["runtimes"] == b["times"]["runtimes"], "runtimes differ from the replayed file")

    # --- bad input: one clear message each, no output left
    out = os.path.join(tmp, "bad_T4.json")
    p = run([MPTUNE, "export", os.path.join(tmp, "missing.h5"), "--t4", out], expect_ok=False)
    check(p.returncode != 0 and "missing.h5" in p.stderr and "no such file" in p.stderr, "missing log message: " + p.stderr)
    check(not os.path.exists(out) and not left_tmp(out), "output left after a failed export")
    notlog = os.path.join(tmp, "notlog.h5")
    with open(notlog, "w") as fh:
        fh.write("not hdf5\n")
    p = run([MPTUNE, "export", notlog, "--t4", out], expect_ok=False)
    check(p.returncode != 0 and f"{notlog} is not an mptune run log" in p.stderr, "not-a-log message: " + p.stderr)
    check(not os.path.exists(out), "output left after a failed export")
    p = run([MPTUNE, "export", log], expect_ok=False)
    check(p.returncode != 0 and "--t4" in p.stderr, "missing --t4 message: " + p.stderr)

    # --- an output never replaces an input: the log, the problem, the replayed file (spelled differently too)
    with open(log, "rb") as fh:
        before = fh.read()
    rel = os.path.join(tmp, ".", os.path.basename(log))
    p = run([MPTUNE, "export", log, "--t4", rel], expect_ok=False)
    check(p.returncode == 2 and "is the run log" in p.stderr, "export --t4 onto the log: " + p.stderr)
    with open(log, "rb") as fh:
        check(fh.read() == before, "the log was changed by a refused export")
    new_log, t1, replay = (os.path.join(tmp, n) for n in ("new.h5", "problem.json", "replay.json.gz"))
    shutil.copy(T1, t1)  # copies: should a check fail, the shared files stay whole
    shutil.copy(REPLAY, replay)
    for args, needle in [(["--log", new_log, "--t4", os.path.join(tmp, ".", "new.h5")], "--t4 and --log name the same file"),
                         (["--log", os.path.join(tmp, "t1.h5"), "--t4", t1], "is the problem file"),
                         (["--log", replay, "--force"], "is --simulate")]:
        p = run([MPTUNE, "tune", t1, "--simulate", replay, "--budget", "5", "--no-progress", *args], expect_ok=False)
        check(p.returncode != 0 and needle in p.stderr, f"tune {args}: {p.stderr}")
    check(not os.path.exists(new_log), "a refused tune created its log")
    with open(T1, "rb") as a, open(t1, "rb") as b, open(REPLAY, "rb") as c, open(replay, "rb") as d:
        check(a.read() == b.read() and c.read() == d.read(), "a refused tune changed an input")

    # --- into a pipe (as --t4 /dev/stdout or >(gzip ...)): written in place, not replaced by a renamed file
    fifo = os.path.join(tmp, "pipe.json")
    os.mkfifo(fifo)
    with open(os.path.join(tmp, "piped.json"), "w+b") as sink:
        reader = subprocess.Popen(["cat", fifo], stdout=sink)  # a file: a pipe's buffer would stall cat, then mptune
        p = run([MPTUNE, "export", log, "--t4", fifo])
        reader.wait(timeout=60)
        sink.seek(0)
        piped = sink.read()
    check(stat.S_ISFIFO(os.stat(fifo).st_mode) and not left_tmp(fifo), "the pipe was replaced")
    check(json.loads(piped)["results"] == res and "wrote" not in p.stdout, "export into a pipe")
    p = run([MPTUNE, "export", log, "--t4", "/dev/stdout"])
    check(json.loads(p.stdout)["results"] == res, "export to /dev/stdout is not the T4 document alone")
    # an empty output name is refused before the run (it failed after the whole run)
    for opt in ("--t4", "--log"):
        args = [MPTUNE, "tune", T1, "--budget", "3", "--simulate", REPLAY, "--log", os.path.join(tmp, "empty.h5"),
                "--t4", os.path.join(tmp, "empty_T4.json"), "--no-progress"]
        args[args.index(opt) + 1] = ""
        p = run(args, expect_ok=False)
        check(p.returncode != 0 and f"{opt}: an empty file name" in p.stderr and "best:" not in p.stdout
              and not os.path.exists(os.path.join(tmp, "empty.h5")), f"an empty {opt}: {p.stderr[-300:]}")
    # tune --t4 -: the document alone on stdout, the report on stderr
    p = run([MPTUNE, "tune", T1, "--strategy", "random", "--budget", "7", "--seed", "5", "--simulate", REPLAY,
             "--log", os.path.join(tmp, "dash.h5"), "--no-progress", "--t4", "-"])
    check(len(json.loads(p.stdout)["results"]) == 7 and "best:" in p.stderr and "t4: -" in p.stderr,
          "tune --t4 - mixed the report into the T4 document: " + p.stdout[:200])

    # --- four exports of different logs to one file at once: the file is one of them, whole; none is left
    # half-written or as a temporary file, every writer succeeds
    logs = [log]
    for seed in (6, 7, 8):
        logs.append(os.path.join(tmp, f"race{seed}.h5"))
        run([MPTUNE, "tune", T1, "--strategy", "random", "--budget", str(20 * seed), "--seed", str(seed),
             "--simulate", REPLAY, "--log", logs[-1], "--no-progress"])
    race = os.path.join(tmp, "race_T4.json")
    for attempt in range(3):
        procs = [subprocess.Popen([MPTUNE, "export", lg, "--t4", race], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for lg in logs]
        outs = [pr.communicate(timeout=120) for pr in procs]
        check(all(pr.returncode == 0 for pr in procs), f"a concurrent export failed: {[o[1] for o in outs]}")
        with open(race) as fh:
            n = len(json.load(fh)["results"])
        check(n in (budget, 120, 140, 160), f"concurrent exports: {n} records")
        check(not left_tmp(race), "a temporary file left by concurrent exports")

    # --- integers past 2**53 stay exact in the log's parameter table and the export
    big = 9007199254740993
    prob = os.path.join(tmp, "bigint.json")
    with open(prob, "w") as fh:
        json.dump({"General": {"BenchmarkName": "bigint", "OutputFormat": "JSON"},
                   "ConfigurationSpace": {"TuningParameters": [
                       {"Name": "n", "Type": "int", "Values": f"[{big}, 5]", "Default": 5}], "Conditions": []},
                   "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
                                           "GlobalSize": ["1"], "LocalSize": ["1"], "Arguments": []}}, fh)
    space = os.path.join(tmp, "bigint_T4.json")
    with open(space, "w") as fh:
        fh.write('{"results": [' + ", ".join(
            '{"configuration": {"n": %d}, "times": {}, "invalidity": "correct", "measurements": '
            '[{"name": "time", "value": %g}], "objectives": ["time"]}' % (v, t) for v, t in ((big, 1.0), (5, 2.0))) + "]}")
    blog, bt4 = os.path.join(tmp, "bigint.h5"), os.path.join(tmp, "bigint_T4out.json")
    run([MPTUNE, "tune", prob, "--strategy", "brute_force", "--budget", "2", "--simulate", space, "--log", blog,
         "--no-progress", "--t4", bt4])
    with h5py.File(blog, "r") as f:
        check([int(x) for x in f["parameters"]["n"][:]] == [big, 5], "an integer past 2**53 was rounded in the log")
    with open(bt4) as fh:
        got = sorted(r["configuration"]["n"] for r in json.load(fh)["results"])
    check(got == [5, big], f"an integer past 2**53 was rounded in the export: {got}")

    # --- a damaged record (a byte changed in record 7 of a copy): left out with a warning, the rest exported
    damaged = os.path.join(tmp, "damaged.h5")
    with h5py.File(log, "r") as f:
        at = f["evaluations"].id.get_offset() + 7 * f["evaluations"].dtype.itemsize + 64
    with open(log, "rb") as fh:
        raw = bytearray(fh.read())
    raw[at] ^= 0x10
    with open(damaged, "wb") as fh:
        fh.write(raw)
    p = run([MPTUNE, "export", damaged, "--t4", out])
    check("1 damaged record (checksum mismatch)" in p.stderr and f"the {budget - 1} intact ones are exported" in p.stderr,
          "damaged-record warning: " + p.stderr)
    with open(out) as fh:
        left = json.load(fh)["results"]
    check(len(left) == budget - 1 and left[:7] == res[:7] and left[7:] == res[8:], "export of the damaged log")

    # --- a damaged root object header (where the attributes are): refused with one line naming the file, and
    # nothing after it (libhdf5 1.10 printed "infinite loop closing library" at exit after most of these)
    with open(log, "rb") as fh:
        raw = fh.read()
    check(raw[:8] == b"\x89HDF\r\n\x1a\n" and raw[8] == 2, "superblock version 2 (format 3 logs)")
    root = int.from_bytes(raw[36:44], "little")
    check(raw[root:root + 4] == b"OHDR", f"root object header at {root}")
    os.remove(out)
    for off in range(root + 24, root + 24 + 13 * 12, 13):
        bad = bytearray(raw)
        bad[off] ^= 0xd4
        with open(damaged, "wb") as fh:
            fh.write(bad)
        p = run([MPTUNE, "export", damaged, "--t4", out], expect_ok=False)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 1 and len(lines) == 1 and damaged in lines[0] and "damaged" in lines[0],
              f"root header byte {off} damaged: exit {p.returncode}, stderr: {p.stderr}")
        check(not os.path.exists(out), f"output left after refusing a log damaged at byte {off}")
    # ... whose records are still there: with the problem, the export recovers them by their checksums
    p = run([MPTUNE, "export", damaged, "--t4", out, "--problem", T1])
    check("120 intact records were recovered" in p.stderr, "recovery warning: " + p.stderr)
    with open(out) as fh:
        doc = json.load(fh)
    jsonschema.validate(doc, schema)
    check(doc["results"] == res, "export of the recovered log differs from the intact log's")

    # --- a log cut short (an interrupted copy): refused with a hint, then its intact records recovered
    with h5py.File(log, "r") as f:
        at = f["evaluations"].id.get_offset() + 70 * f["evaluations"].dtype.itemsize + 100
    cut = os.path.join(tmp, "cut.h5")
    with open(cut, "wb") as fh:
        fh.write(raw[:at])
    os.remove(out)
    p = run([MPTUNE, "export", cut, "--t4", out], expect_ok=False)
    check(p.returncode == 1 and "truncated file" in p.stderr and "--problem" in p.stderr, "cut log message: " + p.stderr)
    p = run([MPTUNE, "export", cut, "--t4", out, "--problem", T1])
    with open(out) as fh:
        doc = json.load(fh)
    jsonschema.validate(doc, schema)
    check(doc["results"] == res[:70], f"export of the cut log: {len(doc['results'])} records, not the first 70")
    # resumed: recovered with its settings (its metadata copy lies before the records), the cut file kept
    # beside it; the finished run is not finished any more (50 records lost): it goes on to its logged budget
    with h5py.File(log, "r") as f:
        meta_at = f["metadata_copy"].id.get_offset()
        meta_len = f["metadata_copy"].shape[0]
    check(meta_at + meta_len <= at, "the metadata copy lies before the records")
    bare = os.path.join(tmp, "bare.h5")
    bare_raw = bytearray(raw[:at])
    bare_raw[meta_at + meta_len // 2] ^= 0x44
    with open(bare, "wb") as fh:
        fh.write(bare_raw)
    tune = [MPTUNE, "tune", T1, "--strategy", "random", "--simulate", REPLAY, "--resume", "--no-progress"]

    def check_resumed_cut(path, as_it_was):
        """a resumed cut log: the file as it was kept beside it, its 70 records first, then the rest of the run"""
        with open(path + ".damaged", "rb") as fh:
            check(fh.read() == as_it_was, "the cut file was not kept as it was")
        run([MPTUNE, "export", path, "--t4", out])
        with open(out) as fh:
            doc = json.load(fh)
        check(len(doc["results"]) == budget and doc["results"][:70] == res[:70], "resumed recovered log")

    p = run(tune + ["--log", cut])
    check("70 intact records were recovered" in p.stderr and "were recovered from its metadata copy" in p.stderr,
          "recovered resume: " + p.stderr)
    check_resumed_cut(cut, raw[:at])
    with h5py.File(cut, "r") as f, h5py.File(log, "r") as g:
        for attr in ("strategy", "seed", "budget", "command_line", "start_time", "host"):
            check(f.attrs[attr] == g.attrs[attr], f"attribute {attr} of the resumed recovered log")
        check(int(f.attrs["finished"]) == 1 and f["sessions"].shape[0] == 2 and f["devices"].shape[0] == 2
              and f["sessions"][0] == g["sessions"][0] and f["devices"][0] == g["devices"][0]
              and f["devices"][1]["session"] == 1, "sessions and devices of the resumed recovered log")
    # its metadata copy damaged too: the settings are lost, the resuming command gives them
    # (refused without a budget: the log is left exactly as it was, nothing kept beside it)
    p = run(tune + ["--log", bare], expect_ok=False)
    check(p.returncode != 0 and "budget" in p.stderr and "lost with the damaged metadata" in p.stderr,
          "recovered resume without --budget: " + p.stderr)
    with open(bare, "rb") as fh:
        check(fh.read() == bare_raw and not os.path.exists(bare + ".damaged"), "a refused resume changed the log")
    p = run(tune + ["--log", bare, "--budget", str(budget)])
    check("70 intact records were recovered" in p.stderr and "were lost (no intact metadata copy)" in p.stderr,
          "recovered resume with --budget: " + p.stderr)
    check_resumed_cut(bare, bare_raw)
    with h5py.File(bare, "r") as f:
        check(f.attrs["strategy"] == b"random" and int(f.attrs["budget"]) == budget, "settings of the resumed recovered log")
    print(f"ok: {budget} evaluations, T4 valid against {os.path.basename(SCHEMA)}, statuses match the replayed file")


if __name__ == "__main__":
    tmpdir = tempfile.mkdtemp(prefix="mpt_t4_")
    try:
        main(tmpdir)
    finally:
        if not os.environ.get("MPT_KEEP_TMP"):
            shutil.rmtree(tmpdir, ignore_errors=True)
