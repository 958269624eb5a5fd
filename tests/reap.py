"""Run a command (``make test``'s pytest) so that nothing it started outlives it.

``python -m tests.reap CMD ...`` runs CMD as its child and becomes the *subreaper* of everything
CMD starts (Linux ``PR_SET_CHILD_SUBREAPER``): a process whose parent dies is re-parented to this
one, not to init, so every server a test started -- JupyterHub and its proxy and gateway in a
session of their own, learners' servers running as other users, JupyterLab, kernels, llama.cpp's
server, Chromium -- stays below it, however it was started. Why: a clean-clone ``make test``
stopped with SIGTERM once left a root JupyterHub and its gateway running, because the hub tests
start them in a session of their own and only the fixture's teardown stopped them.

When CMD ends, or this process gets SIGTERM, SIGHUP or SIGINT (Ctrl-C):

1. CMD's process group (CMD runs in one of its own) gets SIGINT, as Ctrl-C gives it, so pytest
   tears its fixtures down (users removed, servers stopped) -- up to :data:`GRACE` seconds;
2. whatever is still running below gets SIGTERM, then SIGKILL after :data:`GRACE_KILL` seconds;
3. the local users the tests created (their names are appended to ``$ARGNB_TEST_USERS``, a file
   this sets; ``tests/classroom/learners.py``) that still exist lose their processes and are
   deleted with their homes.

Each process found in step 2 after a run that ended on its own is named on stderr: a test that
leaves a server running is a bug to fix. The exit status is CMD's (or 128 + the signal).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pwd
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
GRACE, GRACE_KILL = 60.0, 10.0
USERS = "ARGNB_TEST_USERS"


def become_subreaper() -> bool:
    """Make orphaned descendants this process's children (False where Linux cannot)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(parent pid, state, process group) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return int(fields[1]), fields[0], int(fields[2])


def group(me: int, pgid: int) -> list[int]:
    """The live processes below ``me`` in process group ``pgid``."""
    return [p for p in descendants(me) if (st := _stat(p)) and st[2] == pgid]


def cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()[:160]


def descendants(root: int) -> list[int]:
    """Every live (not zombie) process below ``root``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) and st[1] != "Z":
            children.setdefault(st[0], []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _reap_zombies(keep: int = 0) -> None:
    """Collect the exit status of orphans re-parented here (they would stay zombies) -- never
    of ``keep``, CMD itself, whose status :class:`subprocess.Popen` collects."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        st = _stat(int(entry)) if entry.isdigit() and int(entry) != keep else None
        if st and st[0] == me and st[1] == "Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(entry), os.WNOHANG)


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _wait_gone(pick, seconds: float, keep: int = 0) -> list[int]:
    """Wait until ``pick()`` finds nothing (reaping as it goes); what is left at the end."""
    end = time.monotonic() + seconds
    while True:
        _reap_zombies(keep)
        left = pick()
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.2)


def stop_everything(me: int, child: subprocess.Popen, *, interrupt: bool) -> None:
    """Steps 1 and 2 of the module's docstring. ``interrupt``: the run was stopped (not ended
    on its own), so pytest's process group gets SIGINT first, as Ctrl-C gives it."""
    if interrupt:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGINT)
        _wait_gone(lambda: group(me, child.pid), GRACE, child.pid)  # pytest and its workers
    left = descendants(me)
    if left and not interrupt:
        for pid in left:
            what = f"{pid} {cmdline(pid)}"
            print(f"tests.reap: left running by the tests, stopped: {what}", file=sys.stderr)
    _signal_all(left, signal.SIGTERM)
    left = _wait_gone(lambda: descendants(me), GRACE_KILL, child.pid)
    _signal_all(left, signal.SIGKILL)
    _wait_gone(lambda: descendants(me), GRACE_KILL, child.pid)


def remove_users(names_file: Path) -> None:
    """Step 3: the tests' local users that still exist, with their processes and homes."""
    if not names_file.exists():
        return
    for name in dict.fromkeys(names_file.read_text().split()):
        try:
            uid = pwd.getpwnam(name).pw_uid
        except KeyError:
            continue  # removed by its fixture
        print(f"tests.reap: removing the test user {name}", file=sys.stderr)
        subprocess.run(["pkill", "-KILL", "-u", str(uid)], check=False)
        subprocess.run(["userdel", "-r", "-f", name], capture_output=True, check=False)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m tests.reap CMD [ARGS...]", file=sys.stderr)
        return 2
    me = os.getpid()
    become_subreaper()
    fd, users = tempfile.mkstemp(prefix="argnb-test-users-")
    os.close(fd)
    env = dict(os.environ, **{USERS: users})
    stopped: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        stopped.append(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    # its own process group, so that a signal to this one (Ctrl-C reaches the terminal's
    # foreground group, make and this process) is passed on once, here
    child = subprocess.Popen(argv, env=env, process_group=0)
    try:
        while child.poll() is None and not stopped:
            _reap_zombies(child.pid)
            time.sleep(0.5)
        stop_everything(me, child, interrupt=bool(stopped))
        code = child.wait()
    finally:
        remove_users(Path(users))
        Path(users).unlink(missing_ok=True)
    return 128 + stopped[0] if stopped else code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
