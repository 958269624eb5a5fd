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
    Ballot,
    Candidates,
    Contribution,
    Decision,
    End,
    Flag,
    HumanTurn,
    Outcome,
    Override,
    Remark,
    Revision,
    Seat,
)
from argnb.transcript import Transcript, Turn
from argnb.views import UNREADABLE, esc, gated_html
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
        Seat: "seat",
        Candidates: "moderator",
        Ballot: "vote",
        Outcome: "outcome",
        Remark: "human",
        Revision: "moderator",
    }.get(type(p), "other")


SEAT_WORDS = {
    "join": "joined the table",
    "leave": "left the table",
    "hand": "raised a hand",
    "lower": "lowered their hand",
    "ready": "is ready to end the discussion",
}


def room_line(tr: Transcript, turn: Turn) -> str | None:
    """A room's own turn (seats, the closing) as one plain line; None for any other turn."""
    p = turn.payload
    if isinstance(p, Seat):
        return f"{turn.speaker} {SEAT_WORDS[p.action]}"
    if isinstance(p, Candidates):
        head = "Candidate statements" + {
            "analysis": " (from the analysis: the moderator's answer was unusable)",
            "learners": " (each speaker's last words, the learners' first: the moderator's and "
            "the analyzer's answers were unusable)",
        }.get(p.source, "")
        return head + ":\n" + "\n".join(f"{k}: {v}" for k, v in p.statements.items())
    if isinstance(p, Ballot):
        return f"{turn.speaker} ranked " + (" > ".join(p.ranking) or "nothing (no answer in time)")
    if isinstance(p, Outcome):
        return f"Schulze count: {' > '.join(p.order)}; {p.winner} is the group's statement"
    if isinstance(p, Remark):
        return turn.text or f"{turn.speaker} " + (
            "has no critique" if p.action == "pass" else "did not answer in time"
        )
    if isinstance(p, Revision):
        how = (
            f"revised after {p.critiques} critique(s)"
            if p.statement != p.original
            else ("kept: " + p.error if p.error else "kept as chosen")
        )
        return f"Group statement ({p.winner}, {how}): {p.statement}"
    return None


def header(tr: Transcript, turn: Turn) -> str:
    """Who spoke, in which role, on which model: "Deliberator 1 · deliberator · smollm2"."""
    role = role_of(turn)
    if role == "human":
        return f"{turn.speaker} · human"
    if role in ("seat", "vote", "outcome"):
        return turn.speaker
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
    line = room_line(tr, turn)
    if line is not None:
        return f"[{header(tr, turn)}] {line}"
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
        elif isinstance(p, Outcome):
            lines.append(f"**{_md(header(tr, t))}:** {_md(room_line(tr, t) or '')}")
            lines.append("")
            lines += _md_matrix(p)
        elif room_line(tr, t) is not None:
            body = (room_line(tr, t) or "").replace("\n", "  \n")
            lines.append(f"**{_md(header(tr, t))}:** {_md(body)}")
        else:
            lines.append(f"**{_md(header(tr, t))}:** {_md(format_turn(tr, t).split('] ', 1)[-1])}")
        lines.append("")
    c = tr.cost
    lines.append(f"---\n{len(record.speaker_turns(tr))} speaker turns, {c} of model time.")
    return "\n".join(lines) + "\n"


def _md_matrix(o: Outcome) -> list[str]:
    """The pairwise counts as a Markdown table: row x, column y = voters preferring x to y."""
    ids = o.order
    rows = ["| prefer ↓ over → | " + " | ".join(ids) + " |", "|---" * (len(ids) + 1) + "|"]
    for x in ids:
        cells = [str(o.d.get(x, {}).get(y, "")) if x != y else "—" for y in ids]
        rows.append(f"| {x} | " + " | ".join(cells) + " |")
    rows += [
        "",
        "Ballots: " + "; ".join(f"{_md(n)}: {' > '.join(r) or '—'}" for n, r in o.ballots.items()),
    ]
    return rows


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
    if isinstance(p, Seat | Ballot) or (isinstance(p, Remark) and p.action != "say"):
        return (
            f"<div style='color:#555;font-size:12px;margin:2px 0 2px 12px'>"
            f"{esc(room_line(tr, turn) or '')}</div>"
        )
    if isinstance(p, Candidates):
        return bubble(header(tr, turn), room_line(tr, turn) or "", COLORS["moderator"])
    if isinstance(p, Outcome):
        return outcome_html(tr, p)
    if isinstance(p, Revision):
        return bubble(
            "Group statement · " + header(tr, turn), room_line(tr, turn) or "", COLORS["moderator"]
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


def outcome_html(tr: Transcript, o: Outcome) -> str:
    """The count the learners can check: the order, the pairwise counts (a cell is green where
    the row's statement beat the column's), and who ranked what."""
    c = record.candidates(tr)
    statements = c.statements if c else {}
    th = "padding:2px 6px;border:1px solid #ddd;font-size:12px"
    head = "".join(f"<th style='{th}'>{esc(y)}</th>" for y in o.order)
    rows = []
    for x in o.order:
        cells = []
        for y in o.order:
            if x == y:
                cells.append(f"<td style='{th};color:#bbb'>—</td>")
                continue
            n, m = o.d.get(x, {}).get(y, 0), o.d.get(y, {}).get(x, 0)
            bg = "#e5f5e0" if n > m else ("#fee0d2" if n < m else "#fff")
            cells.append(f"<td style='{th};background:{bg};text-align:center'>{n}</td>")
        rows.append(f"<tr><th style='{th}'>{esc(x)}</th>{''.join(cells)}</tr>")
    ballots = "".join(
        f"<li>{esc(name)}: {esc(' > '.join(r) or 'no ballot in time')}</li>"
        for name, r in o.ballots.items()
    )
    order = "".join(f"<li><b>{esc(k)}</b> {esc(statements.get(k, ''))}</li>" for k in o.order)
    ties = (
        f"<div style='font-size:11px;color:#777'>tied (broken by the order drafted): "
        f"{esc('; '.join(' = '.join(t) for t in o.ties))}</div>"
        if o.ties
        else ""
    )
    return (
        "<div class='argnb-rt-outcome' style='border-left:4px solid #6a51a3;padding:4px 8px;"
        "margin:6px 0;background:#fafafa'><div style='font-size:11px;font-weight:bold;"
        "color:#6a51a3'>The ranking (Schulze count)</div>"
        f"<ol style='margin:2px 0;padding-left:18px;font-size:13px'>{order}</ol>{ties}"
        "<div style='font-size:11px;color:#555;margin-top:4px'>How many ranked the row's "
        "statement above the column's:</div>"
        f"<table style='border-collapse:collapse'><tr><th style='{th}'></th>{head}</tr>"
        f"{''.join(rows)}</table>"
        f"<ul style='font-size:12px;margin:4px 0;padding-left:18px'>{ballots}</ul></div>"
    )


def _items(items: Iterable[str], empty: str) -> str:
    lis = "".join(f"<li>{esc(x)}</li>" for x in items)
    return (
        f"<ul style='margin:2px 0 6px 0;padding-left:18px'>{lis}</ul>"
        if lis
        else (f"<div style='color:#999;font-size:12px'>{esc(empty)}</div>")
    )


def analysis_stopped_html(tr: Transcript) -> str:
    """The analyzer's latest attempt when it gave nothing usable, marked (the panel keeps the
    last usable analysis beside it, so a learner sees the analysis was tried); "" otherwise."""
    tried = tr.of_kind("roundtable.analysis", valid=None)
    if not tried or tried[-1].valid:
        return ""
    last = tried[-1]
    who = f"no usable analysis this time (after {last.payload['upto']} turns)"
    stop = record.gated(tr, last)
    if stop is not None:
        return gated_html(stop.gate, stop.raw, who)
    return gated_html(UNREADABLE, "", who)


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
    stopped = analysis_stopped_html(tr)
    if found or stopped:
        prev = found[-2].payload if len(found) > 1 else None
        latest = analysis_html(found[-1].payload, prev) if found else ""  # type: ignore[arg-type]
        parts.append("<h4>Latest analysis</h4>" + stopped + latest)
    c = tr.cost
    parts.append(
        f"<p style='color:#666;font-size:85%'>{len(record.speaker_turns(tr))} speaker turns, "
        f"{c} of model time</p></div>"
    )
    return "".join(parts)
