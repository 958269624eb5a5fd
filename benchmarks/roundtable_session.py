"""A roundtable session, measured.

    python benchmarks/roundtable_session.py            # the protocol alone (scripted models)
    python benchmarks/roundtable_session.py --model    # + a 12-turn session on the embedded model

1. Protocol overhead: a 60-turn session on scripted backends that answer instantly (moderator,
   two deliberators -- one always too long, so every other turn is revised and cut -- and an
   analysis every 4 turns), so the time is prompts, schemas, rule checks, the transcript and
   its views. Target: < 5 ms per model call (a real call takes 0.3 s to seconds).
2. ``--model``: 12 speaker turns on the embedded SmolLM2-135M (local backend, prefix reuse as
   ``$ARGNB_PREFIX_CACHE`` says; ``bench_roundtable_prefix.py`` compares off and on) with a
   scripted human: the speaker sequence, overrides, analyses, seconds per speaker turn and per
   role, and the time to a deliberator's first streamed chunk (without streaming support in the
   backend the "first chunk" is the whole reply).
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from _common import table

HUMAN = [
    "I use AI to get maths explained, but I worry that some friends just copy the answers.",
    "Could teachers ask us to show our steps, so copying is pointless?",
    "/pass",
    "So maybe AI is fine for explanations but not for writing the answers?",
]
TOPIC = "Should students be allowed to use AI tools like ChatGPT for homework?"


def _session(moderator, deliberators, analyzer, turns, every):
    from argnb.roundtable import Session

    return Session(
        TOPIC,
        moderator=moderator,
        deliberators=deliberators,
        analyzer=analyzer,
        human="Ann",
        turns=turns,
        analyze_every=every,
    )


def protocol() -> list[dict]:
    from argnb.roundtable.testing import table_backend

    def table(turns: int):
        return _session(
            table_backend(), [table_backend(words=170), table_backend()], table_backend(), turns, 4
        )

    table(4).run(HUMAN)  # warm up: lazy imports are not the protocol's cost
    s = table(60)
    start = time.perf_counter()
    s.run(HUMAN * 10)
    seconds = time.perf_counter() - start
    calls = s.transcript.calls
    return [
        {
            "session": "60 turns, scripted",
            "calls": calls,
            "turns recorded": len(s.transcript.turns),
            "overrides": len(s.overrides),
            "ms per call": round(1000 * seconds / calls, 2),
            "target": "< 5",
        }
    ]


def embedded(turns: int = 12, every: int = 4) -> tuple[list[dict], dict]:
    import os

    from argnb.llm import LocalBackend
    from argnb.roundtable import record
    from argnb.roundtable.payloads import Analysis, Contribution, Decision

    b = LocalBackend()
    s = _session(b, [b, b], b, turns, every)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    s.run(HUMAN)
    wall = time.perf_counter() - start
    tr = s.transcript

    def seconds(cls) -> list[float]:
        return [t.latency_s for t in tr.turns if isinstance(t.payload, cls) and t.backend]

    contributions = [
        t.payload for t in record.speaker_turns(tr) if isinstance(t.payload, Contribution)
    ]
    firsts = [c.first_chunk_s for c in contributions if c.first_chunk_s is not None]
    delib = []  # a contribution plus the too-long reply it revised, if any
    for i, t in enumerate(tr.turns):
        if isinstance(t.payload, Contribution) and t.valid:
            before = tr.turns[i - 1]
            revised = before.speaker == t.speaker and before.payload.kind == "rejected"
            delib.append(t.latency_s + (before.latency_s if revised else 0.0))
    rows = [
        {
            "what": "whole session",
            "n": turns,
            "seconds": round(wall, 1),
            "per speaker turn": round(wall / turns, 1),
        },
        {
            "what": "moderator step",
            "n": len(seconds(Decision)),
            "seconds": round(sum(seconds(Decision)), 1),
            "per speaker turn": round(statistics.mean(seconds(Decision)), 2),
        },
        {
            "what": "deliberator turn (with revision)",
            "n": len(delib),
            "seconds": round(sum(delib), 1),
            "per speaker turn": round(statistics.mean(delib), 2) if delib else "",
        },
        {
            "what": "analysis",
            "n": len(seconds(Analysis)),
            "seconds": round(sum(seconds(Analysis)), 1),
            "per speaker turn": round(statistics.mean(seconds(Analysis)), 2)
            if seconds(Analysis)
            else "",
        },
        {
            "what": "time to first chunk",
            "n": len(firsts),
            "seconds": round(statistics.median(firsts), 2) if firsts else "",
            "per speaker turn": "median",
        },
    ]
    summary = s.summary()
    summary["load_average_at_start"] = round(load, 2)
    summary["revised"] = sum(c.revised for c in contributions)
    summary["cut"] = sum(c.cut for c in contributions)
    summary["streaming"] = hasattr(b, "astream")
    return rows, summary


def run() -> list[dict]:
    return protocol()


if __name__ == "__main__":
    print(table("roundtable protocol (scripted models)", protocol()))
    if "--model" in sys.argv:
        rows, summary = embedded()
        print(table("roundtable: 12 turns on the embedded SmolLM2-135M, scripted human", rows))
        print(json.dumps(summary, indent=1, ensure_ascii=False))
