"""The seven-dimension rubric for critiques of a position, as plain data and one pydantic model.

A critique is rated on seven numbers in [0, 1]. Two of them only make sense together: how
*central* the attacked claims are and how *strong* the attack on them is. Raters often disagree
about how to split credit between the two, but agree much better on their product, the extent to
which the critique refutes the position -- so scoring uses the product, never either factor alone.
The full guidance that judges and learners read is ``prompts/rubric.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

PROMPTS = Path(__file__).parent / "prompts"

#: the rubric's dimensions, in the order raters fill them in
DIMENSIONS: tuple[str, ...] = (
    "centrality",
    "strength",
    "correctness",
    "clarity",
    "dead_weight",
    "single_issue",
    "overall",
)

#: human-facing names
LABELS: dict[str, str] = {
    "centrality": "centrality",
    "strength": "strength",
    "correctness": "correctness",
    "clarity": "clarity",
    "dead_weight": "dead weight",
    "single_issue": "single issue",
    "overall": "overall",
}

#: one or two sentences per dimension, in our words (the long version is prompts/rubric.md)
DEFINITIONS: dict[str, str] = {
    "centrality": (
        "How much the position rests on the claims the critique attacks: if those claims were "
        "shown false, how much of the position would fall with them? 1 = the position collapses; "
        "0.5 = it is meaningfully weakened; 0 = nothing of importance is lost."
    ),
    "strength": (
        "How far the critique actually knocks down the claims it attacks, judged only against the "
        "claims that earn it its centrality. 1 = refuted; 0.5 = substantially weakened; 0 = "
        "untouched. Strength × centrality is the extent to which the critique refutes the position."
    ),
    "correctness": (
        "The share of what the critique says that is true, each claim weighted by how much it "
        "matters to the critique. 1 = nothing false; 0.5 = about half wrong; 0 = all wrong."
    ),
    "clarity": (
        "How precisely the critique's meaning can be pinned down after a careful reading (not how "
        "easy it is to read). 1 = precise; 0.8 = mostly clear with real ambiguities; 0.5 = only its "
        "general direction can be made out; 0 = impossible to tell what it says."
    ),
    "dead_weight": (
        "The share of the critique that does no work: it neither argues, nor clarifies, nor bears "
        "on whether the position is right. Bad arguments are not dead weight; empty phrases, "
        "remarks about tone and off-topic asides are. 1 = all of it; 0 = none."
    ),
    "single_issue": (
        "Does the critique pursue one issue rather than several independent ones? 1 = one issue "
        "(even if refuting it takes several steps); 0 = clearly two or more independent objections."
    ),
    "overall": (
        "All things considered. Start from strength × centrality, then adjust for insight, clarity, "
        "errors and padding. 1 = refutes the position and is well made; 0.5 = a significant problem "
        "with no obvious answer; 0 = no real problem, or unintelligible."
    ),
}

_ALIASES = {
    "deadweight": "dead_weight",
    "singleissue": "single_issue",
    "overallscore": "overall",
    "strengthcentrality": None,  # derived, never stored
}


def canonical(name: str) -> str | None:
    """Map ``"Dead weight"``, ``"dead-weight"``, ``"dead_weight"`` ... to ``"dead_weight"``.

    Returns None for names that are not rubric dimensions (so loaders can ignore extra fields).
    """
    key = "".join(ch for ch in name.lower() if ch.isalnum())
    for dim in DIMENSIONS:
        if key == dim.replace("_", ""):
            return dim
    return _ALIASES.get(key)


def clean_ratings(values: Mapping[str, Any], *, where: str = "rating") -> dict[str, float]:
    """Validate a possibly partial rating: known dimensions only, numbers in [0, 1].

    Missing dimensions are simply absent; ``None``/NaN count as missing. Unknown keys are dropped
    (exports carry comments, timestamps, ...). Out-of-range or non-numeric values raise ValueError
    naming ``where``, so a bad row in a data file is easy to find.
    """
    out: dict[str, float] = {}
    for key, raw in values.items():
        dim = canonical(str(key))
        if dim is None or raw is None:
            continue
        try:
            v = float(raw)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: {key}={raw!r} is not a number") from None
        if math.isnan(v):
            continue
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"{where}: {key}={v} is outside [0, 1]")
        out[dim] = v
    return out


def refutation(values: Mapping[str, float]) -> float | None:
    """Strength x centrality: how far the critique refutes the position (None if either is missing)."""
    c, s = values.get("centrality"), values.get("strength")
    if c is None or s is None:
        return None
    return c * s


def _field(dim: str) -> Any:
    return Field(ge=0.0, le=1.0, description=DEFINITIONS[dim])


class Rating(BaseModel):
    """A complete rating of one critique on all seven dimensions, each in [0, 1]."""

    model_config = ConfigDict(frozen=True)

    centrality: float = _field("centrality")
    strength: float = _field("strength")
    correctness: float = _field("correctness")
    clarity: float = _field("clarity")
    dead_weight: float = _field("dead_weight")
    single_issue: float = _field("single_issue")
    overall: float = _field("overall")

    @property
    def refutation(self) -> float:
        """Strength x centrality, the extent to which the critique refutes the position."""
        return self.centrality * self.strength

    def as_dict(self) -> dict[str, float]:
        return {d: getattr(self, d) for d in DIMENSIONS}

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Rating:
        """Build from any key spelling (``"dead weight"``, ``"dead_weight"``); all seven needed."""
        clean = clean_ratings(values)
        missing = [d for d in DIMENSIONS if d not in clean]
        if missing:
            raise ValueError(f"rating lacks {', '.join(missing)}")
        return cls(**clean)


@cache
def rubric_text() -> str:
    """The full rubric guidance, as judges and learners read it (``prompts/rubric.md``)."""
    return (PROMPTS / "rubric.md").read_text(encoding="utf-8")


def rubric_table() -> Any:
    """The seven dimensions and their short definitions as a DataFrame (for notebooks)."""
    import pandas as pd

    return pd.DataFrame(
        {"dimension": [LABELS[d] for d in DIMENSIONS], "meaning": list(DEFINITIONS.values())}
    ).set_index("dimension")
