"""Run one graded notebook cell by cell and log each cell's outcome as it finishes.

This is the grader's child process (``python -m argnb.exercises.runner NB LOG SPEC BOX
--checker CSPEC JOB --timeout S``), one per notebook. It runs **outside** the sandboxes: the
student's kernel runs in one (started through :mod:`.jail` with the spec the grader wrote), the
checker (:mod:`.checker`) in another that never sees the student's files. The runner runs the
student's cells in the kernel, then makes a socket in a folder of its own (mounted read-only in
the kernel's sandbox), lets the kernel connect (:mod:`.serve`) and hands the connection to the checker: from then on the checker calls
the student's functions over it while it runs the checks, and writes one verdict per check. No
check cell, hidden test or expected value is ever sent to the kernel.

One JSON line per event, flushed, so whatever ran before a timeout or a crash is kept::

    {"event": "start"}
    {"event": "cell", "index": 4, "status": "ok" | "error", "ename", "evalue", "text", "seconds",
     "checked": true}              # checked: the checker's verdict (check cells only)
    {"event": "stop", "index": 7, "reason": "timeout" | "dead kernel" | "kernel failed: ..."}
    {"event": "peak", "mb": 80}     # the runner's peak memory
    {"event": "end"}

A student cell's ``cut`` is true when it printed more than :data:`OUTPUT_LIMIT` characters: the
runner kept that much and dropped the rest (and never reads one message over
:data:`MAX_MESSAGE` bytes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

#: characters kept of a cell's text output (check cells print a one-line verdict)
TEXT_LIMIT = 600
#: characters of one cell's output the runner keeps; the rest is dropped with a note
OUTPUT_LIMIT = 1_000_000
#: bytes of one message from the kernel the runner reads at all, and messages queued unread
MAX_MESSAGE, QUEUED = 8 * 2**20, 8
CUT_NOTE = "[the grader cut this cell's output here: it printed more than {limit} characters]"


def _text(outputs: list[Any]) -> str:
    parts = []
    for out in outputs:
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "".join(parts).strip()[:TEXT_LIMIT]


def _size(msg: dict[str, Any]) -> int:
    content = msg.get("content", {})
    if "text" in content:
        return len(content["text"])
    data = content.get("data", {})
    return sum(len(v) if isinstance(v, str) else 1000 for v in data.values()) + len(
        str(content.get("traceback", ""))
    )


def _error(outputs: list[Any]) -> dict[str, str] | None:
    for out in outputs:
        if out.get("output_type") == "error":
            return {"ename": str(out.get("ename", "")), "evalue": str(out.get("evalue", ""))}
    return None


def _log(stream: TextIO, **event: Any) -> None:
    stream.write(json.dumps(event, ensure_ascii=False) + "\n")
    stream.flush()


def _manager(spec: Path, box: Path) -> Any:
    """A kernel manager whose kernel starts in the sandbox of ``spec``, its files in ``box``."""
    import zmq
    from jupyter_client.manager import AsyncKernelManager

    from argnb.exercises.sandbox import SANDBOX_UID, jail_command

    class JailedKernelManager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            cmd = super().format_kernel_cmd(extra_arguments)
            if os.geteuid() == 0:  # the sandbox user must read its own connection file
                os.chown(self.connection_file, SANDBOX_UID, SANDBOX_UID)
            return [*jail_command(spec), *cmd]

        # the kernel's folder is the student's once a cell has run: nothing is removed through
        # it (a planted link would lead there); the grader removes the scratch folder instead
        def cleanup_connection_file(self) -> None:
            pass

        def cleanup_ipc_files(self) -> None:
            pass

        def client(self, **kwargs: Any) -> Any:
            kc = super().client(**kwargs)
            # a message larger than this (one huge print) drops the connection, unread, and at
            # most a few messages wait to be read: a flood of output is dropped, not queued
            kc.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
            kc.context.setsockopt(zmq.RCVHWM, QUEUED)
            return kc

    runtime = box / ".k"  # Unix socket paths are short: keep them near the root
    runtime.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        os.chown(runtime, SANDBOX_UID, SANDBOX_UID)
    km = JailedKernelManager(transport="ipc", kernel_name="python3")
    km.connection_file = str(runtime / "kernel.json")
    km.ip = str(runtime / "kernel-ipc")
    return km


def _client(nb: Any, km: Any, timeout: float, cwd: Path) -> Any:
    """An nbclient client that keeps at most :data:`OUTPUT_LIMIT` characters of a cell's output."""
    from nbclient import NotebookClient
    from nbformat.v4 import new_output

    class BoundedClient(NotebookClient):
        kept: dict[int, int] = {}  # noqa: RUF012  (one client per process)

        def output(self, outs: list, msg: dict, display_id: Any, cell_index: int) -> Any:
            used = self.kept.get(cell_index, 0)
            if used > OUTPUT_LIMIT:
                return None
            used += _size(msg)
            self.kept[cell_index] = used
            if used > OUTPUT_LIMIT:
                note = CUT_NOTE.format(limit=OUTPUT_LIMIT)
                outs.append(new_output("stream", name="stderr", text=note + "\n"))
                self.kept[cell_index] = OUTPUT_LIMIT + 1
                return None
            return super().output(outs, msg, display_id, cell_index)

    return BoundedClient(
        nb,
        km=km,
        timeout=max(1, int(timeout)),
        startup_timeout=max(30, int(timeout)),
        allow_errors=True,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        shutdown_kernel="immediate",
    )


class Checker:
    """The checker process (:mod:`.checker`) in its sandbox, its verdicts read as they come."""

    def __init__(self, spec: Path, job: Path, stderr: Path) -> None:
        from argnb.exercises.sandbox import jail_command

        self.control, theirs = socket.socketpair()
        cmd = [*jail_command(spec), sys.executable, "-m", "argnb.exercises.checker", str(job)]
        with stderr.open("wb") as err:
            self.proc = subprocess.Popen(cmd, stdin=theirs, stdout=subprocess.PIPE, stderr=err)
        theirs.close()
        self.verdicts: list[dict[str, Any]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with contextlib.suppress(ValueError):
                self.verdicts.append(json.loads(line))

    def hand_over(self, listener: socket.socket, done: threading.Event) -> None:
        """Pass the kernel's connection on (or an empty message when it never connected)."""
        conn = None
        listener.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = listener.accept()
                break
            except TimeoutError:
                continue
            except OSError:
                break
        with contextlib.suppress(OSError):
            if conn is None:
                self.control.sendall(b"n")
            else:
                socket.send_fds(self.control, [b"k"], [conn.fileno()])
                conn.close()

    def finish(self, wait: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=wait)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=5)
        self.control.close()


def _serve(client: Any, where: dict[str, str], checker: Checker) -> str | None:
    """Let the kernel answer the checker until it is done; why the kernel stopped, if it did.

    ``where``: the socket's path here (``host``, in a folder only the grader writes) and in the
    kernel's sandbox (``inside``)."""
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from nbformat.v4 import new_code_cell

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(where["host"])
    os.chmod(where["host"], 0o666)  # any user may connect; the folder is ours alone
    listener.listen(1)
    done = threading.Event()
    passing = threading.Thread(target=checker.hand_over, args=(listener, done), daemon=True)
    passing.start()
    cell = new_code_cell(
        f"__import__('argnb.exercises.serve', fromlist=['loop']).loop({where['inside']!r})"
    )
    client.nb.cells.append(cell)
    reason = None
    try:
        client.execute_cell(cell, len(client.nb.cells) - 1)
    except CellTimeoutError:
        reason = "timeout"
    except DeadKernelError:
        reason = "dead kernel"
    finally:
        done.set()
        passing.join()
        listener.close()
    return reason


def _watchdog(km: Any, limit_mb: int, done: threading.Event) -> None:
    """Where no control group can be made: end the sandbox when all its processes together
    hold more than ``limit_mb`` of memory (checked twice a second)."""
    import signal

    from argnb.exercises.cgroups import tree_rss

    while not done.wait(0.5):
        proc = getattr(getattr(km, "provisioner", None), "process", None)
        if proc is None:
            continue
        total, pids = tree_rss(proc.pid)
        if total > limit_mb * 2**20:
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)


def _peak_mb() -> int:
    """This runner's peak resident memory (MB): what a student's output cost it."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def _die_with_parent() -> None:
    """The runner ends when the grader does (SIGKILL included), and its sandboxes with it."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    if os.getppid() == 1:
        sys.exit(1)


def run(
    notebook: Path,
    log: Path,
    spec: Path,
    box: Path,
    timeout: float,
    checker_spec: Path | None = None,
    job: Path | None = None,
    watchdog_mb: int | None = None,
) -> int:
    """Execute ``notebook`` in the sandbox of ``spec`` within ``timeout`` seconds in all; its
    checks in the checker of ``checker_spec`` (``job``: what the checker runs)."""
    checker = None
    if checker_spec and job and json.loads(job.read_text(encoding="utf-8")).get("checks"):
        # first, so that its imports (the solution's) overlap with the runner's and the kernel's
        checker = Checker(checker_spec, job, log.with_name("checker-stderr.txt"))
    import nbformat
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    nb = nbformat.read(notebook, as_version=4)
    config = json.loads(spec.read_text(encoding="utf-8"))
    cwd = Path(config["chdir"])
    deadline = time.monotonic() + timeout
    checks = [i for i, c in enumerate(nb.cells) if "check" in c.metadata.get("argnb", {})]
    first_check = checks[0] if checks else len(nb.cells)
    km = _manager(spec, box)
    client = _client(nb, km, timeout, cwd)
    done = threading.Event()
    if watchdog_mb:
        threading.Thread(target=_watchdog, args=(km, watchdog_mb, done), daemon=True).start()
    with log.open("a", encoding="utf-8") as stream:
        index = 0
        try:
            with client.setup_kernel():
                _log(stream, event="start")
                for index, cell in enumerate(nb.cells[:first_check]):
                    if cell.cell_type != "code":
                        continue
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise CellTimeoutError("notebook time limit")
                    client.timeout = max(1, int(left))
                    t0 = time.monotonic()
                    client.execute_cell(cell, index)
                    err = _error(cell.outputs)
                    _log(
                        stream,
                        event="cell",
                        index=index,
                        status="error" if err else "ok",
                        **(err or {}),
                        text=_text(cell.outputs),
                        seconds=round(time.monotonic() - t0, 3),
                        cut=client.kept.get(index, 0) > OUTPUT_LIMIT,
                    )
                if checker is not None:
                    client.timeout = max(1, int(deadline - time.monotonic()))
                    index = first_check
                    reason = _serve(client, config["socket"], checker)
                    checker.finish(wait=2 if reason == "timeout" else 30)
                    if not _log_verdicts(stream, checker, checks, reason):
                        return 0
        except CellTimeoutError:
            _log(stream, event="stop", index=index, reason="timeout")
            return 0
        except DeadKernelError:
            _log(stream, event="stop", index=index, reason="dead kernel")
            return 0
        except RuntimeError as exc:  # kernel failed to start, or died before the first cell
            _log(stream, event="stop", index=index, reason=f"kernel failed: {exc}"[:300])
            return 0
        finally:
            done.set()
            if checker is not None:
                checker.finish(wait=0)
            _log(stream, event="peak", mb=_peak_mb())
        _log(stream, event="end")
    return 0


def _log_verdicts(stream: TextIO, checker: Checker, checks: list[int], reason: str | None) -> bool:
    """Log the checker's verdicts; False when something stopped the checks early."""
    got = {v.get("index"): v for v in checker.verdicts if isinstance(v, dict)}
    for index in checks:
        verdict = got.get(index)
        if verdict is None or "stop" in verdict:
            why = (verdict or {}).get("stop") or reason
            if not why:
                why = f"the checker failed (exit {checker.proc.returncode})"
            _log(stream, event="stop", index=index, reason=str(why)[:300])
            return False
        ok = verdict.get("status") == "ok"
        _log(
            stream,
            event="cell",
            index=index,
            status="ok" if ok else "error",
            ename=str(verdict.get("ename", ""))[:80],
            evalue=str(verdict.get("evalue", ""))[:2000],
            text=str(verdict.get("text", ""))[:TEXT_LIMIT],
            checked=True,
        )
    return True


#: optional imports of jsonschema's format checkers that cost the runner seconds of CPU per
#: notebook (``rfc3987_syntax`` builds its grammar's parsers on import; ``isoduration`` pulls in
#: ``arrow``): nbformat imports jsonschema, and no notebook schema has a ``format`` to check
SLOW_IMPORTS = ("rfc3987_syntax", "isoduration")


def skip_slow_imports() -> None:
    """In a process of the grader's own (the runner, ``python -m argnb.exercises``), never in
    one it shares: the :data:`SLOW_IMPORTS` fail, and jsonschema (which imports each under
    ``suppress(ImportError)``) goes on without those two format checkers."""
    for name in SLOW_IMPORTS:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebook", type=Path)
    p.add_argument("log", type=Path)
    p.add_argument("spec", type=Path)
    p.add_argument("box", type=Path)
    p.add_argument("--checker", nargs=2, type=Path, metavar=("SPEC", "JOB"), default=None)
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--watchdog-mb", type=int, default=None)
    args = p.parse_args(argv)
    _die_with_parent()
    skip_slow_imports()
    cspec, job = args.checker or (None, None)
    return run(
        args.notebook, args.log, args.spec, args.box, args.timeout, cspec, job, args.watchdog_mb
    )


if __name__ == "__main__":
    code = main()
    # the log is closed and the checker has ended; the kernel ends with this process (bwrap's
    # --die-with-parent). The interpreter's teardown (zmq's context, the modules) took ~0.4 s
    # per notebook, with nothing left to write but the standard streams
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
