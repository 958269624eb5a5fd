"""Reading data files a learner hands us: one place that turns bad input into a clear error.

Datasets, predictions and results files come from everywhere -- a spreadsheet export with a byte
order mark, a file saved as Latin-1, a folder given where a file was meant, a JSON list where JSON
Lines were expected. Every loader reads through here, so each of these gives one line that says
what is wrong and what to do, never a traceback from the json or codecs modules.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from argnb.errors import DataError


def existing_file(path: str | Path, flag: str = "--data") -> Path:
    """``path`` if it is a file; a clear error for a missing path or a folder."""
    p = Path(path)
    if p.is_dir():
        raise DataError(f"{flag} {p} is a folder, not a file", hint="give the path of the file")
    if not p.exists():
        raise DataError(f"no data file at {p}: no such file", hint=f"check the path ({flag} FILE)")
    return p


def read_text(path: str | Path, flag: str = "--data") -> str:
    """The file's text: UTF-8, a leading byte order mark dropped."""
    p = existing_file(path, flag)
    data = p.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{p} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            hint="save the file as UTF-8 (e.g. in a spreadsheet: CSV UTF-8)",
        ) from None


def json_lines(path: str | Path, flag: str = "--data") -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` for every non-blank line; each record must be a JSON object."""
    p = Path(path)
    for n, line in enumerate(read_text(p, flag).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{p}:{n}: not JSON ({exc.msg})", hint="each line must be one JSON object"
            ) from None
        if not isinstance(rec, dict):
            raise DataError(
                f"{p}:{n}: a JSON {type(rec).__name__}, not an object",
                hint="each line must be one JSON object {...}",
            )
        yield n, rec


def json_document(path: str | Path, flag: str = "--data") -> Any:
    """The value of a (non-lines) JSON file."""
    p = Path(path)
    try:
        return json.loads(read_text(p, flag))
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{p}: not JSON ({exc.msg}, line {exc.lineno})",
            hint="check the file, or pass --format for its real format",
        ) from None


def yaml_document(
    path: str | Path, flag: str = "--config", *, what: str = "YAML file", hint: str = ""
) -> Any:
    """The plain data of a YAML file (``safe_load``: no Python objects), an empty file ``{}``.

    One reader for the files a learner writes by hand (a roundtable's session, a dialogue's
    stances): a missing file, a folder, text that is not UTF-8 or not YAML is one line.
    """
    import yaml

    p = Path(path)
    if not p.exists():
        raise DataError(f"no {what} at {p}", hint=hint or f"check the path ({flag} FILE)")
    text = read_text(p, flag)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"{p} is not valid YAML: {first}", hint=hint or None) from None
    return {} if data is None else data


# -- tables: rows of JSON Lines or CSV, checked against what the command expects ------------------
#: the two layouts of a table file, by what the file holds (not by its name)
TABLE_KINDS = ("jsonl", "csv")
_KIND_NAMES = {"jsonl": "JSON Lines", "csv": "CSV"}
_SUFFIX_KINDS = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl"}


def sniff(text: str) -> str:
    """``"jsonl"`` when the first non-blank character opens JSON (``{`` or ``[``), else ``"csv"``;
    ``"empty"`` for a file of nothing but blanks."""
    head = text.lstrip()
    if not head:
        return "empty"
    return "jsonl" if head[0] in "{[" else "csv"


def table_rows(
    path: str | Path,
    flag: str = "--data",
    *,
    kind: str | None = None,
    required: tuple[str, ...] = (),
    said: str | None = None,
) -> list[dict[str, Any]]:
    """The rows of a table file, checked: not empty, in the layout ``kind`` names (when given;
    else the one its content shows), every row with the ``required`` fields. ``said`` names
    the option that chose ``kind`` in the error (e.g. ``"--from iq2"``).

    A JSON list of objects is read as rows too (one file, several layouts learners save).
    """
    import csv
    import io

    p = Path(path)
    text = read_text(p, flag)
    found = sniff(text)
    if found == "empty":
        raise DataError(f"{p} is empty", hint=f"give {flag} a file with one row per line")
    expected = kind or _SUFFIX_KINDS.get(p.suffix.lower(), found)
    if expected == "jsonl" and found == "csv" and kind is None:
        found = "jsonl"  # named JSON Lines: the JSON reader names the first bad line
    if expected != found:
        said = (said or f"--from {kind}") if kind else f"its name ({p.suffix})"
        raise DataError(
            f"{p} holds {_KIND_NAMES[found]}, but {said} says {_KIND_NAMES[expected]}",
            hint=f"pass the option for its real format ({_KIND_NAMES[found]}), or fix the file",
        )
    if found == "csv":
        reader = csv.DictReader(io.StringIO(text, newline=""))
        try:
            rows = [dict(r) for r in reader]
        except csv.Error as exc:
            raise DataError(
                f"{p}:{reader.line_num}: not CSV ({exc})", hint="check the file"
            ) from None
        numbered = [(n + 2, r) for n, r in enumerate(rows)]  # line 1 is the header
    elif text.lstrip().startswith("["):
        doc = json_document(p, flag)
        if not isinstance(doc, list) or not all(isinstance(r, dict) for r in doc):
            raise DataError(f"{p}: a JSON list, but not of objects", hint="one JSON object per row")
        numbered = [(n, r) for n, r in enumerate(doc, start=1)]
    else:
        numbered = list(json_lines(p, flag))
    if not numbered:
        raise DataError(f"{p} holds no rows", hint="give a file with one row per line")
    for n, row in numbered:
        missing = [k for k in required if row.get(k) is None]
        if missing:
            raise DataError(
                f"{p}:{n}: the row has no {', '.join(repr(k) for k in missing)}",
                hint=f"every row needs {', '.join(required)}: is this the right file or --from?",
            )
    return [r for _, r in numbered]


# -- the human's turns of a headless session -------------------------------------------------------
def script_lines(path: str | Path, flag: str = "--human-script") -> list[str]:
    """A script of turns: a JSON list of strings, or plain text with one turn per line.

    Anything else that is JSON (an object, a number, a list of objects) is refused: said aloud
    it would be the raw JSON, which no one meant.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(
            f"no human script at {p}", hint=f"give {flag} a JSON list of texts or a text file"
        )
    text = read_text(p, flag)
    head = text.lstrip()[:1]
    if head in ("[", "{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{p} starts like JSON but is not valid JSON ({exc.msg}, line {exc.lineno})",
                hint="fix the JSON, or write one turn per line without brackets",
            ) from None
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            raise DataError(
                f"{p} holds a JSON {type(data).__name__}"
                + (" of other things than texts" if isinstance(data, list) else ""),
                hint='give a JSON list of strings (["I think ...", "/pass"]) or one turn per line',
            )
        return data
    return [line.strip() for line in text.splitlines() if line.strip()]


# -- SQLite files: ours or not, and read from read-only places ---------------------------------------
def sqlite_connect(path: str | Path, *, readonly: bool = False) -> Any:
    """A connection to an SQLite file, shared between threads.

    ``readonly`` opens it with ``mode=ro``: nothing is created or changed. A database in WAL mode
    cannot be opened so where SQLite may not create its shared-memory file beside it (a read-only
    mount, a shared class folder); there the file cannot change under us, so it is read as
    ``immutable=1``.
    """
    import sqlite3

    if not readonly or str(path) == ":memory:":
        return sqlite3.connect(str(path), check_same_thread=False, timeout=30)
    p = Path(path).resolve()
    uri = p.as_uri()
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, check_same_thread=False, timeout=30)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
        if os.access(p.parent, os.W_OK) and os.access(p, os.W_OK):
            raise
    db = sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)
    db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    return db


def sqlite_tables(db: Any) -> set[str]:
    """The names of the tables an SQLite database holds (raises ``sqlite3.DatabaseError`` when
    the file is not SQLite at all)."""
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
