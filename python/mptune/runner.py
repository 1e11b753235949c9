"""mptune.runner: finding the mptune executable and MPICH's launcher, and running mptune commands with
their output streamed to the user's stderr."""
import collections
import json
import os
import shutil
import subprocess
import sys

from .errors import RunError

TAIL_LINES = 40  # lines of a failed command's output kept for its error message


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def executable_candidates():
    """where the mptune executable is looked for after $MPTUNE: beside the package in a build tree
    (build/python/mptune -> build/mptune), in the installed prefix (PREFIX/lib/python3.X/dist-packages/
    mptune -> PREFIX/bin/mptune)"""
    pkg = os.path.dirname(os.path.abspath(__file__))
    up = [pkg]
    for _ in range(4):
        up.append(os.path.dirname(up[-1]))
    return [os.path.join(up[2], "mptune"), os.path.join(up[4], "bin", "mptune")]


def find_mptune():
    """the mptune executable: $MPTUNE, else beside the package (build tree or install prefix), else PATH"""
    given = os.environ.get("MPTUNE")
    if given:
        if not _executable(given):
            raise RunError(f"MPTUNE={given}: not an executable file")
        return os.path.abspath(given)
    for c in executable_candidates():
        if _executable(c):
            return c
    found = shutil.which("mptune")
    if found:
        return os.path.abspath(found)
    raise RunError("cannot find the mptune executable: set MPTUNE=/path/to/mptune, or put it on PATH (looked "
                   f"beside the package: {', '.join(executable_candidates())})")


def find_mpiexec():
    """MPICH's launcher: $MPTUNE_MPIEXEC, else mpiexec.mpich on PATH"""
    given = os.environ.get("MPTUNE_MPIEXEC")
    found = given or shutil.which("mpiexec.mpich")
    if not found:
        raise RunError("cannot find mpiexec.mpich (MPICH's launcher) on PATH: install MPICH or set "
                       "MPTUNE_MPIEXEC=/path/to/mpiexec")
    return os.path.abspath(found) if os.sep in found else found


def stream(cmd, cwd, env=None, quiet=False):
    """runs cmd in cwd with its stdout and stderr copied line by line to sys.stderr (nothing with quiet);
    (exit status, its last lines)"""
    tail = collections.deque(maxlen=TAIL_LINES)
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, errors="replace", bufsize=1)
    except OSError as e:
        raise RunError(f"cannot start {cmd[0]}: {e.strerror}") from None
    try:
        for line in proc.stdout:
            tail.append(line.rstrip("\n"))
            if not quiet:
                sys.stderr.write(line)
                sys.stderr.flush()
        return proc.wait(), list(tail)
    except BaseException:
        proc.terminate()  # mptune stops within its --grace and logs what was in flight as cancelled
        proc.wait()
        raise


def check(rc, tail, what, workdir):
    if rc != 0:
        last = "\n".join(tail[-12:])
        raise RunError(f"{what} exited with status {rc}; the work directory is kept: {workdir}\n{last}",
                       returncode=rc, workdir=workdir, output="\n".join(tail))


def space_size(mptune, problem_path, workdir):
    """the number of valid configurations of a T1 file (`mptune space FILE --json`)"""
    cmd = [mptune, "space", problem_path, "--json"]
    try:
        p = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, errors="replace",
                           stdin=subprocess.DEVNULL)
    except OSError as e:
        raise RunError(f"cannot start {mptune}: {e.strerror}") from None
    check(p.returncode, (p.stdout + p.stderr).splitlines(), "mptune space", workdir)
    try:
        return int(json.loads(p.stdout.splitlines()[-1])["valid"])
    except (ValueError, KeyError, IndexError):
        raise RunError(f"mptune space {problem_path} --json: unexpected output:\n{p.stdout[-2000:]}",
                       workdir=workdir) from None
