"""One string field of a JSON answer, decoded while the answer is still being written.

A structured answer streams as JSON text (``{"intent": "invite", "message": "Let us ...``); a
learner should read its ``message`` as it grows, not the braces and the other fields. A JSON
parser needs the whole text, so :class:`FieldStream` reads just enough of the grammar: it follows
the top-level object's keys (strings inside values, nested objects and arrays are skipped, so
the field's name written inside another string or a nested object does not count), decodes the
field's string value -- escapes, ``\\uXXXX`` and surrogate pairs, even when a chunk ends in the
middle of one -- and stops at its closing quote.

    >>> f = FieldStream("message")
    >>> [f.feed(c) for c in ['{"note": "\\\\"message\\\\": no", "mess', 'age": "Hi \\\\u00', 'e9!"', "}"]]
    ['', 'Hi ', 'é!', '']
    >>> f.value, f.done
    ('Hi é!', True)

The whole answer is still validated afterwards (:mod:`argnb.llm.structured`): what streams is a
preview, the validated value is the record.
"""

from __future__ import annotations

_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _hex4(text: str, at: int) -> int | None:
    """The code of ``\\uXXXX`` starting at ``text[at]`` (None when it is not one)."""
    digits = text[at + 2 : at + 6]
    if text[at : at + 2] != "\\u" or len(digits) < 4:
        return None
    try:
        return int(digits, 16)
    except ValueError:
        return None


class FieldStream:
    """Feed JSON text chunk by chunk; :meth:`feed` returns the newly decoded characters of the
    top-level string field ``name`` ("" until it starts and after it ends)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.value = ""  # what has been decoded so far
        self.done = False  # the field's closing quote was read (or the object ended without it)
        self._pending = ""  # the end of the last chunk that could not be decoded yet
        self._depth = 0  # 0: before the top-level object; 1: inside it; more: nested values
        self._string: str | None = None  # inside a string: "key", "field" or "skip"
        self._key = ""  # the key being read, then the last key read at depth 1
        self._expect_key = False
        self._after_colon = False

    def feed(self, chunk: str) -> str:
        """Read ``chunk``; return the field's characters it completed."""
        if self.done:
            return ""
        text, self._pending = self._pending + chunk, ""
        out: list[str] = []
        i = 0
        while i < len(text) and not self.done:
            if self._string is None:
                i = self._outside(text, i)
                continue
            ch = text[i]
            if ch == '"':
                self._close_string()
                i += 1
                continue
            if ch != "\\":
                self._take(ch, out)
                i += 1
                continue
            decoded, used = self._escape(text, i)
            if used == 0:  # incomplete at the chunk's end: wait for the next chunk
                self._pending = text[i:]
                break
            self._take(decoded, out)
            i += used
        return "".join(out)

    # -- outside strings --------------------------------------------------------------------
    def _outside(self, text: str, i: int) -> int:
        ch = text[i]
        if self._depth == 0:
            if ch == "{":
                self._depth, self._expect_key = 1, True
            return i + 1
        if ch == '"':
            if self._depth == 1 and self._expect_key:
                self._string, self._key = "key", ""
            elif self._depth == 1 and self._after_colon and self._key == self.name:
                self._string = "field"
            else:
                self._string = "skip"
            self._after_colon = False
        elif ch in "{[":
            self._depth += 1
            self._after_colon = False
        elif ch in "}]":
            self._depth -= 1
            if self._depth == 0:
                self.done = True  # the object ended without the field
        elif self._depth == 1 and ch == ":":
            self._after_colon = True
        elif self._depth == 1 and ch == ",":
            self._expect_key, self._after_colon = True, False
        return i + 1

    def _close_string(self) -> None:
        if self._string == "key":
            self._expect_key = False
        elif self._string == "field":
            self.done = True
        self._string = None

    def _take(self, text: str, out: list[str]) -> None:
        if self._string == "key":
            self._key += text
        elif self._string == "field":
            out.append(text)
            self.value += text

    # -- escapes ----------------------------------------------------------------------------
    def _escape(self, text: str, i: int) -> tuple[str, int]:
        """The character(s) of the escape at ``text[i]`` and how many characters it took
        (0: the text ends inside it). A high surrogate followed by a low one is one character;
        alone it stays a lone surrogate, as :func:`json.loads` keeps it."""
        rest = len(text) - i
        if rest < 2:
            return "", 0
        kind = text[i + 1]
        if kind in _SIMPLE:
            return _SIMPLE[kind], 2
        if kind != "u":
            return text[i : i + 2], 2  # invalid JSON; keep it visible rather than guess
        if rest < 6:
            return "", 0
        code = _hex4(text, i)
        if code is None:
            return text[i : i + 6], 6
        if not 0xD800 <= code <= 0xDBFF:
            return chr(code), 6
        # a high surrogate: its low half may follow, possibly in the next chunk
        after = text[i + 6 : i + 12]
        if "\\u".startswith(after[:2]) and len(after) < 6:
            return "", 0
        low = _hex4(text, i + 6)
        if low is not None and 0xDC00 <= low <= 0xDFFF:
            return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), 12
        return chr(code), 6
