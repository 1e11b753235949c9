#!/usr/bin/env python3
"""tests/python_strategies.py: tune_kernel's strategies, budgets and results on a replayed space, no
compiler or GPU needed: simulation_mode=True with a Kernel Tuner cache file (the convolution kernel
brute-forced on an A100, ../shared/data/brute-forced/convolution_A100_kerneltuner.json.gz) and the tune
params and restrictions of its T1 file. Every Kernel Tuner strategy name runs mptune's strategy
(the log says which) with max_fevals as its budget; every result's `time` and `times` are the cache's for
its configuration, its failures are Kernel Tuner's error strings; random_sample's fraction, time_limit,
brute force over the whole space, options passed on, a wrong option refused by mptune, and seed= repeats
a run."""
import ast
import contextlib
import gzip
import io
import json
import os
import sys
import tempfile

import numpy as np

import mptune
from checks import check, exit_code

DATA = os.environ["MPT_SHARED_DATA"]
CACHE = os.path.join(DATA, "brute-forced", "convolution_A100_kerneltuner.json.gz")
T1 = os.path.join(DATA, "t1", "convolution_milo.json")
NAMES = {"brute_force": "brute_force", "random_sample": "random", "bayes_opt": "bo", "genetic_algorithm": "ga",
         "diff_evo": "de", "firefly_algorithm": "firefly", "simulated_annealing": "sa", "pso": "pso", "mls": "mls"}


def problem():
    """(tune_params, restrictions) of the convolution's T1 file"""
    with open(T1) as f:
        space = json.load(f)["ConfigurationSpace"]
    params = {p["Name"]: ast.literal_eval(p["Values"]) for p in space["TuningParameters"]}
    return params, [c["Expression"] for c in space["Conditions"]]


def cache_entries():
    with gzip.open(CACHE, "rt") as f:
        c = json.load(f)
    return c["tune_params_keys"], c["cache"]


def simulate(tmp, tag, **kw):
    params, restrictions = problem()
    return mptune.tune_kernel("convolution_kernel", "__global__ void convolution_kernel(float *o) { }\n",
                              (4096, 4096), [np.zeros(16, np.float32)], params, restrictions=restrictions,
                              simulation_mode=True, cache=CACHE, quiet=True, workdir=os.path.join(tmp, tag), **kw)


def check_against_cache(results, keys, cache, what):
    """each result is the cache's record of its configuration"""
    for r in results:
        rec = cache.get(",".join(str(r[k]) for k in keys))
        if rec is None:
            check(False, f"{what}: {r} is no configuration of the cache")
            return
        if isinstance(rec["time"], str):  # a failure: Kernel Tuner's error string
            ok = isinstance(r["time"], mptune.ErrorConfig) and r["status"] != "ok"
            check(ok and str(r["time"]) == rec["time"], f"{what}: the failure {rec['time']} read as {r['time']!r}")
        else:
            ok = r["status"] == "ok" and abs(r["time"] - rec["time"]) <= 1e-9 * rec["time"]
            check(ok and np.allclose(r["times"], rec["times"], rtol=1e-12),
                  f"{what}: time {r['time']} {r['times'][:3]}..., the cache has {rec['time']} {rec['times'][:3]}...")


def main():
    keys, cache = cache_entries()
    with tempfile.TemporaryDirectory() as tmp:
        for kt, name in NAMES.items():
            results, env = simulate(tmp, kt, strategy=kt, strategy_options={"max_fevals": 20}, seed=3)
            check(len(results) == 20, f"{kt}: {len(results)} results for max_fevals 20")
            check(env["strategy"] == kt and env["mptune_strategy"] == name and env["budget"] == 20,
                  f"{kt}: strategy {env['strategy']} ran as {env['mptune_strategy']}, budget {env['budget']}")
            check(env["evaluator"] == "sim" and env["device_name"] == "NVIDIA A100-PCIE-40GB",
                  f"{kt}: evaluator {env['evaluator']}, device {env['device_name']}")
            check(env["log"] == os.path.join(tmp, kt, "run.h5") and mptune.read_log(env["log"]) == results,
                  f"{kt}: read_log of {env['log']} gives the results returned")
            check_against_cache(results, keys, cache, kt)
        failed = [r for r in results if r["status"] != "ok"]
        print(f"the last run: {len(failed)} failures, e.g. {failed[:1]}")
        # brute force (Kernel Tuner's default strategy) covers the whole space, failures included
        results, env = simulate(tmp, "all")
        check(env["strategy"] == "brute_force" and len(results) == 4362 and env["stop_reason"] == "exhausted",
              f"brute force: {len(results)} results, {env['stop_reason']}")
        check_against_cache(results, keys, cache, "brute force")
        n_failed = sum(isinstance(r["time"], mptune.ErrorConfig) for r in results)
        check(n_failed == 161, f"brute force: {n_failed} failures (the A100 has 161)")
        results, env = simulate(tmp, "fraction", strategy="random_sample", strategy_options={"fraction": 0.01})
        check(env["budget"] == 44 and len(results) == 44,
              f"fraction 0.01: budget {env['budget']}, {len(results)} results")
        results, env = simulate(tmp, "time", strategy="random_sample", strategy_options={"time_limit": 30})
        check(env["time_budget"] == 30 and len(results) == 4362,
              f"time_limit 30 s: time budget {env['time_budget']}, {len(results)} results (the whole space)")
        results, env = simulate(tmp, "options", strategy="genetic_algorithm",
                                strategy_options={"max_fevals": 30, "popsize": 10, "method": "uniform"})
        check(env["strategy_options"] == {"popsize": "10", "method": "uniform"} and len(results) == 30,
              f"options passed on: {env['strategy_options']}")
        try:
            simulate(tmp, "bad", strategy="genetic_algorithm", strategy_options={"max_fevals": 30, "maxiter": 5})
            check(False, "mptune took the option maxiter")
        except mptune.RunError as e:
            print(f"refused as expected: {e}")
            check("maxiter" in str(e) and "popsize" in str(e) and e.returncode != 0,
                  "the wrong option's message names it and the valid ones")
        # verbose: every result on stderr; timeout passed on
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            results, env = simulate(tmp, "verbose", strategy="pso", strategy_options={"max_fevals": 12}, verbose=True,
                                    timeout=5)
        lines = err.getvalue().splitlines()
        check(len(lines) == 12 and all(ln.startswith("block_size_x=") and (" ms" in ln or "Config (" in ln)
                                       for ln in lines), f"verbose: {lines}")
        check(env["command"][-2:] == ["--timeout", "5"], f"timeout=5: {env['command']}")
        a, env_a = simulate(tmp, "seed1", strategy="bayes_opt", strategy_options={"max_fevals": 15}, seed=42)
        b, env_b = simulate(tmp, "seed2", strategy="bayes_opt", strategy_options={"max_fevals": 15}, seed=42)
        strip = [{k: v for k, v in r.items() if k != "timestamp"} for r in a]
        check(env_a["seed"] == 42 and strip == [{k: v for k, v in r.items() if k != "timestamp"} for r in b],
              "seed=42 twice: the same evaluations")
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
