"""Text and HTML renderings of dialectic turns (read from transcripts; all text escaped in HTML)."""

from __future__ import annotations

from typing import Any

from argnb.dialectic.payloads import (
    ARGUMENT_KINDS,
    AttackMove,
    Characterization,
    Generalization,
    LineVerdict,
    SynthesisAnswer,
)
from argnb.dialectic.schemas import Argument, Characterized
from argnb.transcript import Rejected, Transcript, Turn
from argnb.views import esc as _e
from argnb.views import gated_html


def _rules_text(arg: Argument) -> list[str]:
    lines = []
    for r in arg.rules:
        parts = list(r.antecedent.strong)
        parts += [f"[assuming] {a}" for a in r.antecedent.weak_negation]
        lines.append(f"    {r.id}: {' ; '.join(parts)}  =>  {r.consequent}")
    return lines


def _line(p: Any) -> str:
    line = getattr(p, "line", None)
    return f"[line {line}] " if line else ""


def format_turn(t: Turn) -> str:
    """One turn as a few lines of plain text (what the CLI prints)."""
    p = t.payload
    where = _line(p)
    if isinstance(p, AttackMove):
        head = (
            f"{where}{t.speaker} {p.attack}s {p.target_id} on {p.target!r} "
            f"with {p.arg_id}: {p.argument.claim}"
            f"  ({'defeats' if p.defeats else 'does not defeat'} {p.target_id})"
        )
        return "\n".join([head, *_rules_text(p.argument)])
    if isinstance(p, SynthesisAnswer):
        return f"{t.speaker} answers ({p.arg_id}): {t.text}"
    if isinstance(p, ARGUMENT_KINDS):
        head = f"{where}{t.speaker} argues {p.arg_id}: {t.text}"
        return "\n".join([head, *_rules_text(p.argument)])
    if isinstance(p, Rejected):
        return f"{where}{t.speaker} (rejected, attempt {p.attempt}): {t.text}"
    if isinstance(p, Characterization):
        return (
            f"{t.speaker} characterises: C1 {p.C1.strong} => {p.C1.consequent}\n"
            f"    C2 {p.C2.strong} => {p.C2.consequent}"
        )
    if isinstance(p, Generalization):
        return f"{t.speaker} generalises: E {p.E.strong} => {p.E.consequent}"
    if isinstance(p, LineVerdict):
        return f"== {p.sentence()}"
    if t.role == "verdict":
        return f"== {t.text}"
    return f"{where}{t.speaker} {t.text}" if t.role == "pass" else f"{t.speaker} {t.role}: {t.text}"


_ROLE_COLORS = {
    "argue": "#e8f1fa",
    "attack": "#fdecea",
    "pass": "#f5f5f5",
    "verdict": "#fff8e1",
    "characterize": "#eef7ee",
    "generalize": "#eef7ee",
    "answer": "#d9f2d9",
}


def _characterized_html(label: str, c: Characterized) -> str:
    return f"<div><b>{label}</b>: {_e('; '.join(c.strong))} ⟹ {_e(c.consequent)}</div>"


def turn_html(t: Turn, labelling: dict[str, str] | None = None) -> str:
    """One turn as an HTML card: rules as premises ⟹ conclusion, attack kind and target."""
    p = t.payload
    bg = _ROLE_COLORS.get(t.role, "#fbe9e7" if not t.valid else "#fff")
    title = f"<b>{_e(t.speaker)}</b> · {_e(t.role)}"
    if isinstance(p, ARGUMENT_KINDS):
        status = ""
        if labelling and p.arg_id in labelling:
            status = f" <span style='font-weight:bold'>[{_e(labelling[p.arg_id])}]</span>"
        title += f" · {_e(p.arg_id)}{status}"
    if isinstance(p, AttackMove):
        title += f" · {_e(p.attack)} of {_e(p.target_id)} on “{_e(p.target)}”"
    if isinstance(p, ARGUMENT_KINDS):
        rows = []
        for r in p.argument.rules:
            prem = "".join(f"<li>{_e(s)}</li>" for s in r.antecedent.strong)
            prem += "".join(
                f"<li><i>no evidence against:</i> {_e(s)}</li>" for s in r.antecedent.weak_negation
            )
            rows.append(f"<ul style='margin:2px 0'>{prem}</ul>⟹ <b>{_e(r.consequent)}</b>")
        body = "<br>".join(rows)
    elif isinstance(p, Characterization):
        body = _characterized_html("C1", p.C1) + _characterized_html("C2", p.C2)
    elif isinstance(p, Generalization):
        body = _characterized_html("E", p.E)
    elif isinstance(p, LineVerdict):
        body = _e(p.sentence())
    elif isinstance(p, Rejected) and p.gate:  # the gate stopped it: muted, marked
        body = gated_html(p.gate, p.raw)
    else:
        body = _e(t.text)
    return (
        f"<div style='background:{bg};border-radius:6px;padding:6px 10px;margin:4px 0;"
        f"font:14px sans-serif;overflow-wrap:anywhere'>{title}<div style='margin-top:4px'>{body}</div></div>"
    )


def outcome_text(outcome: dict[str, Any]) -> str:
    """How the dialogue ended, as one sentence a learner can read (plain text)."""
    kind = outcome.get("outcome") or "none"
    answer = outcome.get("final_answer") or ""
    if kind == "justified":
        return f"One main argument stood, so it is the answer: {answer}"
    if kind == "synthesis":
        return (
            f"Neither main argument survived; the synthesis answers: {answer}"
            if answer
            else "Neither main argument survived, and the synthesis gave no valid answer."
        )
    missing = [
        v.get("proponent") or "an agent" for v in outcome.get("lines", []) if not v.get("main_id")
    ]
    if missing:
        return (
            f"No outcome: {' and '.join(missing)} gave no main argument that passed the checks, "
            "so there was nothing to dispute or synthesise (a small model often cannot fill the "
            "rules; a bigger one can)."
        )
    return "No outcome: the dialogue ended without an answer."


def dialogue_html(tr: Transcript, *, show_rejected: bool = True) -> str:
    """The whole dialogue as HTML cards, then the outcome."""
    lab = tr.outcome.get("labelling", {})
    cards = [turn_html(t, lab) for t in tr.turns if show_rejected or t.valid]
    o = tr.outcome
    if o:
        cards.append(
            "<div style='font:14px sans-serif;margin-top:8px'>"
            f"<b>outcome</b>: {_e(o.get('outcome') or 'none')} · {_e(outcome_text(o))} · "
            f"{_e(o.get('turns', 0))} turns, {_e(o.get('model_calls', 0))} model calls</div>"
        )
    return "".join(cards)
