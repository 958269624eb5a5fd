"""Read a roundtable transcript: who spoke, what the moderator and the rules decided, analyses.

Everything a session reports is computed here from its turns, so a saved session (or one replayed
turn by turn) gives back exactly the same views, and the roles' prompts see the same discussion
the learner sees.
"""

from __future__ import annotations

from typing import Any

from argnb.roundtable.payloads import (
    SPEAKER_KINDS,
    Agenda,
    Analysis,
    Ballot,
    Candidates,
    Contribution,
    Decision,
    End,
    HumanTurn,
    Outcome,
    Override,
    Remark,
    Revision,
    Seat,
)
from argnb.transcript import Rejected, Transcript, Turn

ACTIONS = {
    "pass": "(passes)",
    "end": "(ends the session)",
    "timeout": "(did not answer in time; invited again later)",
    "left": "(left the table)",
}

#: how much of one turn the roles read (a 150-word reply is about 900 characters)
TURN_CHARS = 1200


def _kind(cls: type) -> str:
    return cls.model_fields["kind"].default


def agenda_text(a: Agenda, welcome: str = "") -> str:
    """The opening as it is said aloud and recorded (the agenda turn's text, which the roles
    read): the moderator's welcome, then the agenda."""
    seats = [
        f"{p.name} ({p.role}{', ' + p.model if p.model else ''})"
        for p in a.participants
        if p.role != "moderator"
    ]
    parts = [welcome] if welcome else []
    parts.append(f"Agenda: {a.scope or a.topic}")
    if a.criteria:
        parts.append("Criteria: " + "; ".join(a.criteria) + ".")
    parts.append("At the table: " + ", ".join(seats) + ".")
    humans = [p.name for p in a.participants if p.role == "human"]
    every = f"; an analysis every {a.analyze_every} turns." if a.analyze_every else "."
    if len(humans) <= 1:
        human = humans[0] if humans else "the human"
        parts.append(
            f"{a.turns} turns; nobody speaks twice in a row; {human} speaks at least once in every "
            f"{a.human_every}; deliberators keep to {a.word_limit} words" + every
        )
    else:  # a room (argnb.roundtable.floor): the learners' bounds
        parts.append(
            f"{a.turns} turns; nobody speaks twice in a row; a learner speaks at least once in "
            f"every {a.human_every}, and each learner within {a.human_every} x the learners "
            f"seated; deliberators keep to {a.word_limit} words" + every
        )
    return "\n".join(parts)


def spoken_agenda(text: str) -> str:
    """The opening as the roles read it: the welcome, scope and criteria. The seats and rules
    lines are left out: every prompt's shared context states them already."""
    return text.split("\nAt the table: ")[0]


def agenda(tr: Transcript) -> Agenda | None:
    """The opening agenda, or None before the session opened."""
    turns = tr.of_kind(_kind(Agenda))
    return turns[0].payload if turns else None  # type: ignore[return-value]


def speaker_turns(tr: Transcript) -> list[Turn]:
    """Deliberator and human turns in order (a failed contribution still had the floor)."""
    return tr.of_kind(*SPEAKER_KINDS, valid=None)


def spoken(tr: Transcript, upto: int | None = None) -> list[tuple[str, str]]:
    """(speaker, text) of the speaker turns an analysis after ``upto`` of them read (all by
    default): what its map's nodes are traced to (:func:`argnb.roundtable.analyzer.trace`)."""
    out = []
    for t in speaker_turns(tr)[:upto]:
        p = t.payload
        if t.text and (
            t.valid if isinstance(p, Contribution) else getattr(p, "action", "") == "say"
        ):
            out.append((t.speaker, t.text))
    return out


def speakers(tr: Transcript) -> list[str]:
    """Who had the floor, in order (moderator messages are not turns)."""
    return [t.speaker for t in speaker_turns(tr)]


def decisions(tr: Transcript) -> list[Turn]:
    return tr.of_kind(_kind(Decision), valid=None)


def overrides(tr: Transcript) -> list[Turn]:
    return tr.of_kind(_kind(Override))


def analyses(tr: Transcript) -> list[Turn]:
    """Valid analyses, oldest first (the history of how agreement changed)."""
    return tr.of_kind(_kind(Analysis))


def latest_analysis(tr: Transcript) -> Analysis | None:
    found = analyses(tr)
    return found[-1].payload if found else None  # type: ignore[return-value]


def ended(tr: Transcript) -> End | None:
    turns = tr.of_kind(_kind(End))
    return turns[-1].payload if turns else None  # type: ignore[return-value]


def pending_speaker(tr: Transcript) -> str | None:
    """Whom the last moderator step gave the floor, when they have not spoken yet."""
    if ended(tr) is not None:
        return None
    for t in reversed(tr.turns):
        kind = t.payload.kind
        if kind in SPEAKER_KINDS:
            return None
        if kind == _kind(Decision):
            return t.payload.speaker  # type: ignore[attr-defined]
    return None


def human_name(tr: Transcript) -> str:
    a = agenda(tr)
    if a is not None:
        for p in a.participants:
            if p.role == "human":
                return p.name
    return str(tr.meta.get("human", "human"))


# -- a table of several humans (argnb.roundtable.room) -----------------------------------------
def floor_events(tr: Transcript) -> list[tuple[str, str]]:
    """The history the turn rules for several humans read (:class:`.floor.Floor`): every speaker
    turn and every seat's join, leave, hand and lower, in order."""
    out: list[tuple[str, str]] = []
    for t in tr.turns:
        p = t.payload
        if p.kind in SPEAKER_KINDS:
            out.append(("turn", t.speaker))
        elif isinstance(p, Seat) and p.action != "ready":
            out.append((p.action, t.speaker))
    return out


def humans(tr: Transcript) -> list[str]:
    """Every human who sat at the table, in the order they first sat."""
    out = [p.name for p in (agenda(tr).participants if agenda(tr) else []) if p.role == "human"]
    for t in tr.turns:
        if isinstance(t.payload, Seat | HumanTurn) and t.speaker not in out:
            out.append(t.speaker)
    return out


def seated(tr: Transcript) -> list[str]:
    """The humans seated now, in the order they sat down."""
    now: list[str] = []
    for t in tr.turns:
        p = t.payload
        if isinstance(p, Seat) and p.action == "join" and t.speaker not in now:
            now.append(t.speaker)
        elif isinstance(p, Seat) and p.action == "leave" and t.speaker in now:
            now.remove(t.speaker)
    return now


def ready(tr: Transcript) -> set[str]:
    """The seated humans who said they are ready to end (a later turn of theirs takes it back)."""
    out: set[str] = set()
    for t in tr.turns:
        p = t.payload
        if isinstance(p, Seat) and p.action == "ready":
            out.add(t.speaker)
        elif isinstance(p, HumanTurn) and p.action == "say":
            out.discard(t.speaker)
    return out & set(seated(tr))


def hands(tr: Transcript) -> list[str]:
    """The seated humans with a hand up, raised first first."""
    from argnb.roundtable.floor import Floor

    f = Floor.replay(floor_events(tr))
    return sorted(f.hands, key=lambda h: f.hands[h])


def candidates(tr: Transcript) -> Candidates | None:
    found = tr.of_kind(_kind(Candidates))
    return found[-1].payload if found else None  # type: ignore[return-value]


def ballots(tr: Transcript) -> dict[str, list[str]]:
    """Each human's ranking, in the order they were cast (one per human)."""
    return {t.speaker: list(t.payload["ranking"]) for t in tr.of_kind(_kind(Ballot))}


def outcome(tr: Transcript) -> Outcome | None:
    found = tr.of_kind(_kind(Outcome))
    return found[-1].payload if found else None  # type: ignore[return-value]


def remarks(tr: Transcript) -> list[Turn]:
    """The humans' critiques of the winning statement, passes included."""
    return tr.of_kind(_kind(Remark))


def revision(tr: Transcript) -> Revision | None:
    found = tr.of_kind(_kind(Revision), valid=None)
    return found[-1].payload if found else None  # type: ignore[return-value]


def label(tr: Transcript, turn: Turn) -> str:
    """How the discussion names a turn's speaker: "Moderator", "Deliberator 1", "Ann (human)"."""
    p = turn.payload
    if isinstance(p, HumanTurn):
        return f"{turn.speaker} (human)"
    if isinstance(p, Contribution) and p.label and p.label != turn.speaker:
        return f"{turn.speaker} ({p.label})"
    return turn.speaker


def said(tr: Transcript) -> list[tuple[Turn, str]]:
    """What was said aloud, in order: the welcome, moderator messages, contributions, the
    human's words (and passes). Rules, checks and analyses are not part of the conversation."""
    out: list[tuple[Turn, str]] = []
    for t in tr.turns:
        p = t.payload
        if isinstance(p, Agenda):
            out.append((t, spoken_agenda(t.text)))
        elif isinstance(p, Decision) and p.message:
            out.append((t, p.message))
        elif isinstance(p, Contribution) and t.valid:
            out.append((t, t.text))
        elif isinstance(p, HumanTurn):
            out.append((t, t.text if p.action == "say" else ACTIONS[p.action]))
    return out


def gated(tr: Transcript, turn: Turn) -> Rejected | None:
    """Why the gate stopped the answer behind ``turn`` (a seat's record without a usable
    answer): the rejected attempt just before it, from the same speaker, when the gate named a
    reason (:mod:`argnb.gate`); ``None`` otherwise."""
    i = next((k for k, t in enumerate(tr.turns) if t is turn), None)
    if i is None:
        i = tr.turns.index(turn) if turn in tr.turns else 0
    before = tr.turns[i - 1] if i > 0 else None
    if before is None or before.speaker != turn.speaker or before.valid:
        return None
    p = before.payload
    return p if isinstance(p, Rejected) and p.gate else None


def render_context(tr: Transcript, last: int | None = 10, jump: int = 1) -> str:
    """The conversation as the roles read it: one ``Speaker: text`` line per utterance.

    At most the ``last`` messages; the start of the window moves ``jump`` messages at a time, so
    between two jumps the text only grows at its end (a prefix the next prompt can reuse)."""
    spoken = [(t, text) for t, text in said(tr) if text]
    over = max(0, len(spoken) - last) if last is not None else 0
    skipped = min(len(spoken), -(-over // jump) * jump) if over else 0
    lines = [f"(... {skipped} earlier messages ...)"] if skipped else []
    lines += [
        f"{label(tr, t)}: {' '.join(text[: 2 * TURN_CHARS].split())[:TURN_CHARS]}"
        for t, text in spoken[skipped:]
    ]
    return "\n".join(lines) or "(nothing has been said yet)"


def summary(tr: Transcript) -> dict[str, Any]:
    """A session in one JSON-ready dict: ``turns``, ``speakers`` (who had the floor, in order;
    moderator messages excluded), ``human``, ``overrides`` and ``analyses`` (counts), the final
    ``analysis``, why it ``ended``, model ``calls`` and ``seconds``, and the mean seconds to a
    deliberator's first streamed chunk."""
    spoken = speaker_turns(tr)
    last = latest_analysis(tr)
    end = ended(tr)
    firsts = [
        t.payload.first_chunk_s
        for t in spoken
        if isinstance(t.payload, Contribution) and t.payload.first_chunk_s is not None
    ]
    return {
        "topic": tr.title,
        "turns": len(spoken),
        "speakers": [t.speaker for t in spoken],
        "human": human_name(tr),
        "overrides": len(overrides(tr)),
        "override_rules": [t.payload["rules"] for t in overrides(tr)],
        "analyses": len(analyses(tr)),
        "analysis": last.data() if last is not None else None,
        "ended": end.reason if end is not None else None,
        "calls": tr.calls,
        "seconds": round(tr.cost.latency_s, 2),
        "first_chunk_s": round(sum(firsts) / len(firsts), 3) if firsts else None,
    }
