"""What a dialectic agent answers: structured arguments and the answers of each phase.

An *argument* is an ordered list of rules. Each rule derives a ``consequent`` from ``strong``
premises (things asserted) and ``weak_negation`` assumptions ("there is no evidence that ...").
A later rule may use an earlier rule's consequent as a premise. ``Conc`` collects every
consequent and ``Ass`` every assumption: rebuttals attack the former, undercuts the latter.

Every string and list has a bound (``max_length``): small local models otherwise loop until they
run out of tokens. The same models are used for model answers and for the transcript payloads.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, computed_field, field_validator

from argnb.llm.answer import Answer

MAX_TEXT = 200
#: one statement in natural language (bounded, so a small model cannot ramble)
Text = Annotated[str, Field(max_length=MAX_TEXT)]
MAX_PREMISES = 5
MAX_ASSUMPTIONS = 3
MAX_RULES = 4

AttackKind = Literal["rebut", "undercut"]


class Antecedent(Answer):
    """What a rule rests on: asserted premises and assumptions of missing evidence."""

    strong: list[Text] = Field(max_length=MAX_PREMISES)
    weak_negation: list[Text] = Field(max_length=MAX_ASSUMPTIONS)

    @field_validator("strong", "weak_negation", mode="after")
    @classmethod
    def _bounded_items(cls, items: list[str]) -> list[str]:
        cleaned = [" ".join(s.split()) for s in items]
        return [s for s in cleaned if s]


class Rule(Answer):
    """One inference step: antecedent ⟹ consequent."""

    id: str = Field(max_length=8)
    antecedent: Antecedent
    consequent: Text = Field(min_length=1, max_length=MAX_TEXT)

    @field_validator("consequent", mode="after")
    @classmethod
    def _squash(cls, s: str) -> str:
        s = " ".join(s.split())
        if not s:
            raise ValueError("the consequent must not be empty")
        return s


class Argument(Answer):
    """An ordered list of rules; the last rule's consequent is the claim."""

    rules: list[Rule] = Field(min_length=1, max_length=MAX_RULES)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def Conc(self) -> list[str]:
        """Every consequent, in order (what a rebut may attack)."""
        return [r.consequent for r in self.rules]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def Ass(self) -> list[str]:
        """Every weak-negation assumption, in order (what an undercut may attack)."""
        return [a for r in self.rules for a in r.antecedent.weak_negation]

    @property
    def claim(self) -> str:
        """The final conclusion."""
        return self.rules[-1].consequent

    @property
    def warrant(self) -> Rule:
        """The last rule: what the synthesis phase generalises."""
        return self.rules[-1]

    def premises(self) -> list[str]:
        """Strong premises that are not consequents of an earlier rule of this argument."""
        derived: set[str] = set()
        out: list[str] = []
        from argnb.dialectic.novelty import normalise

        for r in self.rules:
            for p in r.antecedent.strong:
                if normalise(p) not in derived:
                    out.append(p)
            derived.add(normalise(r.consequent))
        return out

    def rule_for(self, conclusion: str) -> Rule | None:
        """The rule that derives ``conclusion`` (exact text)."""
        return next((r for r in self.rules if r.consequent == conclusion), None)

    @classmethod
    def simple(
        cls, premises: list[str], conclusion: str, assumptions: list[str] | None = None
    ) -> Argument:
        """A one-rule argument, the common case (handy in tests, exercises and notebooks)."""
        return cls(
            rules=[
                Rule(
                    id="r1",
                    antecedent=Antecedent(strong=premises, weak_negation=assumptions or []),
                    consequent=conclusion,
                )
            ]
        )


def strip_computed(data: dict) -> dict:
    """An argument dict without the derived ``Conc``/``Ass`` (for re-validation)."""
    return {k: v for k, v in data.items() if k not in ("Conc", "Ass")}


# -- model answers ---------------------------------------------------------------------------
class MainArgumentAnswer(Answer):
    """Phase 1: an agent states its main argument."""

    argument: Argument


class AttackAnswer(Answer):
    """Phase 2: can the agent defeat the opponent's last argument, and with what."""

    can_defeat: Literal["YES", "NO"]
    attack: Literal["rebut", "undercut", "none"]
    target: Text
    argument: Argument | None


class Characterized(Answer):
    """An argument lifted to properties: no names of particular objects."""

    strong: list[Text] = Field(min_length=1, max_length=MAX_PREMISES)
    consequent: Text = Field(min_length=1, max_length=MAX_TEXT)


class CharacterizationAnswer(Answer):
    """Synthesis step 1: both warrants characterised."""

    C1: Characterized
    C2: Characterized


class GeneralizationAnswer(Answer):
    """Synthesis step 2: the consensus core both sides can accept."""

    E: Characterized


class FinalAnswer(Answer):
    """Synthesis step 3: a concrete answer that satisfies the consensus core."""

    final_answer: Text = Field(min_length=1, max_length=MAX_TEXT)
