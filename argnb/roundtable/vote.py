"""The Schulze method: the learners' rankings of the candidate statements decide the closing.

Why Schulze: it elects the candidate that beats every other one head to head when there is one
(a Condorcet winner), and otherwise resolves the cycle by the strongest chains of head-to-head
wins ("beatpaths"), so a statement cannot win by splitting its rivals' support. A ranking names
candidates best first; candidates it leaves out rank below all it names, tied among themselves.

``d[x][y]`` counts the voters preferring ``x`` to ``y``; a link ``x -> y`` has strength
``d[x][y]`` when ``d[x][y] > d[y][x]`` (winning votes), else 0; ``p[x][y]`` is the strength of
the strongest path from ``x`` to ``y`` (the strength of a path is its weakest link). ``x`` beats
``y`` when ``p[x][y] > p[y][x]``; this relation is transitive, so the order is well defined.

    >>> schulze([["A", "B", "C"]] * 4 + [["B", "C", "A"]] * 3 + [["C", "A", "B"]] * 2)
    ['A', 'B', 'C']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from argnb.errors import ArgnbError

Matrix = dict[str, dict[str, int]]


@dataclass(frozen=True)
class Election:
    """A counted election: the order (best first), the matrices behind it, and the ties."""

    candidates: tuple[str, ...]
    ballots: tuple[tuple[str, ...], ...]
    d: Matrix
    p: Matrix
    order: tuple[str, ...]
    #: groups of candidates neither of which beats the other (broken by the candidates' order)
    ties: tuple[tuple[str, ...], ...] = field(default=())

    @property
    def winner(self) -> str:
        return self.order[0]

    def beats(self, x: str, y: str) -> bool:
        return self.p[x][y] > self.p[y][x]


def _check(ballots: Sequence[Sequence[str]], candidates: Sequence[str] | None) -> tuple[str, ...]:
    if not ballots:
        raise ArgnbError("no ballots to count", hint="each voter ranks the candidates first")
    seen: list[str] = list(candidates or ())
    if len(set(seen)) != len(seen):
        raise ArgnbError(f"the candidates repeat: {seen}", hint="give each candidate one id")
    for i, ballot in enumerate(ballots, start=1):
        ranked = [str(c) for c in ballot]
        if len(set(ranked)) != len(ranked):
            raise ArgnbError(
                f"ballot {i} ranks a candidate twice: {ranked}", hint="rank each one once"
            )
        for c in ranked:
            if c not in seen:
                if candidates is not None:
                    raise ArgnbError(
                        f"ballot {i} ranks {c!r}, which is not a candidate",
                        hint=f"the candidates are {', '.join(seen)}",
                    )
                seen.append(c)
    if not seen:
        raise ArgnbError("there are no candidates", hint="rank at least one")
    return tuple(seen)


def pairwise(ballots: Sequence[Sequence[str]], candidates: Sequence[str]) -> Matrix:
    """``d[x][y]``: how many ballots rank ``x`` above ``y`` (unranked ones below all ranked)."""
    d: Matrix = {x: {y: 0 for y in candidates if y != x} for x in candidates}
    for ballot in ballots:
        rank = {c: i for i, c in enumerate(ballot)}
        last = len(rank)
        for x in candidates:
            for y in candidates:
                if x != y and rank.get(x, last) < rank.get(y, last):
                    d[x][y] += 1
    return d


def strongest_paths(d: Matrix, candidates: Sequence[str]) -> Matrix:
    """``p[x][y]``: the strength of the strongest path from ``x`` to ``y`` (a widest-path
    Floyd-Warshall over the winning links)."""
    p: Matrix = {
        x: {y: (d[x][y] if d[x][y] > d[y][x] else 0) for y in candidates if y != x}
        for x in candidates
    }
    for k in candidates:
        for i in candidates:
            if i == k:
                continue
            for j in candidates:
                if j in (i, k):
                    continue
                p[i][j] = max(p[i][j], min(p[i][k], p[k][j]))
    return p


def elect(ballots: Sequence[Sequence[str]], candidates: Sequence[str] | None = None) -> Election:
    """Count ``ballots`` (each a ranking, best first). ``candidates``: every id that may be
    ranked, in the order that breaks ties (default: as first ranked)."""
    names = _check(ballots, candidates)
    cast = tuple(tuple(str(c) for c in b) for b in ballots)
    d = pairwise(cast, names)
    p = strongest_paths(d, names)
    wins = {x: sum(p[x][y] > p[y][x] for y in names if y != x) for x in names}
    order = tuple(sorted(names, key=lambda x: (-wins[x], names.index(x))))
    ties: list[tuple[str, ...]] = []
    i = 0
    while i < len(order):  # in a linear extension, the unbeaten neighbours form the ties
        j = i + 1
        while j < len(order) and all(p[a][order[j]] == p[order[j]][a] for a in order[i:j]):
            j += 1
        if j - i > 1:
            ties.append(order[i:j])
        i = j
    return Election(names, cast, d, p, order, tuple(ties))


def schulze(ballots: Sequence[Sequence[str]], candidates: Sequence[str] | None = None) -> list[str]:
    """The Schulze order of the candidates, best first (ties broken by ``candidates``' order)."""
    return list(elect(ballots, candidates).order)
