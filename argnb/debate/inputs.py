"""Reading the table files the debate builders and the agreement tool accept."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from argnb.datafiles import json_lines, read_text


def read_rows(path: str | Path, flag: str = "--data") -> Iterator[dict[str, Any]]:
    """Rows of a JSON Lines or CSV file (by extension; ``.jsonl``/``.json``/``.csv``): UTF-8 with
    or without a byte order mark; a bad line is an error that names it."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        yield from csv.DictReader(io.StringIO(read_text(p, flag), newline=""))
        return
    for _, row in json_lines(p, flag):
        yield row
