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
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from argnb.batch import run_sync
from argnb.errors import ArgnbError
from argnb.fallacy.calls import Outcome, acall, acall_text
from argnb.fallacy.prompts import PROMPTS_DIR, PromptTemplate, load
from argnb.fallacy.schemas import INVALID, CotVerdict, Verdict, parse_label
from argnb.llm.base import Backend, Message, Options, Usage
from argnb.transcript import Transcript, Turn

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
    template: PromptTemplate | None = None,
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


@dataclass
class Prediction:
    """A baseline's answer for one argument."""

    label: int | str
    method: str
    name: str
    raw: str = ""
    reasoning: dict[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    calls: int = 0
    error: str = ""
    model: str = ""
    backend: str = ""
    transcript: Transcript | None = None

    @property
    def valid(self) -> bool:
        return self.label in (0, 1)


@dataclass
class Baseline:
    """One baseline configuration: a method on a backend (an ensemble member, a bench method)."""

    method: str = "zero"
    backend: Backend | None = None
    examples: Any = None
    structured: bool = True
    name: str = ""
    options: Options | None = None
    prompt_dir: str | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ArgnbError(f"unknown method {self.method!r}", hint="use zero, few or cot")
        if self.backend is None:
            from argnb.config import default_backend

            self.backend = default_backend()
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

    async def arun(self, text: str) -> Prediction:
        """Classify one argument."""
        msgs = self.messages(text)
        if self.structured:
            schema = CotVerdict if self.method == "cot" else Verdict
            out: Outcome = await acall(self.backend, msgs, schema, options=self.options)
            value = out.value
            label = value.label if value is not None else INVALID
            reasoning = value.model_dump(exclude={"label"}) if value is not None else {}
        else:
            opts = (self.options or self.backend.options).model_copy(update={"max_tokens": 16})
            out = await acall_text(self.backend, msgs, parse_label, options=opts)
            label = out.value if out.valid else INVALID
            reasoning = {}
        pred = Prediction(
            label=label,
            method=self.method,
            name=self.name,
            raw=out.raw,
            reasoning=reasoning,
            usage=out.usage,
            latency_s=out.latency_s,
            calls=out.calls,
            error=out.error,
            model=out.model,
            backend=out.backend,
        )
        pred.transcript = _transcript(text, pred)
        return pred

    def run(self, text: str) -> Prediction:
        """Sync twin of :meth:`arun` (works inside Jupyter)."""
        return run_sync(self.arun(text))


def baseline_turn(pred: Prediction) -> Turn:
    """The transcript turn for one baseline answer."""
    payload: dict[str, Any] = {"label": pred.label, **pred.reasoning}
    if pred.error:
        payload["error"] = pred.error
    return Turn(
        speaker=pred.name,
        role=METHOD_NAMES.get(pred.method, pred.method),
        text=pred.raw,
        payload=payload,
        usage=pred.usage,
        latency_s=pred.latency_s,
        model=pred.model,
        backend=pred.backend,
        valid=pred.valid,
    )


def _transcript(text: str, pred: Prediction) -> Transcript:
    tr = Transcript(
        kind="fallacy-baseline",
        title=METHOD_NAMES[pred.method],
        meta={"argument": text, "method": pred.method, "calls": pred.calls},
        outcome={"label": pred.label},
    )
    tr.add(baseline_turn(pred))
    return tr


async def aclassify(
    text: str,
    backend: Backend | None = None,
    method: str = "zero",
    *,
    examples: Any = None,
    structured: bool = True,
    options: Options | None = None,
) -> Prediction:
    """Classify one argument with one baseline (async)."""
    cfg = Baseline(method, backend, examples, structured, options=options)
    return await cfg.arun(text)


def classify(
    text: str,
    backend: Backend | None = None,
    method: str = "zero",
    *,
    examples: Any = None,
    structured: bool = True,
    options: Options | None = None,
) -> Prediction:
    """Classify one argument with one baseline: label 0, 1 or ``"invalid"``."""
    return run_sync(
        aclassify(text, backend, method, examples=examples, structured=structured, options=options)
    )
