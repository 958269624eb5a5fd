"""One rule for loops: no spoken roundtable text says the same sentence twice.

Small models loop (the embedded model repeated one sentence five times in a 139-word turn, and
its analyzer's summary repeated it too). The deliberators' replies, the moderator's messages and
welcome, and the analyzer's lists are kept without repeated sentences (``argnb.words``); the
human's own words are never changed.
"""

from __future__ import annotations

from argnb.llm import ScriptedBackend
from argnb.roundtable import Session

LOOP = "I think that AI can help with that, but it should not replace human teachers."
#: the moderator's and the human's own loops (a copy of another speaker's words is the gate's
#: business, argnb.gate: tests/roundtable/test_gate.py)
STEER = "Let us weigh what each of you has said so far."
MINE = "Copying is what worries me about homework."


def looping(req):
    title = (req.schema or {}).get("title", "")
    if title == "AgendaAnswer":
        return {"scope": "AI and homework", "criteria": [], "welcome": "Welcome. Welcome."}
    if title == "ModeratorStep":
        names = req.schema["properties"]["next_speaker"]["enum"]
        message = f"Go on. Go on. {STEER} go on!"
        return {"intent": "invite", "message": message, "next_speaker": names[0]}
    if title == "RoundtableAnalysis":
        return {
            "summary": ["AI can help.", "AI can help. AI can help!", "Ann asked about copying."],
            "agreements": ["Rules help.", "rules help"],
            "open_questions": [],
            "argument_map": [],
        }
    return f"{LOOP} " * 5 + "Rules help."


def test_no_spoken_text_repeats_a_sentence_and_the_human_is_left_alone():
    b = ScriptedBackend(looping)
    s = Session(
        "AI for homework?",
        moderator=b,
        deliberators=[b],
        analyzer=b,
        human="Ann",
        turns=3,
        analyze_every=3,
    )
    s.run([f"{MINE} {MINE}"])
    said = [t for t in s.transcript.turns if t.role == "deliberator"]
    assert said and all(t.text == f"{LOOP} Rules help." for t in said)
    messages = [t.payload.message for t in s.transcript.turns if t.role == "moderator"]
    # within a step the repeats are dropped; the same line at a later step is stopped by the
    # gate (tests/roundtable/test_moderator_stream.py), so later steps have no message
    assert len(messages) > 1 and messages[0] == f"Go on. {STEER}" and not any(messages[1:])
    assert s.transcript.turns[0].text.startswith("Welcome.\n")
    a = s.analysis
    assert a.summary == ["AI can help.", "Ann asked about copying."]
    assert a.agreements == ["Rules help."]
    human = next(t for t in s.transcript.turns if t.role == "human")
    assert human.text == f"{MINE} {MINE}", "the human's words are never changed"
