"""HTML of a retrieval trace, a generated turn's steps and a whole debate (notebooks, widget).

Views read transcript turns and never call a model. Every text from a model, a corpus or a
learner is escaped (:func:`argnb.views.esc`), so a turn that contains markup shows as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from argnb.transcript import Rejected, Transcript, Turn
from argnb.views import UNREADABLE, gated_html
from argnb.views import esc as e
from argnb.words import count, shorten

if TYPE_CHECKING:
    from argnb.debate.generate import NextUtterance
    from argnb.debate.retrieve import RetrievalTrace

SIDE_COLOURS = {"pro": "#1f77b4", "con": "#ff7f0e"}
_BOX = (
    "margin:4px 0;padding:6px 8px;border-left:4px solid {c};background:#fafafa;"
    "overflow-wrap:anywhere"  # a model's unbroken string wraps instead of overflowing
)


def _cost(turns: Iterable[Turn]) -> str:
    """The cost line; authored reference answers were written, not generated, and say so."""
    from argnb.reference import MODEL
    from argnb.transcript import Cost

    turns = list(turns)
    cost = Cost.of(turns)
    if cost.calls and all(t.model == MODEL for t in turns if t.calls):
        return f"{count(cost.calls, 'authored answer')} replayed, no model called"
    return str(cost)


def step_html(t: Turn) -> str:
    """One agent step, as the 'open each step' panels show it."""
    p = t.payload
    kind = p.kind
    head = f"<b>{e(t.role)}</b> <span style='color:#777'>({e(t.speaker)})</span>"
    if not t.valid and getattr(p, "gate", ""):  # the gate stopped it: muted, marked
        return f"<div>{head}: {gated_html(p.gate, getattr(p, 'raw', ''))}</div>"
    if not t.valid and isinstance(p, Rejected) and p.error:  # never fit its format
        return f"<div>{head}: {gated_html(UNREADABLE, p.raw)}</div>"
    if not t.valid:
        return f"<div>{head}: <i>invalid</i> {e(shorten(t.text, 300))}</div>"
    if kind == "debate.predicates":
        body = "<br>".join(f"<code>{e(x)}</code>" for x in p.predicates) or "(none)"
    elif kind == "debate.flaws":
        body = (
            "<ul>"
            + "".join(
                f"<li><b>{e(f.kind)}</b>: {e(f.text)}"
                + (f" <i>({e('; '.join(f.claims))})</i>" if f.claims else "")
                + "</li>"
                for f in p.flaws
            )
            + "</ul>"
            if p.flaws
            else "(no flaws found)"
        )
    elif kind == "debate.retrieval":
        rows = "".join(
            f"<tr><td>{e(r.get('id', ''))}</td><td>{e(r.get('stance', ''))}</td>"
            f"<td>{e(', '.join(f'{s}: {v}' for s, v in (r.get('schemes') or {}).items()))}</td>"
            f"<td>{e(shorten(str(r.get('text', '')), 200))}</td></tr>"
            for r in p.records
        )
        body = (
            f"keywords: {e(', '.join(p.keywords))}; kept schemes: "
            f"{e(', '.join(p.kept) or 'none')}<table><tr><th>id</th><th>side</th>"
            f"<th>schemes</th><th>passage</th></tr>{rows}</table>"
        )
    elif kind == "debate.verdict":
        marks = " · ".join(
            f"{name} {'✓' if ok else '✗'}"
            for name, ok in (
                ("stance", p.stance_faithful),
                ("relevance", p.relevant),
                ("schemes", p.follows_schemes),
            )
        )
        body = f"<b>{'accepted' if p.accept else 'rejected'}</b> — {e(marks)}. {e(p.feedback)}"
    elif kind == "debate.summary":
        body = e(p.overview) + "".join(
            f"<br><i>{e(name)}:</i> {e('; '.join(xs))}"
            for name, xs in (
                ("for", p.supporting),
                ("against", p.opposing),
                ("diverge on", p.divergence),
            )
            if xs
        )
    elif kind == "debate.draft":
        note = f" (cut to {p.words} words)" if p.cut else f" ({p.words} words)"
        body = f"{e(t.text)}<span style='color:#777'>{e(note)}</span>"
    else:
        body = e(t.text)
    return f"<div style='margin:3px 0'>{head}: {body}</div>"


def steps_html(turns: Sequence[Turn]) -> str:
    """Every step of one utterance, each folded in a ``<details>`` (open the one you want)."""
    parts = []
    for t in turns:
        if t.role == "utterance":
            continue
        parts.append(
            f"<details><summary>{e(t.role)} · {e(t.speaker)}</summary>{step_html(t)}</details>"
        )
    return "".join(parts)


def stopped_raw(turns: Sequence[Turn], t: Turn) -> str:
    """What the model wrote for a turn the gate stopped: the raw text of the last stopped draft
    among the steps before it (one click away in the marked block); "" otherwise."""
    i = next((k for k, x in enumerate(turns) if x is t), len(turns))
    for x in reversed(turns[:i]):
        if x.role == "utterance":
            break
        if isinstance(x.payload, Rejected) and x.payload.gate:
            return x.payload.raw
    return ""


def utterance_box(t: Turn, raw: str = "") -> str:
    """One utterance in its side's colour, with what the judge loop did; ``raw``: what the model
    wrote when the gate stopped it (:func:`stopped_raw`)."""
    p = t.payload
    side = getattr(p, "stance", "")
    flags = []
    if getattr(p, "method", ""):
        flags.append(p.method)
        if p.accepted is not None:
            flags.append("accepted" if p.accepted else "not accepted")
        if p.revisions:
            flags.append(count(p.revisions, "revision"))
        if p.bound_hit:
            flags.append("revision bound hit")
        if p.concluding:
            flags.append("concluding")
    style = _BOX.format(c=SIDE_COLOURS.get(side, "#999"))
    meta = f" <span style='color:#777'>[{e(', '.join(flags))}]</span>" if flags else ""
    gated = getattr(p, "gated", "")
    body = (
        gated_html(gated + "; no judge saw the draft", raw)
        if gated and not t.text
        else (e(t.text) or "<i>(no text)</i>")
    )
    return f"<div style='{style}'><b>{e(side)}</b> · {e(t.speaker)}{meta}<div>{body}</div></div>"


def live_box(step: str, lines: Sequence[str], speaker: str, side: str) -> str:
    """What the agent is doing now, labelled by its step ("writing a draft…"), with the text that
    step has made so far (streamed draft words, predicates, keywords); replaced by the final reply."""
    style = _BOX.format(c=SIDE_COLOURS.get(side, "#999"))
    body = "".join(f"<div>{e(x)}</div>" for x in lines if x.strip())
    return (
        f"<div style='{style}'><b>{e(side)}</b> · {e(speaker)} "
        f"<span class='argnb-debate-step' style='color:#777'><i>{e(step)}</i></span>"
        f"{body}</div>"
    )


def utterance_html(u: NextUtterance) -> str:
    notes = "".join(f"<li>{e(n)}</li>" for n in u.notes)
    return (
        f"<div>{utterance_box(u.utterance, stopped_raw(u.turns, u.utterance))}"
        f"<div style='color:#555;font-size:90%'>cost: {e(_cost(u.turns))}</div>"
        + (f"<ul style='color:#a60'>{notes}</ul>" if notes else "")
        + steps_html(u.turns)
        + "</div>"
    )


def debate_html(tr: Transcript, *, steps: bool = True) -> str:
    """A whole debate: utterances in order, each with its steps folded under it, and the
    stance checks flagged."""
    out = [f"<h4>{e(tr.title)}</h4>"]
    pending: list[Turn] = []
    for t in tr.turns:
        if t.role == "utterance":
            out.append(utterance_box(t, stopped_raw(tr.turns, t)))
            if steps and pending:
                out.append(f"<div style='margin-left:16px'>{steps_html(pending)}</div>")
            pending = []
        elif t.payload.kind == "debate.stance_check":
            ok = t.payload.ok
            colour = "#2a2" if ok else "#c22"
            verdict = "holds its side" if ok else "fails the stance predicate"
            out.append(
                f"<div style='margin-left:16px;color:{colour}'>stance check: {e(verdict)} — "
                f"{e(t.payload.reason)}</div>"
            )
        else:
            pending.append(t)
    if tr.outcome:
        out.append(f"<p style='color:#555'>{e(outcome_text(tr))}</p>")
    return "<div>" + "".join(out) + "</div>"


def outcome_text(tr: Transcript) -> str:
    """A finished debate's outcome and cost in words (a replayed reference debate cost nothing:
    its answers were written, not generated)."""
    o = tr.outcome
    # ``stance_failures`` holds 0-based indexes of generated turns; a reader counts turns from
    # 1, and the turns given beforehand come first in the view
    given = o.get("turns", 0) - o.get("generated", 0)
    failures = ", ".join(f"{given + n + 1}" for n in o.get("stance_failures", [])) or "none"
    paid = _cost(tr.turns)
    return (
        f"{count(o.get('turns', 0), 'turn')} ({o.get('generated', 0)} generated), ended: "
        f"{o.get('ended', '?')}; turns failing the stance check: {failures}; cost: {paid}"
    )


def trace_html(trace: RetrievalTrace) -> str:
    """A retrieval trace: keywords, the hits' table, the scheme priors (kept ones bold)."""
    rows = "".join(
        f"<tr><td>{h.rank}</td><td>{e(h.stance)}</td><td>{e(h.id)}</td>"
        f"<td>{'' if h.bm25 is None else f'{h.bm25:.2f}'}</td>"
        f"<td>{'' if h.cosine is None else f'{h.cosine:.3f}'}</td>"
        f"<td>{e(', '.join(f'{s}: {lab or chr(63)}' for s, lab in h.schemes.items()))}</td>"
        f"<td style='text-align:left'>{e(shorten(h.text, 300))}</td></tr>"
        for h in trace.hits
    )
    pri = ", ".join(
        f"<b>{e(p.scheme)} {p.mean:.2f}</b>" if p.kept else f"{e(p.scheme)} {p.mean:.2f}"
        for p in trace.priors
        if p.used
    )
    return (
        f"<div><p><b>Keywords</b> ({e(trace.keyword_source)}): {e(', '.join(trace.keywords))}</p>"
        f"<p>{len(trace.candidates)} candidates, top {len(trace.hits)} by {e(trace.method)}; "
        f"stance filter: {e(str(trace.stance or 'none'))}</p>"
        "<table><tr><th>#</th><th>stance</th><th>id</th><th>BM25</th><th>cosine</th>"
        f"<th>schemes</th><th>text</th></tr>{rows}</table>"
        f"<p><b>Scheme priors</b> (bold: kept, mean &gt; {trace.threshold:g}): "
        f"{pri or 'none'}</p></div>"
    )
