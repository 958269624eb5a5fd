"""The stance predicate on one utterance, decided in code from a judge's four yes/no answers.

The R-Debater task (section 3) asks of every turn ``u`` by side ``s``: ``phi(u, s)`` holds --
it supports ``s`` or rebuts the other side -- and ``phi(u, other)`` does not. A judge answers
four plain questions about the turn (supports the motion? supports the opposition? attacks the
motion? attacks the opposition?); :func:`phi` combines them, so the rule is the paper's whatever
the judge model is.

    >>> a = StanceAnswer(supports_motion=True, supports_opposition=False,
    ...                  attacks_motion=False, attacks_opposition=True, reason="")
    >>> phi(a, "pro"), phi(a, "con")
    (True, False)
    >>> holds(a, "pro"), holds(a, "con")
    (True, False)
"""

from __future__ import annotations

from typing import Any

from argnb.agents import Agent
from argnb.debate.payloads import StanceCheck
from argnb.debate.record import clip, other
from argnb.debate.schemas import StanceAnswer
from argnb.llm.base import Backend, Options
from argnb.prompts import load
from argnb.transcript import Turn

PACKAGE = "argnb.debate"


def phi(a: Any, stance: str) -> bool:
    """Supports ``stance``'s side, or attacks the other side."""
    if stance == "pro":
        return bool(a.supports_motion or a.attacks_opposition)
    return bool(a.supports_opposition or a.attacks_motion)


def holds(a: Any, stance: str) -> bool:
    """The paper's condition: phi for its own side and not for the other one."""
    return phi(a, stance) and not phi(a, other(stance))


def to_check(a: Any, stance: str) -> StanceCheck:
    own_supports = a.supports_motion if stance == "pro" else a.supports_opposition
    other_supports = a.supports_opposition if stance == "pro" else a.supports_motion
    own_attacked = a.attacks_motion if stance == "pro" else a.attacks_opposition
    other_attacked = a.attacks_opposition if stance == "pro" else a.attacks_motion
    return StanceCheck(
        stance=stance,
        supports_own=bool(own_supports),
        rebuts_other=bool(other_attacked),
        supports_other=bool(other_supports),
        rebuts_own=bool(own_attacked),
        ok=holds(a, stance),
        reason=" ".join(a.reason.split()),
    )


async def acheck_stance(
    backend: Backend,
    topic: str,
    stance: str,
    text: str,
    *,
    options: Options | None = None,
    prompt_dir: str | None = None,
) -> tuple[StanceCheck | None, tuple[Turn, ...]]:
    """Judge one utterance: (the check, or None when the judge's answer was invalid; turns)."""
    t = load(PACKAGE, "stance", prompt_dir, sectioned=True)
    agent = Agent("stance judge", backend, options, system=t.render("system"))
    resp = await agent.arespond(
        t.render("user", topic=topic, text=clip(text, 400)),
        StanceAnswer,
        role="stance check",
        text=lambda v: (
            ("holds its side" if holds(v, stance) else "FAILS the stance predicate")
            + f": {' '.join(v.reason.split())}"
        ),
        payload=lambda v: to_check(v, stance),
    )
    return (to_check(resp.value, stance) if resp.valid else None), resp.turns
