"""Recorded answers of the embedded model for the lessons, replayed by ``make test``.

Why: nbval, the browser suite and the website build execute the lessons to test the pages, the
widgets and the build, not the model, and the model's answers were most of their time (about
15 minutes of worker time on two cores). The embedded model is deterministic (temperature 0, a
fixed seed), so an answer recorded once equals the answer a live call gives; ``make test`` loads
``tests/recordings/lessons.jsonl`` into the run's response cache (:mod:`tests.conftest`) and the
lessons' kernels find their answers there. A call that is not in the recording (a prompt that
changed since) still runs live and is reported at the end of the run: ``make record`` refreshes
the file. ``make test-all`` runs the same notebooks without the recording and diffs what it got
against the file (``python -m tests.recording diff``): a recorded answer the model no longer gives
fails that run.

The file holds cache rows as JSON lines, sorted by key: ``{"key": ..., "reply": {...}}`` (the
key hashes the backend's identity, the messages, the schema and the options; see
:func:`argnb.llm.cache.cache_key`). Model answers only: no key, path or secret is in a row.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "tests" / "recordings" / "lessons.jsonl"
#: ``make test`` sets nothing; ``ARGNB_TEST_REPLAY=0`` runs every lesson call live (``make
#: test-all``, ``make record``); ``ARGNB_TEST_RECORD=path`` writes the run's cache there at the end
REPLAY, RECORD = "ARGNB_TEST_REPLAY", "ARGNB_TEST_RECORD"


def read(path: Path) -> dict[str, str]:
    """key -> reply JSON of a recording (empty when there is no file)."""
    if not path.exists():
        return {}
    rows: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            rows[row["key"]] = json.dumps(row["reply"], ensure_ascii=False, sort_keys=True)
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}:{n}: not a recording row ({exc}): run make record") from exc
    return rows


def rows_of(db: Path) -> dict[str, str]:
    """key -> reply JSON of a response cache file (:class:`argnb.llm.cache.ResponseCache`)."""
    if not db.exists():
        return {}
    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT key, reply FROM replies"))
    except sqlite3.OperationalError:  # no table: nothing was ever cached
        return {}
    finally:
        con.close()


def load(path: Path, db: Path) -> set[str]:
    """Put a recording's rows into the cache file ``db``; returns their keys."""
    from argnb.llm.cache import ResponseCache

    rows = read(path)
    cache = ResponseCache(db)  # creates the table, in WAL mode, as the kernels expect
    cache.close()
    con = sqlite3.connect(db)
    with con:
        con.executemany("INSERT OR REPLACE INTO replies (key, reply) VALUES (?, ?)", rows.items())
    con.close()
    return set(rows)


def write(rows: dict[str, str], path: Path) -> None:
    """Write rows as a recording, sorted by key (stable diffs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for key in sorted(rows):
        reply = json.loads(rows[key])  # as the cache stores it (no "cached", no "parsed")
        line = json.dumps({"key": key, "reply": reply}, ensure_ascii=False, sort_keys=True)
        lines.append(line)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def answers(rows: dict[str, str]) -> dict[str, str]:
    """key -> the answer's text: what must not change between a recording and a live run
    (timings, usage and the like may)."""
    return {k: json.loads(v).get("text", "") for k, v in rows.items()}


def compare(recorded: dict[str, str], fresh: dict[str, str]) -> tuple[list[str], int, int]:
    """Keys whose answer differs, and how many keys only the recording / the live run has."""
    a, b = answers(recorded), answers(fresh)
    changed = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    return changed, len(a.keys() - b.keys()), len(b.keys() - a.keys())


def main(argv: list[str]) -> int:
    """``python -m tests.recording diff RECORDED FRESH``: exit 1 when an answer changed."""
    if len(argv) != 3 or argv[0] != "diff":
        print("usage: python -m tests.recording diff RECORDED.jsonl FRESH.jsonl", file=sys.stderr)
        return 2
    recorded, fresh = read(Path(argv[1])), read(Path(argv[2]))
    changed, stale, new = compare(recorded, fresh)
    same = len(recorded.keys() & fresh.keys()) - len(changed)
    print(
        f"recorded answers: {len(recorded)}; given again live: {same} identical, "
        f"{len(changed)} different; not asked this time: {stale}; asked but not recorded: {new}"
    )
    for key in changed[:5]:
        a, b = answers(recorded)[key], answers(fresh)[key]
        print(f"  {key[:12]}: recorded {a[:80]!r}\n  {'':12}  live     {b[:80]!r}")
    if not fresh:
        print("the live run cached nothing: did it run the lessons?", file=sys.stderr)
        return 1
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
