"""The graders of exercises/04_debate: right answers pass, usual mistakes get a hint, never the key."""

from __future__ import annotations

import inspect
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from argnb.debate.retrieve import retrieve
from argnb.debate.schemas import FLAW_KINDS as LOGIC_FLAW_KINDS
from argnb.debate.schemes import load_schemes
from argnb.exercises.checks import debate as c

ROOT = Path(__file__).resolve().parents[2]
SCORE = {"poor": 1, "general": 2, "good": 3, "excellent": 4}
SCHEMES = list(load_schemes().ids)

RIGHT_LABELS = [
    {"expert_opinion"},
    {"example"},
    {"analogy"},
    {"negative_consequences", "values"},
    {"cause_to_effect", "positive_consequences"},
]
RIGHT_FLAWS = [
    ("contradiction", [1, 4]),
    ("circular reasoning", [1, 2, 3]),
    ("unsupported assumption", [3]),
    ("false dichotomy", [2]),
]


# -- right answers, written like a learner would -----------------------------------------------
def priors(rows, k):
    top = rows[:k]
    if not top:
        return {}
    return {s: sum(SCORE.get(r["labels"].get(s), 0) for r in top) / len(top) for s in SCHEMES}


def kept(p, threshold=2):
    return [s for s, v in p.items() if v > threshold]


def cosine(q, v):
    n = np.linalg.norm(q) * np.linalg.norm(v)
    return float(np.dot(q, v) / n) if n > 0 else 0.0


def rerank(query, candidates, k):
    return sorted(candidates, key=lambda c: -cosine(query, candidates[c]))[:k]


def rerank_normalised_first(query, candidates, k):
    """Another right way: unit vectors, one matrix product, a stable argsort."""
    ids = list(candidates)
    if not ids:
        return []
    m = np.array([candidates[i] for i in ids], dtype=float)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    m = np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)
    qn = np.linalg.norm(query)
    q = query / qn if qn > 0 else np.zeros_like(query, dtype=float)
    order = np.argsort(-(m @ q), kind="stable")
    return [ids[i] for i in order[:k]]


def recall_at_k(ranked, relevant, k):
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


def ndcg_at_k(ranked, relevant, k):
    dcg = sum(1 / math.log2(r + 1) for r, d in enumerate(ranked[:k], 1) if d in relevant)
    best = sum(1 / math.log2(r + 1) for r in range(1, min(k, len(relevant)) + 1))
    return dcg / best if best else 0.0


def contradictions(predicates):
    norm = ["".join(p.split()) for p in predicates]
    return [(i, j) for i, p in enumerate(norm) for j, q in enumerate(norm) if q == f"Negate({p})"]


def test_right_answers_pass():
    assert "✓" in c.check_priors(priors)
    assert "✓" in c.check_kept(kept)
    assert "✓" in c.check_rerank(rerank)
    assert "✓" in c.check_rerank(rerank_normalised_first)
    assert "✓" in c.check_recall(recall_at_k)
    assert "✓" in c.check_ndcg(ndcg_at_k)
    assert "✓" in c.check_labels(RIGHT_LABELS)
    assert "✓" in c.check_flaw_kinds(RIGHT_FLAWS)
    assert "✓" in c.check_flaws(RIGHT_FLAWS)
    assert "✓" in c.check_contradictions(contradictions)


# -- exercise 1 --------------------------------------------------------------------------------
def test_priors_are_graded_against_retrievals_own_step(tiny):
    """The reference is what `retrieve` itself reports for the same hits."""
    for k in (1, 2, 3, 4):
        for threshold in (1.4, 2.0):
            tr = retrieve(tiny, "x", keywords=["cars"], k=k, threshold=threshold)
            rows = [{"id": h.id, "labels": h.schemes} for h in tr.hits]
            means, kept_ = c._retrieval_priors(rows, k, threshold)
            assert means == {p.scheme: p.mean for p in tr.priors}
            assert kept_ == set(tr.kept_schemes)


def test_the_retrieved_rows_are_our_memory():
    memory = {}
    for line in (ROOT / "assets/debate/memory.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        memory[row["id"]] = row["schemes"]
    for row in c.RETRIEVED:
        assert row["labels"] == memory[row["id"]]


def test_priors_mistakes_get_hints():
    def by_users(rows, k):
        out = {}
        for s in SCHEMES:
            used = [SCORE.get(r["labels"][s], 0) for r in rows[:k] if s in r["labels"]]
            out[s] = sum(used) / len(used) if used else 0.0
        return out

    with pytest.raises(AssertionError, match="not by the number"):
        c.check_priors(by_users)
    with pytest.raises(AssertionError, match="first k passages"):
        c.check_priors(lambda rows, k: priors(rows, len(rows)))
    with pytest.raises(AssertionError, match="every scheme"):
        c.check_priors(lambda rows, k: {s: v for s, v in priors(rows, k).items() if v})
    with pytest.raises(AssertionError, match="strictly above"):
        c.check_kept(lambda p, threshold=2: [s for s, v in p.items() if v >= threshold])
    with pytest.raises(AssertionError, match="default threshold is 2"):
        c.check_kept(lambda p, threshold=1: kept(p, threshold))


# -- exercise 2 --------------------------------------------------------------------------------
def test_rerank_conventions_are_checked():
    def alphabetical_ties(q, cands, k):
        return sorted(cands, key=lambda c: (-round(cosine(q, cands[c]), 9), c))[:k]

    with pytest.raises(AssertionError, match="BM25"):
        c.check_rerank(alphabetical_ties)

    def nan_for_zero(q, cands, k):
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = {
                i: np.dot(q, v) / (np.linalg.norm(q) * np.linalg.norm(v)) for i, v in cands.items()
            }
        return sorted(cands, key=lambda i: -cos[i])[:k]

    with pytest.raises(AssertionError, match="zero vector"):
        c.check_rerank(nan_for_zero)
    with pytest.raises(AssertionError, match="higher cosine"):
        c.check_rerank(lambda q, cands, k: sorted(cands, key=lambda i: -np.dot(q, cands[i]))[:k])
    with pytest.raises(AssertionError, match="top k"):
        c.check_rerank(lambda q, cands, k: rerank(q, cands, len(cands)))


def test_rerank_accepts_rounding_noise_but_not_a_wrong_order():
    q = np.array([1.0, 0.0])
    # a and b point the same way (an exact tie), c is best
    cands = {"a": np.array([0.5, 0.75]), "b": np.array([1.0, 1.5]), "c": np.array([1.0, 0.0])}
    assert c._rerank_problem(q, cands, 3, ["c", "a", "b"]) is None
    assert c._rerank_problem(q, cands, 3, ["c", "b", "a"]) is not None  # a true tie: BM25 order
    assert c._rerank_problem(q, cands, 3, ["c", "b", "a"], strict=False) is None
    assert c._rerank_problem(q, cands, 2, ["a", "b"]) is not None
    zeros = {"z": np.zeros(2), "o": np.array([0.0, 2.0]), "y": np.zeros(2)}
    assert c._rerank_problem(q, zeros, 3, ["z", "y", "o"], strict=False) is not None
    near = {"x": np.array([1.0, 1e-12]), "y": np.array([1.0, 0.0])}
    assert c._rerank_problem(q, near, 2, ["y", "x"]) is None  # 1e-24 apart: either order
    assert c._rerank_problem(q, near, 2, ["x", "y"]) is None


def test_ranking_metric_mistakes_get_hints():
    with pytest.raises(AssertionError, match="all of them"):
        c.check_recall(lambda r, rel, k: len(set(r[:k]) & rel) / k)
    with pytest.raises(AssertionError, match="convention is 0"):
        c.check_recall(lambda r, rel, k: recall_at_k(r, rel, k) if rel else 1.0)
    with pytest.raises(AssertionError, match="best sum"):
        c.check_ndcg(
            lambda r, rel, k: sum(1 / math.log2(i + 2) for i, d in enumerate(r[:k]) if d in rel)
        )


# -- exercise 3 --------------------------------------------------------------------------------
def test_a_missed_scheme_gets_its_critical_question_not_its_name():
    wrong = [set(x) for x in RIGHT_LABELS]
    wrong[0] = {"example"}
    with pytest.raises(AssertionError) as err:
        c.check_labels(wrong)
    msg = str(err.value)
    assert load_schemes()["expert_opinion"].critical_questions[0] in msg
    assert "expert_opinion" not in msg and "4 of 5" in msg
    wrong = [set(x) for x in RIGHT_LABELS]
    wrong[4] = {"cause_to_effect"}
    with pytest.raises(AssertionError) as err:
        c.check_labels(wrong)
    assert "positive_consequences" not in str(err.value)


def test_labels_accept_a_second_reading_and_refuse_bad_input():
    assert "✓" in c.check_labels(
        [x | {"cause_to_effect"} for x in RIGHT_LABELS[:2]] + RIGHT_LABELS[2:]
    )
    with pytest.raises(AssertionError, match="not scheme ids"):
        c.check_labels([{"authority"}, *RIGHT_LABELS[1:]])
    with pytest.raises(AssertionError, match="one set of scheme ids per passage"):
        c.check_labels(RIGHT_LABELS[:4])
    with pytest.raises(AssertionError, match="not a string"):
        c.check_labels(["analogy", *RIGHT_LABELS[1:]])


# -- exercise 4 --------------------------------------------------------------------------------
def _split(args: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in args:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    return [*out, cur.strip()] if cur.strip() else out


def _parse(p: str) -> tuple[str, list[str]]:
    m = re.fullmatch(r"(\w+)\((.*)\)", "".join(p.split()))
    assert m, p
    return m.group(1), _split(m.group(2))


def _first_flaw(ps: list[str]) -> tuple[str, set[int]]:
    """The notebook's rules, tried in order, as a program: (kind, the predicates it points at)."""
    parsed = [_parse(p) for p in ps]
    pairs = c._contradictions(ps)
    if pairs:
        return "contradiction", {n + 1 for pair in pairs for n in pair}
    edges = {i: (a[0], a[1]) for i, (name, a) in enumerate(parsed) if name == "Supports"}
    for start, (src, _) in edges.items():
        path, node = [start], edges[start][1]
        while node != src:
            nxt = [i for i, (a, _) in edges.items() if a == node and i not in path]
            if not nxt:
                break
            path.append(nxt[0])
            node = edges[nxt[0]][1]
        else:
            return "circular reasoning", {i + 1 for i in path}
    for i, (name, a) in enumerate(parsed):
        if name == "Either":
            negated = {x[0] for n, x in parsed if n == "Negate"}
            concluded = {x[0] for n, x in parsed if n == "Concludes"}
            if (a[0] in negated and a[1] in concluded) or (a[1] in negated and a[0] in concluded):
                return "false dichotomy", {i + 1}
    assert not any(name == "All" for name, _ in parsed)  # no set of ours has this flaw
    backed = {a[1] for name, a in parsed if name == "Observed"}
    while True:
        more = {b for a, b in edges.values() if a in backed} - backed
        if not more:
            break
        backed |= more
    for i, (a, _) in edges.items():
        if a not in backed:
            return "unsupported assumption", {i + 1}
    raise AssertionError(f"no rule fires on {ps}")


def test_every_flaw_is_decided_by_the_rules_in_order():
    found = [_first_flaw(ps) for ps in c.PREDICATE_SETS]
    assert [(k, sorted(n)) for k, n in found] == RIGHT_FLAWS
    assert "✓" in c.check_flaws(found)
    assert set(c.FLAW_KINDS) <= set(LOGIC_FLAW_KINDS) and list(c.RULES) == list(c.FLAW_KINDS)


def test_a_wrong_flaw_gets_a_hint_and_the_keys_are_not_in_the_source():
    wrong = list(RIGHT_FLAWS)
    wrong[3] = ("false dichotomy", [1, 2, 3])
    with pytest.raises(AssertionError, match=r"kind is right\. Predicates: 0 .* 1 of those"):
        c.check_flaws(wrong)
    assert "✓" in c.check_flaw_kinds(wrong)  # the kinds alone earn their point
    wrong[1] = ("unsupported assumption", [1, 2, 3])
    with pytest.raises(AssertionError, match="set 2: 'unsupported assumption' is not") as err:
        c.check_flaw_kinds(wrong)
    assert "circular" not in str(err.value)
    # accepted: the conclusion as well; case and spaces of the kind do not matter
    assert "✓" in c.check_flaws(
        [(" Contradiction", [4, 1]), *RIGHT_FLAWS[1:3], ("false dichotomy", [2, 3, 4])]
    )
    with pytest.raises(AssertionError, match="from 1 to 4"):
        c.check_flaws([("contradiction", [0, 3]), *RIGHT_FLAWS[1:]])
    source = inspect.getsource(c)
    for leak in ("[1, 4]", "[1, 2, 3]", '{"analogy"}', '"need": "'):
        assert leak not in source


def test_contradictions_ignore_spaces_and_keep_the_order_of_the_pair():
    assert c._contradictions(
        ["Cause(A, B)", "Negate(Cause(A,B))", "Negate(Negate(Cause(A, B)))"]
    ) == {
        (0, 1),
        (1, 2),
    }
    assert c._contradictions(["Negate( Rain)", "Rain"]) == {(1, 0)}
    with pytest.raises(AssertionError, match="spaces do not matter"):
        c.check_contradictions(
            lambda ps: [
                (i, j) for i, p in enumerate(ps) for j, q in enumerate(ps) if q == f"Negate({p})"
            ]
        )
    with pytest.raises(ZeroDivisionError):  # the learner's own error is not dressed up as a hint
        c.check_contradictions(lambda ps: [(0, 1 / 0)])
    with pytest.raises(AssertionError, match="pairs of indexes"):
        c.check_contradictions(lambda ps: ["Negate(P)"] if ps else [])
