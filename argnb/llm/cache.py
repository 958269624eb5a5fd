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

from argnb.llm.base import Message, Options, Reply


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


class ResponseCache:
    """A tiny SQLite key -> reply store."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        with self._lock, self._conn:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)"
            )

    key = staticmethod(cache_key)

    def get(self, key: str) -> Reply | None:
        with self._lock:
            row = self._conn.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        reply = Reply.model_validate_json(row[0])
        reply.cached = True
        return reply

    def put(self, key: str, reply: Reply) -> None:
        data = reply.model_dump_json(exclude={"parsed", "cached"})
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO replies (key, reply) VALUES (?, ?)", (key, data)
            )

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0]

    def clear(self) -> int:
        """Delete every cached reply; return how many there were."""
        n = len(self)
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM replies")
        with self._lock:
            self._conn.execute("VACUUM")
        return n

    def close(self) -> None:
        self._conn.close()
