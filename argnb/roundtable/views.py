"""How a roundtable looks: terminal lines, a Markdown log, and HTML for notebooks and the widget.

Views read transcripts and never call models. Every piece of model or human text is untrusted:
all HTML here is built from pieces escaped by :func:`argnb.views.esc` (quotes included), and
the argument map goes into a sandboxed iframe through :mod:`argnb.maps`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from argnb.roundtable import record
from argnb.roundtable.payloads import (
    Agenda,
    Analysis,
    Contribution,
    Decision,
    End,
    Flag,
    HumanTurn,
    Override,
)
from argnb.transcript import Transcript, Turn
from argnb.views import esc, gated_html
from argnb.words import shorten

#: colours of the dialogue panel, by role
COLORS = {
    "moderator": "#6a51a3",
    "deliberator": "#2171b5",
    "human": "#238b45",
    "rules": "#b15928",
    "analysis": "#636363",
}
DELIBERATOR_COLORS = ("#2171b5", "#d94801", "#88419d", "#02818a")


# -- plain text ---------------------------------------------------------------------------------
def role_of(turn: Turn) -> str:
    """moderator, deliberator, human, rules, analysis, check, end or other."""
    p = turn.payload
    return {
        Agenda: "moderator",
        Decision: "moderator",
        Contribution: "deliberator",
        HumanTurn: "human",
        Override: "rules",
        Analysis: "analysis",
        Flag: "check",
        End: "end",
    }.get(type(p), "other")


def header(tr: Transcript, turn: Turn) -> str:
    """Who spoke, in which role, on which model: "Deliberator 1 · deliberator · smollm2"."""
    role = role_of(turn)
    if role == "human":
        return f"{turn.speaker} · human"
    if role in ("rules", "end"):
        return turn.speaker
    return " · ".join(x for x in (record.label(tr, turn), role, turn.model) if x)


def format_turn(tr: Transcript, turn: Turn) -> str:
    """One turn as a terminal line (or a few)."""
    p = turn.payload
    role = role_of(turn)
    if role == "other":  # rejected attempts: say what went wrong, briefly
        return f"  [{turn.speaker}: {turn.role}] {shorten(turn.text, 200)}"
    if isinstance(p, Decision):
        say = f" {turn.text}" if turn.text else ""
        return f"[{header(tr, turn)}]{say}  → {p.choice or '(no choice)'}"
    if isinstance(p, Override):
        return f"  ⚑ {turn.text}"
    if isinstance(p, Flag):
        return f"  ⚠ fallacy check: {p.note or p.error or p.label}"
    if isinstance(p, Analysis):
        return "\n".join(analysis_lines(p))
    if isinstance(p, End):
        return f"— end: {p.reason} after {p.turns} turns —"
    if isinstance(p, HumanTurn) and p.action != "say":
        return f"[{header(tr, turn)}] {record.ACTIONS[p.action]}"
    note = ""
    if isinstance(p, Contribution):
        if not turn.valid:
            return f"[{header(tr, turn)}] (no answer: {p.error})"
        flags = [x for x, on in (("revised", p.revised), ("cut", p.cut)) if on]
        note = f"  ({p.words} words{', ' + ', '.join(flags) if flags else ''})"
    return f"[{header(tr, turn)}] {turn.text}{note}"


def analysis_lines(a: Analysis) -> list[str]:
    if a.error:
        return [f"  analysis after {a.upto} turns: the analyzer's answer was unusable ({a.error})"]
    out = [f"  ── analysis after {a.upto} turns ({a.trigger}) ──"]
    out += [f"  summary: {s}" for s in a.summary]
    out += [f"  agreed: {s}" for s in a.agreements]
    out += [f"  open: {s}" for s in a.open_questions]
    for i, arg in enumerate(a.arguments, start=1):
        out.append(f"  A{i} [{arg.by}] {arg.claim}")
        out += [f"     because {p}" for p in arg.premises]
        for c in arg.counterarguments:
            out.append(f"     objection [{c.by}]: {c.objection}")
            if c.rebuttal:
                out.append(f"       rebuttal [{c.rebuttal_by}]: {c.rebuttal}")
    return out


# -- Markdown ---------------------------------------------------------------------------------
def _md(text: str) -> str:
    """Text safe inside a Markdown paragraph: no raw HTML, no accidental headings or lists."""
    t = " ".join(str(text).split())
    for ch in "\\`*_[]#|":
        t = t.replace(ch, "\\" + ch)
    number = re.match(r"\d+(?=[.)])", t)  # "1." or "1)" would start a numbered list
    if number:
        t = number.group() + "\\" + t[number.end() :]
    elif t[:1] in ("-", "+", ">", "=", "~"):  # a list, a quote, a heading underline
        t = "\\" + t
    return esc(t, quote=False)


def to_markdown(tr: Transcript) -> str:
    """A readable log of the session: every turn with who said it, then the final analysis."""
    lines = [f"# Roundtable: {_md(tr.title)}", ""]
    for t in tr.turns:
        p = t.payload
        role = role_of(t)
        if role == "other":
            lines.append(f"> *{_md(t.speaker)}: {_md(t.role)}*: {_md(shorten(t.text, 300))}")
        elif isinstance(p, Agenda):
            lines.append(f"**{_md(header(tr, t))}**")
            lines.append("")
            lines += [_md(x) + "  " for x in t.text.splitlines()]
        elif isinstance(p, Decision):
            said = f" {_md(t.text)}" if t.text else ""
            lines.append(f"**{_md(header(tr, t))}**{said} → *{_md(p.choice or 'no choice')}*")
        elif isinstance(p, Override):
            lines.append(f"> ⚑ {_md(t.text)} (rules: {_md(', '.join(p.rules))})")
        elif isinstance(p, Flag):
            lines.append(f"> fallacy check of turn {p.target}: {_md(p.note or p.error)}")
        elif isinstance(p, Analysis):
            lines.append(f"### Analysis after {p.upto} turns ({p.trigger})")
            lines += analysis_markdown(p)
        elif isinstance(p, End):
            lines.append(f"*Session ended ({p.reason}) after {p.turns} turns.*")
        else:
            lines.append(f"**{_md(header(tr, t))}:** {_md(format_turn(tr, t).split('] ', 1)[-1])}")
        lines.append("")
    c = tr.cost
    lines.append(f"---\n{len(record.speaker_turns(tr))} speaker turns, {c} of model time.")
    return "\n".join(lines) + "\n"


def analysis_markdown(a: Analysis) -> list[str]:
    if a.error:
        return [f"The analyzer's answer was unusable: {_md(a.error)}"]
    out = ["**Summary.** " + _md(" ".join(a.summary))]
    for title, items in (
        ("Points of agreement", a.agreements),
        ("Open questions", a.open_questions),
    ):
        out += ["", f"**{title}.**"] + ([f"- {_md(x)}" for x in items] or ["- (none yet)"])
    if a.arguments:
        out += ["", "**Argument map.**"]
        for i, arg in enumerate(a.arguments, start=1):
            out.append(f"- A{i} ({_md(arg.by)}): {_md(arg.claim)}")
            out += [f"  - because: {_md(p)}" for p in arg.premises]
            for c in arg.counterarguments:
                out.append(f"  - objection ({_md(c.by)}): {_md(c.objection)}")
                if c.rebuttal:
                    out.append(f"    - rebuttal ({_md(c.rebuttal_by)}): {_md(c.rebuttal)}")
    return out


# -- HTML -------------------------------------------------------------------------------------
def color(tr: Transcript, turn: Turn) -> str:
    role = role_of(turn)
    if role == "deliberator":
        names = [
            p.name
            for p in (record.agenda(tr).participants if record.agenda(tr) else [])
            if p.role == "deliberator"
        ]
        i = names.index(turn.speaker) if turn.speaker in names else 0
        return DELIBERATOR_COLORS[i % len(DELIBERATOR_COLORS)]
    return COLORS.get(role, "#888")


def bubble(head: str, body: str, colour: str, note: str = "", live: bool = False) -> str:
    """One message of the dialogue panel. ``head``, ``body`` and ``note`` are plain text."""
    cursor = "<span class='argnb-rt-cursor'>▍</span>" if live else ""
    foot = (
        f"<div style='color:#777;font-size:11px;margin-top:2px'>{esc(note)}</div>" if note else ""
    )
    return (
        f"<div class='argnb-rt-msg' style='border-left:4px solid {colour};padding:4px 8px;"
        "margin:6px 0;background:#fafafa'>"
        f"<div style='font-size:11px;font-weight:bold;color:{colour}'>{esc(head)}</div>"
        f"<div style='white-space:pre-wrap;font-size:13px'>{esc(body)}{cursor}</div>{foot}</div>"
    )


def turn_html(tr: Transcript, turn: Turn) -> str:
    """A recorded turn in the dialogue panel ("" for turns the panel does not show)."""
    p = turn.payload
    role = role_of(turn)
    if role == "other":  # rejected attempts: the seat's record after them says it once
        return ""
    unusable = (
        not turn.valid
        or (isinstance(p, Decision) and p.choice is None)
        or (isinstance(p, Agenda) and not p.scope and not p.criteria)
    )
    stop = record.gated(tr, turn) if unusable else None
    if stop is not None and not isinstance(p, Agenda):  # muted, marked, the raw text a click away
        return gated_html(stop.gate, stop.raw, header(tr, turn))
    if role in ("other", "analysis", "end"):
        return ""
    if isinstance(p, Agenda) and stop is not None:
        return bubble(header(tr, turn), turn.text, COLORS["moderator"]) + gated_html(
            stop.gate, stop.raw, "the moderator's own words"
        )
    if isinstance(p, Decision):
        body = turn.text or ""
        note = f"next: {p.choice}" if p.choice else "no usable answer"
        if not body:
            return (
                f"<div style='color:{COLORS['moderator']};font-size:11px;margin:2px 0 2px 12px'>"
                f"{esc(header(tr, turn))} → {esc(note)}</div>"
            )
        return bubble(header(tr, turn), body, COLORS["moderator"], note)
    if isinstance(p, Override):
        return (
            f"<div style='color:{COLORS['rules']};font-size:12px;margin:2px 0 2px 12px'>"
            f"⚑ {esc(turn.text)}</div>"
        )
    if isinstance(p, Flag):
        if p.label != 1:
            return ""
        target = tr.turns[p.target] if 0 <= p.target < len(tr.turns) else None
        flagged = f"{target.speaker}'s contribution" if target else "a contribution"
        return (
            "<div style='color:#a50f15;font-size:11px;margin:2px 0 2px 12px'>"
            f"⚠ the fallacy check flags {esc(flagged)}: {esc(p.note)}</div>"
        )
    if isinstance(p, HumanTurn) and p.action != "say":
        return (
            f"<div style='color:{COLORS['human']};font-size:12px;margin:2px 0 2px 12px'>"
            f"{esc(turn.speaker)} {esc(record.ACTIONS[p.action])}</div>"
        )
    note = ""
    body = turn.text
    if isinstance(p, Contribution):
        if not turn.valid:
            body, note = "(no answer)", p.error
        else:
            bits = [f"{p.words} words"]
            if p.revised:
                bits.append("revised once to fit the limit")
            if p.cut:
                bits.append(f"cut from {p.words_before_cut} words at a sentence end")
            note = "; ".join(bits)
    return bubble(header(tr, turn), body, color(tr, turn), note)


def _items(items: Iterable[str], empty: str) -> str:
    lis = "".join(f"<li>{esc(x)}</li>" for x in items)
    return (
        f"<ul style='margin:2px 0 6px 0;padding-left:18px'>{lis}</ul>"
        if lis
        else (f"<div style='color:#999;font-size:12px'>{esc(empty)}</div>")
    )


def analysis_html(a: Analysis | None, previous: Analysis | None = None) -> str:
    """The analyzer panel's text sections; agreements new since ``previous`` are marked."""
    if a is None:
        return "<div style='color:#999'>No analysis yet.</div>"
    head = f"<div style='color:#777;font-size:11px'>after {a.upto} turns ({esc(a.trigger)})</div>"
    if a.error:
        return (
            head
            + f"<div style='color:#a50f15'>The analyzer's answer was unusable: {esc(a.error)}</div>"
        )
    old = set(previous.agreements) if previous is not None else set()
    new = " <b style='color:#238b45'>new</b>"
    agreements = "".join(
        f"<li>{esc(x)}{new if previous is not None and x not in old else ''}</li>"
        for x in a.agreements
    )
    agree = (
        f"<ul style='margin:2px 0 6px 0;padding-left:18px'>{agreements}</ul>"
        if agreements
        else "<div style='color:#999;font-size:12px'>none yet</div>"
    )
    dropped = [x for x in (previous.agreements if previous else []) if x not in a.agreements]
    gone = (
        "<div style='color:#999;font-size:11px'>no longer listed: "
        + esc("; ".join(dropped))
        + "</div>"
        if dropped
        else ""
    )
    claims = "".join(
        f"<li><b>A{i}</b> <i>({esc(arg.by)})</i> {esc(arg.claim)}"
        + _items(arg.premises, "")
        + "".join(
            f"<div style='font-size:12px;margin-left:8px'>✗ {esc(c.objection)} <i>({esc(c.by)})</i>"
            + (f"<br>↳ {esc(c.rebuttal)} <i>({esc(c.rebuttal_by)})</i>" if c.rebuttal else "")
            + "</div>"
            for c in arg.counterarguments
        )
        + "</li>"
        for i, arg in enumerate(a.arguments, start=1)
    )
    section = "<div style='font-weight:bold;margin-top:6px'>{}</div>"
    return (
        head
        + section.format("Summary")
        + _items(a.summary, "nothing yet")
        + section.format("Points of agreement")
        + agree
        + gone
        + section.format("Open questions")
        + _items(a.open_questions, "none")
        + section.format("Argument map (claims and premises)")
        + (
            f"<ol style='padding-left:18px;margin:2px 0'>{claims}</ol>"
            if claims
            else "<div style='color:#999;font-size:12px'>no arguments yet</div>"
        )
    )


def session_html(tr: Transcript) -> str:
    """The whole session for a notebook cell: the dialogue, then the latest analysis."""
    parts = [f"<div class='argnb-roundtable'><h4>Roundtable: {esc(tr.title)}</h4>"]
    parts += [turn_html(tr, t) for t in tr.turns]
    found = record.analyses(tr)
    if found:
        prev = found[-2].payload if len(found) > 1 else None
        parts.append("<h4>Latest analysis</h4>" + analysis_html(found[-1].payload, prev))  # type: ignore[arg-type]
    c = tr.cost
    parts.append(
        f"<p style='color:#666;font-size:85%'>{len(record.speaker_turns(tr))} speaker turns, "
        f"{c} of model time</p></div>"
    )
    return "".join(parts)
