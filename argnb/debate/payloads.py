"""What the debate agents record in a transcript turn, as typed payloads.

Kinds:

* ``debate.schemes`` -- the scheme annotation agent's answer (schemes used, a reason each);
* ``debate.scores`` -- the scoring agent's answer (a quality label per used scheme);
* ``debate.keywords`` -- the keywords a retrieval started from (agent or lexical extractor);
* ``debate.retrieval`` -- what a retrieval step returned (records, scores, scheme priors);
* ``debate.utterance`` -- one debater's turn in a debate (stance, topic); a transcript with such
  turns can be added to the memory (:func:`argnb.debate.corpora.from_transcript`);
* ``debate.predicates`` / ``debate.chain`` / ``debate.flaws`` -- the logic agent's three steps
  over the opponent's turns;
* ``debate.draft`` / ``debate.summary`` / ``debate.verdict`` -- generate, summarize, judge (and
  revise: a draft with ``revision`` > 0);
* ``debate.stance_check`` -- the stance predicate on one utterance;
* ``debate.inspire`` / ``debate.debatrix`` -- utterance and debate evaluation.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from argnb.transcript import Payload


class SchemeUse(BaseModel):
    scheme: str
    reason: str = ""


class SchemeAnnotation(Payload):
    """Schemes an utterance uses, with the annotator's reason for each (empty: none found)."""

    kind: str = "debate.schemes"
    record_id: str = ""
    schemes: list[SchemeUse] = Field(default_factory=list)

    def ids(self) -> list[str]:
        return [s.scheme for s in self.schemes]


class SchemeScore(BaseModel):
    scheme: str
    label: str
    reason: str = ""


class SchemeScores(Payload):
    """A quality label (poor / general / good / excellent) per used scheme."""

    kind: str = "debate.scores"
    record_id: str = ""
    scores: list[SchemeScore] = Field(default_factory=list)

    def labels(self) -> dict[str, str]:
        return {s.scheme: s.label for s in self.scores}


class Keywords(Payload):
    """Keywords extracted from a debate history; ``source`` is ``lexical`` or ``agent``."""

    kind: str = "debate.keywords"
    keywords: list[str] = Field(default_factory=list)
    source: str = "lexical"
    error: str = ""


class RetrievalStep(Payload):
    """One retrieval: its keywords, the records kept (id, scores, schemes) and scheme priors."""

    kind: str = "debate.retrieval"
    method: str = "hybrid"
    stance: str | None = None
    k: int = 5
    keywords: list[str] = Field(default_factory=list)
    records: list[dict[str, Any]] = Field(default_factory=list)
    priors: dict[str, float] = Field(default_factory=dict)
    kept: list[str] = Field(default_factory=list)
    exemplars: list[str] = Field(default_factory=list)
    embed_model: str = ""


class Utterance(Payload):
    """A debater's turn: which side spoke, on which motion, and -- for a generated turn -- how
    it came about (method, judge rounds, whether the revision bound was hit, the schemes it was
    asked to use and the opponent claims it answers)."""

    kind: str = "debate.utterance"
    stance: str
    topic: str = ""
    method: str = ""  # "" for a human or corpus turn
    words: int = 0
    accepted: bool | None = None  # the judge's last verdict (None: no judge ran)
    revisions: int = 0
    bound_hit: bool = False
    schemes: list[str] = Field(default_factory=list)
    targets: list[str] = Field(default_factory=list)
    concluding: bool = False
    #: why there is no text: the gate stopped the draft (argnb.gate), so no judge saw it
    gated: str = ""


# -- part 2: one next utterance (logic agent, generation, judge, reviser) -------------------
class Predicates(Payload):
    """The logic agent's first step: the opponent's claims as pseudo first-order forms."""

    kind: str = "debate.predicates"
    predicates: list[str] = Field(default_factory=list)


class ReasoningChain(Payload):
    """The logic agent's second step: the opponent's reasoning retold, neutrally, in prose."""

    kind: str = "debate.chain"
    chain: str = ""


class Flaw(BaseModel):
    """One weakness in the opponent's reasoning; ``claims`` quotes the predicates it concerns."""

    kind: str
    text: str
    claims: list[str] = Field(default_factory=list)


class Flaws(Payload):
    """The logic agent's third step: what is wrong with the opponent's reasoning."""

    kind: str = "debate.flaws"
    flaws: list[Flaw] = Field(default_factory=list)


class Draft(Payload):
    """A candidate utterance: the first draft (``revision`` 0) or a reviser's version."""

    kind: str = "debate.draft"
    revision: int = 0
    words: int = 0
    cut: bool = False


class Summary(Payload):
    """The summarization agent's view of the debate with the candidate utterance in it."""

    kind: str = "debate.summary"
    overview: str = ""
    supporting: list[str] = Field(default_factory=list)
    opposing: list[str] = Field(default_factory=list)
    divergence: list[str] = Field(default_factory=list)


class Verdict(Payload):
    """The judgement agent on one candidate: three criteria, accept or not, and feedback."""

    kind: str = "debate.verdict"
    revision: int = 0
    stance_faithful: bool = False
    relevant: bool = False
    follows_schemes: bool = False
    accept: bool = False
    feedback: str = ""


class StanceCheck(Payload):
    """The stance predicate phi on one utterance (the paper's section 3), decided in code from
    four yes/no answers: ``ok`` when it supports its side or rebuts the other -- and does
    neither for the other side."""

    kind: str = "debate.stance_check"
    stance: str
    supports_own: bool = False
    rebuts_other: bool = False
    supports_other: bool = False
    rebuts_own: bool = False
    ok: bool = False
    reason: str = ""


# -- evaluation ----------------------------------------------------------------------------
class ClaimCheck(BaseModel):
    """One factual claim of an utterance and what the retrieved evidence says of it."""

    claim: str
    status: str  # supported | contradicted | unverifiable
    evidence: str = ""  # id of the record that decided it, if any


class InspireScores(Payload):
    """An utterance judged in the spirit of InspireScore: each dimension in [0, 1]."""

    kind: str = "debate.inspire"
    utterance_id: str = ""
    ratings: dict[str, int] = Field(default_factory=dict)  # sub-dimension -> 1..10
    claims: list[ClaimCheck] = Field(default_factory=list)
    subjective: float | None = None
    logic: float | None = None
    fact: float | None = None
    score: float | None = None


class SideScores(BaseModel):
    argument: float
    source: float
    language: float
    overall: float


class DebatrixVerdict(Payload):
    """A whole debate judged in the spirit of Debatrix: per side scores and a winner.
    ``swapped`` is True for the pass that showed the con side first."""

    kind: str = "debate.debatrix"
    debate_id: str = ""
    swapped: bool = False
    pro: SideScores | None = None
    con: SideScores | None = None
    winner: str = ""  # pro | con | tie
    reason: str = ""
