#!/usr/bin/env python3
"""tests/python_install.py PREFIX PYDIR: `cmake --install` of the build into a temporary prefix puts the
executable in bin/ and the Python package in PYDIR (the dist-packages directory the build chose for the
configured PREFIX, which /usr/bin/python3 reads when PREFIX is /usr or /usr/local); the installed package,
with nothing of the build tree on its paths, finds the installed executable beside it and runs a kernel
with it."""
import os
import subprocess
import sys
import tempfile

from checks import check, exit_code

BUILD = os.environ["MPT_BINARY_DIR"]
CMAKE = os.environ.get("CMAKE", "cmake")
RUN = r"""
import numpy as np, mptune, mptune.runner
print(mptune.__file__)
print(mptune.runner.find_mptune())
src = "void twice(float *x, int n) { for (int i = 0; i < n; i++) x[i] *= 2; }"
r = mptune.run_kernel("twice", src, 64, [np.ones(64, np.float32), np.int32(64)], {"block_size_x": 32}, lang="C",
                      quiet=True)
print(r["status"], r["time"] > 0)
"""


def main():
    configured_prefix, pydir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as prefix:
        p = subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix], capture_output=True, text=True)
        print(p.stdout[-2000:] + p.stderr[-2000:])
        check(p.returncode == 0, "cmake --install failed")
        exe = os.path.join(prefix, "bin", "mptune")
        pkg = os.path.join(prefix, pydir, "mptune")
        check(os.access(exe, os.X_OK), f"{exe} is not installed")
        names = sorted(os.listdir(pkg)) if os.path.isdir(pkg) else []
        check(names == ["__init__.py", "api.py", "errors.py", "problem.py", "runlog.py", "runner.py", "strategy.py"],
              f"the installed package: {names}")
        env = {k: v for k, v in os.environ.items() if k not in ("MPTUNE", "PYTHONPATH")}
        env.update(PYTHONPATH=os.path.join(prefix, pydir), PATH="/usr/bin:/bin", PYTHONDONTWRITEBYTECODE="1")
        with tempfile.TemporaryDirectory() as cwd:
            p = subprocess.run(["/usr/bin/python3", "-c", RUN], cwd=cwd, env=env, capture_output=True, text=True,
                               timeout=300)
        print(p.stdout + p.stderr[-2000:])
        lines = p.stdout.splitlines()
        check(p.returncode == 0 and len(lines) == 3, "the installed package failed")
        if len(lines) == 3:
            check(lines[0] == os.path.join(pkg, "__init__.py"), f"the package imported: {lines[0]}")
            check(os.path.samefile(lines[1], exe), f"the executable found: {lines[1]}, expected {exe}")
            check(lines[2] == "ok True", f"run_kernel with the installed package: {lines[2]}")
    if configured_prefix in ("/usr", "/usr/local"):
        p = subprocess.run(["/usr/bin/python3", "-c", "import sys; print('\\n'.join(sys.path))"], capture_output=True,
                           text=True)
        where = os.path.join(configured_prefix, pydir)
        check(where in p.stdout.splitlines(), f"{where} is not on /usr/bin/python3's sys.path")
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
