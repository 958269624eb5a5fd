"""A roundtable described as data: in Python, in a YAML file, or filled in by the widget.

.. code-block:: yaml

    topic: Should students be allowed to use AI tools for homework?
    human: Ann
    deliberators:
      - local:smollm2-135m
      - spec: ollama:llama3.2
        name: Lena
        perspective: a teacher who worries about copying
    moderator: ollama:llama3.2      # default: the session's backend
    turns: 12
    analyze_every: 4
    fallacy_check: zero             # zero | few | cot, optionally @backend:model

Specs are ``backend:model`` strings (:func:`argnb.agents.parse_spec`); a seat without one uses
the backend handed to :meth:`SessionConfig.build` (the CLI's ``--backend``/``--model``, the
notebook's current backend).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from argnb.errors import ArgnbError


class DeliberatorConfig(BaseModel):
    """One deliberator's seat: its model, an optional name and perspective."""

    model_config = ConfigDict(extra="forbid")
    spec: str | None = None
    name: str | None = None
    perspective: str = Field("", max_length=300)


class SessionConfig(BaseModel):
    """Everything that defines a session except the backends' connections."""

    model_config = ConfigDict(extra="forbid")
    topic: str = Field(min_length=3, max_length=300)
    human: str = Field("You", min_length=1, max_length=40)
    deliberators: list[DeliberatorConfig] = Field(
        default_factory=lambda: [DeliberatorConfig(), DeliberatorConfig()], min_length=1
    )
    moderator: str | None = None
    analyzer: str | None = None
    analysis: bool = True
    turns: int = Field(12, ge=1, le=200)
    human_every: int = Field(3, ge=2, le=20)
    analyze_every: int = Field(4, ge=0, le=200)
    word_limit: int = Field(150, ge=10, le=1000)
    fallacy_check: str | None = None

    @field_validator("deliberators", mode="before")
    @classmethod
    def _specs(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [s for s in value.split(",") if s.strip()]
        if isinstance(value, list):
            return [{"spec": v.strip()} if isinstance(v, str) else v for v in value]
        return value

    @classmethod
    def from_yaml(cls, path: str | Path) -> SessionConfig:
        import yaml

        from argnb.datafiles import read_text

        p = Path(path)
        if not p.is_file():
            raise ArgnbError(
                f"no session file at {p}", hint="write a YAML file (see docs/roundtable.md)"
            )
        try:
            data = yaml.safe_load(read_text(p, "--config")) or {}
        except yaml.YAMLError as exc:
            raise ArgnbError(f"{p} is not valid YAML: {str(exc).splitlines()[0]}") from None
        return cls.parse(data, where=str(p))

    @classmethod
    def parse(cls, data: Any, where: str = "session config") -> SessionConfig:
        """Validate ``data``; a mistake becomes one line that names the field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            e = exc.errors()[0]
            loc = ".".join(str(x) for x in e["loc"]) or "(top)"
            raise ArgnbError(
                f"{where}: {loc}: {e['msg']}",
                hint="see docs/roundtable.md for the fields and their limits",
            ) from None

    def build(
        self, backend: Any = None, *, connect: dict[str, Any] | None = None, **session_kw: Any
    ) -> Any:
        """A :class:`~argnb.roundtable.session.Session`; seats without a spec use ``backend``
        (the current default backend when None); seats with one are connected with ``connect``
        (the shared ``--host --base-url --timeout --no-cache``, so they reach every seat)."""
        from argnb.agents import Agent, connect_spec
        from argnb.roundtable.deliberator import Deliberator
        from argnb.roundtable.session import Session

        def base():
            nonlocal backend
            if backend is None:
                from argnb.config import default_backend

                backend = default_backend()
            return backend

        def seat(spec: str | None):
            return connect_spec(spec, **(connect or {})) if spec else base()

        deliberators = [
            Deliberator(
                Agent(d.name or f"Deliberator {i}", seat(d.spec)),
                label=f"Deliberator {i}",
                perspective=d.perspective,
            )
            for i, d in enumerate(self.deliberators, start=1)
        ]
        moderator = seat(self.moderator)
        analyzer = seat(self.analyzer or self.moderator) if self.analysis else None
        fallacy = self.fallacy_baseline(moderator, connect) if self.fallacy_check else None
        return Session(
            self.topic,
            moderator=moderator,
            deliberators=deliberators,
            analyzer=analyzer,
            human=self.human,
            turns=self.turns,
            human_every=self.human_every,
            analyze_every=self.analyze_every,
            word_limit=self.word_limit,
            fallacy=fallacy,
            **session_kw,
        )

    def fallacy_baseline(self, backend: Any, connect: dict[str, Any] | None = None) -> Any:
        """``zero``, ``few`` or ``cot``, optionally ``@backend:model`` (default: ``backend``)."""
        from argnb.agents import connect_spec
        from argnb.fallacy.baselines import METHODS, Baseline

        method, _, where = (self.fallacy_check or "").partition("@")
        if method not in METHODS:
            raise ArgnbError(
                f"unknown fallacy check {method!r}",
                hint="use zero, few or cot, optionally with @backend:model",
            )
        return Baseline(method, connect_spec(where, **(connect or {})) if where else backend)
