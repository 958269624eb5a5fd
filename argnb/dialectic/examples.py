"""Example cases, and a scripted "model" that answers the camera case like the formal example.

``camera``           the facts and rules of Kido & Kurihara's camera example (Masuo, figure 2)
``camera_values``    the same issue with values only (Masuo, chapter 5)
``school_cleaning``  our own: should students or staff clean the school?

:func:`camera_reference_backend` is a :class:`~argnb.llm.ScriptedBackend` whose answers follow the
formal example step by step (AG1 "buy a", AG2 "a is out of stock", AG2 "buy b", AG1 "b is over
budget", synthesis choosing c). It decides what to say from each request, so the *protocol* still
does all the work: who speaks, which attacks are admissible, when a line ends, what the semantics
say. It is the reference trace for tests, and a way to watch the protocol work without a model.
"""

from __future__ import annotations

import json
import re
from importlib import resources

from argnb.dialectic.case import Case
from argnb.dialectic.schemas import Argument
from argnb.errors import ArgnbError
from argnb.llm.scripted import Request, ScriptedBackend

EXAMPLES = ("camera", "camera_values", "school_cleaning")


def example_path(name: str):
    """The packaged YAML file of an example."""
    if name not in EXAMPLES:
        raise ArgnbError(f"no example {name!r}", hint=f"use one of: {', '.join(EXAMPLES)}")
    return resources.files("argnb.dialectic").joinpath(f"data/{name}.yaml")


def load_example(name: str) -> Case:
    """One of :data:`EXAMPLES` as a :class:`Case`."""
    return Case.from_yaml(example_path(name).read_text(encoding="utf-8"))


# -- the formal example as scripted answers --------------------------------------------------
BUY_A = Argument.simple(
    [
        "a is a camera.",
        "a is compact.",
        "a is light.",
        "If a camera is compact and light, we should buy it.",
    ],
    "We should buy a.",
)
OUT_OF_STOCK = Argument.simple(
    ["a is out of stock.", "If something is out of stock, we should not buy it."],
    "We should not buy a.",
)
BUY_B = Argument.simple(
    [
        "b is a camera.",
        "b has high image quality.",
        "b has long battery life.",
        "If a camera has high image quality and long battery life, we should buy it.",
    ],
    "We should buy camera b.",
)
OVER_BUDGET = Argument.simple(
    ["b is over budget.", "If something is over budget, we should not buy it."],
    "We should not buy camera b.",
)
CHARACTERIZATION = {
    "C1": {
        "strong": ["the object is a camera", "the camera is small", "the camera weighs little"],
        "consequent": "we should buy a camera that is easy to carry",
    },
    "C2": {
        "strong": [
            "the object is a camera",
            "the camera takes sharp pictures",
            "the camera runs for a long time on one charge",
        ],
        "consequent": "we should buy a camera that performs well",
    },
}
CORE = {
    "E": {
        "strong": [
            "the object is a camera",
            "the camera is easy for its user to handle",
            "the camera keeps working through a long day of use",
        ],
        "consequent": "we should buy a camera that is easy to use and lasts through the day",
    }
}
FINAL = {
    "final_answer": "Choose camera c: it is user-friendly and has a long battery life, "
    "so it satisfies the consensus core."
}

_AGENT = re.compile(r"You are (\S+), one of two agents")


def _agent(req: Request) -> str:
    m = _AGENT.search(req.messages[0].content) if req.messages else None
    return m.group(1).rstrip(",") if m else ""


def _task(req: Request) -> str:
    return (req.schema or {}).get("title", "")


def camera_reference_answer(req: Request, *, stubborn: bool = False) -> dict:
    """What the formal example says at this point of the dialogue.

    With ``stubborn=True`` AG1, asked to counter "a is out of stock", first tries an undercut
    (impossible: that argument has no assumptions) and, after the repair turn, a rebut that
    reuses its own premises -- both must be rejected by the protocol's checks in code.
    """
    agent, task = _agent(req), _task(req)
    user = next((m.content for m in req.messages if m.role == "user"), "")
    if task == "MainArgumentAnswer":
        arg = BUY_A if agent == "AG1" else BUY_B
        return {"argument": arg.model_dump()}
    if task == "AttackAnswer":
        if agent == "AG2" and BUY_A.claim in user and "We should not buy a" not in user:
            return _attack("rebut", BUY_A.claim, OUT_OF_STOCK)
        if agent == "AG1" and BUY_B.claim in user and OVER_BUDGET.claim not in user:
            return _attack("rebut", BUY_B.claim, OVER_BUDGET)
        if stubborn and agent == "AG1" and OUT_OF_STOCK.claim in user:
            repairs = sum(1 for m in req.messages if m.role == "user") - 1
            if repairs == 0:
                return _attack("undercut", "a is out of stock", BUY_A)
            return _attack("rebut", OUT_OF_STOCK.claim, BUY_A)
        return {"can_defeat": "NO", "attack": "none", "target": "", "argument": None}
    if task == "CharacterizationAnswer":
        return CHARACTERIZATION
    if task == "GeneralizationAnswer":
        return CORE
    if task == "FinalAnswer":
        return FINAL
    raise AssertionError(f"the camera script has no answer for {task!r} from {agent!r}")


def _attack(kind: str, target: str, arg: Argument) -> dict:
    return {
        "can_defeat": "YES",
        "attack": kind,
        "target": target,
        "argument": json.loads(arg.model_dump_json(exclude={"Conc", "Ass"})),
    }


def camera_reference_backend(*, stubborn: bool = False) -> ScriptedBackend:
    """A backend that plays the formal camera example (see :func:`camera_reference_answer`)."""
    return ScriptedBackend(
        lambda req: camera_reference_answer(req, stubborn=stubborn), model="camera-reference"
    )
