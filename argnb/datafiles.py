"""Reading data files a learner hands us: one place that turns bad input into a clear error.

Datasets, predictions and results files come from everywhere -- a spreadsheet export with a byte
order mark, a file saved as Latin-1, a folder given where a file was meant, a JSON list where JSON
Lines were expected. Every loader reads through here, so each of these gives one line that says
what is wrong and what to do, never a traceback from the json or codecs modules.
"""

from __future__ import annotations

import json
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
