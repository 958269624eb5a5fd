"""Run one graded notebook cell by cell and log each cell's outcome as it finishes.

This is the grader's child process (``python -m argnb.exercises.runner NB LOG SPEC BOX --timeout S``),
one per notebook. It runs **outside** the sandbox: only the kernel runs inside (started through
:mod:`.jail` with the spec the grader wrote), and this process talks to it over Unix sockets in
the submission's scratch folder. The notebook (hidden checks and their tokens included) and the
log sit in the grader's private folder, which the kernel cannot see, so student code can neither
read the checks before they are sent nor write a result of its own.

One JSON line per event, flushed, so whatever ran before a timeout or a crash is kept::

    {"event": "start"}
    {"event": "cell", "index": 4, "status": "ok" | "error", "ename", "evalue", "text", "seconds",
     "proof": true | false}        # proof: the check's token came back (check cells only)
    {"event": "stop", "index": 7, "reason": "timeout" | "dead kernel" | "kernel failed: ..."}
    {"event": "end"}
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

#: characters kept of a cell's text output (check cells print a one-line verdict)
TEXT_LIMIT = 600


def _text(outputs: list[Any], token: str | None) -> str:
    parts = []
    for out in outputs:
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            parts.append(out.get("data", {}).get("text/plain", ""))
    text = "".join(parts)
    if token:
        text = text.replace(token, "")
    return text.strip()[:TEXT_LIMIT]


def proof(outputs: list[Any], token: str) -> bool:
    """Whether ``token`` came back on its own line of the cell's standard output."""
    lines = "".join(
        out.get("text", "")
        for out in outputs
        if out.get("output_type") == "stream" and out.get("name") == "stdout"
    ).splitlines()
    return token in lines


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
    from jupyter_client.manager import AsyncKernelManager

    from argnb.exercises.sandbox import SANDBOX_UID, jail_command

    class JailedKernelManager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
            cmd = super().format_kernel_cmd(extra_arguments)
            if os.geteuid() == 0:  # the sandbox user must read its own connection file
                os.chown(self.connection_file, SANDBOX_UID, SANDBOX_UID)
            return [*jail_command(spec), *cmd]

    runtime = box / ".k"  # Unix socket paths are short: keep them near the root
    runtime.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        os.chown(runtime, SANDBOX_UID, SANDBOX_UID)
    km = JailedKernelManager(transport="ipc", kernel_name="python3")
    km.connection_file = str(runtime / "kernel.json")
    km.ip = str(runtime / "kernel-ipc")
    return km


def run(notebook: Path, log: Path, spec: Path, box: Path, timeout: float) -> int:
    """Execute ``notebook`` in the sandbox of ``spec`` within ``timeout`` seconds in all."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    nb = nbformat.read(notebook, as_version=4)
    config = json.loads(spec.read_text(encoding="utf-8"))
    cwd = Path(config["chdir"])
    deadline = time.monotonic() + timeout
    km = _manager(spec, box)
    client = NotebookClient(
        nb,
        km=km,
        timeout=max(1, int(timeout)),
        startup_timeout=max(30, int(timeout)),
        allow_errors=True,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        shutdown_kernel="immediate",
    )
    with log.open("a", encoding="utf-8") as stream:
        index = 0
        try:
            with client.setup_kernel():
                _log(stream, event="start")
                for index, cell in enumerate(nb.cells):
                    if cell.cell_type != "code":
                        continue
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise CellTimeoutError("notebook time limit")
                    client.timeout = max(1, int(left))
                    t0 = time.monotonic()
                    client.execute_cell(cell, index)
                    err = _error(cell.outputs)
                    token = cell.metadata.get("argnb", {}).get("token")
                    event: dict[str, Any] = {
                        "event": "cell",
                        "index": index,
                        "status": "error" if err else "ok",
                        **(err or {}),
                        "text": _text(cell.outputs, token),
                        "seconds": round(time.monotonic() - t0, 3),
                    }
                    if token:
                        event["proof"] = proof(cell.outputs, token)
                    _log(stream, **event)
        except CellTimeoutError:
            _log(stream, event="stop", index=index, reason="timeout")
            return 0
        except DeadKernelError:
            _log(stream, event="stop", index=index, reason="dead kernel")
            return 0
        except RuntimeError as exc:  # kernel failed to start, or died before the first cell
            _log(stream, event="stop", index=index, reason=f"kernel failed: {exc}"[:300])
            return 0
        _log(stream, event="end")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebook", type=Path)
    p.add_argument("log", type=Path)
    p.add_argument("spec", type=Path)
    p.add_argument("box", type=Path)
    p.add_argument("--timeout", type=float, default=60.0)
    args = p.parse_args(argv)
    return run(args.notebook, args.log, args.spec, args.box, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
