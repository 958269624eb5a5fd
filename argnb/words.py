"""Word budgets for spoken turns: count, check, and cut at a sentence boundary.

Protocols whose turns have a length limit (a roundtable deliberator's 150 words, a debater's
word budget) enforce it the same way: a longer reply gets one revision turn (the agent turn's
repair, with :func:`too_long` as its check); a revision still too long is cut with
:func:`cut_to_words`, and the transcript says so.

    >>> cut_to_words("One two three. Four five six. Seven.", 6)
    'One two three. Four five six.'
    >>> cut_to_words("A very long first sentence without any end", 4)
    'A very long first…'
    >>> drop_repeats("Cars pollute. Shops suffer. cars pollute! Air matters.")
    'Cars pollute. Shops suffer. Air matters.'
    >>> distinct(["AI helps. AI helps.", "It helps, too.", "ai helps"])
    ['AI helps.', 'It helps, too.']

A passage shortened for display ends at a word and says so:

    >>> shorten("Banning cars rebuts the claim that streets are for traffic", 30)
    'Banning cars rebuts the claim…'
    >>> shorten("short enough", 30), shorten("Donaudampfschifffahrtsgesellschaft", 10)
    ('short enough', 'Donaudamp…')

And the grammar of what views say about counts and speakers:

    >>> count(1, "contribution"), count(3, "contribution"), count(2, "analysis", "analyses")
    ('1 contribution', '3 contributions', '2 analyses')
    >>> says("D1", "speaks"), says("You", "speaks"), says("you", "has")
    ('D1 speaks', 'You speak', 'you have')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|(?<=[.!?…][\"')\]])\s+")


def token_budget(limit: int) -> int:
    """Tokens a reply may use: about 1.3 tokens a word, plus room to overshoot the limit (so the
    revision rule can be seen at work) -- and a stop for a model that loops."""
    return int(limit * 1.7) + 20


def count_words(text: str) -> int:
    return len(text.split())


def too_long(limit: int) -> Callable[[str], list[str]]:
    """A rule check for the agent turn: the problem, when a reply exceeds ``limit`` words."""

    def check(text: str) -> list[str]:
        n = count_words(text)
        return [f"{n} words, but the limit is {limit}"] if n > limit else []

    return check


def cut_to_words(text: str, limit: int) -> str:
    """The longest run of whole sentences within ``limit`` words (or the first ``limit`` words
    and an ellipsis, when even the first sentence is longer)."""
    text = " ".join(text.split())
    if count_words(text) <= limit:
        return text
    kept, n = [], 0
    for sentence in _SENTENCE_END.split(text):
        w = count_words(sentence)
        if n + w > limit:
            break
        kept.append(sentence)
        n += w
    if kept:
        return " ".join(kept)
    return " ".join(text.split()[:limit]).rstrip(",;:") + "…"


def shorten(text: str, limit: int) -> str:
    """``text`` on one line in at most ``limit`` characters: cut at the last word boundary with
    "…" when it is longer (a passage cut mid-word reads as a typo, one cut silently as the whole).
    The one cut every view, trace and note uses."""
    t = " ".join(str(text).split())
    if len(t) <= limit:
        return t
    head = t[: max(limit - 1, 1)]
    if t[len(head)] != " " and " " in head:  # mid-word: back to the last whole word
        head = head[: head.rindex(" ")]
    return head.rstrip(" ,;:.-–—") + "…"


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences where an end mark (or a closing quote after one) meets a space:
    the one split the repeat rules here and the gate's loop rules share."""
    return [s for s in _SENTENCE_END.split(" ".join(text.split())) if s]


def _key(sentence: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", sentence.lower()).strip()


def distinct(items: Iterable[str]) -> list[str]:
    """The items of a list (summary sentences, agreements) without any sentence said before in
    the list, and without the items nothing is left of: the one rule of :func:`drop_repeats`,
    over a list."""
    seen: set[str] = set()
    out = []
    for item in items:
        kept = []
        for sentence in sentences(str(item)):
            key = _key(sentence)
            if key and key in seen:
                continue
            seen.add(key)
            kept.append(sentence)
        text = " ".join(kept).strip()
        if text:
            out.append(text)
    return out


#: a debate history's turn label opening a sentence ("P1:", "C2 (against):"): a small model
#: echoes the prompt's labelled lines, and a spoken turn never names its own turns that way
_LABEL = re.compile(r"^(?:[PC]\d{1,2}(?: ?\((?:for|against)\))? ?: ?)+")


def drop_repeats(text: str) -> str:
    """The text without sentences that repeat an earlier one (case and punctuation aside) and
    without history labels opening a sentence (so "P1: X" and "P2: X" are one sentence): small
    models fall into loops, and a spoken turn never says the same sentence twice.

    >>> drop_repeats('P1: Cars pollute. P2: Cars pollute. C1 (against): "Shops die." Yes.')
    'Cars pollute. "Shops die." Yes.'
    """
    seen: set[str] = set()
    kept = []
    for sentence in sentences(text):
        sentence = _LABEL.sub("", sentence)
        key = _key(sentence)
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(sentence)
    return " ".join(kept)


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number it needs ("1 round", "2 rounds", "0 rounds")."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


_SECOND_PERSON = {"is": "are", "was": "were", "has": "have", "does": "do"}


def says(name: str, verb: str) -> str:
    """``name`` and a present-tense ``verb`` written for a third person ("speaks"), agreeing when
    the name is the human participant's "You" ("You speak", not "You speaks")."""
    if name.strip().lower() != "you":
        return f"{name} {verb}"
    if verb in _SECOND_PERSON:
        return f"{name} {_SECOND_PERSON[verb]}"
    if verb.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return f"{name} {verb[:-2]}"
    if verb.endswith("ies") and len(verb) > 4:
        return f"{name} {verb[:-3]}y"
    return f"{name} {verb[:-1] if verb.endswith('s') else verb}"
