#!/usr/bin/python3
"""tests/space_cli.py: end-to-end checks of `mptune space`: Cartesian and valid counts of every shared T1
file (--json), the text report, --list CSV (to a file, standard output or a pipe), rank-0-only output under mpiexec, warnings reported once, and
one clear message with a non-zero exit for a missing file, malformed JSON (line:column), a syntax error
(caret), an unknown name, a wrong Type, an empty Values list and a misspelt KernelSpecification key."""
import csv
import json
import os
import stat
import subprocess
import sys
import tempfile

MPTUNE = os.environ["MPTUNE"]
DATA = os.environ["MPT_SHARED_DATA"]
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec.mpich")
failures = []
# each line out at once: a run ctest ends at its timeout (a hang) still shows the checks that failed before
sys.stdout.reconfigure(line_buffering=True)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([MPTUNE, "space", *args], capture_output=True, text=True, timeout=120)


COUNTS = {
    "convolution_milo.json": (10240, 4362), "dedispersion_milo.json": (22272, 11130),
    "gemm_milo.json": (663552, 116928), "hotspot_milo.json": (4440000, 82984),
    "paper_dedispersion.json": (22272, 11130), "paper_gemm.json": (663552, 116928),
    "paper_hotspot.json": (22200000, 349853), "paper_prl_2x2.json": (36864, 1200),
    "paper_prl_4x4.json": (9437184, 10800), "paper_prl_8x8.json": (2415919104, 48720),
}

for f, (cart, valid) in COUNTS.items():
    r = run(os.path.join(DATA, "t1", f), "--json")
    check(r.returncode == 0, f"{f}: exit {r.returncode} {r.stderr}")
    if r.returncode == 0:
        o = json.loads(r.stdout)
        check(o["cartesian"] == cart and o["valid"] == valid, f"{f}: {o['cartesian']} / {o['valid']}, want {cart} / {valid}")
        check(o["seconds"] >= 0 and o["bytes"] > 0 and len(o["params"]) > 0, f"{f}: json keys")

# text report
r = run(os.path.join(DATA, "t1", "paper_hotspot.json"))
check(r.returncode == 0, "text report exit")
for needle in ["block_size_x", "37 values", "1 .. 1024", "cartesian: 22200000", "valid: 349853", "density:",
               "construction:", "memory:", "temporal_tiling_factor % loop_unroll_factor_t == 0"]:
    check(needle in r.stdout, f"text report lacks '{needle}'")

with tempfile.TemporaryDirectory() as tmp:
    # --list
    out = os.path.join(tmp, "conv.csv")
    r = run(os.path.join(DATA, "t1", "convolution_milo.json"), "--list", out)
    check(r.returncode == 0, "--list exit")
    rows = list(csv.reader(open(out)))
    check(rows[0][:3] == ["block_size_x", "block_size_y", "tile_size_x"], f"--list header {rows[0]}")
    check(len(rows) == 4363 and len(set(map(tuple, rows[1:]))) == 4362, f"--list rows {len(rows)}")
    for row in rows[1:]:
        d = dict(zip(rows[0], map(int, row)))
        ok = (d["use_padding"] == 0 or d["block_size_x"] % 32 != 0) and d["block_size_x"] * d["block_size_y"] <= 1024
        if not ok:
            check(False, f"--list row violates a constraint: {row}")
            break

    # --list -: standard output is the CSV alone (the report goes to standard error)
    r = run(os.path.join(DATA, "t1", "convolution_milo.json"), "--list", "-")
    check(r.returncode == 0 and list(csv.reader(r.stdout.splitlines())) == rows and "valid: 4362" in r.stderr,
          f"--list - : exit {r.returncode}, {len(r.stdout.splitlines())} lines")
    # --list - into a pipe is written in blocks, not one write() per field: MPICH's MPI_Init makes stdout
    # unbuffered, which made it 50x slower than --list FILE (docs/PERFORMANCE.md). The write system calls
    # of the finished process (a zombie until reaped: /proc/PID/io still there) for 4,362 rows of 9 fields:
    # ~40,000 unbuffered, ~130 (MPI's own included) in blocks
    p = subprocess.Popen([MPTUNE, "space", os.path.join(DATA, "t1", "convolution_milo.json"), "--list", "-"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    piped = p.stdout.read()
    os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
    io = dict(line.split(": ") for line in open(f"/proc/{p.pid}/io").read().splitlines())
    p.wait()
    check(p.returncode == 0 and list(csv.reader(piped.decode().splitlines())) == rows and int(io["syscw"]) < 2000,
          f"--list - into a pipe: exit {p.returncode}, {io['syscw']} write calls (want < 2000: stdout unbuffered?)")
    # --list - with standard output closed: one message saying so (it was "Invalid argument" when the
    # descriptor had been reused for reading), exit 1
    r = subprocess.run([MPTUNE, "space", os.path.join(DATA, "t1", "paper_prl_2x2.json"), "--list", "-"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
                       preexec_fn=lambda: os.close(1))
    check(r.returncode == 1 and "cannot write -: descriptor 1 (the standard output) is closed or not open for writing"
          in r.stderr, f"--list - with stdout closed: exit {r.returncode}, {r.stderr[-300:]!r}")
    # --list into a pipe: written in place (not replaced by a renamed file)
    fifo = os.path.join(tmp, "pipe.csv")
    os.mkfifo(fifo)
    with open(os.path.join(tmp, "piped.csv"), "w+") as sink:
        reader = subprocess.Popen(["cat", fifo], stdout=sink)
        r = run(os.path.join(DATA, "t1", "convolution_milo.json"), "--list", fifo)
        reader.wait(timeout=60)
        sink.seek(0)
        check(r.returncode == 0 and list(csv.reader(sink)) == rows and stat.S_ISFIFO(os.stat(fifo).st_mode),
              "--list into a pipe")

    # --list through a link to this process's standard output, itself redirected to a file: standard output
    # is the CSV alone, as with --list - (the report goes to standard error); the link is not replaced
    so = os.path.join(tmp, "so")
    os.symlink("/proc/self/fd/1", so)
    with open(os.path.join(tmp, "redirected.txt"), "w+") as sink:
        r = subprocess.run([MPTUNE, "space", os.path.join(DATA, "t1", "convolution_milo.json"), "--list", so],
                           stdout=sink, stderr=subprocess.PIPE, text=True, timeout=120)
        sink.seek(0)
        lines = sink.read().splitlines()
    check(r.returncode == 0 and os.path.islink(so) and list(csv.reader(lines)) == rows and "valid: 4362" in r.stderr,
          f"--list through a link to standard output: exit {r.returncode}, link kept {os.path.islink(so)}, {r.stderr}")
    # --list into a missing directory: refused before the work, one message, no report
    r = run(os.path.join(DATA, "t1", "convolution_milo.json"), "--list", os.path.join(tmp, "nodir", "l.csv"))
    check(r.returncode == 1 and r.stdout == "" and r.stderr.count("\n") == 1 and "nodir" in r.stderr
          and "--list" in r.stderr, f"--list into a missing directory: exit {r.returncode}, {r.stdout[:80]!r} {r.stderr!r}")
    # --list onto a link to a regular file: the file it leads to is replaced, the link stays
    with open(os.path.join(tmp, "real.csv"), "w") as fh:
        fh.write("old\n")
    os.symlink("real.csv", os.path.join(tmp, "link.csv"))
    r = run(os.path.join(DATA, "t1", "convolution_milo.json"), "--list", os.path.join(tmp, "link.csv"))
    with open(os.path.join(tmp, "real.csv")) as fh:
        check(r.returncode == 0 and os.path.islink(os.path.join(tmp, "link.csv")) and list(csv.reader(fh)) == rows,
              "--list onto a link to a file")
    # a report that cannot be written (a full device) is an error, not a silent success
    with open("/dev/full", "w") as full:
        r = subprocess.run([MPTUNE, "space", os.path.join(DATA, "t1", "paper_prl_2x2.json"), "--json"], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    check(r.returncode != 0 and "cannot write the standard output" in r.stderr, f"--json > /dev/full: {r.returncode} {r.stderr}")

    # --list onto the problem file itself (a copy): refused, the file unchanged
    prob = os.path.join(tmp, "problem.json")
    with open(os.path.join(DATA, "t1", "convolution_milo.json")) as fh:
        text = fh.read()
    with open(prob, "w") as fh:
        fh.write(text)
    r = run(prob, "--list", os.path.join(tmp, ".", "problem.json"))
    check(r.returncode == 2 and "is the problem file" in r.stderr and open(prob).read() == text, "--list onto the problem")

    # a default missing for some parameters: the report names them
    d = json.loads(text)
    for t in d["ConfigurationSpace"]["TuningParameters"]:
        if t["Name"] in ("tile_size_x", "use_shmem"):
            del t["Default"]
    with open(prob, "w") as fh:
        json.dump(d, fh)
    r = run(prob)
    check(r.returncode == 0 and "default: none: no default value (or one not among the values) for tile_size_x, use_shmem\n"
          in r.stdout, f"report of missing defaults: {r.stdout[-200:]!r}")

    # one parameter with an empty string value: its row is "" (Python's csv.writer), not an empty line,
    # which CSV readers skip (the configuration was lost)
    with open(prob, "w") as fh:
        json.dump({"ConfigurationSpace": {"TuningParameters": [{"Name": "s", "Type": "string", "Values": ["", "a"]}],
                                          "Conditions": []}}, fh)
    r = run(prob, "--list", "-")
    check(r.returncode == 0 and list(csv.reader(r.stdout.splitlines())) == [["s"], [""], ["a"]],
          f"--list of an empty string value: {r.stdout!r}")

    # rank 0 only under mpiexec
    r = subprocess.run([MPIEXEC, "-n", "2", MPTUNE, "space", os.path.join(DATA, "t1", "paper_prl_2x2.json"), "--json"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and r.stdout.count('"valid"') == 1, f"mpiexec -n 2: exit {r.returncode}, {r.stdout!r}")

    def write(name, text):
        p = os.path.join(tmp, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def prob(params, conds=None):
        cs = {"TuningParameters": params}
        if conds is not None:
            cs["Conditions"] = conds
        return json.dumps({"ConfigurationSpace": cs}, indent=1)

    # warnings: once each
    p = write("warn.json", prob([{"Name": "a", "Type": "int", "Values": "[0, 1, 2, 3]"},
                                 {"Name": "b", "Type": "int", "Values": "[0, 1, 2]"}],
                                [{"Expression": "a % b == 0", "Parameters": ["a"]}]))
    r = run(p, "--json")
    check(r.returncode == 0, f"warn.json exit {r.returncode}: {r.stderr}")
    check(r.stderr.count("Parameters lists [a]") == 1, f"Parameters mismatch warning once: {r.stderr!r}")
    check(r.stderr.count("ZeroDivisionError") == 1, f"run-time error warning once: {r.stderr!r}")
    check(json.loads(r.stdout)["valid"] == 4 + 2, f"warn.json valid: {r.stdout}")  # b=1: 4, b=2: a in {0,2}

    # errors: one clear message each, non-zero exit, no crash
    cases = [
        ("missing file", os.path.join(tmp, "nope.json"), ["nope.json", "cannot open"]),
        ("bad JSON", write("bad.json", '{\n  "ConfigurationSpace": {\n    "TuningParameters": [\n      {"Name": "a",, }\n'),
         ["bad.json:4:", "malformed JSON"]),
        ("syntax error", write("syn.json", prob([{"Name": "a", "Type": "int", "Values": "[1, 2"}])),
         ["syn.json", "TuningParameters[0].Values", "[1, 2", "^"]),
        ("unknown name", write("name.json", prob([{"Name": "a", "Type": "int", "Values": "[1, 2]"}],
                                                 [{"Expression": "a * 2 < blocksize", "Parameters": ["a"]}])),
         ["name.json", "Conditions[0].Expression", "a * 2 < blocksize", "^", "blocksize"]),
        ("wrong Type", write("type.json", prob([{"Name": "a", "Type": "integer", "Values": "[1, 2]"}])),
         ["type.json", "TuningParameters[0].Type", "integer"]),
        ("empty Values", write("empty.json", prob([{"Name": "a", "Type": "int", "Values": "[]"}])),
         ["empty.json", "TuningParameters[0].Values", "empty"]),
        # KernelSpecification's keys are checked as tune's evaluators check them (the spec itself is not read)
        ("misspelt KernelSpecification key",
         write("ks.json", prob([{"Name": "a", "Type": "int", "Values": "[1, 2]"}])[:-1]
               + ',\n "KernelSpecification": {"Language": "C", "Argumnets": []}}'),
         ["ks.json:12:43: KernelSpecification.Argumnets: unknown key; did you mean 'Arguments'?"]),
        ("misspelt argument key",
         write("ksarg.json", prob([{"Name": "a", "Type": "int", "Values": "[1, 2]"}])[:-1]
               + ',\n "KernelSpecification": {"Arguments": [{"Name": "x", "FilType": "Constant"}]}}'),
         ["ksarg.json:12:54: KernelSpecification.Arguments[0].FilType: unknown key; did you mean 'FillType'?"]),
    ]
    for what, path, needles in cases:
        r = run(path)
        check(r.returncode != 0 and r.returncode < 128, f"{what}: exit {r.returncode}")
        check(r.stdout == "", f"{what}: stdout not empty: {r.stdout!r}")
        for n in needles:
            check(n in r.stderr, f"{what}: message lacks {n!r}: {r.stderr!r}")
        check(r.stderr.count("mptune space:") == 1, f"{what}: not exactly one message: {r.stderr!r}")
    # caret column for the unknown name: under 'b' of blocksize (column 8)
    r = run(os.path.join(tmp, "name.json"))
    lines = r.stderr.split("\n")
    i = next((k for k, l in enumerate(lines) if l.strip() == "a * 2 < blocksize"), None)
    check(i is not None and lines[i + 1].index("^") == lines[i].index("blocksize"), f"caret column: {r.stderr!r}")

    # a space too large to enumerate: a clear error, not an out-of-memory kill
    r = subprocess.run([MPTUNE, "space", os.path.join(DATA, "t1", "paper_hotspot.json")], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, MPT_SPACE_MAX_ROWS="1000"))
    check(r.returncode == 1 and "MPT_SPACE_MAX_ROWS" in r.stderr and "more than 1000" in r.stderr,
          f"row limit: exit {r.returncode}, {r.stderr!r}")

    # Ctrl-C while a large list is written: no temporary file is left (it was: gigabytes of a cut list)
    import glob
    import signal
    import time
    lst = os.path.join(tmp, "hot.csv")
    p = subprocess.Popen([MPTUNE, "space", os.path.join(DATA, "t1", "paper_hotspot.json"), "--list", lst],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t0 = time.time()
    while time.time() - t0 < 60 and not glob.glob(lst + ".tmp*") and p.poll() is None:
        time.sleep(0.001)
    seen = bool(glob.glob(lst + ".tmp*"))
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=60)[1].decode(errors="replace")
    left = sorted(glob.glob(lst + "*"))

    def whole_list():  # the complete list (349,853 rows and the header), as a run without the signal writes it
        with open(lst) as fh:
            return sum(1 for _ in fh) == 349853 + 1
    if seen and p.returncode == 0:  # a loaded machine: the list was complete (renamed) before the signal came
        print("SKIPPED: the list was complete before the signal arrived")
    elif seen and p.returncode == -signal.SIGINT and left == [lst] and whole_list():
        # a loaded machine: the signal came after the complete list was renamed into place (while mptune
        # ended: MPI_Finalize); whole, not cut, which is what the check is about
        print("SKIPPED: the signal arrived after the complete list was renamed into place")
    elif seen:
        check(p.returncode == -signal.SIGINT and not left,
              f"SIGINT while writing --list: exit {p.returncode}, left {left}, stderr {err[-300:]!r}")
    else:
        print("SKIPPED: the list was written before the signal could be sent")

    # usage errors
    r = run()
    check(r.returncode == 2, "no file: exit 2")
    r = run(os.path.join(DATA, "t1", "paper_prl_2x2.json"), "--bogus")
    check(r.returncode == 2 and "--bogus" in r.stderr, "unknown option")
    r = run("--list", "--json", os.path.join(DATA, "t1", "paper_prl_2x2.json"))
    check(r.returncode == 2 and "--list needs a value, but is followed by the option '--json'" in r.stderr,
          "an option where --list's file name belongs")
    # --repeat is an int: a value past INT_MAX is refused, not wrapped (4294967297 was read as 1)
    r = run("--repeat", "4294967297", os.path.join(DATA, "t1", "paper_prl_2x2.json"))
    check(r.returncode == 2 and "--repeat: bad value '4294967297'" in r.stderr, f"--repeat past INT_MAX: {r.stderr!r}")

print(f"space_cli: {len(failures)} failures")
sys.exit(1 if failures else 0)
