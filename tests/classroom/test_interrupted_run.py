"""A test run stopped mid-way leaves nothing behind (issue 38): ``make test`` runs pytest under
``tests/reap.py``; here that wrapper runs the hub tests, and once the hub, its proxy and gateway,
the model server and learners' servers (running as real local users) are up, its process group
gets SIGTERM, as a CI runner's timeout sends it. Then no process of the run is left, and no
test user. (Before the wrapper, a SIGTERM'd clean-clone run left a root JupyterHub and its
gateway running: they run in a session of their own and only the fixture's teardown stopped
them.)"""

from __future__ import annotations

import os
import pwd
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.classroom.test_hub import _skip_reason
from tests.reap import cmdline, descendants

pytestmark = [pytest.mark.server, pytest.mark.model, pytest.mark.full]
ROOT = Path(__file__).resolve().parents[2]
MARK = "ARGNB_INTERRUPT_PROBE"


def _uid(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _marked(token: str) -> list[int]:
    """Every process on the machine whose environment carries ``MARK=token``."""
    found = []
    needle = f"{MARK}={token}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if needle in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                found.append(int(entry))
        except OSError:
            pass
    return found


def test_sigterm_mid_hub_test_leaves_no_process_and_no_test_user(tmp_path: Path) -> None:
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    token = secrets.token_hex(4)
    env = {**os.environ, MARK: token, "PYTHONPATH": str(ROOT)}
    for var in ("ARGNB_TEST_RUN_CACHE", "ARGNB_CACHE_DIR", "ARGNB_TEST_USERS"):
        env.pop(var, None)  # the inner run makes its own
    cmd = [sys.executable, "-m", "tests.reap", sys.executable, "-m", "pytest", "-p",
           "no:cacheprovider", "-m", "", "-n", "1", "-q",
           "tests/classroom/test_hub.py::test_a_request_costs_what_the_model_server_counts"]  # fmt: skip
    log = (tmp_path / "run.log").open("w")
    run = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    seen: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline and run.poll() is None:
            below = descendants(run.pid)
            seen.update({p: cmdline(p) for p in below})
            # a learner's server (the gateway runs as its own user too, earlier)
            learners = [p for p in below if _uid(p) not in (None, 0) and "singleuser" in seen[p]]
            if learners and any("jupyterhub" in seen[p] for p in below):
                break
            time.sleep(1)
        else:
            pytest.fail(f"the hub and learners' servers never came up:\n{_tail(tmp_path)}")
        time.sleep(2)  # the run is mid-way: servers up, the test's lesson cells starting
        below = descendants(run.pid)
        seen.update({p: cmdline(p) for p in below})
        uids = {_uid(p) for p in below} - {None, 0}
        users = {pwd.getpwuid(u).pw_name: u for u in uids}  # type: ignore[arg-type]
        kinds = " | ".join(seen.values())
        for part in (
            "jupyterhub",
            "configurable-http-proxy",
            "argnb.llm.sampling",  # llama-cpp-python's server, with argnb's sampler
            "singleuser",
        ):
            assert part in kinds, f"{part} was not running when the run was stopped: {kinds}"
        os.killpg(run.pid, signal.SIGTERM)
        assert run.wait(timeout=180) == 128 + signal.SIGTERM
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
        log.close()
    time.sleep(1)
    alive = {p: c for p, c in seen.items() if Path(f"/proc/{p}").exists() and cmdline(p) == c}
    assert alive == {}, f"left running: {alive}\n{_tail(tmp_path)}"
    assert _marked(token) == [], [cmdline(p) for p in _marked(token)]
    assert users, "no learner's server ran as a local user"
    for name, uid in users.items():
        with pytest.raises(KeyError):
            pwd.getpwnam(name)  # the test user is gone
        try:
            pwd.getpwuid(uid)
            continue  # the number went to a user another test made since
        except KeyError:
            pass
        gone = subprocess.run(["pgrep", "-u", str(uid)], capture_output=True, text=True)
        assert gone.stdout.strip() == "", f"processes of {name} ({uid}) left: {gone.stdout}"


def _tail(tmp_path: Path) -> str:
    return (tmp_path / "run.log").read_text(errors="replace")[-3000:]
