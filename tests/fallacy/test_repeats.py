"""One rule for loops: a deliberating agent's argument never says the same sentence twice.

Small models loop; the roundtable and debate drop a repeated sentence from what is spoken
(``argnb.words.drop_repeats``), and so does the fallacy deliberation, while the vote and the
confidence are recorded as answered.
"""

from __future__ import annotations

from argnb.fallacy.deliberation import Agent, deliberate
from argnb.llm import ScriptedBackend

LOOP = "It generalizes from one case."


def test_an_agents_argument_is_recorded_and_passed_on_without_a_repeated_sentence():
    looping = {
        "action": "propose",
        "reasoning": f"{LOOP} {LOOP} it generalizes from one case! So it is hasty.",
        "vote": 1,
        "confidence": 0.8,
    }
    other = {"action": "collaborate", "reasoning": "Agreed.", "vote": 1, "confidence": 0.7}
    a, b = ScriptedBackend([looping]), ScriptedBackend([other])
    r = deliberate("One car broke, so all cars are bad.", [Agent("A", a), Agent("B", b)])
    first = r.turns[0]
    assert first.text == f"{LOOP} So it is hasty."
    assert (first.payload.vote, first.payload.confidence) == (1, 0.8)
    assert r.label == 1 and r.resolution == "consensus"
    # the next speaker reads the argument as recorded: once
    assert b.requests[0].prompt.count(LOOP) == 1
