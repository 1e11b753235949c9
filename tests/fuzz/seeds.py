#!/usr/bin/env python3
"""tests/fuzz/seeds.py: the seed corpora of the fuzz harnesses, made at run time from the shared data
(never copied into the repository), and their replay under ctest.

  seeds.py write KIND DIR [--small]   writes KIND's seeds made from $MPT_SHARED_DATA into DIR
  seeds.py inputs KIND [--small]      prints the seed paths read as they are (tests/fuzz/seeds/KIND, shared data)
  seeds.py run KIND DRIVER            writes them to a temporary directory and runs DRIVER (a harness linked
                                      with replay_main.c, or a libFuzzer binary with -runs=0) over them and
                                      the paths of `inputs`; exits with the driver's status

KIND is expr (every expression of every shared T1 file: Values, Conditions, KernelSpecification sizes),
t1 (the shared T1 files, read in place) or replay (brute-forced files gunzipped, and one read gzipped;
--small: only the first records of each, and one of them gzipped, for libFuzzer, whose inputs are best kept
small).
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPLAY_FILES = ["convolution_A100_T4.json.gz", "convolution_A100_kerneltuner.json.gz",
                "convolution_W7800_T4.json.gz", "convolution_MI250X_kerneltuner.json.gz"]
SMALL_RECORDS = 12


def shared():
    d = os.environ.get("MPT_SHARED_DATA") or os.path.join(HERE, "..", "..", "..", "shared", "data")
    if not os.path.isdir(os.path.join(d, "t1")):
        sys.exit(f"seeds.py: no shared data at {d} (set MPT_SHARED_DATA)")
    return d


def t1_files():
    d = os.path.join(shared(), "t1")
    return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".json")]


def expressions(doc):
    """every expression string of a T1 document, in file order"""
    space = doc.get("ConfigurationSpace", {})
    for p in space.get("TuningParameters", []):
        if isinstance(p.get("Values"), str):
            yield p["Values"]
    for c in space.get("Conditions", []):
        if isinstance(c.get("Expression"), str):
            yield c["Expression"]
    spec = doc.get("KernelSpecification", {})
    for key in ("LocalSize", "GlobalSize"):
        for v in (spec.get(key) or {}).values():
            if isinstance(v, str):
                yield v
    for a in spec.get("Arguments", []) or []:
        if isinstance(a.get("Size"), str):
            yield a["Size"]


def write_expr(out):
    n = 0
    seen = set()
    for path in t1_files():
        with open(path) as f:
            doc = json.load(f)
        for e in expressions(doc):
            if e in seen:
                continue
            seen.add(e)
            with open(os.path.join(out, f"{os.path.basename(path)[:-5]}_{n:03d}.txt"), "w") as f:
                f.write(e)
            n += 1
    return n


def shrink(doc):
    """the first records only, the rest of the document kept"""
    if isinstance(doc.get("results"), list):
        doc["results"] = doc["results"][:SMALL_RECORDS]
    if isinstance(doc.get("cache"), dict):
        doc["cache"] = dict(list(doc["cache"].items())[:SMALL_RECORDS])
    return doc


def write_replay(out, small):
    d = os.path.join(shared(), "brute-forced")
    for name in REPLAY_FILES:
        with gzip.open(os.path.join(d, name), "rb") as f:
            data = f.read()
        if small:
            data = json.dumps(shrink(json.loads(data)), indent=1).encode()
        with open(os.path.join(out, name[:-3]), "wb") as f:
            f.write(data)
        if small and name == REPLAY_FILES[0]:
            with open(os.path.join(out, name), "wb") as f:
                f.write(gzip.compress(data, mtime=0))
    return len(REPLAY_FILES) + small


def inputs(kind, small):
    """seed paths read in place"""
    paths = [os.path.join(HERE, "seeds", kind)]
    if kind == "t1":
        paths.append(os.path.join(shared(), "t1"))
    if kind == "replay" and not small:
        paths.append(os.path.join(shared(), "brute-forced", REPLAY_FILES[0]))
    return paths


def write(kind, out, small):
    os.makedirs(out, exist_ok=True)
    if kind == "expr":
        return write_expr(out)
    if kind == "replay":
        return write_replay(out, small)
    return 0


def main(argv):
    if len(argv) < 3 or argv[1] not in ("write", "inputs", "run") or argv[2] not in ("expr", "t1", "replay"):
        sys.exit(__doc__)
    cmd, kind = argv[1], argv[2]
    if cmd == "write":
        n = write(kind, argv[3], "--small" in argv[4:])
        print(f"seeds.py: {n} {kind} seeds written to {argv[3]}")
        return 0
    if cmd == "inputs":
        print("\n".join(inputs(kind, "--small" in argv[3:])))
        return 0
    driver = argv[3]
    with tempfile.TemporaryDirectory(prefix=f"mpt_fuzz_seeds_{kind}_") as tmp:
        write(kind, tmp, False)
        return subprocess.run([driver, tmp] + inputs(kind, False) + argv[4:]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
