"""Reading the table files the debate builders and the agreement tool accept."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError


def read_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """Rows of a JSON Lines or CSV file (by extension; ``.jsonl``/``.json``/``.csv``)."""
    p = Path(path)
    if not p.is_file():
        raise ArgnbError(f"no file at {p}", hint="check the path")
    if p.suffix.lower() == ".csv":
        with p.open(newline="", encoding="utf-8") as f:
            yield from csv.DictReader(f)
        return
    with p.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ArgnbError(
                    f"{p}, line {n} is not JSON: {exc.msg}",
                    hint="one JSON object per line (JSON Lines)",
                ) from None
            if isinstance(row, dict):
                yield row
