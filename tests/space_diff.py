#!/usr/bin/python3
"""tests/space_diff.py: differential test of the valid set. Generates N random small T1 problems (ints,
uints, floats, strings, bools; Values as Python expressions or JSON arrays; constraints with chained
comparisons, %, //, /, and/or/not, in, ternaries, single-parameter and unused parameters), writes them to a
temp dir, computes the valid set by itertools.product + Python eval (a configuration whose constraint
raises is invalid), and compares it, as a multiset of rows, with `mptune space --list` output.
Usage: space_diff.py [N] (default 240). Exit status 1 on any mismatch."""
import concurrent.futures
import csv
import io
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile

MPTUNE = os.environ.get("MPTUNE", "mptune")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 240
rng = random.Random(20261121)


def gen_values(kind):
    """returns (Values field: an expression string or a JSON array, python list)"""
    if kind == "int":
        form = rng.randrange(4)
        if form == 0:
            vals = sorted(set(rng.randint(-6, 24) for _ in range(rng.randint(1, 6))))
            return (vals if rng.random() < 0.3 else str(vals)), vals
        if form == 1:
            a = rng.randint(-3, 4); b = a + rng.randint(1, 8); st = rng.randint(1, 3)
            src = f"list(range({a}, {b}, {st}))"
        elif form == 2:
            k = rng.randint(1, 6)
            src = f"[2**i for i in range(0, {k})]"
        else:
            src = f"[1, 2, 3] + [{rng.randint(4, 9)} * i for i in range(1, {rng.randint(2, 4)})]"
        return src, eval(src)
    if kind == "uint":
        src = f"[i for i in range({rng.randint(1, 7)}) if i % {rng.randint(1, 3)} == 0]"
        return src, eval(src)
    if kind == "float":
        vals = sorted(set(rng.choice([0.25, 0.5, 1.0, 1.5, 2.0, 2.5, -1.5, 3.75, 1e-05, 8.0]) for _ in range(rng.randint(1, 5))))
        if rng.random() < 0.3:
            return vals, vals  # JSON array form
        if rng.random() < 0.3:
            src = "[x / 4 for x in range(1, %d)]" % rng.randint(2, 7)
            return src, eval(src)
        return str(vals), vals
    if kind == "bool":
        if rng.random() < 0.5:
            return "[False, True]", [False, True]
        return "[True]", [True]
    if kind == "string":
        vals = rng.sample(["a", "bb", "c", "dd", "e"], rng.randint(1, 4))
        if rng.random() < 0.3:
            return vals, vals  # JSON array form
        return repr(vals), vals
    raise ValueError(kind)


def gen_atom(params):
    """a random boolean-valued sub-expression over some params"""
    name, kind, vals = rng.choice(params)
    nums = [p for p in params if p[1] in ("int", "uint", "float", "bool")]
    r = rng.random()
    if kind == "string":
        if r < 0.4:
            return f"{name} == {rng.choice(vals)!r}"
        if r < 0.7:
            return f"{name} in {rng.sample(['a', 'bb', 'c', 'dd', 'e'], 2)!r}"
        if r < 0.85:
            return f"{name} != 'c'"
        return f"len({name}) > 1"
    if kind == "bool":
        return rng.choice([name, f"not {name}", f"{name} == True"])
    # numeric
    if len(nums) >= 2 and rng.random() < 0.7:
        (a, _, _), (b, _, _) = rng.sample(nums, 2)
        op = rng.choice(["+", "-", "*", "//", "%", "/"])
        expr = f"{a} {op} {b}"
    else:
        a = name
        expr = f"{a} {rng.choice(['+', '*', '%', '//'])} {rng.randint(1, 5)}"
    form = rng.random()
    c1 = rng.randint(-4, 10)
    c2 = c1 + rng.randint(2, 30)
    if form < 0.3:
        return f"{c1} <= {expr} <= {c2}"  # chained
    if form < 0.5:
        return f"{expr} {rng.choice(['<', '<=', '>', '>=', '==', '!='])} {c1}"
    if form < 0.6:
        return f"({expr}) % 2 == 0"
    if form < 0.7:
        return f"{expr} in [0, 1, 2, 4, 8]"
    if form < 0.8:
        return f"{expr} < {c1} < {c2} or {name} > 2"
    if form < 0.85:
        return f"({name} if {name} > 1 else 7) >= {rng.randint(0, 8)}"
    if form < 0.9:
        return f"{name} > {c1} if {expr} > 2 else {name} < {c2}"
    return f"max({name}, {rng.randint(0, 4)}) < {rng.randint(2, 12)}"


def gen_condition(params):
    k = rng.randint(1, 3)
    atoms = [gen_atom(params) for _ in range(k)]
    expr = atoms[0]
    bare = rng.random() < 0.35  # without parentheses: precedence of and/or/not/if-else matters
    for a in atoms[1:]:
        if bare:
            expr = f"{expr} {rng.choice(['and', 'and', 'or'])} {a}"
        else:
            expr = f"({expr}) {rng.choice(['and', 'or', 'or'])} ({a})"
    if rng.random() < 0.15:
        expr = f"not ({expr})"
    return expr


def gen_problem(i):
    n = rng.randint(2, 6)
    params = []
    for k in range(n):
        kind = rng.choice(["int", "int", "int", "uint", "float", "bool", "string"])
        src, vals = gen_values(kind)
        params.append((f"p{k}_{kind[:1]}", kind, vals, src))
    ps = [(a, b, c) for a, b, c, _ in params]
    conds = [gen_condition(ps) for _ in range(rng.choice([0, 1, 1, 2, 2, 3]))]
    if rng.random() < 0.3:  # a single-parameter condition
        name, kind, vals = rng.choice(ps)
        conds.append(f"{name} != {vals[0]!r}")
    tp = [{"Name": name, "Type": kind, "Values": src} for name, kind, vals, src in params]
    doc = {"General": {"BenchmarkName": f"gen{i}"},
           "ConfigurationSpace": {"TuningParameters": tp,
                                  "Conditions": [{"Expression": c, "Parameters": []} for c in conds]},
           "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
                                   "GlobalSize": {"X": "1"}, "LocalSize": {"X": "1"}}}
    return doc, [(name, vals) for name, _, vals, _ in params], conds


def reference(params, conds):
    names = [n for n, _ in params]
    rows = []
    codes = [compile(c, "<c>", "eval") for c in conds]
    for combo in itertools.product(*[v for _, v in params]):
        env = dict(zip(names, combo))
        ok = True
        for c in codes:
            try:
                if not eval(c, {"__builtins__": {"len": len, "max": max, "min": min}}, env):
                    ok = False
                    break
            except Exception:
                ok = False
                break
        if ok:
            rows.append(tuple(str(x) for x in combo))
    return sorted(rows)


def run_one(args):
    path, out = args
    return subprocess.run([MPTUNE, "space", path, "--list", out, "--json"], capture_output=True, text=True,
                          timeout=120)


def main():
    bad = 0
    total_valid = 0
    nontrivial = 0
    with tempfile.TemporaryDirectory() as tmp:
        problems = []
        for i in range(N):
            doc, params, conds = gen_problem(i)
            path = os.path.join(tmp, f"gen{i}.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            problems.append((doc, params, conds, path, os.path.join(tmp, f"gen{i}.csv")))
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(run_one, [(p[3], p[4]) for p in problems]))
        for i, ((doc, params, conds, path, out), r) in enumerate(zip(problems, results)):
            want = reference(params, conds)
            if r.returncode != 0:
                print(f"problem {i}: mptune failed ({r.returncode}): {r.stderr.strip()}\n{json.dumps(doc)}")
                bad += 1
                continue
            with open(out, newline="") as f:
                got_rows = list(csv.reader(f))
            header, got = got_rows[0], sorted(tuple(r) for r in got_rows[1:])
            info = json.loads(r.stdout)
            cart = 1
            for _, v in params:
                cart *= len(v)
            if 0 < len(want) < cart:
                nontrivial += 1
            if header != [n for n, _ in params] or got != want or info["valid"] != len(want) or info["cartesian"] != cart:
                bad += 1
                print(f"problem {i}: MISMATCH: mptune {len(got)} rows, python {len(want)}")
                print("  conditions:", conds)
                print("  params:", params)
                print("  only mptune:", sorted(set(got) - set(want))[:5])
                print("  only python:", sorted(set(want) - set(got))[:5])
            total_valid += len(want)
    print(f"space_diff: {N} problems ({nontrivial} with 0 < valid < cartesian), {total_valid} valid configurations "
          f"in all, {bad} mismatches")
    return 1 if bad or nontrivial < N // 4 else 0


if __name__ == "__main__":
    sys.exit(main())
