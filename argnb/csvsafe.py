"""CSV cells an instructor can open in a spreadsheet without running a student's formula.

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula
to Excel, LibreOffice and Google Sheets (``=HYPERLINK(...)``, ``@SUM(...)``). OWASP's rule: write
such a cell with a leading ``'``. :func:`neutralise` does that on write and :func:`restore` undoes
it on read, exactly: a value that already starts with quotes before such a character gets one
more, so every string survives the round trip (``restore(neutralise(s)) == s``).

Numbers are left alone (``-3`` stays a number); only text is neutralised.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _risky(text: str) -> bool:
    rest = text.lstrip("'")
    return rest[:1] in TRIGGERS and rest != ""


def neutralise(value: Any) -> Any:
    """``value`` safe for a spreadsheet: text that a spreadsheet would run gets a leading ``'``."""
    if isinstance(value, str) and _risky(value):
        return "'" + value
    return value


def restore(value: Any) -> Any:
    """The text :func:`neutralise` was given (anything else unchanged)."""
    if isinstance(value, str) and value.startswith("'") and _risky(value[1:]):
        return value[1:]
    return value


_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if c != 0x0A}


def printable(value: Any) -> Any:
    """Text with every control character but the newline written as ``\\xNN``: a student's
    exception text may carry ESC or BEL bytes, which recolour or beep the instructor's terminal
    when a grades CSV is shown there (``cat grades.csv``). One way: the export keeps what was
    said, visibly, not the bytes."""
    return value.translate(_CONTROL) if isinstance(value, str) else value


def safe_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Every cell of a row neutralised (for ``csv.DictWriter.writerow``)."""
    return {k: neutralise(v) for k, v in row.items()}


def _text_column(series: Any) -> bool:
    from pandas.api import types

    return not (types.is_numeric_dtype(series) or types.is_bool_dtype(series))


def safe_frame(df: Any, columns: Iterable[str] | None = None) -> Any:
    """A copy of a DataFrame whose text cells are neutralised (all columns, or ``columns``)."""
    out = df.copy()
    for col in columns if columns is not None else out.columns:
        if _text_column(out[col]):
            out[col] = out[col].map(neutralise)
    return out


def printable_frame(df: Any) -> Any:
    """A copy of a DataFrame whose text cells are :func:`printable` (an export for people)."""
    out = df.copy()
    for col in out.columns:
        if _text_column(out[col]):
            out[col] = out[col].map(printable)
    return out


def restore_frame(df: Any, columns: Iterable[str] | None = None) -> Any:
    """The inverse of :func:`safe_frame` on a frame read back with ``dtype=str``."""
    out = df.copy()
    for col in columns if columns is not None else out.columns:
        if _text_column(out[col]):
            out[col] = out[col].map(restore)
    return out
