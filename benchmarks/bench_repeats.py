"""How often the embedded model repeats a sentence inside one spoken turn or summary.

    python benchmarks/bench_repeats.py [--out FILE.json]

Runs a 12-turn roundtable (moderator, two deliberators, analyzer every 4 turns, a scripted
human) and a 6-turn simulated debate (``llm`` on both sides, stance checks off) on the embedded
SmolLM2-135M, then counts, over every recorded spoken text -- deliberator contributions,
moderator messages, the agenda's welcome, analysis summaries, debate utterances -- the sentences
that repeat an earlier sentence of the same text (case and punctuation aside, the rule of
:func:`argnb.words.drop_repeats`). Run it on a commit before and after the rule to compare; the
model is deterministic (temperature 0), so the same commit gives the same numbers.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_END = re.compile(r"(?<=[.!?…])\s+|(?<=[.!?…][\"')\]])\s+")
TOPIC = "Should students be allowed to use AI tools like ChatGPT for homework?"
MOTION = "Cities should ban private cars from their centres"
HUMAN = [
    "I use AI to get maths explained, but I worry that some friends just copy the answers.",
    "Could teachers ask us to show our steps, so copying is pointless?",
    "/pass",
    "So maybe AI is fine for explanations but not for writing the answers?",
]


def repeated(texts: list[str]) -> tuple[int, int]:
    """(sentences that repeat an earlier one of the same text, all sentences)."""
    again = total = 0
    for text in texts:
        seen: set[str] = set()
        for s in _END.split(" ".join(text.split())):
            key = re.sub(r"[^a-z0-9 ]", "", s.lower()).strip()
            if not key:
                continue
            total += 1
            again += key in seen
            seen.add(key)
    return again, total


def roundtable_texts(backend) -> dict[str, list[str]]:
    from argnb.roundtable import Session

    s = Session(
        TOPIC,
        moderator=backend,
        deliberators=[backend, backend],
        analyzer=backend,
        human="Ann",
        turns=12,
        analyze_every=4,
    )
    s.run(HUMAN)
    out: dict[str, list[str]] = {"contribution": [], "moderator": [], "welcome": [], "summary": []}
    for t in s.transcript.turns:
        p = t.payload
        if t.role == "deliberator" and t.text:
            out["contribution"].append(t.text)
        elif t.role == "moderator" and getattr(p, "message", ""):
            out["moderator"].append(p.message)
        elif t.role == "agenda" and t.text:
            out["welcome"].append(t.text.split("\n")[0])
        elif t.role == "analysis" and getattr(p, "summary", None):
            out["summary"].append(" ".join(p.summary))
    return out


def debate_texts(backend) -> dict[str, list[str]]:
    from argnb.debate import Debater
    from argnb.debate.simulate import simulate

    pro = Debater(backend, "llm", name="Pro", words=80)
    con = Debater(backend, "llm", name="Con", words=80)
    tr = simulate(MOTION, pro, con, turns=6, check=False, stop_when_concluded=False)
    return {"utterance": [t.text for t in tr.turns if t.role == "utterance" and t.text]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args()
    import argnb

    backend = argnb.connect("local")  # deterministic; the response cache only saves time
    rows = {}
    start = time.perf_counter()
    for name, fn in (
        ("roundtable (12 turns)", roundtable_texts),
        ("debate (6 turns)", debate_texts),
    ):
        for kind, texts in fn(backend).items():
            again, total = repeated(texts)
            rows[f"{name}: {kind}"] = row = {
                "texts": len(texts),
                "sentences": total,
                "repeated": again,
                "share": round(again / total, 3) if total else None,
            }
            print(f"{name + ': ' + kind:40} {row}", flush=True)
    print(f"{time.perf_counter() - start:.0f} s")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
