"""The argumentative memory: one SQLite file of utterances, their schemes, labels and embeddings.

A debater recalls from it (:mod:`argnb.debate.retrieve`). It grows incrementally -- add a corpus
or one debate without rebuilding -- and every derived field says what made it: an annotation
row names the backend and model (and keeps the agents' transcript turns, so its cost is known),
an embedding row names the embedding model. Several embedding models can live side by side.

Tables (see :data:`SCHEMA`): ``records`` (the utterances), ``annotations`` (who annotated a
record, valid or not, the turns), ``labels`` (one row per used scheme with its quality label,
NULL when the scorer gave none), ``embeddings`` (float32 unit vectors per record and model),
``embedders`` (dimension per model) and ``meta`` (format version, a generation counter that
every write bumps so cached indexes know when they are stale).

    >>> s = Store()
    >>> s.add([Record(source="ours", debate_id="d1", topic="T", stance="pro", text="Because X.")])
    AddResult(added=1, existing=0)
    >>> s.count(), s.info().by_stance
    (1, {'pro': 1})
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, field_validator

from argnb.errors import ArgnbError
from argnb.transcript import Turn

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

FORMAT_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    id        TEXT PRIMARY KEY,
    source    TEXT NOT NULL,
    debate_id TEXT NOT NULL,
    topic     TEXT NOT NULL,
    stance    TEXT NOT NULL CHECK (stance IN ('pro', 'con')),
    speaker   TEXT NOT NULL DEFAULT '',
    turn      INTEGER NOT NULL DEFAULT 0,
    part      INTEGER NOT NULL DEFAULT 0,
    text      TEXT NOT NULL,
    added_at  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS records_debate ON records (source, debate_id);
CREATE TABLE IF NOT EXISTS annotations (
    record_id  TEXT PRIMARY KEY REFERENCES records (id) ON DELETE CASCADE,
    backend    TEXT NOT NULL,
    model      TEXT NOT NULL,
    valid      INTEGER NOT NULL,
    error      TEXT NOT NULL DEFAULT '',
    turns      TEXT NOT NULL DEFAULT '[]',
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS labels (
    record_id TEXT NOT NULL REFERENCES annotations (record_id) ON DELETE CASCADE,
    scheme    TEXT NOT NULL,
    label     TEXT CHECK (label IS NULL OR label IN ('poor', 'general', 'good', 'excellent')),
    reason    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (record_id, scheme)
);
CREATE TABLE IF NOT EXISTS embedders (
    model      TEXT PRIMARY KEY,
    dim        INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
    model     TEXT NOT NULL REFERENCES embedders (model),
    vector    BLOB NOT NULL,
    PRIMARY KEY (model, record_id)
);
"""


class Record(BaseModel):
    """One utterance unit of the memory (a debater's turn, or one paragraph unit of it)."""

    id: str = ""
    source: str = Field(min_length=1)
    debate_id: str = Field(min_length=1)
    topic: str = Field(min_length=1)
    stance: str
    speaker: str = ""
    turn: int = 0
    part: int = 0
    text: str = Field(min_length=1)

    @field_validator("stance")
    @classmethod
    def _stance(cls, v: str) -> str:
        if v not in ("pro", "con"):
            raise ValueError(f"stance must be 'pro' or 'con', not {v!r}")
        return v

    def model_post_init(self, _: Any) -> None:
        if not self.id:
            self.id = f"{self.source}/{self.debate_id}/{self.turn}.{self.part}"


@dataclass(frozen=True)
class AddResult:
    added: int
    existing: int


@dataclass(frozen=True)
class Annotation:
    """A record's schemes and labels as stored: ``{scheme: label or None}`` plus reasons."""

    record_id: str
    backend: str
    model: str
    valid: bool
    labels: dict[str, str | None]
    reasons: dict[str, str] = field(default_factory=dict)
    error: str = ""

    @property
    def annotator(self) -> str:
        return f"{self.backend}:{self.model}"


@dataclass(frozen=True)
class MemoryInfo:
    """What a memory holds: counts per source, stance, scheme and label; the models used."""

    path: str
    records: int
    debates: int
    by_source: dict[str, int]
    by_stance: dict[str, int]
    annotated: int
    invalid_annotations: int
    by_scheme: dict[str, int]
    by_label: dict[str, int]
    annotators: dict[str, int]
    embeddings: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def to_frame(self) -> pd.DataFrame:
        """The counts as a long table: what (source / stance / scheme / label / ...), key, count."""
        import pandas as pd

        parts = {
            "source": self.by_source,
            "stance": self.by_stance,
            "scheme": self.by_scheme,
            "label": self.by_label,
            "annotator": self.annotators,
            "embedding model": self.embeddings,
        }
        return pd.DataFrame(
            [(what, k, v) for what, d in parts.items() for k, v in d.items()],
            columns=["what", "key", "count"],
        )

    def __str__(self) -> str:
        def fmt(d: Mapping[str, int]) -> str:
            return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"

        return "\n".join(
            [
                f"memory {self.path}: {self.records} records from {self.debates} debates",
                f"  sources:     {fmt(self.by_source)}",
                f"  stances:     {fmt(self.by_stance)}",
                f"  annotated:   {self.annotated} ({self.invalid_annotations} invalid) by "
                f"{fmt(self.annotators)}",
                f"  schemes:     {fmt(self.by_scheme)}",
                f"  labels:      {fmt(self.by_label)}",
                f"  embeddings:  {fmt(self.embeddings)}",
            ]
        )


def _now() -> float:
    return time.time()


class Store:
    """The memory on disk (or in memory with ``":memory:"``). Safe to share between threads."""

    def __init__(self, path: str | Path = ":memory:", *, readonly: bool = False) -> None:
        from argnb.datafiles import sqlite_connect, sqlite_tables

        self.path = str(path)
        self.readonly = readonly
        # what caches key on: the file, or for a memory store a name no later store reuses
        # (id() is handed to the next object once this one is freed)
        self.cache_key = self.path if self.path != ":memory:" else f"mem:{uuid.uuid4().hex}"
        if self.path != ":memory:" and not readonly:
            p = Path(self.path)
            if p.is_dir():
                raise ArgnbError(f"{p} is a directory", hint="give a file name, e.g. memory.db")
            p.parent.mkdir(parents=True, exist_ok=True)
            if not os.access(p.parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
                raise _read_only(self.path)
        try:
            self._db = sqlite_connect(self.path, readonly=readonly)
            tables = sqlite_tables(self._db)
            if (tables or readonly) and not {"meta", "records"} <= tables:
                raise ArgnbError(
                    f"{self.path} is not a debate memory: an SQLite database of "
                    + (
                        f"something else (tables: {', '.join(sorted(tables)[:5])})"
                        if tables
                        else "nothing"
                    ),
                    hint="pass a new file name, or a file made by `argnb debate memory build`",
                )
            self._db.execute("PRAGMA foreign_keys = ON")
            if not readonly:
                if self.path != ":memory:":
                    self._db.execute("PRAGMA journal_mode = WAL")
                self._db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            if "readonly" in str(exc):
                raise _read_only(self.path) from None
            raise ArgnbError(
                f"{self.path} is not a debate memory ({exc})",
                hint="pass a new file name, or a file made by `argnb debate memory build`",
            ) from None
        self._lock = threading.RLock()
        version = self._meta("format_version")
        if version is None and not readonly:
            with self._write() as db:
                db.execute("INSERT INTO meta VALUES ('format_version', ?)", (str(FORMAT_VERSION),))
        elif version is None or int(version) != FORMAT_VERSION:
            raise ArgnbError(
                f"{self.path} is a debate memory of format {version}, this argnb reads "
                f"{FORMAT_VERSION}",
                hint="rebuild it with `argnb debate memory build`",
            )

    # -- plumbing ------------------------------------------------------------------------
    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"Store({self.path!r}, records={self.count()})"

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One transaction that also bumps the generation counter."""
        with self._lock, self._db:
            yield self._db
            self._db.execute(
                "INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE "
                "SET value = CAST(value AS INTEGER) + 1"
            )

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    @property
    def generation(self) -> int:
        """Bumped by every write: a cached index built at another generation is stale."""
        with self._lock:
            return int(self._meta("generation") or 0)

    # -- records -------------------------------------------------------------------------
    def add(self, records: Iterable[Record]) -> AddResult:
        """Insert records; ids already present are left as they are (adding is idempotent)."""
        rows = [
            (r.id, r.source, r.debate_id, r.topic, r.stance, r.speaker, r.turn, r.part, r.text)
            for r in records
        ]
        if not rows:
            return AddResult(0, 0)
        with self._write() as db:
            before = db.total_changes
            db.executemany(
                "INSERT OR IGNORE INTO records (id, source, debate_id, topic, stance, speaker, "
                f"turn, part, text, added_at) VALUES (?,?,?,?,?,?,?,?,?,{_now()})",
                rows,
            )
            added = db.total_changes - before
        return AddResult(added, len(rows) - added)

    def count(self) -> int:
        return self._rows("SELECT COUNT(*) FROM records")[0][0]

    def __len__(self) -> int:
        return self.count()

    def has_debate(self, source: str, debate_id: str) -> bool:
        return bool(
            self._rows(
                "SELECT 1 FROM records WHERE source = ? AND debate_id = ? LIMIT 1",
                (source, debate_id),
            )
        )

    def remove_debate(self, source: str, debate_id: str) -> int:
        """Delete a debate's records (and their annotations and embeddings)."""
        with self._write() as db:
            cur = db.execute(
                "DELETE FROM records WHERE source = ? AND debate_id = ?", (source, debate_id)
            )
            return cur.rowcount

    _COLS = "id, source, debate_id, topic, stance, speaker, turn, part, text"

    def _record(self, row: tuple) -> Record:
        return Record(**dict(zip(self._COLS.split(", "), row, strict=True)))

    def get(self, record_id: str) -> Record:
        rows = self._rows(f"SELECT {self._COLS} FROM records WHERE id = ?", (record_id,))
        if not rows:
            raise ArgnbError(f"no record {record_id!r} in {self.path}")
        return self._record(rows[0])

    def records(
        self,
        ids: Sequence[str] | None = None,
        *,
        source: str | None = None,
        stance: str | None = None,
        limit: int | None = None,
    ) -> list[Record]:
        """Records in insertion order (or in the order of ``ids``)."""
        if ids is not None:
            by_id = {}
            for chunk in _chunks(list(ids), 500):
                marks = ",".join("?" * len(chunk))
                for row in self._rows(
                    f"SELECT {self._COLS} FROM records WHERE id IN ({marks})", chunk
                ):
                    by_id[row[0]] = self._record(row)
            return [by_id[i] for i in ids if i in by_id]
        where, params = _where(source=source, stance=stance)
        sql = f"SELECT {self._COLS} FROM records {where} ORDER BY rowid"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [self._record(r) for r in self._rows(sql, params)]

    def columns(self) -> dict[str, list[Any]]:
        """Every record's id, stance, source, topic and text as parallel lists (index builds)."""
        rows = self._rows("SELECT id, stance, source, topic, text FROM records ORDER BY rowid")
        names = ("id", "stance", "source", "topic", "text")
        return {n: [r[i] for r in rows] for i, n in enumerate(names)}

    # -- annotations ---------------------------------------------------------------------
    def unannotated(self, limit: int | None = None, *, source: str | None = None) -> list[Record]:
        """Records without an annotation (valid or not), in insertion order."""
        where, params = _where(source=source)
        cond = "WHERE" if not where else where + " AND"
        sql = (
            f"SELECT {self._COLS} FROM records {cond} id NOT IN (SELECT record_id FROM "
            "annotations) ORDER BY rowid"
        )
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [self._record(r) for r in self._rows(sql, params)]

    def annotate(
        self,
        record_id: str,
        labels: Mapping[str, str | None],
        *,
        backend: str,
        model: str,
        valid: bool = True,
        error: str = "",
        reasons: Mapping[str, str] | None = None,
        turns: Sequence[Turn] = (),
    ) -> None:
        """Store (or replace) a record's annotation: its schemes with labels (None = unscored)."""
        reasons = reasons or {}
        turns_json = json.dumps([t.model_dump(mode="json") for t in turns], ensure_ascii=False)
        with self._write() as db:
            db.execute("DELETE FROM annotations WHERE record_id = ?", (record_id,))
            try:
                db.execute(
                    "INSERT INTO annotations VALUES (?,?,?,?,?,?,?)",
                    (record_id, backend, model, int(valid), error, turns_json, _now()),
                )
            except sqlite3.IntegrityError:
                raise ArgnbError(f"no record {record_id!r} to annotate in {self.path}") from None
            db.executemany(
                "INSERT INTO labels VALUES (?,?,?,?)",
                [(record_id, s, lab, reasons.get(s, "")) for s, lab in labels.items()],
            )

    def clear_annotations(self, *, model: str | None = None) -> int:
        """Forget annotations (all, or those by one model) so they can be made again."""
        with self._write() as db:
            if model is None:
                return db.execute("DELETE FROM annotations").rowcount
            return db.execute("DELETE FROM annotations WHERE model = ?", (model,)).rowcount

    def annotations(self, ids: Sequence[str] | None = None) -> dict[str, Annotation]:
        """Annotations by record id (all, or for ``ids``)."""
        heads = self._rows(
            "SELECT record_id, backend, model, valid, error FROM annotations ORDER BY rowid"
        )
        rows = self._rows("SELECT record_id, scheme, label, reason FROM labels ORDER BY rowid")
        labels: dict[str, dict[str, str | None]] = {}
        reasons: dict[str, dict[str, str]] = {}
        for rid, scheme, label, reason in rows:
            labels.setdefault(rid, {})[scheme] = label
            if reason:
                reasons.setdefault(rid, {})[scheme] = reason
        wanted = set(ids) if ids is not None else None
        return {
            rid: Annotation(rid, b, m, bool(v), labels.get(rid, {}), reasons.get(rid, {}), e)
            for rid, b, m, v, e in heads
            if wanted is None or rid in wanted
        }

    def turns(self, record_id: str) -> list[Turn]:
        """The agents' transcript turns behind a record's annotation (cost included)."""
        rows = self._rows("SELECT turns FROM annotations WHERE record_id = ?", (record_id,))
        return [Turn.model_validate(t) for t in json.loads(rows[0][0])] if rows else []

    # -- embeddings ----------------------------------------------------------------------
    def embedding_models(self) -> dict[str, int]:
        """Embedding models and how many records each has embedded."""
        rows = self._rows(
            "SELECT e.model, COUNT(x.record_id) FROM embedders e LEFT JOIN embeddings x "
            "ON x.model = e.model GROUP BY e.model ORDER BY e.model"
        )
        return dict(rows)

    def unembedded(self, model: str, limit: int | None = None) -> list[Record]:
        sql = (
            f"SELECT {self._COLS} FROM records WHERE id NOT IN (SELECT record_id FROM "
            "embeddings WHERE model = ?) ORDER BY rowid"
        )
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [self._record(r) for r in self._rows(sql, (model,))]

    def put_embeddings(self, model: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Store unit-normalised float32 vectors (one row of ``vectors`` per id)."""
        import numpy as np

        mat = np.asarray(vectors, dtype=np.float32)
        if mat.ndim != 2 or len(mat) != len(ids):
            raise ArgnbError(f"expected {len(ids)} vectors, got an array of shape {mat.shape}")
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        mat = mat / np.where(norms == 0, 1.0, norms)
        with self._write() as db:
            row = db.execute("SELECT dim FROM embedders WHERE model = ?", (model,)).fetchone()
            if row is None:
                db.execute("INSERT INTO embedders VALUES (?,?,?)", (model, mat.shape[1], _now()))
            elif row[0] != mat.shape[1]:
                raise ArgnbError(
                    f"{model} vectors here have {row[0]} dimensions, these have {mat.shape[1]}",
                    hint="use another embedding model name for another model",
                )
            db.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?,?,?)",
                [(i, model, v.tobytes()) for i, v in zip(ids, mat, strict=True)],
            )

    def embeddings(self, model: str) -> tuple[list[str], np.ndarray]:
        """(ids, matrix) of every record embedded by ``model``, rows unit-normalised."""
        import numpy as np

        dim = self._rows("SELECT dim FROM embedders WHERE model = ?", (model,))
        if not dim:
            known = ", ".join(self.embedding_models()) or "none"
            raise ArgnbError(
                f"{self.path} has no embeddings by {model!r} (it has: {known})",
                hint="run `argnb debate memory embed --db FILE --embedder ...` first",
            )
        rows = self._rows(
            "SELECT x.record_id, x.vector FROM embeddings x JOIN records r ON r.id = x.record_id "
            "WHERE x.model = ? ORDER BY r.rowid",
            (model,),
        )
        ids = [r[0] for r in rows]
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        return ids, mat.reshape(len(rows), dim[0][0]) if rows else mat.reshape(0, dim[0][0])

    # -- summaries -----------------------------------------------------------------------
    def info(self) -> MemoryInfo:
        def counts(sql: str) -> dict[str, int]:
            return {str(k): v for k, v in self._rows(sql)}

        annotated = counts("SELECT valid, COUNT(*) FROM annotations GROUP BY valid")
        return MemoryInfo(
            path=self.path,
            records=self.count(),
            debates=self._rows("SELECT COUNT(DISTINCT source || '/' || debate_id) FROM records")[0][
                0
            ],
            by_source=counts(
                "SELECT source, COUNT(*) FROM records GROUP BY source ORDER BY 2 DESC"
            ),
            by_stance=counts(
                "SELECT stance, COUNT(*) FROM records GROUP BY stance ORDER BY 1 DESC"
            ),
            annotated=sum(annotated.values()),
            invalid_annotations=annotated.get("0", 0),
            by_scheme=counts(
                "SELECT scheme, COUNT(*) FROM labels GROUP BY scheme ORDER BY 2 DESC, 1"
            ),
            by_label=counts(
                "SELECT COALESCE(label, 'unscored'), COUNT(*) FROM labels GROUP BY 1 "
                "ORDER BY 2 DESC"
            ),
            annotators=counts(
                "SELECT backend || ':' || model, COUNT(*) FROM annotations GROUP BY 1 ORDER BY 2 DESC"
            ),
            embeddings=self.embedding_models(),
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per record with its schemes and labels (``{scheme: label}``) and annotator."""
        import pandas as pd

        ann = self.annotations()
        rows = []
        for r in self.records():
            a = ann.get(r.id)
            rows.append(
                {
                    **r.model_dump(),
                    "schemes": dict(a.labels) if a else None,
                    "annotator": a.annotator if a else None,
                    "valid": a.valid if a else None,
                }
            )
        return pd.DataFrame(rows)

    def export_annotations(self, path: str | Path) -> int:
        """Write the annotations as JSON Lines in the format ``argnb debate agreement`` reads."""
        from argnb.debate.agreement import annotation_row

        ann = self.annotations()
        texts = dict(self._rows("SELECT id, text FROM records"))
        n = 0
        with Path(path).open("w", encoding="utf-8") as f:
            for rid, a in ann.items():
                row = annotation_row(rid, a.labels, annotator=a.annotator, valid=a.valid)
                row["text"] = texts.get(rid, "")
                row["reasons"] = a.reasons
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                n += 1
        return n


def _read_only(path: str) -> ArgnbError:
    return ArgnbError(
        f"cannot write {path}: it is read-only",
        hint="info, retrieve, next and simulate read it as it is; to build, annotate or embed, "
        "copy it to a writable place",
    )


def open_store(path: str | Path, *, must_exist: bool = True, readonly: bool = False) -> Store:
    """The memory at ``path``; a missing file is an error that says how to build one (unless
    ``must_exist=False``: then it is created). ``readonly``: for commands that only read, so a
    memory on a read-only disk or in a shared folder works."""
    if must_exist and not Path(path).is_file():
        raise ArgnbError(
            f"no memory at {path}",
            hint=f"build one: argnb debate memory build --from example --db {path}",
        )
    return Store(path, readonly=readonly)


def _where(**conds: str | None) -> tuple[str, list[Any]]:
    parts, params = [], []
    for col, val in conds.items():
        if val is not None:
            parts.append(f"{col} = ?")
            params.append(val)
    return ("WHERE " + " AND ".join(parts)) if parts else "", params


def _chunks(xs: list[Any], n: int) -> Iterator[list[Any]]:
    for i in range(0, len(xs), n):
        yield xs[i : i + n]
