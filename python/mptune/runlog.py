"""mptune.runlog: a run log (HDF5, docs/RUNLOG.md) read into Kernel Tuner's shapes: one dict per
evaluation (the tune params, `time`, `times`, ...) and the run's environment. h5py is imported only here,
when a log is read."""
import datetime
import json
import math

from .errors import STATUS_ERROR, ArgumentTypeError, MptuneError


def _text(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def _h5py():
    try:
        import h5py
    except ImportError:
        raise MptuneError("reading an mptune run log needs h5py (Debian: apt-get install python3-h5py)") from None
    return h5py


def _open(h5py, path):
    if not isinstance(path, (str, bytes)) and not hasattr(path, "__fspath__"):
        raise ArgumentTypeError(f"read_log: expected the path of a run log, got {type(path).__name__}")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise MptuneError(f"{path}: cannot read it as an mptune run log: {e}") from None
    if _text(f.attrs.get("mptune_format", b"")) != "mptune-runlog":
        f.close()
        raise MptuneError(f"{path}: not an mptune run log (no mptune_format attribute)")
    return f


def _parameter_tables(f):
    names = [_text(n) for n in f["parameters"].attrs["names"]]
    values = {}
    for n in names:
        ds = f["parameters"][n]
        kind = _text(ds.attrs.get("type", b""))
        vals = [_text(v) for v in ds[:].tolist()]
        values[n] = [bool(v) for v in vals] if kind == "bool" else vals
    return names, values


def _timestamp(unix):
    if not math.isfinite(unix):
        return None
    return datetime.datetime.fromtimestamp(unix, datetime.timezone.utc).isoformat()


def _result(rec, names, values, status_names):
    r = {n: values[n][int(rec["config"][p])] for p, n in enumerate(names)}
    status = status_names.get(int(rec["status"]), str(int(rec["status"])))
    times = [float(t) for t in rec["times"][:int(rec["n_times"])]]
    if status == "ok":
        r["time"] = float(rec["objective"])
    else:
        r["time"] = STATUS_ERROR.get(status, STATUS_ERROR["runtime_error"])()
    r["times"] = times
    r["compile_time"] = float(rec["compile_ms"])
    r["benchmark_time"] = float(rec["benchmark_ms"])
    r["framework_time"] = float(rec["framework_ms"])
    r["timestamp"] = _timestamp(float(rec["t_end"]))
    r["status"] = status
    r["error"] = _text(rec["reason"])
    return r


def _records(f):
    ev = f["evaluations"]
    return ev[:int(f["count"][()])]


def read_log(path):
    """the evaluations of an mptune run log, in the order they finished, as Kernel Tuner's results: one
    dict per evaluation with the tune params, `time` (the mean of `times`, ms; for a failure Kernel Tuner's
    error string: CompilationFailedConfig, RuntimeFailedConfig, WrongResultConfig, TimeoutConfig,
    InvalidConfig), `times` (the timed iterations, ms), `compile_time`, `benchmark_time`,
    `framework_time` (ms), `timestamp` (its end, UTC), `status` (mptune's: ok, compile_error,
    launch_error, runtime_error, wrong_result, timeout, crash, invalid) and `error` (the reason of a
    failure, "" when ok). Evaluations cancelled when a run was stopped are left out (no measurement)."""
    h5py = _h5py()
    with _open(h5py, path) as f:
        names, values = _parameter_tables(f)
        status_names = {v: k for k, v in h5py.check_enum_dtype(f["evaluations"].dtype["status"]).items()}
        return [_result(rec, names, values, status_names) for rec in _records(f)
                if status_names.get(int(rec["status"])) != "cancelled"]


def _options(text):
    out = {}
    for item in filter(None, text.split(",")):
        k, _, v = item.partition("=")
        out[k] = v
    return out


def _devices(f):
    if "devices" not in f:
        return []
    rows = f["devices"][:]
    last = max((int(r["session"]) for r in rows), default=0)
    return [{"rank": int(r["rank"]), "index": int(r["index"]), "host": _text(r["host"]),
             "vendor": _text(r["vendor"]), "name": _text(r["name"]), "arch": _text(r["arch"]),
             "memory_gib": float(r["memory_gib"]), "evaluator": _text(r["evaluator"])}
            for r in rows if int(r["session"]) == last]


def read_env(path):
    """the environment of the run an mptune run log holds, shaped like Kernel Tuner's `env`: device_name
    (the workers' devices, distinct names joined by ", "), devices (one dict per worker), problem_size,
    strategy, strategy_options, budget, time_budget, seed, evaluator, iterations, mptune_version,
    space_size, stop_reason, log"""
    h5py = _h5py()
    with _open(h5py, path) as f:
        a = {k: _text(v) for k, v in f.attrs.items()}
        devices = _devices(f)
    try:
        kernel = json.loads(a.get("problem_text", "{}")).get("KernelSpecification", {})
    except ValueError:
        kernel = {}
    names = []
    for d in devices:
        if d["name"] not in names:
            names.append(d["name"])
    return {
        "device_name": ", ".join(names), "devices": devices, "problem_size": kernel.get("ProblemSize"),
        "lang": kernel.get("Language"), "iterations": kernel.get("Iterations", 7),
        "strategy": a.get("strategy"), "strategy_options": _options(a.get("options", "")),
        "budget": int(a["budget"]) if "budget" in a else None, "time_budget": float(a.get("time_budget", 0.0)),
        "seed": int(a["seed"]) if "seed" in a else None, "evaluator": a.get("evaluator"),
        "simulate": a.get("simulate") or None, "mptune_version": a.get("mptune_version"),
        "space_size": int(a["space_size"]) if "space_size" in a else None,
        "stop_reason": a.get("stop_reason"), "log": str(path),
    }
