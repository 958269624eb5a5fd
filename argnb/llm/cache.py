"""On-disk response cache, so re-running a notebook is instant and costs no tokens.

Keyed by what determines an answer: backend identity (name, model, base URL -- never the API
key), the messages, the JSON schema and the generation options. Stored in SQLite (stdlib, safe
across processes with WAL) under the user's cache directory.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from argnb.errors import ConfigError
from argnb.llm.types import Message, Options, Reply

CLEAR_HINT = "argnb cache clear   (deletes the file; cached replies only save time)"


def default_cache_path() -> Path:
    """``$ARGNB_CACHE_DIR/responses.sqlite`` or the platform's user cache dir."""
    import os

    from platformdirs import user_cache_dir

    root = os.environ.get("ARGNB_CACHE_DIR") or user_cache_dir("argnb")
    return Path(root) / "responses.sqlite"


def cache_key(
    identity: dict[str, Any], messages: list[Message], schema: dict | None, options: Options
) -> str:
    """A stable hash of everything that determines a reply."""
    payload = {
        "identity": identity,
        "messages": [m.model_dump() for m in messages],
        "schema": schema,
        "options": options.model_dump(),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def unreadable(path: Path, exc: BaseException) -> ConfigError:
    """The one-line error for a cache file that SQLite cannot use."""
    return ConfigError(f"the response cache {path} is unreadable ({exc})", hint=CLEAR_HINT)


class ResponseCache:
    """A tiny SQLite key -> reply store.

    A damaged file (a crash mid-write on a network drive, a stray copy over it) raises a
    :class:`~argnb.errors.ConfigError` saying to run ``argnb cache clear``, which deletes it.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            with self._lock, self._conn:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)"
                )
        except sqlite3.DatabaseError as exc:
            raise unreadable(self.path, exc) from exc

    key = staticmethod(cache_key)

    def _run(self, sql: str, args: tuple = (), *, commit: bool = False) -> Any:
        try:
            with self._lock:
                if commit:
                    with self._conn:
                        return self._conn.execute(sql, args).fetchone()
                return self._conn.execute(sql, args).fetchone()
        except sqlite3.DatabaseError as exc:
            raise unreadable(self.path, exc) from exc

    def get(self, key: str) -> Reply | None:
        row = self._run("SELECT reply FROM replies WHERE key = ?", (key,))
        if row is None:
            return None
        try:
            reply = Reply.model_validate_json(row[0])
        except ValueError:  # a row written by something else: a miss, not a crash
            return None
        reply.cached = True
        return reply

    def put(self, key: str, reply: Reply) -> None:
        data = reply.model_dump_json(exclude={"parsed", "cached"})
        self._run(
            "INSERT OR REPLACE INTO replies (key, reply) VALUES (?, ?)", (key, data), commit=True
        )

    def __len__(self) -> int:
        return self._run("SELECT COUNT(*) FROM replies")[0]

    def clear(self) -> int:
        """Delete every cached reply; return how many there were."""
        n = len(self)
        self._run("DELETE FROM replies", commit=True)
        self._run("VACUUM")
        return n

    def close(self) -> None:
        self._conn.close()


def remove_cache_file(path: str | Path | None = None) -> bool:
    """Delete the cache database (and SQLite's side files) without opening it: the way out when
    it is damaged. True when something was deleted."""
    p = Path(path) if path else default_cache_path()
    if p.is_dir():
        raise ConfigError(
            f"the response cache path {p} is a directory", hint=f"move it away: rm -r {p}"
        )
    removed = False
    for f in (p, p.with_name(p.name + "-wal"), p.with_name(p.name + "-shm")):
        if f.exists():
            f.unlink()
            removed = True
    return removed
