"""Graders for ``exercises/05_roundtable`` (no model needed).

Each check tests the learner's function or answer on hand-made cases, raises ``AssertionError``
with a hint when something is wrong, and returns a short message when all is right.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Sequence

from argnb.roundtable.analyzer import analysis_framework
from argnb.roundtable.payloads import Analysis
from argnb.roundtable.rules import TurnRules

# -- exercise 1: may this person speak next? ------------------------------------------------
#: (history, candidate, human, every, expected, why)
RULE_CASES: list[tuple[list[str], str, str, int, bool, str]] = [
    ([], "D1", "You", 3, True, "nobody has spoken yet"),
    (["D1"], "D1", "You", 3, False, "D1 just spoke: nobody speaks twice in a row"),
    (["D1"], "You", "You", 3, True, "the human may always answer someone else"),
    (["D1", "D2"], "D1", "You", 3, False, "two turns without the human: the human must speak"),
    (["D1", "D2"], "You", "You", 3, True, "the human is due"),
    (["You", "D1"], "D2", "You", 3, True, "the human spoke within the last two turns"),
    (["You"], "You", "You", 3, False, "the human may not speak twice in a row either"),
    (["You", "D1", "D2", "D3"], "D1", "You", 4, False, "with N = 4, three turns without the human"),
    (["D1", "You", "D2"], "D1", "You", 4, True, "with N = 4, two turns without the human is fine"),
    (["D1", "D2"], "Ann", "Ann", 3, True, "the human has any name"),
]


def check_may_speak(fn: Callable[[Sequence[str], str, str, int], bool]) -> str:
    """Grade ``fn(history, candidate, human, every) -> bool`` on fixed and random cases."""
    for i, (history, cand, human, every, expected, why) in enumerate(RULE_CASES, start=1):
        got = fn(list(history), cand, human, every)
        assert isinstance(got, bool), f"case {i}: return True or False, not {got!r}"
        assert got == expected, (
            f"case {i}: after {history}, may {cand} speak (human {human!r}, N = {every})? "
            f"{expected} ({why}); you said {got}"
        )
    rng = random.Random(5)
    for _ in range(300):
        every = rng.randint(2, 5)
        people = [*["D1", "D2", "D3"][: rng.randint(1, 3)], "You"]
        rules = TurnRules("You", tuple(people), every)
        history: list[str] = []
        for _ in range(rng.randint(0, 8)):
            history.append(rng.choice(rules.allowed(history)))
        cand = rng.choice(people)
        expected = not rules.broken(history, cand)
        got = fn(list(history), cand, "You", every)
        assert got == expected, (
            f"after {history}, may {cand} speak (N = {every})? {expected}; you said {got}"
        )
    return f"right on all {len(RULE_CASES)} cases and 300 random ones"


# -- exercise 2: who may speak next, in five situations -------------------------------------
#: (seats, human, every, history) -- the learner lists who may speak next in each
SITUATIONS: list[tuple[tuple[str, ...], str, int, list[str]]] = [
    (("Lena", "Max", "You"), "You", 3, []),
    (("Lena", "Max", "You"), "You", 3, ["Lena"]),
    (("Lena", "Max", "You"), "You", 3, ["You", "Lena", "Max"]),
    (("Lena", "Max", "Omar", "You"), "You", 4, ["You", "Omar", "Lena"]),
    (("Lena", "You"), "You", 2, ["You", "Lena", "You"]),
]


def check_situations(answers: Sequence[Iterable[str]]) -> str:
    """Grade the sets of allowed speakers for :data:`SITUATIONS`."""
    assert len(answers) == len(SITUATIONS), f"give one set per situation ({len(SITUATIONS)})"
    for i, ((seats, human, every, history), given) in enumerate(
        zip(SITUATIONS, answers, strict=True), start=1
    ):
        given = set(given)
        stranger = given - set(seats)
        assert not stranger, f"situation {i}: {sorted(stranger)} are not at the table {seats}"
        truth = set(TurnRules(human, seats, every).allowed(history))
        missing, extra = truth - given, given - truth
        assert not extra, (
            f"situation {i} (after {history}, N = {every}): {sorted(extra)} may not speak — "
            "who spoke last, and how long has the human been silent?"
        )
        assert not missing, f"situation {i} (after {history}): {sorted(missing)} may speak too"
    return "right in all five situations"


# -- exercise 3: be the analyzer ------------------------------------------------------------
SHORT_TOPIC = "Should our school ban phones during lessons?"
SHORT_TRANSCRIPT = [
    ("Moderator", "Welcome! Let us weigh two things: learning and safety."),
    (
        "Lena",
        "Phones distract students in lessons; every notification breaks concentration. "
        "I propose that phones stay in bags during lessons.",
    ),
    (
        "You",
        "I agree that phones distract, but I need mine in an emergency: my mother has to be "
        "able to reach me.",
    ),
    (
        "Max",
        "Emergencies matter, and parents could call the school office instead. Phones can also "
        "help learning, for example to look up a word.",
    ),
    (
        "Lena",
        "Fair point: teachers could allow phones for particular tasks. And yes, students must be "
        "reachable in an emergency.",
    ),
    (
        "You",
        "But who decides when a task counts? And would the office really pass on a message "
        "quickly?",
    ),
]

#: each key item: a name and the groups of word stems an item must touch (one from each group)
KEY_AGREEMENTS = {
    "phones distract in lessons": [("distract", "concentrat", "attention", "focus")],
    "students must be reachable in an emergency": [
        ("emergenc", "reach", "contact", "urgent"),
    ],
}
KEY_QUESTIONS = {
    "who decides when phones are allowed for a task": [
        ("who", "decid", "teacher", "rule", "when"),
        ("task", "allow", "permit", "use", "count"),
    ],
    "whether the office passes on messages quickly": [
        ("office", "message", "call", "pass"),
    ],
}
#: contested in the transcript, so not a point of agreement
DISPUTED = [
    (
        "a complete ban",
        [("ban", "forbid", "prohibit"), ("complete", "total", "entire", "always", "every")],
    ),
]


def _matches(text: str, groups: list[tuple[str, ...]]) -> bool:
    words = re.findall(r"[a-z]+", text.lower())
    return all(any(w.startswith(stem) for w in words for stem in group) for group in groups)


def _shape(items: object, name: str) -> list[str]:
    assert isinstance(items, list | tuple), f"{name} must be a list of strings"
    items = list(items)
    assert 1 <= len(items) <= 5, f"{name}: write between 1 and 5 items, not {len(items)}"
    for x in items:
        assert isinstance(x, str), f"{name}: every item is a string, not {x!r}"
        assert 3 <= len(x.strip()) <= 200, f"{name}: keep each item between 3 and 200 characters"
    assert len({x.strip().lower() for x in items}) == len(items), f"{name}: an item is repeated"
    return items


def check_analysis(agreements: Sequence[str], open_questions: Sequence[str]) -> str:
    """Grade the learner's points of agreement and open questions for :data:`SHORT_TRANSCRIPT`."""
    agreements = _shape(agreements, "agreements")
    open_questions = _shape(open_questions, "open_questions")
    for what, groups in DISPUTED:
        bad = [a for a in agreements if _matches(a, groups)]
        assert not bad, f"{bad[0]!r}: {what} was disputed, so it is not a point of agreement"
    for key, groups in KEY_AGREEMENTS.items():
        assert any(_matches(a, groups) for a in agreements), (
            f"an agreement is missing: everyone accepted that {key} (read the turns again)"
        )
    for key, groups in KEY_QUESTIONS.items():
        assert any(_matches(q, groups) for q in open_questions), (
            f"an open question is missing: nobody answered {key}"
        )
    not_questions = [q for q in open_questions if not q.strip().endswith("?")]
    assert not not_questions, f"write open questions as questions: {not_questions[0]!r}"
    return (
        f"right: your {len(agreements)} agreements and {len(open_questions)} open questions "
        "cover our key items"
    )


# -- exercise 4: from the analyzer's map to a Dung framework ------------------------------------
EXAMPLE_ANALYSIS = Analysis(
    upto=6,
    arguments=[
        {
            "claim": "Phones should stay in bags during lessons",
            "by": "Lena",
            "premises": ["Notifications break concentration"],
            "counterarguments": [
                {
                    "objection": "Students must be reachable in an emergency",
                    "by": "You",
                    "rebuttal": "Parents can call the school office",
                    "rebuttal_by": "Max",
                },
                {"objection": "Phones help to look up words", "by": "Max"},
            ],
        },
        {
            "claim": "Teachers may allow phones for particular tasks",
            "by": "Lena",
            "premises": ["Phones can help learning"],
            "counterarguments": [
                {"objection": "Nobody has said who decides when a task counts", "by": "You"}
            ],
        },
        {"claim": "The office passes on messages quickly", "by": "Max", "premises": []},
    ],
)


def random_analysis(rng: random.Random) -> Analysis:
    """A random analysis map for testing a conversion."""
    args = []
    for i in range(rng.randint(0, 4)):
        counters = [
            {
                "objection": f"objection {i}.{k}",
                "by": "X",
                "rebuttal": f"rebuttal {i}.{k}" if rng.random() < 0.5 else "",
            }
            for k in range(rng.randint(0, 3))
        ]
        args.append({"claim": f"claim {i}", "by": "Y", "counterarguments": counters})
    return Analysis(upto=1, arguments=args)


def check_framework(
    fn: Callable[[Analysis], tuple[Iterable[str], Iterable[tuple[str, str]]]],
) -> str:
    """Grade ``fn(analysis) -> (arguments, attacks)`` on the example and random maps."""
    rng = random.Random(7)
    for n, a in enumerate([EXAMPLE_ANALYSIS, *(random_analysis(rng) for _ in range(50))]):
        want_args, want_attacks = analysis_framework(a)
        got_args, got_attacks = fn(a)
        got_args, got_attacks = set(got_args), {tuple(x) for x in got_attacks}
        where = "the example" if n == 0 else f"random map #{n}"
        assert got_args == set(want_args), (
            f"{where}: arguments should be {sorted(want_args)}, you gave {sorted(got_args)} "
            "(a claim is A<i>, its objections A<i>.x<k>, a rebuttal A<i>.x<k>.r)"
        )
        missing, extra = set(want_attacks) - got_attacks, got_attacks - set(want_attacks)
        assert not extra, f"{where}: {sorted(extra)} are not attacks (who answers whom?)"
        assert not missing, f"{where}: attacks missing: {sorted(missing)}"
    return "right on the example and 50 random maps"


def check_grounded_map(extension: Iterable[str]) -> str:
    """Grade the grounded extension of :data:`EXAMPLE_ANALYSIS`'s framework."""
    from argnb.dialectic.semantics import grounded_extension

    args, attacks = analysis_framework(EXAMPLE_ANALYSIS)
    truth = set(grounded_extension(args, attacks))
    ext = set(extension)
    assert ext == truth, (
        f"the grounded extension is not {sorted(ext)}: "
        + (f"{sorted(ext - truth)} are attacked by accepted arguments; " if ext - truth else "")
        + (f"{sorted(truth - ext)} are defended; " if truth - ext else "")
        + "start from the unattacked arguments"
    )
    standing = [
        EXAMPLE_ANALYSIS.arguments[int(a[1:]) - 1].claim for a in sorted(truth) if "." not in a
    ]
    return f"right: the claims that stand are {standing}"
