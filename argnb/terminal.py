"""Printing untrusted text to a terminal: control sequences made inert.

Model answers, human turns and file contents may hold ESC sequences (which recolour, move the
cursor, retitle the window or rewrite what was printed before) and bidi controls such as U+202E
(which make ``evil.exe`` read as something else). HTML views escape them; here every C0/C1
control but tab and newline, and every bidi control, is shown as its ``\\xNN`` / ``\\uNNNN``
escape. Inside a JSON string that escape means the same character, so ``--json`` lines stay
valid JSON with the same values.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

#: C0 controls but tab and newline, DEL, C1 controls; bidi embeddings, overrides, isolates and
#: marks; line and paragraph separators
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\u{c:04x}"


def inert(text: str) -> str:
    """``text`` with every terminal control shown as an escape instead of acting.

    >>> inert("ok \\x1b[2J\\u202eexe.txt")
    'ok \\\\u001b[2J\\\\u202eexe.txt'
    """
    return UNSAFE.sub(_escape, text)


def one_line(text: str) -> str:
    """:func:`inert`, with line breaks and tabs shown too: a name from a learner's folder cannot
    start a line of its own in the instructor's terminal (and forge one)."""
    return inert(text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t"))


class InertStream:
    """A text stream that writes :func:`inert` text to the one it wraps (``sys.stdout``)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(inert(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, encoding, fileno, ...
        return getattr(self.stream, name)
