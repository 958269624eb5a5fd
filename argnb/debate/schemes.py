"""Argumentation schemes as data: definitions, premise/conclusion patterns, critical questions.

The memory labels every utterance with the schemes it uses and a quality label per scheme; the
labels are judged against each scheme's **critical questions** (Walton's tests of a good use).
The schemes live in ``schemes.yaml`` so an instructor can read and extend them without code:
:func:`load_schemes` reads that file or an adapted copy.

    >>> s = load_schemes()
    >>> s.ids[:3], len(s)
    (('example', 'expert_opinion', 'positive_consequences'), 7)
    >>> s["analogy"].critical_questions[0]
    'Are there differences between the two cases that weaken the similarity?'
    >>> score("good"), score(None)
    (3, 0)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from argnb.errors import ArgnbError

if TYPE_CHECKING:
    import pandas as pd

SCHEMES_FILE = Path(__file__).with_name("schemes.yaml")

#: quality labels, worst first; their scores are 1..4 and an unused scheme scores 0
LABELS: tuple[str, ...] = ("poor", "general", "good", "excellent")
Label = Literal["poor", "general", "good", "excellent"]


def score(label: str | None) -> int:
    """The paper's numeric value of a label: poor=1 ... excellent=4; absent (None) = 0."""
    if label is None:
        return 0
    try:
        return LABELS.index(label) + 1
    except ValueError:
        raise ArgnbError(
            f"unknown quality label {label!r}", hint=f"use one of {', '.join(LABELS)}"
        ) from None


class Scheme(BaseModel):
    """One argumentation scheme."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(pattern=r"^[a-z][a-z0-9_]{1,39}$")
    name: str = Field(min_length=3)
    definition: str = Field(min_length=10)
    premises: tuple[str, ...] = Field(min_length=1)
    conclusion: str = Field(min_length=3)
    critical_questions: tuple[str, ...] = Field(min_length=1)
    example: str = ""

    @field_validator("definition", "conclusion", "example", "name")
    @classmethod
    def _strip(cls, v: str) -> str:
        return " ".join(v.split())

    def pattern(self) -> str:
        """Premises and conclusion as indented lines (for prompts and notebooks)."""
        lines = [f"  premise: {p}" for p in self.premises] + [f"  conclusion: {self.conclusion}"]
        return "\n".join(lines)

    def questions(self) -> str:
        return "\n".join(f"  CQ{i}: {q}" for i, q in enumerate(self.critical_questions, 1))


@dataclass(frozen=True)
class SchemeSet:
    """An ordered, immutable set of schemes (the order is the order of the file)."""

    schemes: tuple[Scheme, ...]
    source: str = ""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for s in self.schemes:
            if s.id in seen:
                raise ArgnbError(
                    f"scheme id {s.id!r} appears twice in {self.source or 'the scheme list'}",
                    hint="give every scheme its own id",
                )
            seen.add(s.id)
        if not self.schemes:
            raise ArgnbError(f"no schemes in {self.source or 'the scheme list'}")

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.schemes)

    def __len__(self) -> int:
        return len(self.schemes)

    def __iter__(self) -> Iterator[Scheme]:
        return iter(self.schemes)

    def __contains__(self, sid: object) -> bool:
        return sid in self.ids

    def __getitem__(self, sid: str) -> Scheme:
        for s in self.schemes:
            if s.id == sid:
                return s
        raise ArgnbError(f"unknown scheme {sid!r}", hint=f"known schemes: {', '.join(self.ids)}")

    def subset(self, ids: Sequence[str]) -> SchemeSet:
        """The named schemes, in this set's order."""
        wanted = set(ids)
        for sid in wanted:
            self[sid]  # raises for an unknown id
        return SchemeSet(tuple(s for s in self.schemes if s.id in wanted), self.source)

    def catalogue(
        self, *, patterns: bool = False, questions: bool = False, examples: bool = False
    ) -> str:
        """A plain-text description of every scheme, for prompts (definitions, and optionally
        the premise/conclusion patterns, critical questions and examples)."""
        parts = []
        for s in self.schemes:
            block = [f"- {s.id} ({s.name}): {s.definition}"]
            if patterns:
                block.append(s.pattern())
            if questions:
                block.append(s.questions())
            if examples and s.example:
                block.append(f"  example: {s.example}")
            parts.append("\n".join(block))
        return "\n".join(parts)

    def to_frame(self) -> pd.DataFrame:
        """One row per scheme: id, name, definition, pattern, critical questions."""
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "id": s.id,
                    "name": s.name,
                    "definition": s.definition,
                    "premises": " / ".join(s.premises),
                    "conclusion": s.conclusion,
                    "critical_questions": list(s.critical_questions),
                }
                for s in self.schemes
            ]
        )


@lru_cache(maxsize=16)
def _load(path: Path, mtime: float) -> SchemeSet:
    import yaml

    from argnb.datafiles import read_text

    try:
        data = yaml.safe_load(read_text(path, "--file"))
    except (OSError, yaml.YAMLError) as exc:
        raise ArgnbError(
            f"cannot read schemes from {path}: {exc}", hint="check the path and YAML syntax"
        ) from None
    items = data.get("schemes") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ArgnbError(f"{path} has no 'schemes:' list", hint="see argnb/debate/schemes.yaml")
    out = []
    for i, item in enumerate(items):
        try:
            out.append(Scheme.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ArgnbError(
                f"{path}: scheme #{i + 1} is malformed at {where!r}: {first['msg']}",
                hint="each scheme needs id, name, definition, premises, conclusion, "
                "critical_questions",
            ) from None
    return SchemeSet(tuple(out), str(path))


def load_schemes(path: str | Path | None = None) -> SchemeSet:
    """The schemes of ``schemes.yaml`` (or of an adapted copy at ``path``)."""
    p = Path(path) if path else SCHEMES_FILE
    if not p.is_file():
        raise ArgnbError(f"no schemes file at {p}", hint="check the path")
    return _load(p.resolve(), p.stat().st_mtime)
