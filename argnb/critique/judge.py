"""LLM judges that rate critiques: the baseline judge (overall only) and the full-rubric judge.

Both ask for reasoning *before* the score (the answer schema puts the reasoning fields first, so
schema-constrained decoding writes them first) and run on any backend through
:func:`argnb.llm.structured.astructured_call`. Scores are constrained to a 0.05 grid in [0, 1]:
JSON-schema grammars (llama.cpp, Ollama) cannot enforce a numeric range, but they do enforce an
``enum``, so even the tiny embedded model always produces an in-range number.

A judge returns a :class:`Judgement` -- ratings, reasoning, usage -- whose :meth:`~Judgement.record`
is one line of a predictions file. :func:`run_judge` rates a whole dataset, appending each line
as soon as it is done, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, create_model

from argnb.critique.data import CritiqueDataset, RatedCritique
from argnb.critique.rubric import DIMENSIONS, LABELS, PROMPTS, prompt_text, rubric_text
from argnb.errors import InvalidOutput
from argnb.llm.base import Backend, Message, Options
from argnb.llm.structured import astructured_call

#: the scores a judge may give: 0, 0.05, ..., 1
GRID: tuple[float, ...] = tuple(round(k * 0.05, 2) for k in range(21))
Score = Literal[GRID]  # type: ignore[valid-type]

JudgeKind = Literal["baseline", "rubric"]


class BaselineAnswer(BaseModel):
    """The baseline judge's answer: think step by step, then one overall score."""

    reasoning: str = Field(max_length=1000, description="step-by-step thinking, written first")
    overall: Score = Field(description="all things considered, from 0 to 1")


class DimensionAnswer(BaseModel):
    """Reasoning about one dimension, then its score."""

    reasoning: str = Field(max_length=400)
    score: Score


#: the full-rubric judge's answer: one (reasoning, score) per dimension, in rubric order
RubricAnswer = create_model(  # type: ignore[call-overload]
    "RubricAnswer",
    __doc__="Reasoning and a score for each of the seven dimensions, in rubric order.",
    **{d: (DimensionAnswer, Field(description=LABELS[d])) for d in DIMENSIONS},
)


class Judgement(BaseModel):
    """One judge's rating of one critique, with what it cost."""

    critique_id: str
    ratings: dict[str, float]
    reasoning: str = ""
    reasoning_by_dimension: dict[str, str] = Field(default_factory=dict)
    usage: dict[str, int] = Field(default_factory=dict)
    latency_s: float = 0.0
    judge: str = ""
    backend: str = ""
    model: str = ""
    error: str | None = None  # set when the model's answer never validated (ratings are empty)

    def record(self) -> dict[str, Any]:
        """One line of a predictions file."""
        rec = self.model_dump()
        if not rec["reasoning_by_dimension"]:
            rec.pop("reasoning_by_dimension")
        if rec["error"] is None:
            rec.pop("error")
        return rec


def fill(template: str, **values: str) -> str:
    """Put values into ``{{name}}`` slots (prompt text itself may contain braces)."""
    for key, value in values.items():
        template = template.replace("{{" + key + "}}", value)
    return template


def load_examples_for_prompt(path: str | Path | None = None) -> list[dict[str, Any]]:
    """Worked examples for few-shot prompting (ours: ``prompts/examples.yaml``)."""
    p = Path(path) if path else PROMPTS / "examples.yaml"
    return list(yaml.safe_load(p.read_text(encoding="utf-8")))


class Judge:
    """Rate critiques with a model. ``Judge(backend, "rubric", few_shot=True).rate(item)``."""

    def __init__(
        self,
        backend: Backend,
        kind: JudgeKind = "baseline",
        *,
        few_shot: bool | Sequence[dict[str, Any]] = False,
        options: Options | None = None,
    ) -> None:
        if kind not in ("baseline", "rubric"):
            raise ValueError("kind must be 'baseline' or 'rubric'")
        self.backend = backend
        self.kind = kind
        if few_shot is True:
            few_shot = load_examples_for_prompt()
        self.examples: list[dict[str, Any]] = list(few_shot or [])
        # reasoning comes first and can be long; leave room for it and the JSON around it
        self.options = options or backend.options.model_copy(
            update={"max_tokens": 1024 if kind == "baseline" else 2048}
        )

    @property
    def schema(self) -> type[BaseModel]:
        return BaselineAnswer if self.kind == "baseline" else RubricAnswer

    @property
    def name(self) -> str:
        return self.kind + ("+few-shot" if self.examples else "")

    def prompt(self, position: str, critique: str) -> str:
        """The user turn for one critique (the rubric judge's instructions are the system turn)."""
        name = "baseline" if self.kind == "baseline" else "pair"
        return fill(prompt_text(name), position=position, critique=critique)

    def messages(self, position: str, critique: str) -> list[Message]:
        """[rubric as system turn], few-shot examples as earlier user/assistant turns, the critique.

        The rubric is long (~2,500 tokens), so it is sent once, not once per example.
        """
        msgs: list[Message] = []
        if self.kind == "rubric":
            system = fill(prompt_text("rubric_judge"), rubric=rubric_text())
            msgs.append(Message(role="system", content=system))
        for ex in self.examples:
            msgs.append(Message(role="user", content=self.prompt(ex["position"], ex["critique"])))
            msgs.append(Message(role="assistant", content=self._example_answer(ex)))
        msgs.append(Message(role="user", content=self.prompt(position, critique)))
        return msgs

    def _example_answer(self, ex: dict[str, Any]) -> str:
        if self.kind == "baseline":
            ans: BaseModel = BaselineAnswer(
                reasoning=ex["overall_reasoning"], overall=ex["ratings"]["overall"]
            )
        else:
            ans = RubricAnswer(
                **{
                    d: DimensionAnswer(reasoning=ex["reasoning"][d], score=ex["ratings"][d])
                    for d in DIMENSIONS
                }
            )
        return ans.model_dump_json()

    async def arate(self, item: RatedCritique) -> Judgement:
        """Rate one critique. An answer that never validates gives a Judgement with ``error`` set."""
        start = time.perf_counter()
        base = {
            "critique_id": item.critique_id,
            "judge": self.name,
            "backend": self.backend.name,
            "model": self.backend.model,
        }
        try:
            out = await astructured_call(
                self.backend,
                self.messages(item.position, item.critique),
                self.schema,
                options=self.options,
            )
        except InvalidOutput as exc:
            return Judgement(
                **base,
                ratings={},
                reasoning=exc.raw[:4000],
                error=exc.errors or str(exc),
                latency_s=time.perf_counter() - start,
            )
        usage = out.usage
        cost = {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}
        value = out.value
        if isinstance(value, BaselineAnswer):
            return Judgement(
                **base,
                ratings={"overall": float(value.overall)},
                reasoning=value.reasoning,
                usage=cost,
                latency_s=out.latency_s,
            )
        per = {d: getattr(value, d) for d in DIMENSIONS}
        return Judgement(
            **base,
            ratings={d: float(a.score) for d, a in per.items()},
            reasoning="\n".join(f"{LABELS[d]}: {a.reasoning}" for d, a in per.items()),
            reasoning_by_dimension={d: a.reasoning for d, a in per.items()},
            usage=cost,
            latency_s=out.latency_s,
        )

    def rate(self, item: RatedCritique) -> Judgement:
        """Sync twin of :meth:`arate` (works inside Jupyter too)."""
        from argnb.batch import run_sync

        return run_sync(self.arate(item))


def run_judge(
    judge: Judge,
    items: CritiqueDataset | Iterable[RatedCritique],
    *,
    out: str | Path | None = None,
    concurrency: int = 1,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Rate every critique; with ``out``, append each record to that JSON Lines file at once.

    Re-running with the same ``out`` skips critiques already in it (resume after a crash or
    Ctrl-C). Returns all records (old and new) in dataset order.
    """
    from argnb.batch import read_jsonl, run_batch

    if out is not None:
        mine = (judge.name, judge.backend.name, judge.backend.model)
        for rec in read_jsonl(out):
            theirs = (rec.get("judge"), rec.get("backend"), rec.get("model"))
            if theirs != mine:
                from argnb.critique.data import DataError

                raise DataError(
                    f"{out} already holds predictions of the {theirs[0]} judge on "
                    f"{theirs[1]}:{theirs[2]}; resuming there would mix two judges",
                    hint="use another --out file (or delete this one to start over)",
                )
    items = list(items)
    by_id = {it.critique_id: it for it in items}

    async def one(row: dict[str, Any]) -> dict[str, Any]:
        return (await judge.arate(by_id[row["critique_id"]])).record()

    return run_batch(
        one,
        [{"critique_id": it.critique_id} for it in items],
        out=out,
        key="critique_id",
        concurrency=concurrency,
        desc=f"{judge.name} judge",
        progress=progress,
    )


def read_predictions(path: str | Path) -> list[dict[str, Any]]:
    """Records of a predictions file (a torn last line from a crash is ignored)."""
    from argnb.batch import read_jsonl

    p = Path(path)
    if not p.exists():
        from argnb.critique.data import DataError

        raise DataError(
            f"no predictions file at {p}", hint="run `argnb critique judge ... --out` first"
        )
    return read_jsonl(p)
