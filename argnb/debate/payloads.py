"""What the debate agents record in a transcript turn, as typed payloads.

Kinds:

* ``debate.schemes`` -- the scheme annotation agent's answer (schemes used, a reason each);
* ``debate.scores`` -- the scoring agent's answer (a quality label per used scheme);
* ``debate.keywords`` -- the keywords a retrieval started from (agent or lexical extractor);
* ``debate.retrieval`` -- what a retrieval step returned (records, scores, scheme priors);
* ``debate.utterance`` -- one debater's turn in a debate (stance, topic); a transcript with such
  turns can be added to the memory (:func:`argnb.debate.corpora.from_transcript`).
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
    """A debater's turn: which side spoke, on which motion (more fields may follow)."""

    kind: str = "debate.utterance"
    stance: str
    topic: str = ""
