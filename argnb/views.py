"""The views every module shares: the one HTML escape and a transcript's HTML.

Views read transcripts and results and never call a model; ``Transcript._repr_html_`` delegates
here. Each module's own pictures are in ``argnb/<module>/views.py`` (and ``argnb/maps/``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from argnb.words import count

if TYPE_CHECKING:
    from argnb.reference import ReferenceSession
    from argnb.transcript import Transcript


def esc(value: Any, *, quote: bool = True) -> str:
    """``value`` as HTML text, safe in element text and in quoted attributes (``None``: empty).

    Model, corpus and learner text is untrusted: every view escapes it with this function
    (``quote=False`` leaves quotes readable where no attribute can follow, as in Markdown)."""
    return "" if value is None else html.escape(str(value), quote=quote)


#: the class of every gated answer's block: what a learner sees of an answer the gate stopped
GATED = "argnb-gated"
#: the reason shown for an answer that never fit its format (its parser's error can quote the
#: model's words and name the answer's class: it stays in the transcript, not on the screen)
UNREADABLE = "the answer did not fit its format"


def gated_html(reason: str, raw: str = "", who: str = "") -> str:
    """An answer the gate stopped (:mod:`argnb.gate`): muted, marked with the reason ("the model
    echoed its instructions"), the raw text one click away in a ``<details>``, escaped.

    Every view that shows such an answer shows it through here, so gated text never reaches a
    learner looking like an answer."""
    head = f"{who}: " if who else ""
    body = (
        f"<details><summary style='cursor:pointer'>show what the model wrote</summary>"
        f"<div style='white-space:pre-wrap;color:#999;font-size:12px'>{esc(raw)}</div></details>"
        if raw
        else ""
    )
    return (
        f"<div class='{GATED}' style='color:#888;font-size:12px;margin:4px 0'>"
        f"<span>⊘ {esc(head)}not shown as an answer: {esc(reason)}</span>{body}</div>"
    )


def _payload_html(payload: Mapping[str, Any]) -> str:
    if not payload:
        return ""
    items = "".join(
        f"<li><b>{esc(k)}</b>: {esc(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))}</li>"
        for k, v in payload.items()
    )
    return f"<ul style='margin:2px 0 0 1em;font-size:90%'>{items}</ul>"


def render_html(tr: Transcript) -> str:
    """HTML for notebooks. Every piece of model or user text is escaped (it is untrusted)."""
    parts = [
        f"<div class='argnb-transcript'><h4>{esc(tr.kind)}: {esc(tr.title)}</h4>",
        "<table style='border-collapse:collapse'>",
    ]
    for i, t in enumerate(tr.turns):
        rnd = "" if t.round is None else f"r{t.round}"
        flag = "" if t.valid else " <span style='color:#b00'>(invalid)</span>"
        p = t.payload
        # a rejected attempt, or a module's record of an answer that was never usable
        # (``fallacy.verdict``, ``fallacy.contribution``): the gate's reason and the raw text
        gate = getattr(p, "gate", "")
        gate = gate if isinstance(gate, str) else ""
        body = (
            gated_html(gate, getattr(p, "raw", ""))
            if gate
            else f"{esc(t.text)}{_payload_html(p.data())}"
        )
        parts.append(
            "<tr style='border-top:1px solid #ddd;vertical-align:top'>"
            f"<td style='padding:4px'>{i}</td><td style='padding:4px'>{esc(rnd)}</td>"
            f"<td style='padding:4px'><b>{esc(t.speaker)}</b><br><i>{esc(t.role)}</i>{flag}</td>"
            f"<td style='padding:4px;text-align:left'>{body}</td>"
            "</tr>"
        )
    parts.append("</table>")
    if tr.outcome:
        parts.append(f"<p><b>Outcome</b>{_payload_html(tr.outcome)}</p>")
    # a replayed reference session's answers were written, not generated: no model cost to show
    c = tr.cost
    if tr.meta.get("reference"):
        cost = f"{count(c.calls, 'authored answer')} replayed, no model called"
    else:
        cost = str(c)
    parts.append(f"<p style='color:#666;font-size:85%'>{len(tr.turns)} turns, {cost}</p></div>")
    return "".join(parts)


def reference_html(s: ReferenceSession) -> str:
    """The session's label, what it is about and what to look for (escaped HTML)."""
    e = esc
    looks = "".join(f"<li>{e(x)}</li>" for x in s.look_for)
    setup = s.setup.get("argument") or s.setup.get("motion") or s.setup.get("topic") or ""
    quoted = (
        f"<blockquote style='margin:6px 0 6px 1em'>{e(str(setup))}</blockquote>" if setup else ""
    )
    return (
        "<div class='argnb-reference' style='border-left:4px solid #6a4c93;padding:4px 10px'>"
        f"<p><b>Reference session: {e(s.title)}</b><br>"
        f"<span style='color:#6a4c93'><b>{e(s.label)}.</b></span></p>"
        f"{quoted}<p>{e(s.about)}</p>"
        + (f"<p><b>What to look for</b></p><ol>{looks}</ol>" if looks else "")
        + "</div>"
    )
