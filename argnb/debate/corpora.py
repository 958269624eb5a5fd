"""Builders that turn real debate corpora into memory records.

Each reader takes a corpus in its own layout and yields :class:`~argnb.debate.memory.Record`
objects; :func:`build` adds them to a store and reports what it kept and skipped. Rules that hold
for all of them:

* only argumentative turns count: moderator, host and audience ("other") turns are dropped;
* a long turn is split into **units** of at most ``max_words`` words (at paragraph, then
  sentence boundaries; consecutive short paragraphs are merged), so one record is one idea-sized
  passage that an embedding model reads whole (all-MiniLM-L6-v2 stops at 256 word pieces);
* units shorter than ``min_words`` ("Thank you.", "Yes.") are dropped;
* adding the same corpus twice adds nothing (record ids are stable), so a memory grows
  incrementally: a new corpus, or one debate (``debate=ID``), without rebuilding.

Formats: ``iq2`` and ``ibm-speeches`` are the debate-row layout of ``../shared/data``
(``debate_id, topic, turn, stance, speaker, text``); ``claims`` the IBM claim-stance rows (one
claim per record, unsplit); ``jsonl`` / ``csv`` any table with ``topic``, ``stance`` and ``text``
columns; ``transcript`` an argnb debate transcript (turns with ``debate.utterance`` payloads);
``example`` the small memory shipped in ``assets/debate/``.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from argnb.debate.inputs import read_rows
from argnb.debate.memory import AddResult, Record, Store
from argnb.errors import ArgnbError, DataError
from argnb.transcript import Transcript

FORMATS = ("iq2", "ibm-speeches", "claims", "jsonl", "csv", "transcript", "example")
MAX_WORDS = 100
MIN_WORDS = 12

_STANCES = {
    "pro": "pro",
    "for": "pro",
    "support": "pro",
    "supports": "pro",
    "favor": "pro",
    "favour": "pro",
    "+": "pro",
    "1": "pro",
    "+1": "pro",
    "con": "con",
    "against": "con",
    "oppose": "con",
    "opposes": "con",
    "contra": "con",
    "-": "con",
    "-1": "con",
}
_SENTENCE = re.compile(r"(?:(?<=[.!?…])|(?<=[.!?…][\"')\]]))\s+")
_PARAGRAPH = re.compile(r"\n\s*")


def normalize_stance(value: Any) -> str | None:
    """``pro``/``con`` for the usual spellings (for/against, support/oppose, +1/-1), else None."""
    return _STANCES.get(str(value).strip().lower()) if value is not None else None


# -- splitting ---------------------------------------------------------------------------
def _pieces(text: str, max_words: int) -> list[tuple[list[str], bool]]:
    """Word lists of at most ``max_words``: paragraphs, long ones cut at sentences, long
    sentences cut at words. The flag marks the first piece of a paragraph."""
    out: list[tuple[list[str], bool]] = []
    for para in _PARAGRAPH.split(text):
        words = para.split()
        if not words:
            continue
        if len(words) <= max_words:
            out.append((words, True))
            continue
        first = True
        for sent in _SENTENCE.split(para):
            sw = sent.split()
            for i in range(0, len(sw), max_words):
                if sw[i : i + max_words]:
                    out.append((sw[i : i + max_words], first))
                    first = False
    return out


def split_units(text: str, max_words: int = MAX_WORDS) -> list[str]:
    """Split a turn into units of at most ``max_words`` words, keeping every word in order.

    Pieces (paragraphs, or sentences of long paragraphs) are packed greedily towards an even
    size (total / number of units needed), so a turn of 130 words gives two units of ~65, not
    120 + 10.

    >>> split_units("One two three. Four five six.", max_words=3)
    ['One two three.', 'Four five six.']
    >>> split_units("a b\\n\\nc d\\n\\ne f g h", max_words=4)
    ['a b c d', 'e f g h']
    """
    if max_words < 1:
        raise ArgnbError("max_words must be at least 1")
    pieces = _pieces(text, max_words)
    total = sum(len(w) for w, _ in pieces)
    if total == 0:
        return []
    target = math.ceil(total / math.ceil(total / max_words))
    units: list[list[str]] = []
    cur: list[str] = []
    for words, _ in pieces:
        if cur and (len(cur) + len(words) > max_words or len(cur) >= target):
            units.append(cur)
            cur = []
        cur = cur + words
    if cur:
        units.append(cur)
    return [" ".join(u) for u in units]


# -- reading -----------------------------------------------------------------------------
@dataclass
class BuildReport:
    """What :func:`build` did: records added / already present, rows skipped and why."""

    source: str
    added: int = 0
    existing: int = 0
    debates: int = 0
    skipped: Counter = field(default_factory=Counter)

    def __str__(self) -> str:
        skip = ", ".join(f"{n} {why}" for why, n in self.skipped.most_common()) or "none"
        return (
            f"{self.source}: {self.added} records added, {self.existing} already there, "
            f"from {self.debates} debates; skipped: {skip}"
        )


def _topic_id(topic: str) -> str:
    return "t-" + hashlib.sha1(topic.encode("utf-8")).hexdigest()[:10]


def debate_rows(
    rows: Iterable[dict[str, Any]],
    source: str,
    report: BuildReport,
    *,
    max_words: int = MAX_WORDS,
    min_words: int = MIN_WORDS,
    split: bool = True,
    debate: str | None = None,
) -> Iterator[Record]:
    """Records from rows with ``topic``, ``stance``, ``text`` (``debate_id``, ``turn``,
    ``speaker`` optional): non-debater turns dropped, long turns split, short units dropped."""
    debates: set[str] = set()
    for n, row in enumerate(rows):
        text, topic = str(row.get("text") or "").strip(), str(row.get("topic") or "").strip()
        if not text or not topic:
            report.skipped["rows without topic or text"] += 1
            continue
        raw = row.get("stance")
        stance = normalize_stance(raw)
        if stance is None:
            report.skipped[f"{raw or 'no'}-stance turns"] += 1
            continue
        debate_id = str(row.get("debate_id") or _topic_id(topic))
        if debate is not None and debate_id != debate:
            continue
        turn = int(row["turn"]) if str(row.get("turn", "")).strip().lstrip("-").isdigit() else n
        units = split_units(text, max_words) if split else [" ".join(text.split())]
        for part, unit in enumerate(units):
            if len(unit.split()) < min_words:
                report.skipped["units under min_words"] += 1
                continue
            try:
                rec = Record(
                    source=source,
                    debate_id=debate_id,
                    topic=topic,
                    stance=stance,
                    speaker=str(row.get("speaker") or ""),
                    turn=turn,
                    part=part,
                    text=unit,
                )
            except ValidationError:
                report.skipped["malformed rows"] += 1
                continue
            debates.add(debate_id)
            yield rec
    report.debates = len(debates)


def from_transcript(
    tr: Transcript,
    *,
    source: str = "argnb",
    debate_id: str | None = None,
    max_words: int = MAX_WORDS,
    min_words: int = MIN_WORDS,
) -> list[Record]:
    """Records from an argnb debate transcript: its valid ``debate.utterance`` turns (a debate
    becomes memory for the next one). The topic comes from the payload or ``meta["topic"]``."""
    rows = []
    for i, t in enumerate(tr.turns):
        if t.payload.kind != "debate.utterance" or not t.valid:
            continue
        rows.append(
            {
                "topic": t.payload.get("topic") or tr.meta.get("topic") or tr.title,
                "stance": t.payload.get("stance"),
                "speaker": t.speaker,
                "turn": i,
                "text": t.text,
                "debate_id": debate_id or tr.meta.get("debate_id") or "",
            }
        )
    if rows and not rows[0]["debate_id"]:
        digest = hashlib.sha1(tr.to_json().encode("utf-8")).hexdigest()[:10]
        for r in rows:
            r["debate_id"] = f"debate-{digest}"
    report = BuildReport(source)
    return list(debate_rows(rows, source, report, max_words=max_words, min_words=min_words))


EXAMPLE_FILE = Path(__file__).resolve().parents[2] / "assets" / "debate" / "memory.jsonl"


def example_path() -> Path:
    """``assets/debate/memory.jsonl``: the small memory we wrote (in a checkout or sdist)."""
    if not EXAMPLE_FILE.is_file():
        raise ArgnbError(
            f"the example memory is not at {EXAMPLE_FILE}",
            hint="run from a checkout of argnb (assets/ is not part of the wheel)",
        )
    return EXAMPLE_FILE


#: the two corpora in the debate-row layout, as an error names them
CORPUS_NAMES = {"iq2": "the IQ2 debates", "ibm-speeches": "the IBM debate speeches"}


def corpus_of(row: dict[str, Any]) -> str | None:
    """Which corpus of the debate-row layout a row shows it comes from, if it says: IQ2 has
    moderator and host turns and ``meta.source`` "iq2"; IBM's recorded speeches have
    ``meta.source`` "ibm-…" and ids "ibm-speech-…". A row of one's own table says nothing."""
    meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
    source = str(meta.get("source") or "").lower()
    debate_id = str(row.get("debate_id") or "").lower()
    stance = str(row.get("stance") or "").strip().lower()
    if source.startswith("iq2") or debate_id.startswith("iq2-") or stance in ("moderator", "host"):
        return "iq2"
    if source.startswith("ibm") or debate_id.startswith("ibm-speech"):
        return "ibm-speeches"
    return None


def _of_corpus(rows: Iterable[dict[str, Any]], fmt: str, path: str | Path) -> Iterator[dict]:
    """``rows``, refusing the first that comes from the other corpus: records built from IQ2
    with ``--from ibm-speeches`` would carry the wrong source, silently."""
    for n, row in enumerate(rows, 1):
        other = corpus_of(row)
        if other is not None and other != fmt:
            raise DataError(
                f"{path}: row {n} is from {CORPUS_NAMES[other]}, not {CORPUS_NAMES[fmt]}",
                hint=f"build it with --from {other}",
            )
        yield row


def records(
    fmt: str,
    path: str | Path | None = None,
    report: BuildReport | None = None,
    *,
    max_words: int = MAX_WORDS,
    min_words: int = MIN_WORDS,
    debate: str | None = None,
    source: str | None = None,
) -> Iterator[Record]:
    """The records of one corpus (see the module docstring for ``fmt``)."""
    if fmt not in FORMATS:
        raise ArgnbError(f"unknown corpus format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")
    report = report if report is not None else BuildReport(fmt)
    kw = {"max_words": max_words, "min_words": min_words, "debate": debate}
    if fmt == "example":
        rows = read_rows(path or example_path())
        yield from debate_rows(rows, "example", report, split=False, min_words=1)
        return
    if path is None:
        raise ArgnbError(f"the {fmt} builder needs a path", hint="pass the corpus file")
    if fmt == "transcript":
        try:
            tr = Transcript.load(path)
        except (OSError, ValueError) as exc:
            raise ArgnbError(f"cannot read a transcript from {path}: {exc}") from None
        recs = from_transcript(tr, source=source or "argnb", max_words=max_words)
        report.debates = len({r.debate_id for r in recs})
        yield from recs
        return
    rows = read_rows(path)
    if fmt == "claims":
        yield from debate_rows(
            rows, source or "claims", report, split=False, min_words=1, debate=debate
        )
    elif fmt in ("iq2", "ibm-speeches"):
        yield from debate_rows(_of_corpus(rows, fmt, path), source or fmt, report, **kw)
    else:
        yield from debate_rows(rows, source or f"{fmt}:{Path(path).stem}", report, **kw)


def build(
    store: Store,
    fmt: str,
    path: str | Path | None = None,
    *,
    max_words: int = MAX_WORDS,
    min_words: int = MIN_WORDS,
    debate: str | None = None,
    source: str | None = None,
    batch: int = 2000,
) -> BuildReport:
    """Add a corpus (or one of its debates) to ``store``; records already there are kept."""
    report = BuildReport(source or fmt)
    buf: list[Record] = []

    def flush() -> None:
        res: AddResult = store.add(buf)
        report.added += res.added
        report.existing += res.existing
        buf.clear()

    for rec in records(
        fmt,
        path,
        report,
        max_words=max_words,
        min_words=min_words,
        debate=debate,
        source=source,
    ):
        buf.append(rec)
        if len(buf) >= batch:
            flush()
    flush()
    if fmt == "example":
        load_example_annotations(store, path)
    return report


def load_example_annotations(store: Store, path: str | Path | None = None) -> int:
    """Store our own annotations of the example memory (annotator ``human:argnb-authors``)."""
    n = 0
    for row in read_rows(path or example_path()):
        rid = f"example/{row['debate_id']}/{row['turn']}.0"
        store.annotate(
            rid,
            row.get("schemes") or {},
            backend="human",
            model="argnb-authors",
            reasons=row.get("reasons") or {},
        )
        n += 1
    return n


def gold_annotations() -> Any:
    """Our gold annotations (30 of the example passages) as an
    :class:`~argnb.debate.agreement.AnnotationFile`: the reference to measure an annotator
    against."""
    from argnb.debate.agreement import AnnotationFile, _labels_of

    rows = [r for r in read_rows(example_path()) if r.get("gold")]
    labels = {str(r["id"]): _labels_of(r.get("schemes"), str(r["id"])) for r in rows}
    return AnnotationFile(labels, ("gold (argnb authors)",), frozenset(), str(example_path()))


def gold_rows() -> list[dict[str, Any]]:
    """The gold passages (id, topic, stance, text, our labels) to annotate."""
    return [r for r in read_rows(example_path()) if r.get("gold")]


def example_memory(path: str | Path = ":memory:") -> Store:
    """The small memory we wrote (three motions, both stances, 40 passages with our scheme
    annotations and labels), as a store -- in memory unless ``path`` names a file."""
    store = Store(path)
    build(store, "example")
    return store
