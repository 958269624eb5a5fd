"""Single-model baselines: zero-shot, few-shot and chain-of-thought.

Each returns a :class:`Prediction` whose ``label`` is 0, 1 or ``"invalid"`` (the answer could not
be mapped to a label), plus a transcript of the call. Two answer formats:

* ``structured=True`` (default): the backend is asked for JSON matching a bounded schema
  (:class:`~argnb.fallacy.schemas.Verdict`, or :class:`~argnb.fallacy.schemas.CotVerdict` whose
  fields walk through the reasoning steps before the label), with one repair turn.
* ``structured=False``: the paper's plain-text format -- the model answers "0" or "1" and
  :func:`~argnb.fallacy.schemas.parse_label` maps the text; anything else is invalid.

    >>> from argnb.llm import ScriptedBackend
    >>> classify("Everyone does it, so it is fine.", ScriptedBackend([{"label": 1}])).label
    1
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from argnb.agents import Agent
from argnb.batch import run_sync
from argnb.errors import ArgnbError
from argnb.fallacy.payloads import BaselineAnswer
from argnb.fallacy.prompts import PROMPTS_DIR, Prompt, load
from argnb.fallacy.schemas import INVALID, CotVerdict, Verdict, parse_label
from argnb.llm.base import Backend, Message, Options
from argnb.transcript import Cost, Costed, Transcript, Turn

Method = Literal["zero", "few", "cot"]
METHODS: dict[str, str] = {"zero": "zero_shot", "few": "few_shot", "cot": "cot"}
METHOD_NAMES: dict[str, str] = {"zero": "zero-shot", "few": "few-shot", "cot": "chain-of-thought"}

#: the rule appended to the system prompt in plain-text mode
TEXT_RULE = "Reply with the single character 1 or 0 and nothing else."


@dataclass(frozen=True)
class Example:
    """A worked example for few-shot prompting."""

    text: str
    label: int


@lru_cache(maxsize=1)
def default_examples() -> tuple[Example, ...]:
    """Our own four examples (two fallacious, two sound; one sound news-comment style)."""
    data = json.loads((PROMPTS_DIR / "few_shot_examples.json").read_text(encoding="utf-8"))
    return tuple(Example(d["text"], int(d["label"])) for d in data)


def as_examples(examples: Any) -> list[Example]:
    """Accept Example objects, ``{"text", "label"}`` dicts or ``(text, label)`` pairs."""
    out = []
    for ex in examples:
        if isinstance(ex, Example):
            out.append(ex)
        elif isinstance(ex, dict):
            out.append(Example(str(ex["text"]), int(ex["label"])))
        else:
            text, label = ex
            out.append(Example(str(text), int(label)))
    for ex in out:
        if ex.label not in (0, 1):
            raise ArgnbError(f"few-shot example label must be 0 or 1, got {ex.label!r}")
    return out


def build_messages(
    text: str,
    method: str = "zero",
    *,
    examples: Any = None,
    structured: bool = True,
    prompt_dir: str | Path | None = None,
    template: Prompt | None = None,
) -> list[Message]:
    """The chat a baseline sends: system prompt, (few-shot example turns), the question.

    The wording comes from ``prompts/<method>.md``, from the same file in ``prompt_dir``, or from
    an already parsed ``template``.
    """
    if method not in METHODS:
        raise ArgnbError(f"unknown method {method!r}", hint="use zero, few or cot")
    tpl = template or load(METHODS[method], str(prompt_dir) if prompt_dir else None)
    system = tpl.render("system")
    if not structured:
        system += "\n\n" + TEXT_RULE
    msgs = [Message(role="system", content=system)]
    if method == "few":
        for ex in as_examples(default_examples() if examples is None else examples):
            msgs.append(Message(role="user", content=tpl.render("example", argument=ex.text)))
            answer = json.dumps({"label": ex.label}) if structured else str(ex.label)
            msgs.append(Message(role="assistant", content=answer))
    msgs.append(Message(role="user", content=tpl.render("user", argument=text)))
    return msgs


def _label(text: str) -> int:
    """Plain-text mode: the answer's label, or a ValueError that makes it invalid."""
    label = parse_label(text)
    if label == INVALID:
        raise ValueError("answer is not a 0/1 label")
    return int(label)


@dataclass(frozen=True)
class Prediction(Costed):
    """A baseline's answer for one argument: a read-only view of its transcript turn.

    The turn (payload :class:`~argnb.fallacy.payloads.BaselineAnswer`) is the record; label,
    reasoning and cost are read from it, so a saved transcript gives back the same prediction.
    """

    transcript: Transcript
    index: int = 0

    @property
    def turn(self) -> Turn:
        return self.transcript.turns[self.index]

    @property
    def answer(self) -> BaselineAnswer:
        return self.turn.payload  # type: ignore[return-value]

    @property
    def label(self) -> int | str:
        return self.answer.label

    @property
    def method(self) -> str:
        return self.answer.method

    @property
    def name(self) -> str:
        return self.turn.speaker

    @property
    def raw(self) -> str:
        return self.turn.text

    @property
    def reasoning(self) -> dict[str, Any]:
        return self.answer.reasoning()

    @property
    def error(self) -> str:
        return self.answer.error

    @property
    def gate(self) -> str:
        """The gate's reason when it stopped the answer ("" otherwise; :mod:`argnb.gate`)."""
        return self.answer.gate

    @property
    def cost(self) -> Cost:
        return self.turn.cost

    @property
    def model(self) -> str:
        return self.turn.model

    @property
    def backend(self) -> str:
        return self.turn.backend

    @property
    def valid(self) -> bool:
        return self.label in (0, 1)


@dataclass
class Baseline:
    """One baseline configuration: a method on a backend (an ensemble member, a bench method)."""

    method: str
    backend: Backend
    examples: Any = None
    structured: bool = True
    name: str = ""
    options: Options | None = None
    prompt_dir: str | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ArgnbError(f"unknown method {self.method!r}", hint="use zero, few or cot")
        if not self.name:
            self.name = f"{self.method}@{self.backend.name}:{self.backend.model}"

    def describe(self) -> dict[str, Any]:
        """What identifies this configuration in results files."""
        out = {
            "name": self.name,
            "method": self.method,
            "structured": self.structured,
            **self.backend.describe(),
        }
        if self.prompt_dir:
            out["prompt_dir"] = str(self.prompt_dir)
        return out

    def messages(self, text: str) -> list[Message]:
        return build_messages(
            text,
            self.method,
            examples=self.examples,
            structured=self.structured,
            prompt_dir=self.prompt_dir,
        )

    async def aturn(self, text: str) -> Turn:
        """Classify one argument; the answer as a transcript turn (valid or not)."""
        agent = Agent(self.name, self.backend, self.options)
        msgs = self.messages(text)
        if self.structured:
            schema = CotVerdict if self.method == "cot" else Verdict
            resp = await agent.arespond(msgs, schema)
            label = resp.value.label if resp.valid else INVALID
            steps = resp.value.model_dump(exclude={"label"}) if resp.valid else {}
        else:
            opts = (self.options or self.backend.options).model_copy(update={"max_tokens": 16})
            resp = await agent.arespond(msgs, None, parse=_label, options=opts)
            label, steps = (resp.value if resp.valid else INVALID), {}
        answer = BaselineAnswer(
            label=label,
            method=self.method,
            error=resp.error,
            gate=resp.gated,
            raw=resp.raw,
            **steps,
        )
        return resp.turn.model_copy(update={"role": METHOD_NAMES[self.method], "payload": answer})

    async def arun(self, text: str) -> Prediction:
        """Classify one argument (its own one-turn transcript)."""
        turn = await self.aturn(text)
        tr = Transcript(
            kind="fallacy-baseline",
            title=METHOD_NAMES[self.method],
            meta={"argument": text, "method": self.method},
            outcome={"label": turn.payload["label"]},
            turns=[turn],
        )
        return Prediction(tr)

    def run(self, text: str) -> Prediction:
        """Sync twin of :meth:`arun` (works inside Jupyter)."""
        return run_sync(self.arun(text))


async def aclassify(
    text: str,
    backend: Backend,
    method: str = "zero",
    *,
    examples: Any = None,
    structured: bool = True,
    options: Options | None = None,
) -> Prediction:
    """Classify one argument with one baseline (async): label 0, 1 or ``"invalid"``."""
    if not text.strip():  # a model answers even "nothing" -- and a tiny one calls it fallacious
        raise ArgnbError("the argument is empty", hint="pass the text of an argument to classify")
    return await Baseline(method, backend, examples, structured, options=options).arun(text)


def classify(text: str, backend: Backend, method: str = "zero", **kw: Any) -> Prediction:
    """Classify one argument with one baseline: label 0, 1 or ``"invalid"`` (keywords as
    :func:`aclassify`)."""
    return run_sync(aclassify(text, backend, method, **kw))
