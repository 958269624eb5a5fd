"""Is this premise new? Normalised text, token similarity, and embeddings where available.

The protocol forbids a side from reusing a premise it has already put forward; a model can dodge
an exact-match rule by rephrasing, so "the same" means *near-duplicate*:

- equal after normalisation (case, Unicode form, punctuation, spacing, a final full stop), or
- token-sequence similarity (``difflib`` ratio over word lists) at or above ``threshold``
  (0.9 by default: "a is a camera" and "b is a camera" differ, "If a camera has high image quality
  and long battery life, we should buy it" and the same with "resolution" for "image quality" do
  not), or
- when an ``embed`` function is given (for example ``backend.embed``), cosine similarity at or
  above ``embed_threshold``. Embeddings catch paraphrases but also blur object names ("a" vs "b"),
  so keep that threshold high.

Statements of opposite polarity (an odd number of "not", "no", "never", "n't", ...) are never
duplicates: "b is over budget" and "b is not over budget" are a contradiction, not a repeat.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher

Embed = Callable[[Sequence[str]], list[list[float]]]

_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def normalise(text: str) -> str:
    """Lower-case, NFKC, punctuation removed, spaces collapsed."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = _PUNCT.sub(" ", t)
    return " ".join(t.split())


_NEGATIONS = frozenset(
    ["not", "no", "never", "cannot", "nor", "neither", "none", "nothing", "nobody", "without", "t"]
)  # "t" is what normalise leaves of "n't" ("don't" -> "don t")


def polarity(text: str) -> bool:
    """True for an even number of negation words (so "not" flips it, "not ... not" does not)."""
    return sum(1 for w in normalise(text).split() if w in _NEGATIONS) % 2 == 0


def similarity(a: str, b: str) -> float:
    """Similarity of two statements in [0, 1], over their normalised word sequences.

    Statements of opposite polarity ("we should buy b" / "we should not buy b") score 0: they are
    each other's contradiction, not a rephrasing.

    >>> similarity("We should buy camera b.", "we should buy camera B")
    1.0
    >>> similarity("We should buy camera b.", "We should not buy camera b.")
    0.0
    """
    if polarity(a) != polarity(b):
        return 0.0
    na, nb = normalise(a), normalise(b)
    if na == nb:
        return 1.0
    return SequenceMatcher(None, na.split(), nb.split(), autojunk=False).ratio()


def _cosine(u: Sequence[float], v: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(u, v, strict=False))
    nu = math.sqrt(sum(x * x for x in u))
    nv = math.sqrt(sum(y * y for y in v))
    return dot / (nu * nv) if nu and nv else 0.0


class PremiseMemory:
    """What each side has already put forward, with a near-duplicate test."""

    def __init__(
        self,
        *,
        threshold: float = 0.9,
        embed: Embed | None = None,
        embed_threshold: float = 0.95,
    ) -> None:
        self.threshold = threshold
        self.embed = embed
        self.embed_threshold = embed_threshold
        self._used: dict[str, list[str]] = {}
        self._vectors: dict[str, list[float]] = {}

    def used(self, side: str) -> list[str]:
        """Premises ``side`` has used so far, in order."""
        return list(self._used.get(side, []))

    def remember(self, side: str, premises: Iterable[str]) -> None:
        bucket = self._used.setdefault(side, [])
        for p in premises:
            if not any(normalise(p) == normalise(q) for q in bucket):
                bucket.append(p)

    def _vector(self, text: str) -> list[float] | None:
        if self.embed is None:
            return None
        if text not in self._vectors:
            try:
                self._vectors[text] = self.embed([text])[0]
            except Exception:  # a backend without embeddings: fall back to text only
                self.embed = None
                return None
        return self._vectors[text]

    def duplicate_of(self, text: str, candidates: Iterable[str]) -> str | None:
        """The first candidate ``text`` near-duplicates, or None."""
        cands = list(candidates)
        for c in cands:
            if similarity(text, c) >= self.threshold:
                return c
        v = self._vector(text)
        if v is not None:
            for c in cands:
                w = self._vector(c)
                if (
                    w is not None
                    and polarity(c) == polarity(text)
                    and _cosine(v, w) >= self.embed_threshold
                ):
                    return c
        return None

    def reused(self, side: str, premises: Iterable[str]) -> list[tuple[str, str]]:
        """Pairs (new premise, earlier premise of the same side) that are near-duplicates."""
        earlier = self._used.get(side, [])
        out = []
        for p in premises:
            hit = self.duplicate_of(p, earlier)
            if hit is not None:
                out.append((p, hit))
        return out


def _contains(outer: str, inner: str) -> bool:
    """Whole-word containment of a phrase of at least two words."""
    return len(inner.split()) >= 2 and f" {inner} " in f" {outer} "


def best_match(text: str, candidates: Sequence[str], *, threshold: float = 0.6) -> int | None:
    """Index of the candidate ``text`` refers to (equal, contained, or similar enough), or None."""
    nt = normalise(text)
    if not nt:
        return None
    scores = []
    for i, c in enumerate(candidates):
        nc = normalise(c)
        if nt == nc:
            return i
        contained = _contains(nc, nt) or _contains(nt, nc)
        scores.append((1.0 if contained else similarity(text, c), i))
    if not scores:
        return None
    score, i = max(scores)
    return i if score >= threshold else None
