"""What a dialectic dialogue starts from: an issue and the two agents' stances (read from YAML).

The answers the agents give are in :mod:`argnb.dialectic.schemas`.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Stance(BaseModel):
    """What an agent starts from: facts and rules in words, and/or values in prose."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=40)
    facts: list[str] = Field(default_factory=list, max_length=30)
    rules: list[str] = Field(default_factory=list, max_length=30)
    values: str = Field(default="", max_length=2000)

    @field_validator("values")
    @classmethod
    def _strip(cls, s: str) -> str:
        return s.strip()

    def describe(self) -> str:
        """The stance as prompt text."""
        parts = []
        if self.values:
            parts.append(self.values)
        if self.facts:
            parts.append("Facts you know:\n" + "\n".join(f"- {f}" for f in self.facts))
        if self.rules:
            parts.append("Rules you hold:\n" + "\n".join(f"- {r}" for r in self.rules))
        return "\n\n".join(parts) or "(no stance given)"


class Case(BaseModel):
    """An issue and the two agents' stances (agent 1 argues first)."""

    model_config = ConfigDict(extra="forbid")
    issue: str = Field(min_length=1, max_length=400)
    agents: list[Stance] = Field(min_length=2, max_length=2)
    description: str = Field(default="", max_length=2000)

    @field_validator("agents")
    @classmethod
    def _distinct(cls, agents: list[Stance]) -> list[Stance]:
        if agents[0].name == agents[1].name:
            raise ValueError("the two agents need different names")
        for a in agents:
            if not (a.facts or a.rules or a.values):
                raise ValueError(f"{a.name}: give facts, rules or values")
        return agents

    @classmethod
    def from_yaml(cls, text: str) -> Case:
        import yaml

        return cls.model_validate(yaml.safe_load(text))

    @classmethod
    def load(cls, path: str | Path) -> Case:
        """Read a stances file (YAML); every mistake in it is one line."""
        from pydantic import ValidationError

        from argnb.datafiles import yaml_document
        from argnb.errors import DataError

        hint = "see argnb/dialectic/data/camera.yaml for the format"
        data = yaml_document(path, "--example", what="stances file", hint=hint)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:  # say which file and the first mistake
            e = exc.errors()[0]
            loc = ".".join(str(x) for x in e["loc"]) or "(top)"
            msg = f"{path}: not a valid stances file: {loc}: {e['msg']}"
            raise DataError(msg.splitlines()[0], hint=hint) from None

    def to_yaml(self) -> str:
        import yaml

        return yaml.safe_dump(self.model_dump(), sort_keys=False, allow_unicode=True)
