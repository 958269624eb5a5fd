"""A debate's history as the generation agents see it: who said what, on which side.

The paper's task (section 3): the pro side speaks first, turns alternate, and the next utterance
is written for the side whose turn it is, from the whole history so far. :class:`Said` is one
turn of that history -- from a corpus, a learner or a generated turn -- and :func:`as_history`
accepts the forms callers have (dicts from JSON Lines, transcript turns, ``(stance, text)``).

    >>> h = as_history([("pro", "Cars pollute."), {"stance": "con", "text": "Shops need cars."}])
    >>> next_side(h), [s.label for s in h]
    ('pro', ['P1', 'C1'])
    >>> print(render(h, words=2))
    P1 (for): "Cars pollute."
    C1 (against): "Shops need…"
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from argnb.errors import ArgnbError

SIDES = ("pro", "con")
SIDE_WORDS = {"pro": "for", "con": "against"}


@dataclass(frozen=True)
class Said:
    """One turn: its side, the speaker's name, the text and its label (``P2`` = pro's 2nd)."""

    stance: str
    text: str
    speaker: str = ""
    label: str = ""


def other(stance: str) -> str:
    """The opposing side."""
    if stance not in SIDES:
        raise ArgnbError(f"unknown side {stance!r}", hint="use pro or con")
    return "con" if stance == "pro" else "pro"


def _one(item: Any) -> tuple[str, str, str]:
    if isinstance(item, Said):
        return item.stance, item.text, item.speaker
    if isinstance(item, tuple) and len(item) >= 2:
        return str(item[0]), str(item[1]), str(item[2]) if len(item) > 2 else ""
    if isinstance(item, Mapping):
        return str(item.get("stance", "")), str(item.get("text", "")), str(item.get("speaker", ""))
    payload = getattr(item, "payload", None)  # a transcript turn with an Utterance payload
    if payload is not None and getattr(payload, "kind", "") == "debate.utterance":
        return payload.stance, item.text, item.speaker
    raise ArgnbError(
        f"cannot read a debate turn from {type(item).__name__}",
        hint='give (stance, text) pairs or dicts with "stance" and "text"',
    )


def as_history(items: Iterable[Any]) -> list[Said]:
    """Turns with labels ``P1, C1, P2, ...``; moderator and empty turns are dropped."""
    out: list[Said] = []
    count = {"pro": 0, "con": 0}
    for item in items:
        stance, text, speaker = _one(item)
        stance = stance.strip().lower()
        if stance not in SIDES or not text.strip():
            continue
        count[stance] += 1
        label = f"{stance[0].upper()}{count[stance]}"
        out.append(Said(stance, " ".join(text.split()), speaker, label))
    return out


def next_side(history: Sequence[Said]) -> str:
    """Whose turn it is: pro opens, then the side that did not speak last."""
    return "pro" if not history else other(history[-1].stance)


def clip(text: str, words: int) -> str:
    w = text.split()
    return text if len(w) <= words else " ".join(w[:words]) + "…"


def render(history: Sequence[Said], *, words: int = 150, last: int | None = None) -> str:
    """The history as prompt text, one labelled turn a line, each cut to ``words`` words;
    ``last`` keeps only the most recent turns (a small model's context is short)."""
    turns = list(history)[-last:] if last else list(history)
    return "\n".join(f'{s.label} ({SIDE_WORDS[s.stance]}): "{clip(s.text, words)}"' for s in turns)
