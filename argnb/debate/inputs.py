"""Every input file debate reads, in one place: tables, debates files and items to evaluate.

* :func:`read_rows` -- the table files the memory builders and the agreement tool accept;
* :func:`read_debates` -- a debates file in the IQ2 layout (rows ``debate_id, topic, turn,
  stance, speaker, text``; moderator, host and audience rows and turns under 12 words dropped);
* :func:`read_items` -- what a judge evaluates, recognised by content among three formats.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argnb.datafiles import read_text, table_rows
from argnb.debate.record import SIDES, evaluation_items
from argnb.errors import ArgnbError
from argnb.transcript import Transcript

JUDGES = ("inspire", "debatrix")


def read_rows(path: str | Path, flag: str = "--data") -> Iterator[dict[str, Any]]:
    """Rows of a JSON Lines or CSV file (by content, checked by :func:`argnb.datafiles.table_rows`):
    UTF-8 with or without a byte order mark; an empty file or a bad line is an error that names it."""
    yield from table_rows(path, flag)


@dataclass(frozen=True)
class Debate:
    """One debate of a debates file: its motion and its argumentative turns, in order."""

    id: str
    topic: str
    turns: list[dict[str, str]]


#: turns shorter than this are not arguments ("Thank you.", "Yes.") and are dropped, as the
#: memory builders drop them
MIN_WORDS = 12


def read_debates(path: str | Path, *, min_words: int = MIN_WORDS) -> dict[str, Debate]:
    """The debates of a file in the IQ2 layout, in file order (see the module docstring);
    turns under ``min_words`` words are dropped."""
    rows: dict[str, list[dict[str, Any]]] = {}
    topics: dict[str, str] = {}
    for n, row in enumerate(read_rows(path), 1):
        if not isinstance(row, dict) or "debate_id" not in row or "text" not in row:
            raise ArgnbError(
                f"{path}: row {n} is not a debate turn",
                hint='rows need "debate_id", "topic", "turn", "stance", "text" (the IQ2 layout)',
            )
        did = str(row["debate_id"])
        topics.setdefault(did, str(row.get("topic", "")))
        words = len(str(row["text"]).split())
        if str(row.get("stance", "")).lower() in SIDES and words >= min_words:
            rows.setdefault(did, []).append(row)
    if not topics:
        raise ArgnbError(f"{path} holds no debate turns", hint="check the file")
    out = {}
    for did, rs in rows.items():
        rs.sort(key=lambda r: float(r.get("turn", 0) or 0))
        turns = [
            {
                "stance": str(r["stance"]).lower(),
                "speaker": str(r.get("speaker", "")),
                "text": " ".join(str(r["text"]).split()),
            }
            for r in rs
        ]
        out[did] = Debate(did, topics[did], turns)
    return out


def _transcript(p: Path) -> Transcript | None:
    """``p`` as a saved debate transcript, or None when it is no transcript at all (the other
    formats are JSON Lines or CSV, which never parse as one JSON object with turns)."""
    try:
        data = json.loads(read_text(p, "--utterances"))
    except json.JSONDecodeError:
        return None
    if not (isinstance(data, dict) and "kind" in data and "turns" in data):
        return None
    try:
        tr = Transcript.model_validate(data)
    except ValueError as exc:
        msg = " ".join(str(exc).split())[:200]
        raise ArgnbError(f"{p} is not a readable argnb transcript: {msg}") from None
    if tr.kind.split(".")[0].split("-")[0] != "debate":
        raise ArgnbError(
            f"{p} is a {tr.kind!r} transcript, not a debate",
            hint="give a debate saved by `argnb debate simulate --out` or the debate widget",
        )
    return tr


def _from_next(rows: list[dict[str, Any]], judge: str) -> list[dict[str, Any]]:
    """Items of a results file of ``argnb debate next`` (rows without an utterance skipped)."""
    rows = [r for r in rows if str(r.get("text", "")).strip()]
    if judge == "debatrix":
        return [
            {
                "id": r["id"],
                "topic": r.get("topic", ""),
                "turns": [*r["history"], {"stance": r["stance"], "text": r["text"]}],
            }
            for r in rows
        ]
    return [
        {k: r.get(k) for k in ("id", "topic", "stance", "text", "history")}
        | {"evidence": r.get("evidence") or [], "method": r.get("method", "")}
        for r in rows
    ]


def _from_debates(p: Path, judge: str) -> list[dict[str, Any]]:
    """Items of a debates file in the IQ2 layout (moderator and short turns dropped)."""
    debates = [d for d in read_debates(p).values() if d.turns]
    if judge == "debatrix":
        return [{"id": d.id, "topic": d.topic, "turns": d.turns} for d in debates]
    return [
        {
            "id": f"{d.id}#{i}",
            "topic": d.topic,
            "stance": t["stance"],
            "text": t["text"],
            "history": d.turns[:i],
            "evidence": [],
            "method": "",
        }
        for d in debates
        for i, t in enumerate(d.turns)
    ]


def read_items(path: str | Path, judge: str) -> list[dict[str, Any]]:
    """The items ``judge`` evaluates in ``path``: utterances (inspire) or debates (debatrix) of
    a results file of ``argnb debate next``, a saved debate transcript or a debates file in the
    IQ2 layout -- recognised by their content, not their extension."""
    if judge not in JUDGES:
        raise ArgnbError(f"unknown judge {judge!r}", hint="use inspire or debatrix")
    p = Path(path)
    if not p.is_file():
        raise ArgnbError(f"no file at {p}", hint="check --utterances")
    formats = "results of `argnb debate next` (.jsonl), a saved debate (.json) or IQ2-layout rows"
    tr = _transcript(p)
    if tr is not None:
        utts, debates = evaluation_items(tr, p.stem)
        items = utts if judge == "inspire" else debates
    else:
        rows = list(read_rows(p, "--utterances"))
        if not rows:
            raise ArgnbError(f"{p} is empty", hint=f"give {formats}")
        if all("text" in r and "history" in r and "stance" in r for r in rows):
            items = _from_next(rows, judge)
        elif all("debate_id" in r and "text" in r and "stance" in r for r in rows):
            items = _from_debates(p, judge)
        else:
            raise ArgnbError(
                f"{p} is neither results of `argnb debate next`, a debate transcript, nor a "
                "debates file",
                hint=f"give {formats}",
            )
    if not items:
        raise ArgnbError(
            f"{p} holds no utterance for the {judge} judge to evaluate",
            hint="check the file: are its turns empty, or all moderator turns?",
        )
    return items
