"""Transcripts: the one record every protocol writes and every view reads.

A deliberation, a dialectic dialogue, a judged critique, a debate or a roundtable session is a list
of typed turns. Views (notebook HTML, DataFrames, argument maps, exports) read transcripts and never
call models, so a saved transcript can be re-rendered, graded or compared later.

Each turn carries a **typed payload**: a :class:`Payload` subclass registered under its ``kind``
(``"fallacy.contribution"``, ``"dialectic.attack"``, ...), so a view reads ``turn.payload.vote``
instead of guessing dictionary keys. Payload classes of module ``argnb.<m>`` live in
``argnb/<m>/payloads.py`` and are found by the prefix of their kind when a saved transcript is
loaded. Item access (``turn.payload["vote"]``) gives the JSON form, as it is saved.

What a turn cost (tokens, model calls -- failed answers and repair turns included -- and seconds)
is recorded once, on the turn; everything else (a result's cost, a run's total) is summed from
turns, never copied.

Saved transcripts of the first format (no ``version``; untyped payload dicts) still load: each
module's ``payloads.migrate_v1`` names the kind for a (transcript kind, role) pair, and a turn
without ``calls`` counts one call when it names a backend.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, field_validator, model_validator

from argnb.llm.base import Usage

if TYPE_CHECKING:
    import pandas as pd

FORMAT_VERSION = 2

_PAYLOADS: dict[str, type[Payload]] = {}


class Payload(BaseModel, Mapping):
    """The structured part of a turn; subclasses set ``kind`` and are registered by it.

    The base class (kind ``"note"``) accepts any fields, for ad-hoc turns and old transcripts.
    Reading like a mapping (``p["vote"]``, ``set(p)``, ``p.get("x")``) gives the JSON view.
    """

    model_config = ConfigDict(extra="allow")
    kind: str = "note"

    registry: ClassVar[dict[str, type[Payload]]] = _PAYLOADS

    @classmethod
    def __pydantic_init_subclass__(cls, **kw: Any) -> None:
        super().__pydantic_init_subclass__(**kw)
        kind = cls.model_fields["kind"].default
        known = _PAYLOADS.get(kind)
        if (
            not isinstance(kind, str)
            or kind == "note"
            or (known is not None and known.__qualname__ != cls.__qualname__)
        ):
            raise TypeError(f"{cls.__name__} must set a default kind of its own, not {kind!r}")
        _PAYLOADS[kind] = cls

    # -- mapping view (JSON form, without the kind tag) ---------------------------------
    def _keys(self) -> list[str]:
        return [k for k in (*type(self).model_fields, *(self.model_extra or {})) if k != "kind"]

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys():
            raise KeyError(key)
        return self.model_dump(mode="json", include={key})[key]

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def data(self) -> dict[str, Any]:
        """The payload as JSON-ready data (no ``kind``): what DataFrames and HTML show."""
        return self.model_dump(mode="json", exclude={"kind"})


class Rejected(Payload):
    """An answer that failed its schema or the protocol's rules (one per failed attempt)."""

    kind: str = "rejected"
    attempt: int = 1
    problems: list[str] = Field(default_factory=list)
    error: str = ""
    raw: str = ""
    #: the gate's reason, when the gate stopped it (argnb.gate): views show it muted, marked
    gate: str = ""


def payload_class(kind: str) -> type[Payload]:
    """The class registered for ``kind`` (importing ``argnb.<prefix>.payloads`` on first use)."""
    if kind not in _PAYLOADS and "." in kind:
        module = f"argnb.{kind.split('.', 1)[0]}.payloads"
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if not (exc.name and module.startswith(exc.name)):
                raise
    return _PAYLOADS.get(kind, Payload)


def as_payload(value: Any) -> Payload:
    """A typed payload from a Payload, a dict with a ``kind`` (or none: a note) or None."""
    if isinstance(value, Payload):
        return value
    if value is None:
        return Payload()
    if isinstance(value, Mapping):
        return payload_class(str(value.get("kind", "note"))).model_validate(dict(value))
    raise TypeError(f"a turn payload must be a Payload or a dict, not {type(value).__name__}")


class Cost(BaseModel):
    """What some turns cost: tokens, model calls (repairs and failed answers included), seconds."""

    model_config = ConfigDict(frozen=True)
    usage: Usage = Field(default_factory=Usage)
    calls: int = 0
    latency_s: float = 0.0

    @classmethod
    def of(cls, turns: Iterable[Turn]) -> Cost:
        usage, calls, seconds = Usage(), 0, 0.0
        for t in turns:
            usage, calls, seconds = usage + t.usage, calls + t.calls, seconds + t.latency_s
        return cls(usage=usage, calls=calls, latency_s=seconds)

    def __str__(self) -> str:
        """The one cost line: ``3 model calls, 1,234 tokens, 2.1 s``."""
        return (
            f"{self.calls} model calls, {self.usage.total_tokens:,} tokens, {self.latency_s:.1f} s"
        )

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            usage=self.usage + other.usage,
            calls=self.calls + other.calls,
            latency_s=self.latency_s + other.latency_s,
        )


class Costed:
    """Read-only ``usage``, ``calls`` and ``latency_s`` for anything that can sum its ``cost``
    (a transcript, a result view over some of its turns)."""

    @property
    def cost(self) -> Cost:  # pragma: no cover - every user defines it
        raise NotImplementedError

    @property
    def usage(self) -> Usage:
        return self.cost.usage

    @property
    def calls(self) -> int:
        """Model calls (failed answers and repair turns included)."""
        return self.cost.calls

    @property
    def latency_s(self) -> float:
        return self.cost.latency_s


class Turn(BaseModel):
    """One contribution: who spoke, in which role, what they said and its structured form."""

    speaker: str
    role: str = ""
    text: str = ""
    payload: SerializeAsAny[Payload] = Field(default_factory=Payload)
    round: int | None = None
    usage: Usage = Field(default_factory=Usage)
    calls: int = 0
    latency_s: float = 0.0
    model: str = ""
    backend: str = ""
    valid: bool = True

    @model_validator(mode="before")
    @classmethod
    def _default_calls(cls, data: Any) -> Any:
        if isinstance(data, dict) and "calls" not in data:
            data = {**data, "calls": 1 if data.get("backend") else 0}
        return data

    @field_validator("payload", mode="before")
    @classmethod
    def _typed(cls, value: Any) -> Payload:
        return as_payload(value)

    @property
    def cost(self) -> Cost:
        return Cost(usage=self.usage, calls=self.calls, latency_s=self.latency_s)


class Transcript(Costed, BaseModel):
    """An ordered list of turns plus what the protocol concluded."""

    version: int = FORMAT_VERSION
    kind: str
    title: str = ""
    turns: list[Turn] = Field(default_factory=list)
    outcome: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        if isinstance(data, dict) and "version" not in data:
            return migrate_v1(data)
        return data

    def add(self, turn: Turn | None = None, /, **fields: Any) -> Turn:
        """Append a turn (given, or built from keyword fields) and return it."""
        t = turn if turn is not None else Turn(**fields)
        self.turns.append(t)
        return t

    def extend(self, turns: Iterable[Turn]) -> None:
        self.turns.extend(turns)

    def __len__(self) -> int:
        return len(self.turns)

    def of_kind(self, *kinds: str, valid: bool | None = True) -> list[Turn]:
        """Turns whose payload has one of ``kinds`` (only valid ones unless ``valid=None``)."""
        return [
            t for t in self.turns if t.payload.kind in kinds and (valid is None or t.valid == valid)
        ]

    @property
    def cost(self) -> Cost:
        return Cost.of(self.turns)

    # -- persistence ---------------------------------------------------------------------
    def to_json(self, **kw: Any) -> str:
        return self.model_dump_json(**kw)

    @classmethod
    def from_json(cls, data: str | bytes) -> Transcript:
        return cls.model_validate_json(data)

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)  # a widget's work/ folder, made on first save
        p.write_text(self.to_json(indent=2), encoding="utf-8")
        return p

    @classmethod
    def load(cls, path: str | Path) -> Transcript:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    # -- views ---------------------------------------------------------------------------
    def to_dataframe(self) -> pd.DataFrame:
        """One row per turn; payload fields become columns prefixed with ``payload.``."""
        import pandas as pd

        rows = []
        for i, t in enumerate(self.turns):
            row = {
                "turn": i,
                "round": t.round,
                "speaker": t.speaker,
                "role": t.role,
                "text": t.text,
                "valid": t.valid,
                "calls": t.calls,
                "prompt_tokens": t.usage.prompt_tokens,
                "completion_tokens": t.usage.completion_tokens,
                "latency_s": round(t.latency_s, 3),
                "model": t.model,
            }
            for k, v in t.payload.data().items():
                row[f"payload.{k}"] = (
                    v if isinstance(v, str | int | float | bool) or v is None else json.dumps(v)
                )
            rows.append(row)
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        from argnb.views import render_html

        return render_html(self)


def migrate_v1(data: dict[str, Any]) -> dict[str, Any]:
    """The first transcript format (untyped payloads) in today's shape.

    The module that wrote the transcript (``kind`` up to its first ``-``) names each turn's
    payload kind through ``argnb.<module>.payloads.migrate_v1(kind, role, payload)``.
    """
    kind = str(data.get("kind", ""))
    module = f"argnb.{kind.split('-', 1)[0]}.payloads"
    try:
        name_kind = importlib.import_module(module).migrate_v1
    except (ModuleNotFoundError, AttributeError, ValueError):
        name_kind = None
    turns = []
    for t in data.get("turns", []):
        t = dict(t)
        p = dict(t.get("payload") or {})
        if "kind" not in p and name_kind is not None:
            new = name_kind(kind, t.get("role", ""), p, bool(t.get("valid", True)))
            if new:
                p["kind"] = new
        t["payload"] = p
        turns.append(t)
    return {**data, "version": FORMAT_VERSION, "turns": turns}
