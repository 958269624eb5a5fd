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
notebook's current backend). The config chooses no backend and connects none: the entry point
(CLI, widget, notebook) connects :meth:`SessionConfig.specs` and passes the backends in.
"""

from __future__ import annotations

from collections.abc import Mapping
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
        """Read a session file (YAML); every mistake in it is one line."""
        from argnb.datafiles import yaml_document

        hint = "write a YAML file (see docs/roundtable.md)"
        data = yaml_document(path, "--config", what="session file", hint=hint)
        return cls.parse(data, where=str(path))

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

    def specs(self) -> list[str]:
        """Every ``backend:model`` the config names (seats and the fallacy check), each once:
        what an entry point connects before :meth:`build`."""
        from argnb.agents import parse_method_spec

        named = [d.spec for d in self.deliberators]
        named += [self.moderator, self.analyzer if self.analysis else None]
        if self.fallacy_check:
            named.append(parse_method_spec(self.fallacy_check)[1])
        return list(dict.fromkeys(s for s in named if s))

    def needs_backend(self) -> bool:
        """Some seat has no spec of its own, so :meth:`build` needs a ``backend``."""
        return (
            any(d.spec is None for d in self.deliberators)
            or self.moderator is None
            or (self.analysis and not (self.analyzer or self.moderator))
        )

    def build(
        self, backend: Any = None, seats: Mapping[str, Any] | None = None, **session_kw: Any
    ) -> Any:
        """A :class:`~argnb.roundtable.session.Session`; seats without a spec use ``backend``,
        a spec's backend is ``seats[spec]`` (both chosen and connected by the entry point)."""
        from argnb.agents import Agent
        from argnb.roundtable.deliberator import Deliberator
        from argnb.roundtable.session import Session

        seats = dict(seats or {})
        missing = [s for s in self.specs() if s not in seats]
        if missing:
            raise ArgnbError(
                f"no backend connected for {', '.join(missing)}",
                hint="connect every spec of config.specs() and pass them as seats=",
            )
        if backend is None and self.needs_backend():
            raise ArgnbError(
                "a seat has no backend:model of its own and no backend was given",
                hint="pass the session's backend, e.g. config.build(argnb.default_backend())",
            )

        def seat(spec: str | None):
            return seats[spec] if spec else backend

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
        fallacy = self.fallacy_baseline(moderator, seats) if self.fallacy_check else None
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

    def fallacy_baseline(self, backend: Any, seats: Mapping[str, Any] | None = None) -> Any:
        """``zero``, ``few`` or ``cot``, optionally ``@backend:model`` (its backend from
        ``seats``; default: ``backend``)."""
        from argnb.agents import parse_method_spec
        from argnb.fallacy.baselines import METHODS, Baseline

        method, where = parse_method_spec(self.fallacy_check or "")
        if method not in METHODS:
            raise ArgnbError(
                f"unknown fallacy check {method!r}",
                hint="use zero, few or cot, optionally with @backend:model",
            )
        return Baseline(method, (seats or {})[where] if where else backend)
