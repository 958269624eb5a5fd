"""One normalisation of untrusted text, applied identically by every export and view of a map.

Model replies can hold anything, but XML 1.0 (GraphML), UTF-8 files (AIF JSON, Argdown, HTML) and
the notebook's JSON cannot. Before a map is written anywhere its texts (statements, agent names,
labels, move texts, the title) pass through :func:`clean_text`:

- every character XML 1.0 forbids — C0 controls other than tab, line feed and carriage return
  (``\\x00``–``\\x08``, ``\\x0b``, ``\\x0c``, ``\\x0e``–``\\x1f``), lone surrogates
  (``\\ud800``–``\\udfff``) and the non-characters ``\\ufffe`` / ``\\uffff`` — becomes U+FFFD
  (``�``, the replacement character), so the reader sees that something was there;
- line ends become ``\\n`` (``\\r\\n`` and a lone ``\\r``), as every XML parser would read them.

Everything else (tabs, C1 controls, emoji, right-to-left text, ...) is kept as it is. Node ids
are not cleaned: :class:`~argnb.maps.graph.ArgumentMap` refuses ids with such characters.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_LINE_END = re.compile("\r\n?")


def clean_text(text: object) -> str:
    """``text`` as a string that every export can write and read back (see the module doc)."""
    return FORBIDDEN.sub(REPLACEMENT, _LINE_END.sub("\n", str(text)))


def one_line(text: object) -> str:
    """:func:`clean_text`, then every run of whitespace as one space, trimmed (labels, Argdown).

    Trimmed as JavaScript trims (the Argdown parser does): U+FEFF at either end goes too.
    """
    return " ".join(clean_text(text).split()).strip(" \ufeff")
