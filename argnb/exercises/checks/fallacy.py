"""Graders for the fallacy exercises (``exercises/01_fallacy``). No model is needed.

Each ``check_*`` function tries the learner's code on hand-made cases, raises ``AssertionError``
with a hint when something is wrong, and returns a short success message otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from argnb.fallacy import metrics
from argnb.fallacy.baselines import Example, build_messages
from argnb.fallacy.prompts import parse
from argnb.fallacy.protocol import Vote, tie_break

# -- exercise 1: the tie-break rule ----------------------------------------------------------


def _votes(rows: list[tuple[Any, Any]]) -> list[dict[str, Any]]:
    return [{"agent": f"agent{i}", "vote": v, "confidence": c} for i, (v, c) in enumerate(rows, 1)]


_TIE_CASES: list[tuple[str, list[tuple[Any, Any]], tuple[Any, str]]] = [
    ("the more confident vote wins", [(1, 0.9), (0, 0.6)], (1, "confidence")),
    ("...whichever label it is for", [(1, 0.55), (0, 0.7)], (0, "confidence")),
    ("an invalid vote (None) is ignored", [(None, None), (0, 0.3)], (0, "confidence")),
    ("invalid votes never win, however sure", [(None, 1.0), (1, 0.2)], (1, "confidence")),
    ("no valid vote at all", [(None, None), (None, None)], ("invalid", "invalid")),
    (
        "equal confidence, same label: no coin needed",
        [(1, 0.8), (1, 0.8), (0, 0.5)],
        (1, "confidence"),
    ),
]


def check_tie_break(final_decision: Callable[[list[dict], random.Random], tuple[Any, str]]) -> str:
    """Grade ``final_decision(votes, rng) -> (label, how)`` against the protocol's rule."""
    for name, rows, expected in _TIE_CASES:
        got = final_decision(_votes(rows), random.Random(0))
        assert tuple(got) == expected, (
            f"{name}: votes {rows} should give {expected}, your function returned {got!r}"
        )
    # an exact tie between the labels: a coin flip with the given generator
    rows = [(0, 0.8), (1, 0.8)]
    picks = []
    for seed in range(30):
        got = tuple(final_decision(_votes(rows), random.Random(seed)))
        assert got[1] == "random", (
            f"a confidence tie between labels is broken at random, got {got!r}"
        )
        ref = tie_break([Vote("a", 0, 0.8), Vote("b", 1, 0.8)], random.Random(seed)).label
        assert got[0] == ref, (
            "use the generator you are given, as rng.choice(sorted(tied_labels)), so that a "
            f"seeded re-run gives the same pick (seed {seed}: expected {ref}, got {got[0]})"
        )
        picks.append(got[0])
    assert set(picks) == {0, 1}, "over 30 seeds the coin should land on both labels"
    return (
        "✓ tie-break rule correct: confidence first, a seeded coin for exact ties, invalid ignored"
    )


# -- exercise 2: accuracy and macro-F1 from a results table --------------------------------


def _tables() -> list[tuple[list[int], list[Any]]]:
    rng = random.Random(11)
    fixed = [
        ([1, 1, 0, 0], [1, 0, 0, 0]),
        ([1, 0, 1, 0], [1, 0, "invalid", "invalid"]),
        ([1, 1, 1], [1, 1, 1]),
        ([0, 0, 1], [1, 1, 0]),
    ]
    for _ in range(20):
        n = rng.randint(3, 25)
        gold = [rng.randint(0, 1) for _ in range(n)]
        pred = [rng.choice([0, 1, 1, 0, "invalid"]) for _ in range(n)]
        fixed.append((gold, pred))
    return fixed


def check_metrics(accuracy: Callable[[Any], float], macro_f1: Callable[[Any], float]) -> str:
    """Grade ``accuracy(df)`` and ``macro_f1(df)`` on results tables with ``gold`` / ``pred``."""
    import pandas as pd

    for gold, pred in _tables():
        df = pd.DataFrame({"gold": gold, "pred": pred})
        want_acc, got_acc = metrics.accuracy(gold, pred), accuracy(df)
        assert abs(float(got_acc) - want_acc) < 1e-9, (
            f"accuracy for gold={gold} pred={pred}: expected {want_acc:.4f}, got {got_acc}. "
            "An 'invalid' prediction is simply wrong."
        )
        want_f1, got_f1 = metrics.macro_f1(gold, pred), macro_f1(df)
        assert abs(float(got_f1) - want_f1) < 1e-9, (
            f"macro-F1 for gold={gold} pred={pred}: expected {want_f1:.4f}, got {got_f1}. "
            "Compute F1 for each label that occurs in gold or in the valid predictions, then "
            "average; 'invalid' is a miss for the gold label and a false alarm for neither."
        )
    return "✓ accuracy and macro-F1 match the reference on 24 tables"


# -- exercise 3: a few-shot prompt template ------------------------------------------------

_PROBE_EXAMPLES = [
    Example("Every swan I have seen is white, so all swans are white.", 1),
    Example("The shop is closed on Mondays, so let's go on Tuesday.", 0),
    Example("You cannot trust her figures; she failed maths at school.", 1),
]
_PROBE = "A {curly} argument that costs $5 and says: trust me."


def check_few_shot_template(template: str) -> str:
    """Render a learner's template (``## system`` / ``## example`` / ``## user`` with
    ``$argument``) through argnb's own few-shot builder and validate the chat it produces."""
    assert isinstance(template, str) and template.strip(), "the template must be a non-empty string"
    try:
        tpl = parse("learner", template)
    except Exception as exc:
        raise AssertionError(f"the template does not parse: {exc}") from None
    missing = {"system", "example", "user"} - set(tpl.sections)
    assert not missing, (
        f"the template needs '## {sorted(missing)[0]}' (sections found: {list(tpl.sections)})"
    )
    for section in ("example", "user"):
        assert "argument" in tpl.placeholders(section), (
            f"the '{section}' section must contain $argument where the argument goes"
        )
    extra = (tpl.placeholders("example") | tpl.placeholders("user")) - {"argument"}
    assert not extra, f"unknown placeholders {sorted(extra)}: only $argument is filled in"
    assert not tpl.placeholders("system"), "the system section takes no placeholders"
    assert tpl.render("example", argument="X") == tpl.render("user", argument="X"), (
        "ask the final question exactly the way the examples ask theirs: the model imitates the "
        "pattern of the example turns, so 'example' and 'user' should be the same text"
    )
    system = tpl.sections["system"].lower()
    assert "1" in system and "0" in system, (
        "the system section should say what the answers mean: 1 = fallacious, 0 = not"
    )
    for structured in (False, True):
        msgs = build_messages(
            _PROBE, "few", examples=_PROBE_EXAMPLES, structured=structured, template=tpl
        )
        roles = [m.role for m in msgs]
        assert roles == ["system", *(["user", "assistant"] * 3), "user"], roles
        for ex, (u, a) in zip(
            _PROBE_EXAMPLES, zip(msgs[1:-1:2], msgs[2:-1:2], strict=True), strict=True
        ):
            assert ex.text in u.content, "each example turn must contain the example's text"
            assert a.content in (str(ex.label), f'{{"label": {ex.label}}}')
        assert _PROBE in msgs[-1].content, (
            "the final user turn must contain the argument verbatim (braces and $ included)"
        )
    assert len(build_messages(_PROBE, "few", examples=[], template=tpl)) == 2
    return "✓ template renders: system, 3 example pairs with their labels, then the argument"
