"""Run one notebook cell by cell in a fresh kernel and log each cell's outcome as it finishes.

This is the grader's child process (``python -m argnb.exercises.runner NB LOG --timeout S``),
started once per notebook inside the sandbox (:mod:`.sandbox`). It writes one JSON line per event
to ``LOG`` and flushes it, so whatever ran before a timeout or a kernel crash is kept even when
the grader has to kill this process. Events::

    {"event": "start", "kernel_pid": 123}
    {"event": "cell", "index": 4, "status": "ok" | "error", "ename", "evalue", "text", "seconds"}
    {"event": "stop", "index": 7, "reason": "timeout" | "dead kernel" | "kernel failed to start"}
    {"event": "end"}
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

#: characters kept of a cell's text output (check cells print a one-line verdict)
TEXT_LIMIT = 600


def _text(outputs: list[Any]) -> str:
    parts = []
    for out in outputs:
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "".join(parts).strip()[:TEXT_LIMIT]


def _error(outputs: list[Any]) -> dict[str, str] | None:
    for out in outputs:
        if out.get("output_type") == "error":
            return {"ename": out.get("ename", ""), "evalue": out.get("evalue", "")}
    return None


def _log(stream: TextIO, **event: Any) -> None:
    stream.write(json.dumps(event, ensure_ascii=False) + "\n")
    stream.flush()


def run(notebook: Path, log: Path, timeout: float) -> int:
    """Execute ``notebook`` (cwd = its folder) within ``timeout`` seconds in all."""
    import nbformat
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    nb = nbformat.read(notebook, as_version=4)
    deadline = time.monotonic() + timeout
    # Unix socket paths are limited to ~100 characters: keep them short, next to the log
    runtime = log.resolve().parent / "k"
    runtime.mkdir(exist_ok=True)
    km = AsyncKernelManager(transport="ipc", kernel_name="python3")
    km.connection_file = str(runtime / "kernel.json")
    client = NotebookClient(
        nb,
        km=km,
        timeout=max(1, int(timeout)),
        startup_timeout=max(30, int(timeout)),
        allow_errors=True,
        kernel_name="python3",
        resources={"metadata": {"path": str(Path(notebook).resolve().parent)}},
        shutdown_kernel="immediate",
    )
    with log.open("a", encoding="utf-8") as stream:
        index = 0
        try:
            with client.setup_kernel():
                pid = getattr(km.provisioner, "pid", None) if km.provisioner else None
                _log(stream, event="start", kernel_pid=pid)
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
                    _log(
                        stream,
                        event="cell",
                        index=index,
                        status="error" if err else "ok",
                        **(err or {}),
                        text=_text(cell.outputs),
                        seconds=round(time.monotonic() - t0, 3),
                    )
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
    p.add_argument("--timeout", type=float, default=60.0)
    args = p.parse_args(argv)
    return run(args.notebook, args.log, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
