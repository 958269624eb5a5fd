"""Start a server for a test and wait for it: an event, set by the line of its output that says
it is up (or by the end of that output, when it died), then its port."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest


def serve(
    cmd: list[str],
    env: dict,
    log: Path,
    ready: str,
    what: str,
    timeout: float,
    cwd: Path | None = None,
    port: int | None = None,
) -> subprocess.Popen:
    """Start a server and wait for the line of its output that says it is up (``ready``). A thread
    copies the output to ``log`` (a pipe left unread would fill and block the server) and sets an
    event on that line, or when the output ends because the server died.

    ``port``: then also wait until it accepts connections there (:func:`accepting`)."""
    proc = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        errors="replace",
    )  # fmt: skip
    up, listening = threading.Event(), threading.Event()

    def pump() -> None:
        with log.open("w", encoding="utf-8") as out:
            for line in proc.stdout:  # type: ignore[union-attr]
                out.write(line)
                out.flush()
                if ready in line:
                    listening.set()
                    up.set()
        up.set()  # the output ended: the server is gone

    threading.Thread(target=pump, name=f"{what} output", daemon=True).start()
    if not up.wait(timeout) or not listening.is_set():
        proc.kill()
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        pytest.fail(f"{what} did not start within {timeout:.0f} s:\n{tail}")
    if port is not None and not accepting(proc, port, timeout):
        pytest.fail(f"{what} exited: {log.read_text(errors='replace')[-3000:]}")
    return proc


def accepting(proc: subprocess.Popen, port: int, timeout: float) -> bool:
    """Once a server has said it is up: wait until ``port`` accepts a connection (True) or the
    server exits (False). Jupyter Server prints its URL just before its IO loop starts and binds
    the port on that loop's first turn; nothing says when that happened, so this retries, waiting
    on the process (its exit ends the wait at once) 50 ms at a time."""
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=timeout).close()
            return True
        except ConnectionRefusedError:
            try:
                proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            return False


def unix_socket_kernels(env: dict[str, str]) -> tuple[list[str], str]:
    """The JupyterLab option that starts its kernels on Unix sockets, not TCP ports, and the
    runtime folder (set in ``env``; the caller removes it when the server has stopped).

    Why: a TCP kernel dies when another process takes one of its ports before it has started
    (see :func:`tests.conftest.nbval_kernels_on_unix_sockets`). The socket paths are in the
    runtime folder, which must be short: a socket path has about 107 bytes."""
    runtime = tempfile.mkdtemp(prefix="argnb-lab-")
    env["JUPYTER_RUNTIME_DIR"] = runtime
    return ["--KernelManager.transport=ipc"], runtime
