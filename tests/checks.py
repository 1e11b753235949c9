"""tests/checks.py: the failure count the Python tests share: check() counts and names a failed check and the test
goes on; exit_code() at the end prints the count and gives the test's exit status."""
failures = 0


def check(ok, what):
    """counts a failed check and says which; returns ok"""
    global failures
    if not ok:
        failures += 1
        print("FAIL:", what, flush=True)
    return ok


def exit_code():
    """prints the failure count; 1 if a check failed, 0 if none"""
    print("failures:", failures, flush=True)
    return 1 if failures else 0
