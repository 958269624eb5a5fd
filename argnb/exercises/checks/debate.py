"""Graders for ``exercises/04_debate`` (no model needed).

Each check runs the learner's function or answer against values computed here at grading time
(never a literal answer in the notebook), raises ``AssertionError`` with a hint when something is
wrong, and returns a short message when all is right.

* exercise 1 (scheme priors) is graded against retrieval's own step 4,
  :func:`argnb.debate.retrieve._priors`, run on a stand-in index built from the learner's table;
* exercise 2 (cosine re-rank, recall@k, nDCG@k) on fixed cases and random numpy vectors, with
  ties and zero vectors (conventions in :func:`check_rerank`);
* exercises 3 and 4 (label five passages, find the flaw in four predicate sets) compare with
  keys stored as salted hashes, so neither the notebook nor this file states them in plain text.
  Someone who reads this file could still try every answer against the hashes: the hashes keep
  the key out of sight, not out of reach. The feedback names what to look at -- for a missed
  scheme, the critical question that would have found it -- never the key itself.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from numbers import Real
from types import SimpleNamespace
from typing import Any

from argnb.debate.schemes import LABELS, load_schemes, score

_SALT = "argnb-04-debate"


def _h(*parts: object) -> str:
    return hashlib.sha256("|".join([_SALT, *map(str, parts)]).encode()).hexdigest()[:16]


# -- exercise 1: scheme priors ------------------------------------------------------------
#: six passages of our example memory (assets/debate/memory.jsonl, the car-free motion, pro
#: side) with our labels, in the order a retrieval might rank them
RETRIEVED: list[dict[str, Any]] = [
    {
        "id": "example/car-free/2.0",
        "labels": {"cause_to_effect": "good", "positive_consequences": "good"},
    },
    {"id": "example/car-free/0.0", "labels": {"example": "good", "positive_consequences": "good"}},
    {"id": "example/car-free/10.0", "labels": {"positive_consequences": "good", "example": "good"}},
    {"id": "example/car-free/6.0", "labels": {"expert_opinion": "good", "cause_to_effect": "good"}},
    {
        "id": "example/car-free/12.0",
        "labels": {"expert_opinion": "good", "positive_consequences": "general"},
    },
    {"id": "example/car-free/8.0", "labels": {"analogy": "general"}},
]


def scheme_ids() -> list[str]:
    """The scheme ids of ``schemes.yaml``, in its order."""
    return list(load_schemes().ids)


def _retrieval_priors(
    rows: Sequence[Mapping[str, Any]], k: int, threshold: float = 2.0
) -> tuple[dict[str, float], set[str]]:
    """What retrieval's step 4 makes of ``rows`` as its ranked hits: the mean per scheme over
    the first ``k`` and the schemes kept. Runs :func:`argnb.debate.retrieve._priors` itself on
    a stand-in index (ids, labels, scheme ids and the label-score matrix)."""
    import numpy as np

    from argnb.debate.retrieve import _priors

    ids = scheme_ids()
    idx = SimpleNamespace(
        ids=[str(r["id"]) for r in rows],
        labels=[dict(r["labels"]) for r in rows],
        scheme_ids=tuple(ids),
        scores=np.array(
            [[score(r["labels"].get(s)) for s in ids] for r in rows], dtype=np.int8
        ).reshape(len(rows), len(ids)),
    )
    top = np.arange(min(k, len(rows)))
    priors, kept, _ = _priors(idx, top, threshold)  # type: ignore[arg-type]
    return {p.scheme: p.mean for p in priors}, set(kept)


def _random_rows(rng: random.Random, ids: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for i in range(rng.randint(1, 8)):
        used = rng.sample(list(ids), rng.randint(0, 3))
        rows.append({"id": f"r{i}", "labels": {s: rng.choice([*LABELS, None]) for s in used}})
    return rows


def _copy(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": r["id"], "labels": dict(r["labels"])} for r in rows]


def _priors_cases() -> list[tuple[list[dict[str, Any]], int]]:
    ids = scheme_ids()
    cases = [(RETRIEVED, 5), (RETRIEVED, 3), (RETRIEVED, 1), (RETRIEVED, 6), (RETRIEVED, 10)]
    cases.append(([{"id": "u", "labels": {"values": None}}, {"id": "v", "labels": {}}], 2))
    rng = random.Random(4)
    cases += [(_random_rows(rng, ids), rng.randint(1, 9)) for _ in range(200)]
    return cases


def check_priors(fn: Callable[[list[dict[str, Any]], int], Mapping[str, float]]) -> str:
    """Grade ``priors(rows, k) -> {scheme: mean score over the first k rows}``."""
    ids = scheme_ids()
    cases = _priors_cases()
    for n, (rows, k) in enumerate(cases, 1):
        got = fn(_copy(rows), k)
        want, _ = _retrieval_priors(rows, k)
        where = f"case {n} ({len(rows)} passages, k = {k})"
        assert isinstance(got, Mapping), f"{where}: return a dict scheme -> mean, not {got!r}"
        missing = [s for s in ids if s not in got]
        assert not missing, (
            f"{where}: give a mean for every scheme in SCHEMES, 0 for the unused ones "
            f"({len(missing)} missing)"
        )
        assert all(isinstance(got[s], Real) for s in ids), f"{where}: every mean must be a number"
        wrong = [s for s in ids if not math.isclose(float(got[s]), want[s], abs_tol=1e-4)]
        if wrong:
            raise AssertionError(
                f"{where}: {len(wrong)} mean(s) are off. Only the first k passages count; "
                f"divide by how many of them there are ({min(k, len(rows))} here), not by "
                "the number that use the scheme. An unused scheme and a used-but-unscored one "
                "(None) both score 0."
            )
    return f"✓ the same priors as retrieval on {len(cases)} tables"


def check_kept(fn: Callable[..., Iterable[str]]) -> str:
    """Grade ``kept(priors, threshold=2) -> the schemes retrieval keeps``."""
    ids = scheme_ids()
    rng = random.Random(5)
    cases: list[tuple[list[dict[str, Any]], int, float]] = [
        (RETRIEVED, 5, 2.0),
        (RETRIEVED, 3, 2.0),  # a mean of exactly 2
        (RETRIEVED, 6, 2.0),
        (RETRIEVED, 2, 3.0),  # a mean of exactly 3
        (RETRIEVED, 5, 1.0),
    ]
    for _ in range(150):
        cases.append((_random_rows(rng, ids), rng.randint(1, 8), rng.choice([1.0, 2.0, 2.5, 3.0])))
    for n, (rows, k, t) in enumerate(cases, 1):
        pri, want = _retrieval_priors(rows, k, t)
        got = fn(dict(pri), t)
        assert not isinstance(got, str), f"case {n}: return a set or list of scheme ids"
        got = set(got)
        assert got == want, (
            f"case {n}: threshold {t:g}: {len(got ^ want)} scheme(s) wrong -- keep a scheme "
            "only when its mean is strictly above the threshold"
        )
    pri, want = _retrieval_priors(RETRIEVED, 5)
    assert set(fn(dict(pri))) == want, (
        "kept(priors) without a threshold: the default threshold is 2 (keep a mean above 'general')"
    )
    return f"✓ the same plan as retrieval on {len(cases)} cases"


# -- exercise 2: re-rank and recall ----------------------------------------------------------
_TIE_TOL = 1e-9


def _cosine(q: Any, v: Any) -> float:
    import numpy as np

    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    nq, nv = float(np.linalg.norm(q)), float(np.linalg.norm(v))
    return 0.0 if nq == 0 or nv == 0 else float(q @ v) / (nq * nv)


def _exact_key(q: Any, v: Any) -> Fraction:
    """A number ordered exactly like the cosine (no rounding): sign(q.v) (q.v)^2 / |v|^2,
    computed with fractions; 0 when either vector is zero. Equal keys = a true tie."""
    qs = [Fraction(float(x)) for x in q]
    vs = [Fraction(float(x)) for x in v]
    nv = sum(x * x for x in vs)
    if nv == 0 or all(x == 0 for x in qs):
        return Fraction(0)
    d = sum(a * b for a, b in zip(qs, vs, strict=True))
    return (1 if d >= 0 else -1) * d * d / nv


def _rerank_problem(
    query: Any, cands: Mapping[str, Any], k: int, got: Any, *, strict: bool = True
) -> str | None:
    """Why ``got`` is not a valid top k of ``cands`` by cosine (None: it is).

    Valid: the ids of the first min(k, n) candidates when sorted by cosine, highest first,
    where a true tie (equal cosines, decided exactly) keeps the given (BM25) order; cosines
    that differ by less than 1e-9 without being equal may come in either order (rounding).

    ``strict=False`` enforces the order only for ties at cosine 0 (zero vectors, a zero query),
    which every implementation computes exactly. Two identical non-zero vectors can get
    cosines one rounding step apart from a matrix product (BLAS treats rows differently), so
    a learner's stable sort may legitimately swap them; the fixed cases, whose ties are exact
    in floating point however they are computed, are graded strictly."""
    order = list(cands)
    pos = {c: i for i, c in enumerate(order)}
    try:
        got = [str(x) for x in got]
    except TypeError:
        return "return a list of candidate ids"
    want_len = min(k, len(order))
    if len(got) != want_len:
        return f"return the top k ids ({want_len} here: k = {k}, {len(order)} candidates)"
    if len(set(got)) != len(got) or set(got) - set(order):
        return "return each candidate id at most once, and only ids of the candidates"
    cos = {c: _cosine(query, v) for c, v in cands.items()}
    key = {c: _exact_key(query, v) for c, v in cands.items()}
    rest = [c for c in order if c not in got]

    def before(a: str, b: str) -> bool:
        """Must ``a`` come before ``b``?"""
        if key[a] == key[b] and (strict or key[a] == 0):
            return pos[a] < pos[b]
        return key[a] != key[b] and cos[a] > cos[b] + _TIE_TOL

    placed = [(a, b) for i, a in enumerate(got) for b in got[i + 1 :]]
    placed += [(a, b) for a in got for b in rest]  # everything kept beats everything left out
    for a, b in placed:
        if before(b, a):
            if key[a] == key[b]:
                return "equal cosines must keep the candidates' (BM25) order -- sort stably"
            return "a candidate with a higher cosine comes later or is left out"
    return None


def _rerank_cases() -> list[tuple[Any, dict[str, Any], int]]:
    import numpy as np

    a = np.array
    cases: list[tuple[Any, dict[str, Any], int]] = [
        (a([1.0, 0.0]), {"a": a([0.0, 1.0]), "b": a([1.0, 0.1]), "c": a([2.0, 0.0])}, 2),
        (a([1.0, 1.0]), {"z": a([1.0, 1.0]), "y": a([0.0, 1.0]), "x": a([1.0, 0.0])}, 3),
        (
            a([1.0, 0.0]),
            {"z0": a([0.0, 0.0]), "neg": a([-1.0, 0.0]), "ort": a([0.0, 3.0]), "z1": a([0.0, 0.0])},
            4,
        ),
        (a([0.0, 0.0, 0.0]), {"b": a([1.0, 2.0, 3.0]), "a": a([3.0, 2.0, 1.0])}, 1),
        (a([0.5, -1.0]), {"p": a([1.0, 1.0])}, 3),
    ]
    rng = np.random.default_rng(7)
    for _ in range(150):
        dim, n = int(rng.integers(2, 9)), int(rng.integers(1, 11))
        vecs = [rng.normal(size=dim) for _ in range(n)]
        for i in range(n):
            r = rng.random()
            if r < 0.1:
                vecs[i] = np.zeros(dim)
            elif r < 0.25 and i:
                vecs[i] = vecs[int(rng.integers(0, i))].copy()  # an identical vector: a tie
        q = np.zeros(dim) if rng.random() < 0.05 else rng.normal(size=dim)
        cases.append((q, {f"c{i}": v for i, v in enumerate(vecs)}, int(rng.integers(1, n + 3))))
    return cases


def check_rerank(fn: Callable[[Any, dict[str, Any], int], Sequence[str]]) -> str:
    """Grade ``rerank(query, candidates, k) -> ids``: ``candidates`` maps id -> numpy vector in
    BM25 order. Conventions: a zero vector (query or candidate) has cosine 0 with everything;
    equal cosines keep the BM25 order; at most k ids (all of them when there are fewer)."""
    cases = _rerank_cases()
    for n, (q, cands, k) in enumerate(cases, 1):
        got = fn(q.copy(), {c: v.copy() for c, v in cands.items()}, k)
        problem = _rerank_problem(q, cands, k, got, strict=n <= 5)
        if problem is None:
            continue
        zero = not q.any() or any(not v.any() for v in cands.values())
        note = " (this case has a zero vector: its cosine is 0, not nan)" if zero else ""
        if n <= 5:
            shown = ", ".join(f"{c}={v.tolist()}" for c, v in cands.items())
            where = f"case {n} (query {q.tolist()}, candidates {shown}, k = {k})"
        else:
            where = f"random case {n} ({len(cands)} candidates of dimension {len(q)}, k = {k})"
        raise AssertionError(f"{where}: {problem}{note}")
    return f"✓ right on {len(cases)} cases, ties and zero vectors included"


def _recall(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    rel = set(relevant)
    return len(set(list(ranked)[:k]) & rel) / len(rel) if rel else 0.0


def _ndcg(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    rel = set(relevant)
    dcg = sum(1 / math.log2(i + 2) for i, r in enumerate(list(ranked)[:k]) if r in rel)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(rel))))
    return dcg / ideal if ideal else 0.0


_RANKING_CASES: list[tuple[list[str], set[str], int]] = [
    (["a", "b", "c", "d"], {"a", "d", "x"}, 2),
    (["a", "b", "c", "d"], {"a", "d", "x"}, 4),
    (["a", "b", "c", "d"], {"d"}, 4),
    (["a"], {"b"}, 5),
    (["a", "b"], {"a", "b"}, 1),
    (["a", "b", "c"], set(), 2),
    ([], {"a"}, 3),
]


def _ranking_cases() -> list[tuple[list[str], set[str], int]]:
    rng = random.Random(12)
    cases = list(_RANKING_CASES)
    for _ in range(200):
        pool = [f"d{i}" for i in range(rng.randint(1, 15))]
        ranked = rng.sample(pool, rng.randint(0, len(pool)))
        relevant = set(rng.sample(pool, rng.randint(0, len(pool))))
        cases.append((ranked, relevant, rng.randint(1, 12)))
    return cases


def _check_ranking_metric(
    fn: Callable[[list[str], set[str], int], float],
    ref: Callable[[Sequence[str], Iterable[str], int], float],
    name: str,
    hint: str,
) -> int:
    cases = _ranking_cases()
    for n, (ranked, rel, k) in enumerate(cases, 1):
        got = fn(list(ranked), set(rel), k)
        assert isinstance(got, Real) and not isinstance(got, bool), (
            f"case {n}: return a number, not {got!r}"
        )
        if not math.isclose(float(got), ref(ranked, rel, k), rel_tol=1e-6, abs_tol=1e-7):
            where = (
                f"case {n} (ranked {ranked}, relevant {sorted(rel)}, k = {k})"
                if n <= len(_RANKING_CASES)
                else f"random case {n} ({len(ranked)} ranked, {len(rel)} relevant, k = {k})"
            )
            extra = " (nothing is relevant: the convention is 0)" if not rel else ""
            raise AssertionError(f"{where}: {name} is off -- {hint}{extra}")
    return len(cases)


def check_recall(fn: Callable[[list[str], set[str], int], float]) -> str:
    """Grade ``recall_at_k(ranked, relevant, k)``: the share of the relevant ids in the top k
    (0 when nothing is relevant)."""
    n = _check_ranking_metric(
        fn,
        _recall,
        "recall@k",
        "divide the relevant ids found in the first k by the number of relevant ids (all of "
        "them, also those never retrieved)",
    )
    return f"✓ right on {n} cases"


def check_ndcg(fn: Callable[[list[str], set[str], int], float]) -> str:
    """Grade ``ndcg_at_k(ranked, relevant, k)`` with binary gains (see the notebook)."""
    n = _check_ranking_metric(
        fn,
        _ndcg,
        "nDCG@k",
        "a relevant id at rank r (from 1) adds 1/log2(r + 1); divide by the best sum any "
        "ranking could reach, with min(k, number of relevant) relevant ids on top",
    )
    return f"✓ right on {n} cases"


# -- exercise 3: which schemes does a passage use? -----------------------------------------
#: five short passages we wrote for this exercise
PASSAGES: list[str] = [
    "Sleep researchers at the university hospital, who have followed teenagers' sleep for "
    "fifteen years, say that a first lesson at eight o'clock takes away the very hours of sleep "
    "adolescents need most. On sleep, I would rather trust them than the timetable.",
    "Three towns in our region made their buses free. In each of them, the number of "
    "passengers rose by about a third within a year. Free fares fill buses.",
    "No one lets a fourteen-year-old sign a loan: a loan binds you for years, and at fourteen "
    "you cannot weigh what you are giving away. Accepting a social network's terms binds you "
    "for years too, to things you cannot weigh at fourteen. It deserves the same age limit.",
    "Closing the library on Sundays saves the council a little money, and it takes from pupils "
    "who have no quiet room at home the one place where they can revise before Monday's exams. "
    "A public library exists so that a child's chances do not depend on the size of the family "
    "flat.",
    "A street tree cools the air beneath it: its shade, and the water its leaves give off, lower "
    "the temperature of the pavement by several degrees. Plant one in every street of the old "
    "quarter, and the elderly people who live there will get through the summer heatwaves more "
    "safely.",
]
#: per passage, salted hashes of the schemes it must be labelled with ("need") and of those we
#: also accept ("ok": a defensible second reading)
_KEY: list[frozenset[str]] = [
    frozenset({"2d3b0d1cbb1294f1", "cd40e8b601508b4c"}),
    frozenset({"13e168533745b55d", "58767d2ab86eac4e"}),
    frozenset({"0c9a0dc4f5220a2d"}),
    frozenset({"378c2295b08facaf", "4e30cf102fff61f9", "8eb02d1f9c99d0c3"}),
    frozenset({"b4d408f69b84e2cd", "d11329516b968442"}),
]


def _role(i: int, scheme: str) -> str | None:
    """'need', 'ok' or None: does passage ``i`` use ``scheme`` in our key?"""
    for role in ("need", "ok"):
        if _h("scheme", i, scheme, role) in _KEY[i]:
            return role
    return None


#: which critical question a hint asks (its index in schemes.yaml; the first by default): the
#: one that tells the scheme apart best, not one every claim invites ("is it true?")
_ASK = {"example": 2}


def _question(scheme: str) -> str:
    questions = load_schemes()[scheme].critical_questions
    return questions[min(_ASK.get(scheme, 0), len(questions) - 1)]


def check_labels(answers: Sequence[Iterable[str]]) -> str:
    """Grade the learner's scheme sets for :data:`PASSAGES` (ids from ``load_schemes()``)."""
    ids = scheme_ids()
    assert not isinstance(answers, str | Mapping) and len(answers) == len(PASSAGES), (
        f"give a list with one set of scheme ids per passage ({len(PASSAGES)})"
    )
    problems: list[str] = []
    right = 0
    for i, given in enumerate(answers):
        assert not isinstance(given, str), (
            f"passage {i + 1}: give a set of scheme ids, e.g. {{'values'}}, not a string"
        )
        given = {str(s).strip() for s in given}
        unknown = given - set(ids)
        assert not unknown, (
            f"passage {i + 1}: {sorted(unknown)} are not scheme ids; use those of SCHEMES: {ids}"
        )
        assert given, f"passage {i + 1}: every passage uses at least one scheme"
        found = []
        for s in ids:
            role = _role(i, s)
            if role == "need" and s not in given:
                found.append(
                    f"passage {i + 1}: a scheme is missing -- ask of the passage: “{_question(s)}”"
                )
            elif s in given and role is None:
                found.append(
                    f"passage {i + 1}: {s} does not carry this passage -- its critical question "
                    f"“{_question(s)}” finds nothing to test here"
                )
        right += not found
        problems += found
    assert not problems, (
        f"{right} of {len(PASSAGES)} passages labelled like our key:\n" + "\n".join(problems)
    )
    return f"✓ all {len(PASSAGES)} passages labelled like our key"


# -- exercise 4: find the flaw ---------------------------------------------------------------
#: the kinds to choose from (the names :data:`argnb.debate.schemas.FLAW_KINDS` uses), in the order
#: the rules are tried
FLAW_KINDS: tuple[str, ...] = (
    "contradiction",
    "circular reasoning",
    "false dichotomy",
    "overgeneralization",
    "unsupported assumption",
)
#: the rule that finds each kind in a set of predicates (shown in the notebook)
RULES: dict[str, str] = {
    "contradiction": "a predicate P and Negate(P) are both in the set",
    "circular reasoning": "following Supports(A, B) from a claim leads back to that same claim",
    "false dichotomy": (
        "Either(A, B) treats two options as the only ones, and Negate of one of them is used "
        "to conclude the other"
    ),
    "overgeneralization": (
        "All(X, P) -- every X has P -- is supported by Observed(...) of a single case"
    ),
    "unsupported assumption": (
        "a claim A in Supports(A, C) is backed by nothing: no Observed(S, A) and no "
        "Supports(B, A) with a backed B"
    ),
}
#: predicate sets of an opponent (one flaw each; numbers count from 1)
PREDICATE_SETS: list[list[str]] = [
    [
        "Cause(Homework, Stress)",
        "Supports(Stress, AbolishHomework)",
        "Cause(Tests, Stress)",
        "Negate(Cause(Homework, Stress))",
    ],
    [
        "Supports(Safe(Platform), Trusted(Platform))",
        "Supports(Trusted(Platform), ManyUsers(Platform))",
        "Supports(ManyUsers(Platform), Safe(Platform))",
        "Concludes(Safe(Platform))",
    ],
    [
        "Observed(TeacherSurvey, SetOutOfHabit(Homework))",
        "Supports(SetOutOfHabit(Homework), AbolishHomework)",
        "Supports(Useless(Homework), AbolishHomework)",
        "Concludes(AbolishHomework)",
    ],
    [
        "Cause(Cars, Congestion)",
        "Either(BanAllCars, Accept(Congestion))",
        "Negate(Accept(Congestion))",
        "Concludes(BanAllCars)",
    ],
]
#: per set: the salted hash of the kind, and of every predicate number the flaw needs ("need")
#: or may name as well ("ok")
_FLAW_KEY: list[tuple[str, frozenset[str]]] = [
    ("dc0f0c68f67b4208", frozenset({"58e7e0877b7a895b", "6ccb5f8c67f44d92"})),
    (
        "a3216f1d684b9547",
        frozenset({"4df218e1b291598e", "567762e7188c62d2", "d4a4f5cd905aa847", "f6f50a514f455c94"}),
    ),
    ("7e3bd7acf611ab47", frozenset({"4a56ae046a1e5e53", "b4cac0362f9c32e9"})),
    ("6c5efa4646b1c277", frozenset({"657385c2eca0c0f2", "c42b494eb792c1d0", "e53d52c88d3f48ec"})),
]


def _kind_of(kind: object) -> str:
    return " ".join(str(kind).lower().split())


def _answers(answers: Sequence[Any]) -> list[tuple[str, set[int]]]:
    assert not isinstance(answers, str | Mapping) and len(answers) == len(PREDICATE_SETS), (
        f"give a list with one (kind, [predicate numbers]) per set ({len(PREDICATE_SETS)})"
    )
    out = []
    for i, answer in enumerate(answers, 1):
        try:
            kind, claims = answer
            nums = {int(c) for c in claims}
        except (TypeError, ValueError):
            raise AssertionError(
                f"set {i}: answer with a pair (kind, [predicate numbers]), e.g. "
                "('contradiction', [1, 2])"
            ) from None
        kind = _kind_of(kind)
        assert kind in FLAW_KINDS, f"set {i}: the kind must be one of {list(FLAW_KINDS)}"
        size = len(PREDICATE_SETS[i - 1])
        assert all(1 <= x <= size for x in nums), f"set {i}: predicate numbers go from 1 to {size}"
        out.append((kind, nums))
    return out


def _kind_problems(answers: list[tuple[str, set[int]]]) -> list[str]:
    problems = []
    for i, (kind, _) in enumerate(answers):
        if _h("kind", i, kind) != _FLAW_KEY[i][0]:
            problems.append(
                f"set {i + 1}: {kind!r} is not the flaw the rules find first. Its rule: "
                f"{RULES[kind]}. Does it fire here -- and does a rule listed before it fire "
                "first?"
            )
    return problems


def check_flaw_kinds(answers: Sequence[Any]) -> str:
    """Grade the kinds alone of (kind, predicate numbers) per set of :data:`PREDICATE_SETS`."""
    problems = _kind_problems(_answers(answers))
    assert not problems, "\n".join(problems)
    return f"✓ the kind of flaw is right in all {len(PREDICATE_SETS)} sets"


def check_flaws(answers: Sequence[Any]) -> str:
    """Grade (kind, predicate numbers from 1) per set of :data:`PREDICATE_SETS`: the kind and
    the predicates the flaw concerns (those the rule uses; a few others are accepted too)."""
    parsed = _answers(answers)
    problems = _kind_problems(parsed)
    for i, (kind, nums) in enumerate(parsed):
        if _h("kind", i, kind) != _FLAW_KEY[i][0]:
            continue
        key = _FLAW_KEY[i][1]
        size = len(PREDICATE_SETS[i])
        need = {n for n in range(1, size + 1) if _h("claim", i, n, "need") in key}
        ok = {n for n in range(1, size + 1) if _h("claim", i, n, "ok") in key}
        missing, extra = len(need - nums), len(nums - need - ok)
        if missing or extra:
            problems.append(
                f"set {i + 1}: the kind is right. Predicates: {missing} that the rule points "
                f"at are missing, {extra} of those you named have no part in the flaw"
            )
    assert not problems, "\n".join(problems)
    return f"✓ every flaw found, with the predicates that make it ({len(PREDICATE_SETS)} sets)"


def _contradictions(predicates: Sequence[str]) -> set[tuple[int, int]]:
    """Index pairs (i, j): predicate j is ``Negate(`` predicate i ``)``, spaces ignored."""
    norm = [re.sub(r"\s+", "", p) for p in predicates]
    return {(i, j) for j, q in enumerate(norm) for i, p in enumerate(norm) if q == f"Negate({p})"}


def _spaced(p: str, rng: random.Random) -> str:
    """``p`` with spaces added or not after commas and inside Negate's parentheses."""
    p = re.sub(r",\s*", lambda _: rng.choice([",", ", ", " , "]), p)
    if rng.random() < 0.2:
        p = p.replace("Negate(", "Negate( ", 1)
    return p


def _contradiction_cases() -> list[list[str]]:
    cases = [
        list(PREDICATE_SETS[0]),
        ["Cause(A, B)", "Negate(Cause(A,B))", "Negate(Negate(Cause(A, B)))"],
        ["Rain", "Wet", "Negate(Wet)", "Wet"],
        ["Negate(Cause(A,B))", "Cause(B,A)"],
        ["Supports(Negate(X), Y)", "Negate(Supports(X, Y))"],
    ]
    atoms = ["Cause(A,B)", "Cause(B,A)", "Supports(B,C)", "Rain", "Increase(X,5)", "Negate(Rain)"]
    rng = random.Random(11)
    for _ in range(200):
        ps = []
        for _ in range(rng.randint(0, 7)):
            a = rng.choice(atoms)
            ps.append(_spaced(f"Negate({a})" if rng.random() < 0.4 else a, rng))
        cases.append(ps)
    return cases


def check_contradictions(fn: Callable[[list[str]], Iterable[tuple[int, int]]]) -> str:
    """Grade ``contradictions(predicates) -> {(i, j), ...}``: predicate j is Negate(predicate i),
    indexes from 0, spaces ignored."""
    cases = _contradiction_cases()
    for n, ps in enumerate(cases, 1):
        result = fn(list(ps))  # an error in the learner's function keeps its own traceback
        try:
            got = {(int(a), int(b)) for a, b in result}
        except (TypeError, ValueError):
            raise AssertionError(
                f"case {n}: return pairs of indexes (i, j), e.g. {{(0, 3)}}"
            ) from None
        want = _contradictions(ps)
        if got != want:
            shown = f" {ps}" if n <= 5 else ""
            raise AssertionError(
                f"case {n}{shown}: {len(got - want)} pair(s) too many, {len(want - got)} "
                "missing -- a pair is (i, j) with predicate j = Negate(predicate i): the index "
                "of P first, then that of Negate(P), counting from 0; spaces do not matter"
            )
    return f"✓ right on {len(cases)} sets of predicates"
