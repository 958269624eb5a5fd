"""Transcripts: the one record every protocol writes and every view reads.

A deliberation, a dialectic dialogue, a judged critique or a roundtable session is a list of
typed turns. Views (notebook HTML, DataFrames, argument maps, exports) read transcripts and
never call models, so a saved transcript can be re-rendered, graded or compared later.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from argnb.llm.base import Usage

if TYPE_CHECKING:
    import pandas as pd


class Turn(BaseModel):
    """One contribution: who spoke, in which role, what they said and its structured form."""

    speaker: str
    role: str = ""
    text: str = ""
    payload: dict[str, Any] = Field(default_factory=dict)
    round: int | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    backend: str = ""
    valid: bool = True


class Transcript(BaseModel):
    """An ordered list of turns plus what the protocol concluded."""

    kind: str
    title: str = ""
    turns: list[Turn] = Field(default_factory=list)
    outcome: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)

    def add(self, turn: Turn | None = None, /, **fields: Any) -> Turn:
        """Append a turn (given, or built from keyword fields) and return it."""
        t = turn if turn is not None else Turn(**fields)
        self.turns.append(t)
        return t

    def __len__(self) -> int:
        return len(self.turns)

    @property
    def usage(self) -> Usage:
        total = Usage()
        for t in self.turns:
            total = total + t.usage
        return total

    @property
    def calls(self) -> int:
        """Model calls behind this transcript (turns that record a backend)."""
        return sum(1 for t in self.turns if t.backend)

    # -- persistence ---------------------------------------------------------------------
    def to_json(self, **kw: Any) -> str:
        return self.model_dump_json(**kw)

    @classmethod
    def from_json(cls, data: str | bytes) -> Transcript:
        return cls.model_validate_json(data)

    def save(self, path: str | Path) -> Path:
        p = Path(path)
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
                "prompt_tokens": t.usage.prompt_tokens,
                "completion_tokens": t.usage.completion_tokens,
                "latency_s": round(t.latency_s, 3),
                "model": t.model,
            }
            for k, v in t.payload.items():
                row[f"payload.{k}"] = (
                    v if isinstance(v, str | int | float | bool) else json.dumps(v)
                )
            rows.append(row)
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        return render_html(self)


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _payload_html(payload: dict[str, Any]) -> str:
    if not payload:
        return ""
    items = "".join(
        f"<li><b>{_esc(k)}</b>: {_esc(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))}</li>"
        for k, v in payload.items()
    )
    return f"<ul style='margin:2px 0 0 1em;font-size:90%'>{items}</ul>"


def render_html(tr: Transcript) -> str:
    """HTML for notebooks. Every piece of model or user text is escaped (it is untrusted)."""
    parts = [
        f"<div class='argnb-transcript'><h4>{_esc(tr.kind)}: {_esc(tr.title)}</h4>",
        "<table style='border-collapse:collapse'>",
    ]
    for i, t in enumerate(tr.turns):
        rnd = "" if t.round is None else f"r{t.round}"
        flag = "" if t.valid else " <span style='color:#b00'>(invalid)</span>"
        parts.append(
            "<tr style='border-top:1px solid #ddd;vertical-align:top'>"
            f"<td style='padding:4px'>{i}</td><td style='padding:4px'>{_esc(rnd)}</td>"
            f"<td style='padding:4px'><b>{_esc(t.speaker)}</b><br><i>{_esc(t.role)}</i>{flag}</td>"
            f"<td style='padding:4px;text-align:left'>{_esc(t.text)}{_payload_html(t.payload)}</td>"
            "</tr>"
        )
    parts.append("</table>")
    if tr.outcome:
        parts.append(f"<p><b>Outcome</b>{_payload_html(tr.outcome)}</p>")
    u = tr.usage
    parts.append(
        f"<p style='color:#666;font-size:85%'>{len(tr.turns)} turns, {tr.calls} model calls, "
        f"{u.prompt_tokens} prompt + {u.completion_tokens} completion tokens</p></div>"
    )
    return "".join(parts)
