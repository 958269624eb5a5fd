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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel

from argnb.agents import Agent
from argnb.critique.data import CritiqueDataset, RatedCritique
from argnb.critique.payloads import JudgeRating
from argnb.critique.rubric import DIMENSIONS, LABELS, PROMPTS, rubric_text
from argnb.critique.schemas import BaselineAnswer, DimensionAnswer, RubricAnswer
from argnb.llm.base import Backend, Message, Options
from argnb.prompts import load
from argnb.transcript import Transcript, Turn
from argnb.words import drop_repeats

JudgeKind = Literal["baseline", "rubric"]

#: how much of an answer that never validated a judgement keeps
RAW_KEPT = 4000


@dataclass(frozen=True)
class Judgement:
    """One judge's rating of one critique: a read-only view of the judge's transcript turn."""

    transcript: Transcript

    @property
    def turn(self) -> Turn:
        return self.transcript.turns[-1]

    @property
    def rating(self) -> JudgeRating:
        return self.turn.payload  # type: ignore[return-value]

    @property
    def critique_id(self) -> str:
        return self.rating.critique_id

    @property
    def ratings(self) -> dict[str, float]:
        return dict(self.rating.ratings)

    @property
    def reasoning(self) -> str:
        return self.turn.text

    @property
    def reasoning_by_dimension(self) -> dict[str, str]:
        return dict(self.rating.reasoning_by_dimension)

    @property
    def judge(self) -> str:
        return self.rating.judge

    @property
    def error(self) -> str | None:
        """Why the answer never validated (None when it did; then ``ratings`` is empty)."""
        return self.rating.error or None

    @property
    def usage(self) -> dict[str, int]:
        u = self.transcript.usage
        return {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens}

    @property
    def latency_s(self) -> float:
        return self.transcript.cost.latency_s

    @property
    def backend(self) -> str:
        return self.turn.backend

    @property
    def model(self) -> str:
        return self.turn.model

    def record(self) -> dict[str, Any]:
        """One line of a predictions file (with the transcript it was read from)."""
        rec: dict[str, Any] = {
            "critique_id": self.critique_id,
            "ratings": self.ratings,
            "reasoning": self.reasoning,
            "usage": self.usage,
            "latency_s": self.latency_s,
            "judge": self.judge,
            "backend": self.backend,
            "model": self.model,
        }
        if self.reasoning_by_dimension:
            rec["reasoning_by_dimension"] = self.reasoning_by_dimension
        if self.error is not None:
            rec["error"] = self.error
        rec["transcript"] = self.transcript.model_dump(mode="json")
        return rec


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
        self.agent = Agent(self.name, backend, self.options)

    @property
    def schema(self) -> type[BaseModel]:
        return BaselineAnswer if self.kind == "baseline" else RubricAnswer

    @property
    def name(self) -> str:
        return self.kind + ("+few-shot" if self.examples else "")

    def prompt(self, position: str, critique: str) -> str:
        """The user turn for one critique (the rubric judge's instructions are the system turn)."""
        name = "baseline" if self.kind == "baseline" else "pair"
        return load("argnb.critique", name).render(position=position, critique=critique)

    def messages(self, position: str, critique: str) -> list[Message]:
        """[rubric as system turn], few-shot examples as earlier user/assistant turns, the critique.

        The rubric is long (~2,500 tokens), so it is sent once, not once per example.
        """
        msgs: list[Message] = []
        if self.kind == "rubric":
            system = load("argnb.critique", "rubric_judge").render(rubric=rubric_text())
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

    def _record(self, value: BaseModel, critique_id: str) -> tuple[JudgeRating, str]:
        """The typed payload and the reasoning text of a validated answer: the rationale shown
        says no sentence twice (small models loop; :func:`argnb.words.drop_repeats`), the scores
        are kept as answered."""
        if isinstance(value, BaselineAnswer):
            rating = JudgeRating(
                critique_id=critique_id, judge=self.name, ratings={"overall": float(value.overall)}
            )
            return rating, drop_repeats(value.reasoning)
        per = {d: getattr(value, d) for d in DIMENSIONS}
        why = {d: drop_repeats(a.reasoning) for d, a in per.items()}
        rating = JudgeRating(
            critique_id=critique_id,
            judge=self.name,
            ratings={d: float(a.score) for d, a in per.items()},
            reasoning_by_dimension=why,
        )
        return rating, "\n".join(f"{LABELS[d]}: {why[d]}" for d in per)

    async def arate(self, item: RatedCritique) -> Judgement:
        """Rate one critique. An answer that never validates gives a Judgement with ``error`` set."""
        resp = await self.agent.arespond(
            self.messages(item.position, item.critique), self.schema, role="rate"
        )
        if resp.valid:
            rating, text = self._record(resp.value, item.critique_id)
        else:
            rating = JudgeRating(
                critique_id=item.critique_id, judge=self.name, ratings={}, error=resp.error
            )
            text = resp.turn.payload["raw"][:RAW_KEPT]
        tr = Transcript(
            kind="critique-judge",
            title=f"{self.name} judge on {item.critique_id}",
            meta={"critique_id": item.critique_id, "judge": self.name, **self.backend.describe()},
            turns=[
                *resp.turns[:-1],
                resp.turn.model_copy(update={"payload": rating, "text": text}),
            ],
            outcome={"ratings": rating.ratings},
        )
        return Judgement(tr)

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
    from argnb.batch import run_batch
    from argnb.errors import DataError
    from argnb.prompts import fingerprint, prompts_dir

    items = list(items)
    by_id = {it.critique_id: it for it in items}

    async def one(row: dict[str, Any]) -> dict[str, Any]:
        return (await judge.arate(by_id[row["critique_id"]])).record()

    config = {
        "judge": judge.name,
        **judge.backend.describe(),
        "prompts": fingerprint(prompts_dir("argnb.critique")),
    }
    return run_batch(
        one,
        [{"critique_id": it.critique_id, "critique": it.critique} for it in items],
        out=out,
        key="critique_id",
        concurrency=concurrency,
        desc=f"{judge.name} judge",
        progress=progress,
        config=config,
        guard={"runs": "judges", "error": DataError},
    )


def read_predictions(path: str | Path) -> list[dict[str, Any]]:
    """Records of a predictions file (a torn last line from a crash is ignored)."""
    from argnb.batch import read_jsonl
    from argnb.datafiles import existing_file
    from argnb.errors import DataError

    p = Path(path)
    if not p.exists():
        raise DataError(
            f"no predictions file at {p}", hint="run `argnb critique judge ... --out` first"
        )
    records = read_jsonl(existing_file(p, "--pred"), key="critique_id")
    for n, rec in enumerate(records, start=1):
        if not isinstance(rec.get("critique_id"), str) or not isinstance(rec.get("ratings"), dict):
            raise DataError(
                f"{p}: record {n} is not a judge's prediction (needs critique_id and ratings)",
                hint="give a file written by `argnb critique judge --out`",
            )
    return records
