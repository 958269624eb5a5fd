"""A scripted stand-in for every roundtable role, for tests, doctests and demos without a model.

:func:`table_backend` answers whatever a roundtable asks -- the agenda, a moderator step, a
deliberator's reply, an analysis -- from the request alone, so one backend can sit in every seat.
``choose`` decides the moderator's proposal: by default the first participant in the schema's
list who is not named in the last line of the discussion (a plausible but rule-blind choice).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from argnb.llm.scripted import Request, ScriptedBackend
from argnb.prompts import TASK_MARK


def _names(req: Request) -> list[str]:
    return list(req.schema["properties"]["next_speaker"]["enum"])


def _last_speaker(req: Request) -> str:
    """Who said the last line of the discussion (the shared context, before the task)."""
    discussion = req.last.split(TASK_MARK)[0].split("The discussion so far:")[-1]
    lines = [ln for ln in discussion.splitlines() if ": " in ln and not ln.startswith("(")]
    context = [ln for ln in lines if not ln.startswith("Note")]
    return context[-1].split(":", 1)[0] if context else ""


def default_choice(req: Request) -> str:
    last = _last_speaker(req)
    names = _names(req)
    return next((n for n in names if not last.startswith(n)), names[0])


#: parts of a scripted contribution, in lists of coprime lengths: no sentence and no run of four
#: words comes back within 170 words, so the gate's loop rule (argnb.gate) and the sentence rule
#: (argnb.words.drop_repeats) leave it whole
_OPENERS = ("Perhaps", "I suggest", "Honestly", "Still", "On balance")
_MIDDLES = (
    "clear rules",
    "short trials",
    "open marking",
    "shared guidelines",
    "weekly checks",
    "worked examples",
    "parent letters",
)
_ENDS = (
    "help learning",
    "be fair",
    "reduce copying",
    "build trust",
    "save time",
    "show progress",
    "support beginners",
    "fit classes",
    "need teachers",
)


#: steps through the parts, coprime with their counts: each speaker walks them in its own order,
#: so no two speakers share a run of words (the gate stops a copy of another speaker's turn)
_STRIDES = (1, 2, 4, 8, 11, 13, 16, 17, 19, 22)


def speech(who: str, words: int) -> str:
    """A contribution of at least ``words`` words that is neither a loop, nor an echo, nor a
    copy of what another speaker of a scripted table says."""
    out = [f"{who} offers proposal one."]
    stride = _STRIDES[sum(map(ord, who)) % len(_STRIDES)]
    n = 0
    while len(" ".join(out).split()) < words:
        n += stride
        parts = (_OPENERS[n % 5], _MIDDLES[n % 7], _ENDS[n % 9])
        out.append(f"{parts[0]} {parts[1]} would {parts[2]}.")
    return " ".join(out)


def table_backend(
    choose: Callable[[Request], str] = default_choice,
    words: int = 40,
    *,
    model: str = "table-script",
    **kw: Any,
) -> ScriptedBackend:
    """A backend that plays any roundtable role (see the module docstring)."""

    steps = [0]  # the moderator's steps so far: it never says one sentence twice (argnb.gate)

    def answer(req: Request) -> Any:
        title = (req.schema or {}).get("title", "")
        if title == "AgendaAnswer":
            return {
                "scope": "Whether and how the question can be answered well",
                "criteria": ["fairness", "learning"],
                "welcome": "Welcome, everyone. Let us keep it short and kind.",
            }
        if title == "ModeratorStep":
            steps[0] += 1
            k = steps[0]
            return {
                "intent": "invite",
                "message": "Let us hear the next view."
                if k == 1
                else f"Let us hear view {k}, please.",
                "next_speaker": choose(req),
            }
        if title == "StatementsAnswer":
            return {
                "statements": [
                    "Allow it with clear rules that everyone helped to write.",
                    "Try it for one term, then decide together on what we saw.",
                    "Keep it out of tests but welcome it for practice at home.",
                ]
            }
        if title == "RevisionAnswer":
            return {"statement": "Allow it with clear rules, and review them after one term."}
        if title == "RoundtableAnalysis":
            by = req.schema["properties"]["argument_map"]["items"]["properties"]["by"]
            names = by.get("enum") or [by["const"]]  # only "unclear" when nobody spoke yet
            return {
                "summary": ["The participants compared benefits and risks."],
                "agreements": ["Rules help."],
                "open_questions": ["Who checks the rules?"],
                "argument_map": [
                    {
                        "claim": "We should allow it with rules",
                        "by": names[0],
                        "premises": ["It helps learning"],
                        "counterarguments": [
                            {
                                "objection": "It invites copying",
                                "by": names[max(0, len(names) - 2)],
                                "rebuttal": "Rules can limit copying",
                                "rebuttal_by": names[0],
                            }
                        ],
                    }
                ],
            }
        name = re.search(r"What do you think, (.+?)\?", req.prompt)
        who = name.group(1) if name else "I"
        return speech(who, words)

    return ScriptedBackend(answer, model=model, **kw)
