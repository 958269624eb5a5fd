"""The fallacy protocols on the real embedded model (slower: marked ``model``)."""

from __future__ import annotations

import pytest

from argnb.fallacy import Agent, Baseline, Ensemble, deliberate
from argnb.fallacy.protocol import RESOLUTIONS

ARG = "My grandfather smoked every day and lived to 97, so smoking cannot be that bad for you."


@pytest.mark.model
@pytest.mark.parametrize("method", ["zero", "few", pytest.param("cot", marks=pytest.mark.full)])
def test_baselines_on_the_embedded_model_are_reproducible(local, method):
    a = Baseline(method, local).run(ARG)
    b = Baseline(method, local).run(ARG)
    assert a.label in (0, 1, "invalid")
    assert a.calls >= 1 and a.usage.prompt_tokens > 0
    assert (a.label, a.raw) == (b.label, b.raw)


@pytest.mark.model
def test_deliberation_and_ensemble_finish_on_the_embedded_model(local):
    r = deliberate(ARG, [Agent("Ada", local), Agent("Bo", local)], max_rounds=2)
    assert r.resolution in RESOLUTIONS and 1 <= r.rounds <= 2
    assert len(r.transcript.turns) == 2 * r.rounds
    e = Ensemble(Baseline("zero", local), Baseline("few", local), max_rounds=2).run(ARG)
    assert e.label in (0, 1, "invalid") and e.calls >= 2
