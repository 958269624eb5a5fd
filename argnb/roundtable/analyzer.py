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
from argnb.gate import Gate
from argnb.llm.base import Options
from argnb.prompts import context_first
from argnb.roundtable.payloads import Analysis
from argnb.roundtable.schemas import SENTENCES, UNCLEAR, analysis_schema
from argnb.roundtable.seat import Seat
from argnb.words import distinct

#: the longest analysis the bounded schema allows (about 4,000 characters) fits in this
OPTIONS = Options(max_tokens=1100)


def to_payload(
    answer: Any, upto: int, trigger: str, spoken: Sequence[tuple[str, str]] | None = None
) -> Analysis:
    """The validated answer as the transcript's :class:`Analysis` (blank items dropped).

    ``spoken``: the (speaker, text) turns the analysis read; each credit (``by``) then names the
    seat whose words the item holds (:func:`trace`), or :data:`UNCLEAR` -- never a seat that
    did not say it, so the panel and the map credit the same speakers."""
    data = answer.model_dump()

    def credit(text: str, by: str) -> str:
        if spoken is None:
            return by
        who = trace(text, by, spoken)
        return UNCLEAR if who == ANALYZER else who

    def keep(items: list[str]) -> list[str]:  # no sentence twice (small models loop)
        return distinct(s for s in items if s)

    arguments = []
    for a in data["argument_map"]:
        if not a["claim"].strip():
            continue
        counters = [
            {
                **c,
                "rebuttal": c["rebuttal"].strip(),
                "by": credit(c["objection"], c["by"]),
                "rebuttal_by": credit(c["rebuttal"], c["rebuttal_by"]) if c["rebuttal"] else "",
            }
            for c in a["counterarguments"]
            if c["objection"].strip()
        ]
        arguments.append(
            {
                **a,
                "by": credit(a["claim"], a["by"]),
                "premises": keep(a["premises"]),
                "counterarguments": counters,
            }
        )
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
    #: every text of an analysis is read by a learner (and the map draws it): one cut off, a
    #: field's name as a label or one sentence three times over stops the whole analysis
    GATE: ClassVar[Gate] = Gate(
        prose=("summary",),
        phrases=("agreements", "open_questions", "claim", "premises", "objection", "rebuttal"),
    )

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


#: whom a map node is credited to when no seat's turn holds it: the analyzer's own reading
ANALYZER = "Analyzer (no turn)"  # short enough for the picture's legend (18 characters)
#: a node is traced to a seat when this share of its content words occur in that seat's turns
TRACE = 0.25
_STOP_WORDS = (
    "the and that this with for are was were but not you your our they them their have has had "
    "will would can could should from into about what when which who how than then there here "
    "also just only very more most some any all its it's is be been being of to in on at by as "
    "or if so do does did one"
)
_STOP = frozenset(_STOP_WORDS.split())


def _stems(text: str) -> set[str]:
    """Content words, lower-cased, with a plural or tense ending cut (copies, copied → copi)."""
    import re

    out = set()
    for word in re.findall(r"[a-z][a-z']+", text.lower()):
        if len(word) < 3 or word in _STOP:
            continue
        for end in ("ing", "ed", "es", "s", "ly"):
            if word.endswith(end) and len(word) - len(end) >= 3:
                word = word[: -len(end)]
                break
        if word.endswith("y"):
            word = word[:-1] + "i"
        out.add(word.removesuffix("e"))
    return out


def trace(text: str, by: str, spoken: Sequence[tuple[str, str]]) -> str:
    """Whose turn a map node came from: ``by`` (the analyzer's credit) when that seat spoke and
    at least :data:`TRACE` of the node's content words are in its turns, else the seat whose
    turns hold most of them (at least :data:`TRACE`), else :data:`ANALYZER` -- a node is never
    credited to a seat (the human's least of all) whose words it does not hold.

    >>> said = [("Ann", "Phones distract pupils in class."), ("You", "I look up words.")]
    >>> trace("Phones distract pupils", "You", said)
    'Ann'
    >>> trace("Schools should buy tablets", "You", said)
    'Analyzer (no turn)'
    """
    words = _stems(text)
    seats: dict[str, set[str]] = {}
    for speaker, said in spoken:
        seats.setdefault(speaker, set()).update(_stems(said))
    if not words or not seats:
        return ANALYZER

    def share(seat: str) -> float:
        return len(words & seats.get(seat, set())) / len(words)

    if by in seats and share(by) >= TRACE:
        return by
    best = max(seats, key=share)  # the first to speak wins a tie
    return best if share(best) >= TRACE else ANALYZER


def analysis_map(
    analysis: Analysis, title: str = "", spoken: Sequence[tuple[str, str]] | None = None
) -> Any:
    """The analysis as an :class:`argnb.maps.ArgumentMap`: claims with their premises (through an
    inference node), objections rebutting claims, rebuttals rebutting objections; each node
    carries who said it and its grounded status.

    ``spoken`` -- the (speaker, text) turns the analysis read
    (:func:`argnb.roundtable.record.spoken`) -- credits each node to the seat whose turn it came
    from (:func:`trace`), or to the analyzer, never to a seat that did not say it; without it
    the analyzer's own credits are drawn."""
    from argnb.dialectic.semantics import grounded_labelling
    from argnb.maps import ArgumentMap

    args, attacks = analysis_framework(analysis)
    status = grounded_labelling(args, attacks)
    m = ArgumentMap(title)

    def who(text: str, name: str) -> str | None:
        if spoken is not None:
            return trace(text, name, spoken)
        return name if name and name != UNCLEAR else None

    for i, a in enumerate(analysis.arguments, start=1):
        claim = f"A{i}"
        by = who(a.claim, a.by)
        m.add_claim(claim, a.claim, agent=by, status=status[claim])
        if a.premises:
            ids = [
                m.add_premise(f"{claim}.p{j}", p, agent=who(p, a.by))
                for j, p in enumerate(a.premises, start=1)
            ]
            m.add_argument(
                f"{claim}.i",
                premises=ids,
                conclusion=claim,
                agent=by,
                status=status[claim],
                label=claim,
            )
        for k, c in enumerate(a.counterarguments, start=1):
            x = f"{claim}.x{k}"
            m.add_claim(x, c.objection, agent=who(c.objection, c.by), status=status[x])
            m.add_rebut(x, claim, label="objects")
            if c.rebuttal:
                r = f"{x}.r"
                m.add_claim(r, c.rebuttal, agent=who(c.rebuttal, c.rebuttal_by), status=status[r])
                m.add_rebut(r, x, label="rebuts")
    return m
