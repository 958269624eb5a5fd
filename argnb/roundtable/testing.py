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


def table_backend(
    choose: Callable[[Request], str] = default_choice,
    words: int = 40,
    *,
    model: str = "table-script",
    **kw: Any,
) -> ScriptedBackend:
    """A backend that plays any roundtable role (see the module docstring)."""

    def answer(req: Request) -> Any:
        title = (req.schema or {}).get("title", "")
        if title == "AgendaAnswer":
            return {
                "scope": "Whether and how the question can be answered well",
                "criteria": ["fairness", "learning"],
                "welcome": "Welcome, everyone. Let us keep it short and kind.",
            }
        if title == "ModeratorStep":
            return {
                "intent": "invite",
                "message": "Let us hear the next view.",
                "next_speaker": choose(req),
            }
        if title == "RoundtableAnalysis":
            names = req.schema["properties"]["argument_map"]["items"]["properties"]["by"]["enum"]
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
                                "by": names[-2],
                                "rebuttal": "Rules can limit copying",
                                "rebuttal_by": names[0],
                            }
                        ],
                    }
                ],
            }
        name = re.search(r"What do you think, (.+?)\?", req.prompt)
        who = name.group(1) if name else "I"
        out = []  # distinct sentences: a repeated one would be dropped (argnb.words.drop_repeats)
        while len(" ".join(out).split()) < words:
            out.append(f"{who} thinks this step by step and offers proposal {len(out) + 1}.")
        return " ".join(out)

    return ScriptedBackend(answer, model=model, **kw)
