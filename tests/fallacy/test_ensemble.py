"""The agreement ensemble: deliberate exactly on the disagreements."""

from __future__ import annotations

import pytest

from argnb.errors import ArgnbError
from argnb.fallacy.baselines import Baseline
from argnb.fallacy.deliberation import Agent
from argnb.fallacy.ensemble import Ensemble
from argnb.llm import ScriptedBackend

TEXT = "Nobody has proved ghosts do not exist, so they exist."


def contribution(vote, confidence=0.8):
    return {"action": "argue", "reasoning": "r", "vote": vote, "confidence": confidence}


def members(a_answers, b_answers):
    return (
        Baseline("zero", ScriptedBackend(a_answers, model="ma")),
        Baseline("few", ScriptedBackend(b_answers, model="mb")),
    )


def test_agreement_needs_no_deliberation():
    a, b = members([{"label": 1}], [{"label": 1}])
    agents = [Agent("X", ScriptedBackend([])), Agent("Y", ScriptedBackend([]))]
    r = Ensemble(a, b, agents=agents).run(TEXT, item_id="i1")
    assert (r.label, r.resolution, r.agree, r.disagree, r.calls) == (1, "agreement", True, False, 2)
    assert r.deliberation is None and r.label_random == 1
    assert len(r.transcript.turns) == 2


def test_disagreement_goes_to_deliberation_between_the_member_backends():
    a, b = members([{"label": 1}, contribution(0, 0.6)], [{"label": 0}, contribution(0, 0.9)])
    r = Ensemble(a, b).run(TEXT, item_id="i2")
    assert (r.label, r.resolution, r.rounds) == (0, "consensus", 1)
    assert r.disagree and r.calls == 4
    # default agents: one per member backend, each deliberating on its own model
    assert len(a.backend.requests) == 2 and len(b.backend.requests) == 2
    roles = [t.role for t in r.transcript.turns]
    assert roles == ["zero-shot", "few-shot", "argue", "argue"]
    assert r.transcript.outcome["members"] == [1, 0]
    assert r.label_random in (0, 1)


def test_explicit_agents_and_the_random_resolver():
    a, b = members([{"label": 1}], [{"label": 0}])
    x, y = ScriptedBackend([]), ScriptedBackend([])
    r = Ensemble(a, b, agents=[Agent("X", x), Agent("Y", y)], resolver="random", seed=3).run(
        TEXT, item_id="i3"
    )
    assert r.resolution == "random" and r.label == r.label_random
    assert x.requests == [] and y.requests == [], "the random resolver calls no model"
    picks = set()
    for k in range(20):
        a, b = members([{"label": 1}], [{"label": 0}])
        picks.add(Ensemble(a, b, resolver="random", seed=3).run(TEXT, item_id=f"k{k}").label)
    assert picks == {0, 1}


def test_one_invalid_member_lets_the_other_stand():
    a, b = members(["garbage", "garbage"], [{"label": 0}])
    r = Ensemble(a, b).run(TEXT)
    assert (r.label, r.resolution, r.agree, r.disagree) == (0, "single_valid", False, False)


def test_two_invalid_members_are_invalid():
    a, b = members(["x", "y"], ["z", "w"])
    r = Ensemble(a, b).run(TEXT)
    assert (r.label, r.resolution) == ("invalid", "invalid")
    assert r.calls == 4


def test_unknown_resolver():
    a, b = members([], [])
    with pytest.raises(ArgnbError):
        Ensemble(a, b, resolver="vote")
