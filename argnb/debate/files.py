"""Reading the table files the debate builders and the agreement tool accept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from argnb.datafiles import table_rows


def read_rows(path: str | Path, flag: str = "--data") -> Iterator[dict[str, Any]]:
    """Rows of a JSON Lines or CSV file (by content, checked by :func:`argnb.datafiles.table_rows`):
    UTF-8 with or without a byte order mark; an empty file or a bad line is an error that names it."""
    yield from table_rows(path, flag)
