"""Text and HTML renderings of dialectic turns (read from transcripts; all text escaped in HTML)."""

from __future__ import annotations

import html
from typing import Any

from argnb.transcript import Transcript, Turn


def _rules_text(arg: dict[str, Any]) -> list[str]:
    lines = []
    for r in arg.get("rules", []):
        ante = r["antecedent"]
        parts = list(ante.get("strong", []))
        parts += [f"[assuming] {a}" for a in ante.get("weak_negation", [])]
        lines.append(f"    {r.get('id', '')}: {' ; '.join(parts)}  =>  {r['consequent']}")
    return lines


def format_turn(t: Turn) -> str:
    """One turn as a few lines of plain text (what the CLI prints)."""
    p = t.payload
    where = f"[line {p['line']}] " if p.get("line") else ""
    if t.role == "argue":
        head = f"{where}{t.speaker} argues {p['arg_id']}: {t.text}"
        return "\n".join([head, *_rules_text(p["argument"])])
    if t.role == "attack":
        head = (
            f"{where}{t.speaker} {p['attack']}s {p['target_id']} on {p['target']!r} "
            f"with {p['arg_id']}: {p['argument']['rules'][-1]['consequent']}"
            f"  ({'defeats' if p.get('defeats') else 'does not defeat'} {p['target_id']})"
        )
        return "\n".join([head, *_rules_text(p["argument"])])
    if t.role == "pass":
        return f"{where}{t.speaker} {t.text}"
    if t.role == "verdict":
        return f"== {t.text}"
    if t.role.startswith("rejected"):
        return f"{where}{t.speaker} (rejected, attempt {p.get('attempt')}): {t.text}"
    if t.role == "characterize":
        return (
            f"{t.speaker} characterises: C1 {p['C1']['strong']} => {p['C1']['consequent']}\n"
            f"    C2 {p['C2']['strong']} => {p['C2']['consequent']}"
        )
    if t.role == "generalize":
        return f"{t.speaker} generalises: E {p['E']['strong']} => {p['E']['consequent']}"
    if t.role == "answer":
        return f"{t.speaker} answers ({p.get('arg_id', '')}): {t.text}"
    return f"{t.speaker} {t.role}: {t.text}"


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


_ROLE_COLORS = {
    "argue": "#e8f1fa",
    "attack": "#fdecea",
    "pass": "#f5f5f5",
    "verdict": "#fff8e1",
    "characterize": "#eef7ee",
    "generalize": "#eef7ee",
    "answer": "#d9f2d9",
}


def turn_html(t: Turn, labelling: dict[str, str] | None = None) -> str:
    """One turn as an HTML card: rules as premises ⟹ conclusion, attack kind and target."""
    p = t.payload
    bg = _ROLE_COLORS.get(t.role, "#fbe9e7" if not t.valid else "#fff")
    status = ""
    if labelling and p.get("arg_id") in labelling:
        status = f" <span style='font-weight:bold'>[{_e(labelling[p['arg_id']])}]</span>"
    title = f"<b>{_e(t.speaker)}</b> · {_e(t.role)}"
    if p.get("arg_id"):
        title += f" · {_e(p['arg_id'])}{status}"
    if t.role == "attack":
        title += f" · {_e(p['attack'])} of {_e(p['target_id'])} on “{_e(p['target'])}”"
    body = ""
    if "argument" in p:
        rows = []
        for r in p["argument"].get("rules", []):
            ante = r["antecedent"]
            prem = "".join(f"<li>{_e(s)}</li>" for s in ante.get("strong", []))
            prem += "".join(
                f"<li><i>no evidence against:</i> {_e(s)}</li>"
                for s in ante.get("weak_negation", [])
            )
            rows.append(f"<ul style='margin:2px 0'>{prem}</ul>⟹ <b>{_e(r['consequent'])}</b>")
        body = "<br>".join(rows)
    elif t.role == "characterize":
        body = "".join(
            f"<div><b>{k}</b>: {_e('; '.join(p[k]['strong']))} ⟹ {_e(p[k]['consequent'])}</div>"
            for k in ("C1", "C2")
        )
    elif t.role == "generalize":
        body = f"<b>E</b>: {_e('; '.join(p['E']['strong']))} ⟹ {_e(p['E']['consequent'])}"
    else:
        body = _e(t.text)
    return (
        f"<div style='background:{bg};border-radius:6px;padding:6px 10px;margin:4px 0;"
        f"font:14px sans-serif'>{title}<div style='margin-top:4px'>{body}</div></div>"
    )


def dialogue_html(tr: Transcript, *, show_rejected: bool = True) -> str:
    """The whole dialogue as HTML cards, then the outcome."""
    lab = tr.outcome.get("labelling", {})
    cards = [turn_html(t, lab) for t in tr.turns if show_rejected or t.valid]
    o = tr.outcome
    if o:
        cards.append(
            "<div style='font:14px sans-serif;margin-top:8px'>"
            f"<b>outcome</b>: {_e(o.get('outcome'))} · <b>final answer</b>: "
            f"{_e(o.get('final_answer'))} · {_e(o.get('turns'))} turns, "
            f"{_e(o.get('model_calls'))} model calls</div>"
        )
    return "".join(cards)
