"""Run an async function over many items: bounded concurrency, progress bar, resumable output.

Benchmarks over hundreds of items take long on a laptop. Each finished item is appended to a
JSON Lines file at once (flushed and fsynced), so a crash or Ctrl-C loses nothing; running again
with the same file skips the items already there.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

Item = dict[str, Any]
KeyFn = Callable[[Item], str]


def _key_fn(key: str | KeyFn) -> KeyFn:
    if callable(key):
        return key
    return lambda item: str(item[key])


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Records of a JSON Lines file; a torn last line (crash mid-write) is ignored."""
    p = Path(path)
    if not p.exists():
        return []
    out = []
    for line in p.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def _heal(path: Path) -> None:
    """Cut a partial last line so the next append starts on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    with path.open("r+b") as f:
        f.truncate(cut)


class JsonlWriter:
    """Append-only, crash-safe writer (one record per line)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _heal(self.path)
        self._f = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str)
        with self._lock:
            self._f.write(line + "\n")
            self._f.flush()
            os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()


def _progress(total: int, initial: int, desc: str | None, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=desc, disable=not enabled, leave=True)


async def arun_batch(
    fn: Callable[[Item], Awaitable[dict[str, Any]]],
    items: Iterable[Item],
    *,
    out: str | Path | None = None,
    key: str | KeyFn = "id",
    concurrency: int = 4,
    desc: str | None = None,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Apply ``fn`` to every item not yet in ``out``; return all results in input order.

    Each result gets the item's key under ``"id"`` (unless it has one). An exception from ``fn``
    stops the run (pending items are cancelled); everything finished so far is already on disk.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    keyf = _key_fn(key)
    items = list(items)
    done: dict[str, dict[str, Any]] = {}
    writer = None
    if out is not None:
        for rec in read_jsonl(out):
            done[str(rec.get("id"))] = rec
        writer = JsonlWriter(out)
    todo = [it for it in items if keyf(it) not in done]
    bar = _progress(len(items), len(items) - len(todo), desc, progress)
    queue: asyncio.Queue[Item] = asyncio.Queue()
    for it in todo:
        queue.put_nowait(it)

    async def worker() -> None:
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            result = dict(await fn(item))
            result.setdefault("id", keyf(item))
            done[keyf(item)] = result
            if writer is not None:
                writer.write(result)
            bar.update(1)

    workers = [asyncio.create_task(worker()) for _ in range(min(concurrency, len(todo)) or 0)]
    try:
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
        bar.close()
        if writer is not None:
            writer.close()
    return [done[keyf(it)] for it in items if keyf(it) in done]


def run_sync(coro: Awaitable[Any]) -> Any:
    """Run a coroutine from sync code, also inside Jupyter (whose loop is already running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)  # type: ignore[arg-type]
        except BaseException as exc:
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def run_batch(
    fn: Callable[[Item], Awaitable[dict[str, Any]]],
    items: Iterable[Item],
    **kw: Any,
) -> list[dict[str, Any]]:
    """Sync entry point of :func:`arun_batch` (works in scripts and notebooks)."""
    return run_sync(arun_batch(fn, items, **kw))
