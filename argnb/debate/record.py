"""A debate transcript read back: its utterances, the history the agents see, evaluation items.

This is debate's one reader of its transcript (every module's is called ``record.py``): a view,
the map, the simulation and the judges read turns through it, never by their own filters.

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

from argnb.debate.payloads import Utterance
from argnb.errors import ArgnbError
from argnb.transcript import Transcript, Turn

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


# -- the transcript's turns -------------------------------------------------------------
def utterance_turn(stance: str, text: str, topic: str, speaker: str = "") -> Turn:
    """A given (corpus or human) turn as the transcript records it."""
    return Turn(
        speaker=speaker or stance,
        role="utterance",
        text=" ".join(text.split()),
        payload=Utterance(stance=stance, topic=topic),
    )


def utterances(tr: Transcript) -> list[Turn]:
    """The debate's turns (given and generated), in order."""
    return [t for t in tr.turns if t.role == "utterance" and t.payload.kind == "debate.utterance"]


def evaluation_items(tr: Transcript, name: str) -> tuple[list[dict], list[dict]]:
    """(utterance items, debate items) of a saved simulation or learner debate. Every utterance
    is an item; its evidence is what was retrieved since the previous utterance (none for a
    given or human turn, so its factual claims can only be unverifiable)."""
    said: list[dict[str, Any]] = []
    rest: list[tuple[str, list[dict[str, Any]]]] = []  # (method, evidence) per utterance
    pending: dict[str, dict[str, Any]] = {}
    for t in tr.turns:
        p = t.payload
        if p.kind == "debate.retrieval":
            for r in p.get("records") or []:
                if str(r.get("text", "")).strip():
                    pending.setdefault(str(r.get("id")), {"id": r.get("id"), "text": r["text"]})
        elif t.role == "utterance" and p.kind == "debate.utterance" and t.valid and t.text.strip():
            said.append({"stance": p.stance, "speaker": t.speaker, "text": t.text})
            rest.append((p.method, list(pending.values())))
            pending = {}
    topic = tr.title or str(tr.meta.get("topic", ""))
    utts = [
        {
            "id": f"{name}#{i}",
            "topic": topic,
            "stance": s["stance"],
            "text": s["text"],
            "history": said[:i],
            "evidence": ev,
            "method": method,
        }
        for i, (s, (method, ev)) in enumerate(zip(said, rest, strict=True))
    ]
    return utts, ([{"id": name, "topic": topic, "turns": said}] if said else [])
