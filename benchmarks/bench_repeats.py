"""How often the embedded model repeats a sentence inside one spoken turn or summary, and how
often the gate (:mod:`argnb.gate`) stops what it says.

    python benchmarks/bench_repeats.py [--raw] [--repeat-penalty 1.1] [--no-cache] [--out FILE.json]
        [--modules roundtable,debate,dialectic,fallacy]

Runs a 12-turn roundtable (moderator, two deliberators, analyzer every 4 turns, a scripted
human) and a 6-turn simulated debate (``llm`` on both sides, stance checks off) on the embedded
SmolLM2-135M, then counts, over every recorded spoken text -- deliberator contributions,
moderator messages, the agenda's welcome, analysis summaries, debate utterances -- the sentences
that repeat an earlier sentence of the same text (case and punctuation aside, the rule of
:func:`argnb.words.drop_repeats`). Run it on a commit before and after the rule to compare; the
model is deterministic (temperature 0), so the same commit gives the same numbers.

``--raw`` switches the rule off for the run (the roundtable's and debate's names for it are
replaced by a pass-through), so the counts are of the model's own text: how often it loops.
``--repeat-penalty`` sets llama.cpp's repetition penalty of the embedded backend (1.0 is off);
``--raw`` runs with and without it say whether the penalty makes the model loop less. The
``digest`` (SHA-256 of every turn's speaker, role, text, payload and validity, in order) compares two runs byte for byte; with
``--no-cache`` every reply comes from the model, so equal digests show the run is deterministic.

**The gate.** Every agent turn of the run (``Agent.arespond``) is counted by module and role:
answers asked for, first answers the gate stopped (with the rule: echo, schema, loop, copy,
cut), and answers stopped again after the one retry (what a learner sees marked as unusable).
``--modules`` picks the runs: the roundtable and the simulated debate above, one ``rdebater``
turn (04's live reply: logic agent, retrieval, draft, judge), the dialectic camera dialogue and
a fallacy deliberation over three arguments. Run it before and after a prompt change.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from argnb.gate import REASONS

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


def rule_off() -> None:
    """Record the model's text as written: the modules' sentence rule becomes a pass-through."""
    import argnb.debate.generate as gen
    import argnb.roundtable.analyzer as ana
    import argnb.roundtable.deliberator as dlb
    import argnb.roundtable.session as ses

    def same(text: str) -> str:
        return " ".join(text.split())

    def keep(items) -> list[str]:
        return [same(str(x)) for x in items if str(x).strip()]

    for mod in (gen, dlb, ses):
        mod.drop_repeats = same  # type: ignore[attr-defined]
    for mod in (gen, ana):
        mod.distinct = keep  # type: ignore[attr-defined]


def roundtable_texts(backend) -> tuple[dict[str, list[str]], Any]:
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
    return out, s.transcript


def debate_texts(backend) -> tuple[dict[str, list[str]], Any]:
    from argnb.debate import Debater
    from argnb.debate.simulate import simulate

    pro = Debater(backend, "llm", name="Pro", words=80)
    con = Debater(backend, "llm", name="Con", words=80)
    tr = simulate(MOTION, pro, con, turns=6, check=False, stop_when_concluded=False)
    return {"utterance": [t.text for t in tr.turns if t.role == "utterance" and t.text]}, tr


FALLACY = [
    "Everyone I know uses this app, so it must be the safest one.",
    "My grandfather smoked and lived to 95, so smoking is not dangerous.",
    "Regular exercise lowers blood pressure, so it can help people with hypertension.",
]


def rdebater_texts(backend) -> tuple[dict[str, list[str]], Any]:
    """One 04 reply: logic agent, retrieval over the example memory, draft, summary, judge."""
    from argnb.debate import Debater
    from argnb.debate.corpora import example_memory
    from argnb.debate.retrieve import Retriever
    from argnb.transcript import Transcript

    d = Debater(backend, "rdebater", Retriever(example_memory(), method="bm25", k=3), words=80)
    hist = [
        ("pro", "Closing the centre to cars cleans the air children breathe on the way to school.")
    ]
    u = d.next(MOTION, hist, stance="con")
    tr = Transcript(kind="debate", title=MOTION, turns=list(u.turns))
    return {"utterance": [u.text] if u.text else []}, tr


def dialectic_texts(backend) -> tuple[dict[str, list[str]], Any]:
    from argnb.dialectic import run_dialogue

    d = run_dialogue(backend, "camera")
    return {"turn": [t.text for t in d.transcript.turns if t.valid and t.text]}, d.transcript


def fallacy_texts(backend) -> tuple[dict[str, list[str]], Any]:
    from argnb.fallacy.deliberation import Agent, deliberate
    from argnb.transcript import Transcript

    tr = Transcript(kind="fallacy-bench", title="three arguments")
    for i, text in enumerate(FALLACY):
        r = deliberate(text, [Agent("A", backend), Agent("B", backend)], item_id=str(i))
        tr.extend(r.turns)
    return {"argument": [t.text for t in tr.turns if t.valid and t.text]}, tr


RUNS = {
    "roundtable": ("roundtable (12 turns)", roundtable_texts),
    "debate": ("debate (6 turns)", debate_texts),
    "rdebater": ("debate, one rdebater reply", rdebater_texts),
    "dialectic": ("dialectic (camera)", dialectic_texts),
    "fallacy": ("fallacy deliberation (3 arguments)", fallacy_texts),
}

#: every agent turn of the run: (module, role, the Response)
CALLS: list[tuple[str, str, Any]] = []


#: the run under way (what ``CALLS`` files each agent turn under)
RUN = {"key": ""}


def count_gate() -> None:
    """Record every agent turn's Response with the run that asked for it and its role."""
    from argnb.agents import Agent

    ask = Agent.arespond

    async def arespond(self, prompt, schema=None, **kw):
        resp = await ask(self, prompt, schema, **kw)
        role = kw.get("role", "answer")
        CALLS.append((RUN["key"], role if isinstance(role, str) else "answer", resp))
        return resp

    Agent.arespond = arespond  # type: ignore[method-assign]


def gate_table(calls: list[tuple[str, str, Any]]) -> dict[str, dict[str, Any]]:
    """By module and role: answers, first answers stopped (by rule), stopped after the retry."""
    from collections import Counter

    rows: dict[str, dict[str, Any]] = {}
    for module, role, resp in calls:
        row = rows.setdefault(
            f"{module}: {role}", {"answers": 0, "stopped": 0, "after retry": 0, "rules": Counter()}
        )
        row["answers"] += 1
        first = resp.turns[0]
        if first.role.startswith("gated"):
            row["stopped"] += 1
            row.setdefault("seen", []).append(
                {"problems": first.payload.problems, "raw": first.payload.raw[:400]}
            )
            for problem in first.payload.problems:
                for rule, reason in REASONS.items():
                    if problem.startswith(reason):
                        row["rules"][rule] += 1
        row["after retry"] += bool(resp.gated)
    for row in rows.values():
        row["share"] = round(row["stopped"] / row["answers"], 3)
        row["rules"] = dict(row["rules"])
    return rows


def fingerprint(digest: Any, transcript: Any) -> None:
    """Feed what every turn recorded (speaker, role, text, payload, valid; not the timings, ``*_s``)."""
    for t in transcript.turns:
        payload = {k: v for k, v in t.payload.data().items() if not k.endswith("_s")}
        data = [t.speaker, t.role, t.text, payload, t.valid]
        digest.update(json.dumps(data, sort_keys=True, default=str).encode())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--raw", action="store_true", help="count the model's text, the rule off")
    ap.add_argument("--repeat-penalty", type=float, help="llama.cpp's (1.0 = off)")
    ap.add_argument("--no-cache", action="store_true", help="every reply from the model")
    ap.add_argument("--examples", action="store_true", help="print what the gate stopped")
    ap.add_argument("--modules", default="roundtable,debate", help=f"of {','.join(RUNS)}")
    args = ap.parse_args()
    import argnb

    count_gate()

    if args.raw:
        rule_off()
    kw = {} if args.repeat_penalty is None else {"repeat_penalty": args.repeat_penalty}
    # deterministic; the response cache only saves time
    backend = argnb.connect("local", cache=not args.no_cache, **kw)
    rows: dict = {"backend": backend.describe(), "raw": args.raw}
    digest = hashlib.sha256()
    start = time.perf_counter()
    for key in args.modules.split(","):
        name, fn = RUNS[key.strip()]
        RUN["key"] = key.strip()
        texts_by_kind, transcript = fn(backend)
        fingerprint(digest, transcript)
        rows[f"{name}: invalid answers"] = sum(not t.valid for t in transcript.turns)
        for kind, texts in texts_by_kind.items():
            again, total = repeated(texts)
            rows[f"{name}: {kind}"] = row = {
                "texts": len(texts),
                "sentences": total,
                "repeated": again,
                "share": round(again / total, 3) if total else None,
            }
            print(f"{name + ': ' + kind:40} {row}", flush=True)
    rows["gate"] = gate_table(CALLS)
    print(f"{'the gate: module: role':40} answers  stopped  share  after retry  rules")
    for k, r in rows["gate"].items():
        for seen in r.get("seen", [])[:2] if args.examples else ():
            print(f"    {seen['problems']}\n      {seen['raw'][:200]!r}")
        print(
            f"{k:40} {r['answers']:7}  {r['stopped']:7}  {r['share']:5.2f}  {r['after retry']:11}"
            f"  {r['rules']}"
        )
    ledger = backend.ledger
    rows["model calls"] = ledger.calls()
    rows["from cache"] = ledger.calls(include_cached=True) - ledger.calls()
    rows["seconds"] = round(time.perf_counter() - start)
    rows["digest"] = digest.hexdigest()
    print(
        {k: rows[k] for k in ("backend", "raw", "model calls", "from cache", "seconds", "digest")}
    )
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
