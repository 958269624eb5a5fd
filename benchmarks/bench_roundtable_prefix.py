"""A roundtable on the embedded model with prefix reuse off and on (``make bench``).

    python benchmarks/bench_roundtable_prefix.py [turns]

Two sessions of ``turns`` speaker turns (default 12; a scripted human; an analysis every 4
turns) run side by side on one SmolLM2-135M, one with ``prefix_cache=False`` and one with
``True``. They advance one step at a time, alternately (off first on even steps, on first on odd
ones), so a load that comes and goes on a shared machine hits both alike. Reported: seconds per
speaker turn (every model call of the session, the moderator, revisions and analyses included,
divided by the turns), the median seconds to a deliberator's first streamed chunk, the median
seconds from a moderator step's start to the first streamed piece of its message and to its
recorded step (where the message showed before it streamed), the median seconds from the
human's turn (the widget's Send) to the first piece of the moderator's message that follows
(before the turn, ``Session.prewarm`` reads that step's request up to the human's line, as the
widget does while the learner types; its seconds count in the session's time and are shown),
prompt tokens restored vs evaluated, and whether both sessions recorded the very same texts.
The second table gives each step's prompt and completion tokens per call (prompt tokens are
the same off and on; "evaluated" is what the model computed with reuse on).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections import defaultdict

from _common import table
from roundtable_session import HUMAN, TOPIC  # the same session as that benchmark

from argnb.batch import run_sync


def _session(backend, turns: int, every: int, on_event=None):
    from argnb.roundtable import Session

    return Session(
        TOPIC,
        moderator=backend,
        deliberators=[backend, backend],
        analyzer=backend,
        human="Ann",
        turns=turns,
        analyze_every=every,
        on_event=on_event,
    )


class ModeratorClock:
    """Seconds from a model step's start to the moderator's first message chunk and to its
    recorded step (``on_event`` of one session; ``mark()`` before each step). A human turn and the
    moderator step after it are timed from the turn (``mark(send=True)``), as from the widget's
    Send; those times are kept apart."""

    def __init__(self) -> None:
        self.start = 0.0
        self.first: list[float] = []
        self.recorded: list[float] = []
        self.after_send: list[float] = []
        self.prewarm: list[float] = []  # seconds of Session.prewarm while the learner types
        self._seen = False
        self._send = False

    def mark(self, send: bool = False) -> None:
        self.start, self._seen, self._send = time.perf_counter(), False, send

    def __call__(self, e) -> None:
        from argnb.roundtable.payloads import Decision

        if e.kind == "chunk" and e.label == "message" and not self._seen:
            self._seen = True
            (self.after_send if self._send else self.first).append(time.perf_counter() - self.start)
        elif e.kind == "turn" and isinstance(e.turn.payload, Decision):
            if e.turn.text and not self._send:
                self.recorded.append(time.perf_counter() - self.start)
            self._send = False


def _median(xs: list[float]) -> float | str:
    return round(statistics.median(xs), 2) if xs else ""


def _step(s, script, clock: ModeratorClock) -> float:
    """One move of a session (a human turn from the script and the moderator step after it, as
    the widget runs them on Send, or one model step); its seconds."""
    start = time.perf_counter()
    if s.waiting_for_human:  # the learner types: the moderator's backend reads ahead
        s.prewarm()
        clock.prewarm.append(time.perf_counter() - start)
    clock.mark(send=s.waiting_for_human)
    if s.waiting_for_human:
        run_sync(s.asay(script(s), source="script"))
        if s.ended is None and not s.waiting_for_human:
            run_sync(s.astep())
    else:
        run_sync(s.astep())
    return time.perf_counter() - start


def _record(s) -> list[tuple]:
    """What the session recorded, timings and reuse counts left out."""
    return [
        (t.speaker, t.role, t.text, t.valid, t.usage.prompt_tokens, t.usage.completion_tokens)
        for t in s.transcript.turns
    ]


def _steps(tr) -> dict[str, list]:
    rows: dict[str, list] = defaultdict(lambda: [0, 0, 0, 0])
    for t in tr.turns:
        if t.backend:
            r = rows[t.role]
            r[0] += t.calls
            r[1] += t.usage.prompt_tokens
            r[2] += t.usage.evaluated_tokens
            r[3] += t.usage.completion_tokens
    return rows


def compare(turns: int = 12, every: int = 4) -> tuple[list[dict], list[dict]]:
    from argnb.llm import Ledger, LocalBackend
    from argnb.roundtable import record
    from argnb.roundtable.payloads import Contribution
    from argnb.roundtable.session import HumanScript

    backends = {
        "off": LocalBackend(prefix_cache=False, ledger=Ledger()),
        "on": LocalBackend(prefix_cache=True, ledger=Ledger()),
    }
    backends["on"].llm.prefix_store.clear()
    clocks = {m: ModeratorClock() for m in backends}
    sessions = {m: _session(b, turns, every, clocks[m]) for m, b in backends.items()}
    scripts = {m: HumanScript(HUMAN) for m in backends}
    wall = {"off": 0.0, "on": 0.0}
    load = os.getloadavg()[0]
    k = 0
    while any(s.ended is None for s in sessions.values()):
        for m in ("off", "on") if k % 2 == 0 else ("on", "off"):
            if sessions[m].ended is None:
                wall[m] += _step(sessions[m], scripts[m], clocks[m])
        k += 1
    load = max(load, os.getloadavg()[0])
    same = _record(sessions["off"]) == _record(sessions["on"])
    model = backends["on"].model
    rows = []
    for m, s in sessions.items():
        tr = s.transcript
        firsts = [
            t.payload.first_chunk_s
            for t in record.speaker_turns(tr)
            if isinstance(t.payload, Contribution) and t.payload.first_chunk_s is not None
        ]
        used = [t.usage for t in tr.turns if t.backend]
        rows.append(
            {
                "prefix reuse": m,
                "backend, model": f"local, {model}",
                "turns": len(s.speakers),
                "calls": tr.calls,
                "s per speaker turn": round(wall[m] / max(1, len(s.speakers)), 1),
                "first chunk s (median)": _median(firsts),
                "moderator message s: first chunk/recorded (median)": (
                    f"{_median(clocks[m].first)}/{_median(clocks[m].recorded)}"
                ),
                "after Send: first message chunk s (median, n)": (
                    f"{_median(clocks[m].after_send)} ({len(clocks[m].after_send)})"
                ),
                "read ahead while typing s (median)": _median(clocks[m].prewarm),
                "prompt tokens evaluated/restored": (
                    f"{sum(u.evaluated_tokens for u in used)}/{sum(u.reused_tokens for u in used)}"
                ),
                "same texts": same if m == "on" else "",
                "target": "first chunk < 1 s, turn >= 2x faster" if m == "on" else "",
                "load": f"{load:.1f} (shared machine)" if m == "off" else "",
            }
        )
    off, on = rows
    ratio = float(off["s per speaker turn"]) / max(0.01, float(on["s per speaker turn"]))
    on["speedup"] = f"{ratio:.2f}x"
    off["speedup"] = ""
    steps_off, steps_on = _steps(sessions["off"].transcript), _steps(sessions["on"].transcript)
    per_step = []
    for role, (calls, prompt, evaluated, completion) in steps_on.items():
        per_step.append(
            {
                "step": role,
                "calls": calls,
                "prompt/call": round(prompt / calls),
                "evaluated/call, reuse on": round(evaluated / calls),
                "completion/call": round(completion / calls),
                "completion/call, reuse off": (
                    round(steps_off[role][3] / steps_off[role][0]) if role in steps_off else ""
                ),
            }
        )
    return rows, per_step


def run() -> list[dict]:
    return compare()[0]


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    rows, per_step = compare(n)
    print(table(f"roundtable, {n} turns on the embedded model, prefix reuse off vs on", rows))
    print(table("roundtable tokens per step (prompt tokens are the same off and on)", per_step))
