"""The analyzer: reads the session and returns a validated analysis -- a short summary, points
of agreement, open questions and an argument map (claims, premises, objections, rebuttals).

It never takes part in the discussion. Its map becomes an :class:`argnb.maps.ArgumentMap`
(coloured by who said what; exports to AIF, Argdown and GraphML like every map) and a Dung
framework whose grounded extension says which claims stand:

    >>> from argnb.roundtable.payloads import Analysis
    >>> objection = {"objection": "They help to look things up", "by": "Ann",
    ...              "rebuttal": "Laptops do that better", "rebuttal_by": "D1"}
    >>> a = Analysis(upto=3, arguments=[{"claim": "Ban phones in class", "by": "D1",
    ...     "premises": ["They distract"], "counterarguments": [objection]}])
    >>> analysis_framework(a)
    (['A1', 'A1.x1', 'A1.x1.r'], [('A1.x1', 'A1'), ('A1.x1.r', 'A1.x1')])
    >>> sorted(grounded(a))
    ['A1', 'A1.x1.r']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from argnb.agents import Response
from argnb.llm.base import Options
from argnb.prompts import context_first
from argnb.roundtable.payloads import Analysis
from argnb.roundtable.schemas import SENTENCES, UNCLEAR, analysis_schema
from argnb.roundtable.seat import Seat
from argnb.words import distinct

#: the longest analysis the bounded schema allows (about 4,000 characters) fits in this
OPTIONS = Options(max_tokens=1100)


def to_payload(answer: Any, upto: int, trigger: str) -> Analysis:
    """The validated answer as the transcript's :class:`Analysis` (blank items dropped)."""
    data = answer.model_dump()

    def keep(items: list[str]) -> list[str]:  # no sentence twice (small models loop)
        return distinct(s for s in items if s)

    arguments = []
    for a in data["argument_map"]:
        if not a["claim"].strip():
            continue
        counters = [
            {**c, "rebuttal": c["rebuttal"].strip()}
            for c in a["counterarguments"]
            if c["objection"].strip()
        ]
        arguments.append({**a, "premises": keep(a["premises"]), "counterarguments": counters})
    return Analysis(
        upto=upto,
        trigger=trigger,  # type: ignore[arg-type]
        summary=keep(data["summary"]),
        agreements=keep(data["agreements"]),
        open_questions=keep(data["open_questions"]),
        arguments=arguments,
    )


@dataclass
class Analyzer(Seat):
    """An agent in the analyzer's seat."""

    ROLE: ClassVar[str] = "analyzer"

    sentences: int = SENTENCES
    options: Options = field(default_factory=lambda: OPTIONS)

    async def aanalyze(self, context: str, names: Sequence[str], **kw: Any) -> Response[Any]:
        """The analysis of the shared ``context`` (the discussion as every seat reads it)."""
        task = self.template.render(
            "task", sentences=self.sentences, names=", ".join([*names, UNCLEAR])
        )
        schema = analysis_schema(tuple(names), self.sentences)
        return await self.agent.arespond(
            context_first(context, task), schema, options=self.options, **kw
        )


# -- the analysis as a framework and a map ---------------------------------------------------
def analysis_framework(analysis: Analysis) -> tuple[list[str], list[tuple[str, str]]]:
    """Dung arguments and attacks of an analysis map.

    Each claim ``A<i>`` (with its premises) is an argument; each objection ``A<i>.x<k>`` attacks
    it; each rebuttal ``A<i>.x<k>.r`` attacks the objection it answers.
    """
    args: list[str] = []
    attacks: list[tuple[str, str]] = []
    for i, a in enumerate(analysis.arguments, start=1):
        claim = f"A{i}"
        args.append(claim)
        for k, c in enumerate(a.counterarguments, start=1):
            x = f"{claim}.x{k}"
            args.append(x)
            attacks.append((x, claim))
            if c.rebuttal:
                r = f"{x}.r"
                args.append(r)
                attacks.append((r, x))
    return args, attacks


def grounded(analysis: Analysis) -> set[str]:
    """The grounded extension of :func:`analysis_framework` (what a sceptic accepts)."""
    from argnb.dialectic.semantics import grounded_extension

    args, attacks = analysis_framework(analysis)
    return set(grounded_extension(args, attacks))


def analysis_map(analysis: Analysis, title: str = "") -> Any:
    """The analysis as an :class:`argnb.maps.ArgumentMap`: claims with their premises (through an
    inference node), objections rebutting claims, rebuttals rebutting objections; each node
    carries who said it and its grounded status."""
    from argnb.dialectic.semantics import grounded_labelling
    from argnb.maps import ArgumentMap

    args, attacks = analysis_framework(analysis)
    status = grounded_labelling(args, attacks)
    m = ArgumentMap(title)

    def who(name: str) -> str | None:
        return name if name and name != UNCLEAR else None

    for i, a in enumerate(analysis.arguments, start=1):
        claim = f"A{i}"
        m.add_claim(claim, a.claim, agent=who(a.by), status=status[claim])
        if a.premises:
            ids = [
                m.add_premise(f"{claim}.p{j}", p, agent=who(a.by))
                for j, p in enumerate(a.premises, start=1)
            ]
            m.add_argument(
                f"{claim}.i",
                premises=ids,
                conclusion=claim,
                agent=who(a.by),
                status=status[claim],
                label=claim,
            )
        for k, c in enumerate(a.counterarguments, start=1):
            x = f"{claim}.x{k}"
            m.add_claim(x, c.objection, agent=who(c.by), status=status[x])
            m.add_rebut(x, claim, label="objects")
            if c.rebuttal:
                r = f"{x}.r"
                m.add_claim(r, c.rebuttal, agent=who(c.rebuttal_by), status=status[r])
                m.add_rebut(r, x, label="rebuts")
    return m
