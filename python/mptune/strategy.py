"""mptune.strategy: Kernel Tuner's `strategy` and `strategy_options` as `mptune tune` options: the
strategy's name in mptune, the budget (max_fevals, fraction, time_limit) and `--option key=value` for the
rest."""
from .errors import ArgumentTypeError, UnsupportedError

# Kernel Tuner's name -> mptune's (mptune's own names are accepted as they are)
KERNEL_TUNER_NAMES = {
    "brute_force": "brute_force", "random_sample": "random", "bayes_opt": "bo", "genetic_algorithm": "ga",
    "diff_evo": "de", "firefly_algorithm": "firefly", "simulated_annealing": "sa", "pso": "pso", "mls": "mls",
}
MPTUNE_NAMES = ("random", "brute_force", "bo", "ga", "ga_memetic", "de", "pso", "firefly", "sa", "mls")
DEFAULT_BUDGET = 100      # evaluations of a strategy given neither max_fevals nor time_limit (bayes_opt's default)
DEFAULT_FRACTION = 0.1    # random_sample's share of the space (Kernel Tuner's default)


def mptune_name(strategy):
    """mptune's name of Kernel Tuner's strategy (None: brute_force, Kernel Tuner's default)"""
    if strategy is None:
        return "brute_force"
    if not isinstance(strategy, str):
        raise ArgumentTypeError(f"strategy={strategy!r}: expected a strategy's name (a string)")
    if strategy in KERNEL_TUNER_NAMES:
        return KERNEL_TUNER_NAMES[strategy]
    if strategy in MPTUNE_NAMES:
        return strategy
    raise UnsupportedError(f"strategy={strategy!r}: mptune has no such strategy; Kernel Tuner's names it runs: "
                           f"{', '.join(KERNEL_TUNER_NAMES)} (or mptune's own: {', '.join(MPTUNE_NAMES)})")


def _option_value(key, v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, float, str)):
        return str(v)
    raise ArgumentTypeError(f"strategy_options[{key!r}]: expected a number, a bool or a string, got "
                            f"{type(v).__name__}")


def _positive(key, v, integral):
    ok = not isinstance(v, bool) and isinstance(v, int if integral else (int, float)) and v > 0
    if not ok:
        raise UnsupportedError(f"strategy_options[{key!r}]={v!r}: expected a positive "
                               f"{'integer' if integral else 'number'}")
    return v


class Plan:
    """what one tuning run is given: the strategy, its --option arguments, and its budget as an evaluation
    count, a share of the valid configurations (`fraction`: resolved once the space size is known), or
    the whole space; and a time limit (seconds) or None"""

    def __init__(self, strategy, strategy_options):
        self.given = strategy if strategy is not None else "brute_force"
        self.name = mptune_name(strategy)
        if strategy_options is not None and not isinstance(strategy_options, dict):
            raise ArgumentTypeError("strategy_options: expected a dict")
        opts = dict(strategy_options or {})
        self.options = {k: v for k, v in opts.items() if k not in ("max_fevals", "time_limit", "fraction")}
        self.option_args = []
        for k, v in self.options.items():
            self.option_args += ["--option", f"{k}={_option_value(k, v)}"]
        self.time_limit = _positive("time_limit", opts["time_limit"], False) if "time_limit" in opts else None
        self.max_fevals = _positive("max_fevals", opts["max_fevals"], True) if "max_fevals" in opts else None
        self.fraction = None
        if "fraction" in opts:
            if self.name != "random":
                raise UnsupportedError(f"strategy_options['fraction']: only random_sample takes a fraction of the "
                                       f"space (strategy {self.given!r}: give max_fevals)")
            f = opts["fraction"]
            if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f <= 1:
                raise UnsupportedError(f"strategy_options['fraction']={f!r}: expected a number in (0, 1]")
            self.fraction = f
        elif self.name == "random" and self.max_fevals is None and self.time_limit is None:
            self.fraction = DEFAULT_FRACTION

    def needs_space_size(self):
        return self.max_fevals is None and (self.fraction is not None or
                                            (self.name == "brute_force" and self.time_limit is None))

    def budget(self, space_size):
        """the evaluation budget (None: the time limit alone bounds the run)"""
        if self.max_fevals is not None:
            return self.max_fevals
        if self.fraction is not None:
            return max(1, round(self.fraction * space_size))
        if self.name == "brute_force" and self.time_limit is None:
            return space_size
        return None if self.time_limit is not None else DEFAULT_BUDGET

    def arguments(self, space_size):
        args = ["--strategy", self.name]
        budget = self.budget(space_size)
        if budget is not None:
            args += ["--budget", str(budget)]
        if self.time_limit is not None:
            args += ["--time", str(self.time_limit)]
        return args + self.option_args
