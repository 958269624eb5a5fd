"""A short session on the embedded SmolLM2-135M: the machinery holds with a real (tiny) model.

It checks structure, not quality -- the model is far too small to deliberate well."""

from __future__ import annotations

import pytest

from argnb.roundtable import Session
from argnb.roundtable.payloads import Contribution

pytestmark = pytest.mark.model


def test_a_short_session_on_the_embedded_model(local) -> None:
    chunks: list[str] = []
    s = Session(
        "Should phones be allowed in class?",
        moderator=local,
        deliberators=[local, local],
        analyzer=local,
        human="Ann",
        turns=3,
        analyze_every=3,
        word_limit=40,
        on_event=lambda e: e.kind == "chunk" and chunks.append(e.text),
    )
    s.run(["Phones help me look things up, but they distract my friends."])
    tr = s.transcript
    assert len(s.speakers) == 3 and "Ann" in s.speakers
    assert all(a != b for a, b in zip(s.speakers, s.speakers[1:], strict=False))
    for i, t in enumerate(tr.turns):
        p = t.payload
        if isinstance(p, Contribution) and t.valid:
            assert p.words <= 40 and t.calls >= 1 and t.model == "smollm2-135m"
            first_try = tr.turns[i - 1] if p.revised else t  # the chunk timed is the first try's
            assert p.first_chunk_s is not None and 0 < p.first_chunk_s <= first_try.latency_s
    assert len(chunks) > 3  # the embedded model streams its replies in pieces
    tried = tr.of_kind("roundtable.analysis", valid=None)
    assert len(tried) == 1  # valid, or recorded as unusable -- never lost
    assert tr.calls == sum(t.calls for t in tr.turns) and tr.calls >= 6
    assert s.ended is not None and s.ended.reason == "turns"
