"""Graders for ``exercises/04_debate`` (no model needed).

Each check runs the learner's function or answer against values computed here at grading time
(never a literal answer in the notebook), raises ``AssertionError`` with a hint when something is
wrong, and returns a short message when all is right. The keys of the two by-hand exercises are
stored as salted hashes, so neither the notebook nor this file states them; the feedback still
names what to look at -- for a missed scheme, the critical question that would have found it.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from argnb.debate.schemes import LABELS, load_schemes, score

_SALT = "argnb-04"


def _h(*parts: object) -> str:
    return hashlib.sha256("|".join([_SALT, *map(str, parts)]).encode()).hexdigest()[:16]


# -- exercise 1: scheme priors ------------------------------------------------------------
#: five retrieved passages and their labels (scheme -> label; None: used but not scored)
RETRIEVED: list[dict[str, Any]] = [
    {"id": "r1", "labels": {"example": "good", "cause_to_effect": "excellent"}},
    {"id": "r2", "labels": {"example": "excellent", "values": "poor"}},
    {"id": "r3", "labels": {"cause_to_effect": "good", "expert_opinion": "general"}},
    {"id": "r4", "labels": {"example": "good", "cause_to_effect": "good"}},
    {"id": "r5", "labels": {"analogy": None, "values": "general"}},
]


def reference_priors(rows: Sequence[Mapping[str, Any]], schemes: Sequence[str]) -> dict[str, float]:
    """Per scheme the mean label score over the rows (poor=1 .. excellent=4, absent 0)."""
    k = len(rows)
    return {s: sum(score(r["labels"].get(s)) for r in rows) / k if k else 0.0 for s in schemes}


def _random_rows(rng: random.Random, ids: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for i in range(rng.randint(1, 8)):
        used = rng.sample(list(ids), rng.randint(0, 3))
        rows.append({"id": f"x{i}", "labels": {s: rng.choice([*LABELS, None]) for s in used}})
    return rows


def check_priors(fn: Callable[[list[dict[str, Any]], list[str]], Mapping[str, float]]) -> str:
    """Grade ``priors(rows, schemes) -> {scheme: mean score}``."""
    ids = list(load_schemes().ids)
    cases = [RETRIEVED, RETRIEVED[:2], [{"id": "z", "labels": {}}]]
    rng = random.Random(4)
    cases += [_random_rows(rng, ids) for _ in range(200)]
    for n, rows in enumerate(cases, 1):
        got = fn([dict(r) for r in rows], list(ids))
        want = reference_priors(rows, ids)
        assert isinstance(got, Mapping), f"case {n}: return a dict scheme -> mean, not {got!r}"
        missing = set(ids) - set(got)
        assert not missing, f"case {n}: give a mean for every scheme ({len(missing)} missing)"
        wrong = [s for s in ids if not math.isclose(got[s], want[s], abs_tol=1e-9)]
        assert not wrong, (
            f"case {n} ({len(rows)} passages): {len(wrong)} mean(s) are off. Divide by the "
            "number of passages, not by the number that use the scheme; an unused scheme and a "
            "used-but-unscored one both count 0."
        )
    return f"right on {len(cases)} tables"


def check_kept(fn: Callable[[Mapping[str, float], float], Iterable[str]]) -> str:
    """Grade ``kept(priors, threshold) -> schemes above the threshold``."""
    cases: list[tuple[dict[str, float], float]] = [
        ({"a": 2.0, "b": 2.01, "c": 0.0}, 2.0),
        ({"a": 3.5, "b": 1.0}, 2.0),
        ({"a": 2.5}, 3.0),
        ({}, 2.0),
    ]
    for n, (pri, t) in enumerate(cases, 1):
        got = set(fn(dict(pri), t))
        want = {s for s, v in pri.items() if v > t}
        assert got == want, (
            f"case {n}: threshold {t}: {len(got ^ want)} scheme(s) wrong -- keep a scheme only "
            "when its mean is strictly above the threshold"
        )
    return "right: strictly above the threshold"


# -- exercise 2: re-rank and recall ----------------------------------------------------------
def reference_rerank(
    query: Sequence[float], candidates: Mapping[str, Sequence[float]], k: int
) -> list[str]:
    """Candidate ids by cosine with ``query``, highest first; ties keep the candidates' order;
    a zero vector has cosine 0."""

    def cos(a: Sequence[float], b: Sequence[float]) -> float:
        na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(x * x for x in b))
        return (
            0.0 if na == 0 or nb == 0 else sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)
        )

    order = list(candidates)
    scored = sorted(order, key=lambda c: (-round(cos(query, candidates[c]), 12), order.index(c)))
    return scored[:k]


def reference_recall(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    rel = set(relevant)
    return len(set(ranked[:k]) & rel) / len(rel) if rel else 0.0


def check_rerank(
    fn: Callable[[Sequence[float], dict[str, list[float]], int], Sequence[str]],
) -> str:
    fixed = [
        ([1.0, 0.0], {"a": [0.0, 1.0], "b": [1.0, 0.1], "c": [2.0, 0.0]}, 2),
        ([1.0, 1.0], {"a": [1.0, 1.0], "b": [2.0, 2.0], "c": [-1.0, -1.0]}, 3),  # a tie
        ([1.0, 0.0], {"z": [0.0, 0.0], "a": [-1.0, 0.0]}, 2),  # a zero vector
    ]
    rng = random.Random(7)
    for _ in range(150):
        dim = rng.randint(2, 6)
        cands = {
            f"c{i}": [rng.choice([0, 1, -1, 0.5]) for _ in range(dim)]
            for i in range(rng.randint(1, 9))
        }
        fixed.append(([rng.uniform(-1, 1) for _ in range(dim)], cands, rng.randint(1, 5)))
    for n, (q, cands, k) in enumerate(fixed, 1):
        got = list(fn(list(q), {c: list(v) for c, v in cands.items()}, k))
        want = reference_rerank(q, cands, k)
        assert len(got) == len(want), f"case {n}: return the top {k} (or all, when fewer)"
        assert got == want, (
            f"case {n}: the order is not by cosine similarity"
            + (" (note: equal cosines keep the candidates' order)" if n == 2 else "")
            + (" (note: a zero vector has cosine 0)" if n == 3 else "")
        )
    return f"right on {len(fixed)} cases, ties and zero vectors included"


def check_recall(fn: Callable[[Sequence[str], set[str], int], float]) -> str:
    cases = [
        (["a", "b", "c", "d"], {"a", "d", "x"}, 2),
        (["a", "b", "c", "d"], {"a", "d", "x"}, 4),
        (["a"], {"b"}, 5),
        (["a", "b"], {"a", "b"}, 1),
    ]
    for n, (ranked, rel, k) in enumerate(cases, 1):
        got = fn(list(ranked), set(rel), k)
        assert math.isclose(got, reference_recall(ranked, rel, k)), (
            f"case {n}: recall@{k} is the share of the relevant items found in the top {k}"
        )
    return "right"


# -- exercise 3: which schemes does a passage use? -----------------------------------------
#: five short passages we wrote for this exercise
PASSAGES: list[str] = [
    "The national paediatric society, after reviewing twenty years of studies, advises against "
    "homework before the age of ten. We should follow the people who know this field best.",
    "Ghent is a city of our size, with a medieval centre of narrow streets just like ours. It "
    "closed that centre to cars and it worked there; a city so alike will see it work here.",
    "If we let platforms skip age checks, twelve-year-olds will keep meeting strangers online, "
    "and some of those meetings end in real harm. We cannot accept that risk.",
    "Childhood is for play and for family. A school that takes the evening away from children "
    "forgets what it is for.",
    "Noise from traffic raises stress hormones, and stress hormones disturb sleep; so the cars "
    "in our centre are one reason our residents sleep badly.",
]
#: per passage, salted hashes of the schemes it uses (our key)
_KEY: list[set[str]] = [
    {"17662bda3b34b251"},
    {"fe321cfa696d73b9"},
    {"3d6e9b3e92e2e2c3"},
    {"8dce0af8bef8eb06"},
    {"028808f0b1bd3d9f"},
]


def _uses(i: int, scheme: str) -> bool:
    return _h("scheme", i, scheme) in _KEY[i]


def check_labels(answers: Sequence[Iterable[str]]) -> str:
    """Grade the learner's scheme sets for :data:`PASSAGES` (ids from ``load_schemes()``)."""
    schemes = load_schemes()
    assert len(answers) == len(PASSAGES), (
        f"give one set of scheme ids per passage ({len(PASSAGES)})"
    )
    problems = []
    for i, given in enumerate(answers):
        given = {str(s) for s in given}
        unknown = given - set(schemes.ids)
        assert not unknown, f"passage {i + 1}: {sorted(unknown)} are not scheme ids ({schemes.ids})"
        for s in schemes.ids:
            used = _uses(i, s)
            if used and s not in given:
                q = schemes[s].critical_questions[0]
                problems.append(
                    f"passage {i + 1}: a scheme is missing -- a critical question this passage "
                    f"invites: “{q}”"
                )
            elif s in given and not used:
                problems.append(
                    f"passage {i + 1}: {s} is not what carries this passage -- ask its critical "
                    f"question: “{schemes[s].critical_questions[0]}” Does the passage give "
                    "anything for it to test?"
                )
    assert not problems, "\n".join(problems)
    return "all five passages labelled like our key"


# -- exercise 4: find the flaw ---------------------------------------------------------------
FLAW_KINDS = (
    "contradiction",
    "circular reasoning",
    "overgeneralization",
    "false dichotomy",
    "unsupported assumption",
)
#: predicate sets of an opponent, one flaw each
PREDICATE_SETS: list[list[str]] = [
    [
        "Cause(Homework, Stress)",
        "Supports(Stress, AbolishHomework)",
        "Negate(Cause(Homework, Stress))",
    ],
    [
        "Supports(Reliable(Survey), Trust(Survey))",
        "Supports(Trust(Survey), Reliable(Survey))",
        "Concludes(Reliable(Survey))",
    ],
    [
        "Observed(OneCity, CleanerAir)",
        "Cause(CarBan, CleanerAir)",
        "Concludes(Every(City), CleanerAirAfter(CarBan))",
    ],
    [
        "Either(KeepCars, CentreDies)",
        "Negate(KeepCars)",
        "Concludes(CentreDies)",
    ],
]
_FLAW_KEY: list[tuple[str, str]] = [
    ("5fdf4ba51232aad4", "463c4026e6249e1f"),
    ("8b0018d08e0c6472", "69ee79596d05f6ab"),
    ("03e9ce4dd5b6a9c2", "1a4aab0873dd0052"),
    ("cfdd15ca42c78051", "a3637e7a30c6e8ee"),
]
_HINTS = {
    "contradiction": "look for a claim and its negation",
    "circular reasoning": "look for a claim that, through another, supports itself",
    "overgeneralization": "look for a rule about all cases drawn from one",
    "false dichotomy": "look for two options presented as the only ones",
    "unsupported assumption": "look for a premise nothing supports that the conclusion needs",
}


def check_flaws(answers: Sequence[tuple[str, Iterable[int]]]) -> str:
    """Grade (kind, predicate numbers) per set of :data:`PREDICATE_SETS` (numbers from 1)."""
    assert len(answers) == len(PREDICATE_SETS), f"give one answer per set ({len(PREDICATE_SETS)})"
    problems = []
    for i, answer in enumerate(answers):
        kind, claims = answer
        assert kind in FLAW_KINDS, f"set {i + 1}: the kind must be one of {FLAW_KINDS}"
        nums = sorted({int(c) for c in claims})
        key_kind, key_claims = _FLAW_KEY[i]
        if _h("kind", i, kind) != key_kind:
            problems.append(f"set {i + 1}: not the flaw we see -- {_HINTS[kind]}: is there one?")
        elif _h("claims", i, nums) != key_claims:
            problems.append(
                f"set {i + 1}: the kind is right; now name exactly the predicates (numbers from "
                "1) that make the flaw, not the whole set"
            )
    assert not problems, "\n".join(problems)
    return "every flaw found, with the predicates that make it"


def _negated(p: str) -> str | None:
    m = re.fullmatch(r"Negate\((.*)\)", p)
    return m.group(1) if m else None


def reference_contradictions(predicates: Sequence[str]) -> set[tuple[int, int]]:
    """Index pairs (i, j) where predicate j is ``Negate(`` predicate i ``)`` (spaces ignored)."""
    norm = [re.sub(r"\s+", "", p) for p in predicates]
    out = set()
    for j, p in enumerate(norm):
        inner = _negated(p)
        if inner is None:
            continue
        out |= {(i, j) for i, q in enumerate(norm) if q == inner}
    return out


def check_contradictions(fn: Callable[[list[str]], Iterable[tuple[int, int]]]) -> str:
    atoms = ["Cause(A,B)", "Supports(B,C)", "Rain", "Increase(X, 5)", "Negate(Rain)"]
    cases = [
        PREDICATE_SETS[0],
        ["Cause(A, B)", "Negate(Cause(A,B))", "Negate(Negate(Cause(A,B)))"],
        ["Rain", "Wet"],
    ]
    rng = random.Random(11)
    for _ in range(200):
        ps = []
        for _ in range(rng.randint(1, 7)):
            a = rng.choice(atoms)
            ps.append(f"Negate({a})" if rng.random() < 0.4 else a)
        cases.append(ps)
    for n, ps in enumerate(cases, 1):
        got = {tuple(x) for x in fn(list(ps))}
        want = reference_contradictions(ps)
        assert got == want, (
            f"case {n} ({len(ps)} predicates): {len(got - want)} pair(s) too many, "
            f"{len(want - got)} missing -- a pair is (i, j) with predicate j = Negate(predicate "
            "i), counting from 0; ignore spaces"
        )
    return f"right on {len(cases)} sets"
