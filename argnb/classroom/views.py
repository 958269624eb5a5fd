"""The instructor's page: usage per learner and lesson as a table and a bar plot, the limits
(the class's and each learner's own), and who is waiting. "failed" counts requests the model
server did not answer; "unusable" answers it gave that the gate or the schema stopped. Built
from escaped pieces only: learner names and lesson names come from the hub and from request
headers, so they are untrusted text."""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Any

from argnb.views import esc
from argnb.words import shorten

_CELL = "padding:3px 8px;border-bottom:1px solid #ddd;text-align:right"


def _bars(totals: dict[str, int], width: int = 560) -> str:
    """Tokens per learner as a horizontal SVG bar chart (no plotting library on the server)."""
    if not totals:
        return "<p><i>No requests yet.</i></p>"
    rows = heapq.nsmallest(100, totals.items(), key=lambda kv: (-kv[1], kv[0]))
    top = max(v for _, v in rows) or 1
    h, label = 18, 150
    parts = [
        f"<svg role='img' aria-label='tokens per learner' width='{width}' "
        f"height='{h * len(rows) + 4}' xmlns='http://www.w3.org/2000/svg' "
        "style='font:12px sans-serif'>"
    ]
    for i, (name, value) in enumerate(rows):
        y = i * h + 2
        w = max(1, int((width - label - 90) * value / top))
        parts.append(
            f"<text x='{label - 6}' y='{y + 13}' text-anchor='end'>{esc(shorten(name, 24))}</text>"
            f"<rect x='{label}' y='{y}' width='{w}' height='{h - 4}' fill='#4c78a8'/>"
            f"<text x='{label + w + 4}' y='{y + 13}'>{value:,}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p><i>No requests yet.</i></p>"
    head = "".join(
        f"<th style='{_CELL}'>{h}</th>"
        for h in (
            "learner",
            "lesson",
            "requests",
            "prompt tokens",
            "completion tokens",
            "seconds",
            "failed",
            "unusable",
        )
    )
    body = "".join(
        "<tr>"
        f"<td style='{_CELL};text-align:left'>{esc(r['user'])}</td>"
        f"<td style='{_CELL};text-align:left'>{esc(r['lesson'] or '-')}</td>"
        f"<td style='{_CELL}'>{r['requests']:,}</td>"
        f"<td style='{_CELL}'>{r['prompt_tokens']:,}</td>"
        f"<td style='{_CELL}'>{r['completion_tokens']:,}</td>"
        f"<td style='{_CELL}'>{r['seconds']:.1f}</td>"
        f"<td style='{_CELL}'>{r['failed']:,}</td>"
        f"<td style='{_CELL}'>{r.get('unusable', 0):,}</td>"
        "</tr>"
        for r in rows
    )
    return f"<table style='border-collapse:collapse'><tr>{head}</tr>{body}</table>"


def _n(value: int | None) -> str:
    return "the class's" if value is None else f"{value:,}"


def _own_limits(own: dict[str, dict[str, int]], today: dict[str, int]) -> str:
    """The learners with limits of their own, beside what they used today."""
    if not own:
        return "<p><i>No learner has limits of their own.</i></p>"
    rows = "".join(
        f"<tr><td style='{_CELL};text-align:left'>{esc(user)}</td>"
        f"<td style='{_CELL}'>{_n(lim.get('tokens_per_day'))}</td>"
        f"<td style='{_CELL}'>{_n(lim.get('concurrent'))}</td>"
        f"<td style='{_CELL}'>{today.get(user, 0):,}</td></tr>"
        for user, lim in own.items()
    )
    head = "".join(
        f"<th style='{_CELL}'>{h}</th>"
        for h in ("learner", "tokens a day", "at once", "used today")
    )
    return (
        "<h2>Limits of their own</h2>"
        f"<table style='border-collapse:collapse'><tr>{head}</tr>{rows}</table>"
    )


def instructor_page(data: dict[str, Any]) -> str:
    """The whole page, from :meth:`argnb.classroom.gateway.Gateway.report`'s data."""
    totals: dict[str, int] = defaultdict(int)
    for r in data["today"]:
        totals[r["user"]] += r["prompt_tokens"] + r["completion_tokens"]
    lim = data["defaults"]
    queue = data["queue"]
    waiting = "".join(
        f"<li>{esc(name)}: {q['active']} running, {q['waiting']} waiting</li>"
        for name, q in queue.items()
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{esc(data['class'])}: model usage</title></head>"
        "<body style='font-family:sans-serif;max-width:1000px;margin:2em auto'>"
        f"<h1>{esc(data['class'])}</h1>"
        f"<p>Model <code>{esc(data['model'])}</code>; {data['busy']} of {data['slots']} "
        "model slots busy now.</p>"
        f"<p>Limits for every learner: {lim['tokens_per_day']:,} tokens a day, "
        f"{lim['concurrent']} requests at once, {lim['waiting']} waiting. "
        "Raise one learner's with <code>argnb class limits NAME --tokens-per-day N</code>.</p>"
        + _own_limits(data.get("own_limits") or {}, dict(totals))
        + "<h2>Now</h2>"
        + (f"<ul>{waiting}</ul>" if waiting else "<p><i>Nobody is waiting.</i></p>")
        + "<h2>Tokens today, per learner</h2>"
        + _bars(dict(totals))
        + "<h2>Usage per learner and lesson (all days)</h2>"
        + _table(data["usage"])
        + "<p><a href='usage.json'>usage.json</a> has the same data.</p></body></html>"
    )


def grades_usage_page(
    exercise: str, grades: list[dict[str, Any]], usage: list[dict[str, Any]]
) -> str:
    """The class report: each learner's points beside the model use that went into them.

    ``grades`` are rows of the grader's CSV (student, points, max_points); ``usage`` the gateway's
    summary rows (user, lesson, requests, tokens, seconds). A learner in only one of them still
    gets a row: no grade, or no model use, is worth seeing."""
    points: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for g in grades:
        p = points[str(g["student"])]
        p[0] += float(g["points"] or 0)
        p[1] += float(g["max_points"] or 0)
    used: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for u in usage:
        t = used[str(u["user"])]
        t[0] += u["requests"]
        t[1] += u["prompt_tokens"] + u["completion_tokens"]
        t[2] += u["seconds"]
    head = "".join(
        f"<th style='{_CELL}'>{h}</th>"
        for h in ("learner", "points", "model requests", "tokens", "model seconds")
    )
    body = "".join(
        "<tr>"
        f"<td style='{_CELL};text-align:left'>{esc(name)}</td>"
        + (
            f"<td style='{_CELL}'>{points[name][0]:g} / {points[name][1]:g}</td>"
            if name in points
            else f"<td style='{_CELL}'>not graded</td>"
        )
        + f"<td style='{_CELL}'>{int(used[name][0]):,}</td>"
        f"<td style='{_CELL}'>{int(used[name][1]):,}</td>"
        f"<td style='{_CELL}'>{used[name][2]:.1f}</td></tr>"
        for name in sorted(set(points) | set(used))
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{esc(exercise)}: grades and model use</title></head>"
        "<body style='font-family:sans-serif;max-width:900px;margin:2em auto'>"
        f"<h1>{esc(exercise)}: grades and model use</h1>"
        "<p>Points from the grader; requests, tokens and seconds from the class gateway (all "
        "lessons). A high grade with little model use, or the reverse, is a conversation to "
        "have, not a verdict.</p>"
        f"<table style='border-collapse:collapse'><tr>{head}</tr>{body}</table></body></html>"
    )
