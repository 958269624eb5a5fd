"""On-disk response cache, so re-running a notebook is instant and costs no tokens.

Keyed by what determines an answer: backend identity (name, model, base URL -- never the API
key), the messages, the JSON schema and the generation options. Stored in SQLite (stdlib, safe
across processes with WAL) under the user's cache directory.

Embeddings live in the same table, one row per text (:func:`embed_key`: the backend's embedding
identity and the text), the vector as little-endian float32 in base64 inside a small JSON object
(:func:`encode_vector`; 3 KB for SmolLM2's 576 dimensions), so ``argnb cache clear`` and the
lessons' recordings handle them like replies. A row that does not decode is a miss.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import sqlite3
import sys
import threading
from array import array
from collections.abc import Iterable, Mapping, Sequence
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


def embed_key(identity: dict[str, Any], text: str) -> str:
    """A stable hash of what determines an embedding: the backend's embedding identity
    (:meth:`argnb.llm.base.Backend.embed_identity`, never a key) and the text."""
    payload = {"identity": identity, "embed": text}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


#: the one vector format: float32, little-endian, base64
VECTOR_FORMAT = "f32le-b64"


def _f32(values: Iterable[float]) -> array:
    a = array("f", values)
    if sys.byteorder != "little":  # pragma: no cover - every platform we run on is little-endian
        a.byteswap()
    return a


def as_float32(vector: Sequence[float]) -> list[float]:
    """``vector`` as the cache gives it back (float32 precision), so a hit equals the miss that
    stored it; unchanged when float32 cannot hold it (then it is not stored either)."""
    try:
        return array("f", vector).tolist()
    except (OverflowError, TypeError):
        return list(vector)


def encode_vector(vector: Sequence[float]) -> str:
    """A cache row for one embedding: ``{"format": "f32le-b64", "dim": n, "vector": "..."}``.

    Raises ValueError for an empty vector or a value float32 cannot hold finitely.
    """
    try:
        a = _f32(float(x) for x in vector)
    except OverflowError as exc:
        raise ValueError(f"not a float32 vector: {exc}") from None
    if not a or not all(math.isfinite(x) for x in a):
        raise ValueError("an embedding must be a non-empty vector of finite numbers")
    data = base64.b64encode(a.tobytes()).decode("ascii")
    return json.dumps({"format": VECTOR_FORMAT, "dim": len(a), "vector": data})


def decode_vector(row: str) -> list[float] | None:
    """The vector of an :func:`encode_vector` row; None for anything else (a miss, not a crash)."""
    try:
        obj = json.loads(row)
        if not isinstance(obj, dict) or obj.get("format") != VECTOR_FORMAT:
            return None
        dim, data = obj.get("dim"), obj.get("vector")
        if type(dim) is not int or dim < 1 or not isinstance(data, str):
            return None
        raw = base64.b64decode(data.encode("ascii"), validate=True)
    except (ValueError, TypeError, RecursionError):  # binascii.Error is a ValueError
        return None
    if len(raw) != 4 * dim:
        return None
    a = array("f")
    a.frombytes(raw)
    if sys.byteorder != "little":  # pragma: no cover
        a.byteswap()
    vec = a.tolist()
    return vec if all(math.isfinite(x) for x in vec) else None


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

    def _run(self, sql: str, args: tuple = (), *, commit: bool = False, rows: bool = False) -> Any:
        try:
            with self._lock:
                if commit:
                    with self._conn:
                        return self._conn.execute(sql, args).fetchone()
                cur = self._conn.execute(sql, args)
                return cur.fetchall() if rows else cur.fetchone()
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

    def get_vectors(self, keys: Iterable[str]) -> dict[str, list[float]]:
        """The cached embeddings among ``keys`` (:func:`embed_key`); rows that do not decode
        are left out, so they are computed again and overwritten."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, list[float]] = {}
        for i in range(0, len(wanted), 500):  # SQLite's limit on parameters is 999 or more
            part = wanted[i : i + 500]
            marks = ",".join("?" * len(part))
            sql = f"SELECT key, reply FROM replies WHERE key IN ({marks})"
            for key, row in self._run(sql, tuple(part), rows=True):
                vec = decode_vector(row) if isinstance(row, str) else None
                if vec is not None:
                    found[key] = vec
        return found

    def put_vectors(self, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store embeddings by :func:`embed_key`, all in one transaction (one that float32 cannot
        hold, e.g. with a NaN, is not stored: it is computed again next time)."""
        data = []
        for key, vec in vectors.items():
            with contextlib.suppress(ValueError):
                data.append((key, encode_vector(vec)))
        if not data:
            return
        try:
            with self._lock, self._conn:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO replies (key, reply) VALUES (?, ?)", data
                )
        except sqlite3.DatabaseError as exc:
            raise unreadable(self.path, exc) from exc

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
