"""Run an async function over many items: bounded concurrency, progress bar, resumable output.

Benchmarks over hundreds of items take long on a laptop. Each finished item is appended to a
JSON Lines file at once (flushed and fsynced), so a crash or Ctrl-C loses nothing; running again
with the same file skips the items already there.

Resuming is guarded: a run given a ``config`` (what produced the results: method, backends,
models, prompts) stamps every record with the configuration's key and a fingerprint of its item,
keeps the configuration next to the file (``<out>.config.json``) and refuses to continue a file
made by another configuration, or from other data under the same ids. (A larger or smaller set
of the same items resumes: ``--limit 10`` first, then everything.) A lock file keeps two runs from
writing one results file at once, and readers keep one record per id.
"""

from __future__ import annotations

import asyncio
import hashlib
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


def read_jsonl(path: str | Path, *, key: str | None = "id") -> list[dict[str, Any]]:
    """Records of a JSON Lines results file; a torn last line (crash mid-write) is ignored and,
    with ``key``, only the first record of each id is kept (a file two runs wrote twice still
    counts every item once)."""
    from argnb.datafiles import DataError, read_text

    p = Path(path)
    if not p.exists():
        return []
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    lines = read_text(p, "results file").splitlines()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines):
                continue  # torn by a crash mid-write: the next run redoes that item
            raise DataError(
                f"{p}:{n}: not a JSON record", hint="is this a results file? use another --out"
            ) from None
        if not isinstance(rec, dict):
            raise DataError(f"{p}:{n}: not a JSON object", hint="is this a results file?")
        if key is not None and key in rec:
            if str(rec[key]) in seen:
                continue
            seen.add(str(rec[key]))
        out.append(rec)
    return out


def config_key(config: dict[str, Any]) -> str:
    """A short hash of a run's configuration, stored in every record of its results file."""
    blob = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def fingerprint(item: Item) -> str:
    """A short hash of one item's content: the same id with other content is other data."""
    blob = json.dumps(item, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def config_path(out: str | Path) -> Path:
    """Where a run's configuration is kept, next to its results file."""
    return Path(f"{out}.config.json")


def read_config(out: str | Path) -> dict[str, Any] | None:
    """The configuration kept next to a results file (None when there is none)."""
    p = config_path(out)
    if not p.exists():
        return None
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


def guard_resume(out: Path, key: str, *, runs: str = "runs", error: type | None = None) -> None:
    """Refuse to mix two configurations (or two datasets) in one results file.

    ``runs`` names what would be mixed in the message, ``error`` the ArgnbError subclass raised.
    """
    from argnb.errors import ArgnbError

    other = {str(r.get("config")) for r in read_jsonl(out, key=None)} - {key}
    if other:
        raise (error or ArgnbError)(
            f"{out} holds results of a different configuration or data "
            f"({', '.join(sorted(other))}; this run is {key}): resuming there would mix two {runs}",
            hint="use another --out file, or delete this one to start over",
        )


def _guard_data(
    out: Path, done: dict[str, dict[str, Any]], items: list[Item], keyf: KeyFn, error: type | None
) -> None:
    """Refuse results made from other data under the same ids."""
    from argnb.errors import ArgnbError

    for it in items:
        rec = done.get(keyf(it))
        if rec is not None and "data" in rec and rec["data"] != fingerprint(it):
            raise (error or ArgnbError)(
                f"{out} was made from other data with the same ids (item {keyf(it)!r} differs)",
                hint="use another --out file, or delete this one to start over",
            )


def _lock(out: Path) -> Any:
    """An exclusive lock on ``out`` for the whole run (a second writer is refused at once)."""
    from argnb.errors import ArgnbError
    from argnb.locks import FileLock, LockTaken

    lock = FileLock(f"{out}.lock")  # removed again on release: a finished run leaves no .lock
    try:
        lock.acquire(timeout=0)
    except LockTaken:
        raise ArgnbError(
            f"another run is writing to {out}",
            hint="wait for it to finish, or write to another --out file",
        ) from None
    return lock


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
    config: dict[str, Any] | None = None,
    guard: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Apply ``fn`` to every item not yet in ``out``; return all results in input order.

    Each result gets the item's key under ``"id"`` (unless it has one). An exception from ``fn``
    stops the run (pending items are cancelled); everything finished so far is already on disk.
    With ``config`` (and ``out``), results are stamped and resuming is guarded (module docstring;
    ``guard`` passes :func:`guard_resume`'s keywords).
    """
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    keyf = _key_fn(key)
    items = list(items)
    done: dict[str, dict[str, Any]] = {}
    writer = lock = None
    stamp = None
    if config is not None:
        stamp = config_key(config)
    if out is not None:
        out = Path(out)
        lock = _lock(out)
        try:
            for rec in read_jsonl(out, key=None):
                done.setdefault(str(rec.get("id")), rec)
            if stamp is not None:
                guard_resume(out, stamp, **(guard or {}))
                _guard_data(out, done, items, keyf, (guard or {}).get("error"))
                config_path(out).write_text(
                    json.dumps({"key": stamp, **config}, indent=1, default=str), encoding="utf-8"
                )
            writer = JsonlWriter(out)
        except BaseException:
            lock.release()
            raise
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
            if stamp is not None:
                result["config"], result["data"] = stamp, fingerprint(item)
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
        if lock is not None:
            lock.release()
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
