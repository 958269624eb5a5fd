"""A short session on the embedded SmolLM2-135M: the machinery holds with a real (tiny) model.

It checks structure, not quality -- the model is far too small to deliberate well."""

from __future__ import annotations

import pytest

from argnb.llm import Options
from argnb.roundtable import Session
from argnb.roundtable.payloads import Contribution

pytestmark = pytest.mark.model


HUMAN = ["Phones help me look things up, but they distract my friends."]
WORDS = 30
ANALYSIS_TOKENS = 100


def _table(backend, chunks: list[str]) -> Session:
    s = Session(
        "Should phones be allowed in class?",
        moderator=backend,
        deliberators=[backend, backend],
        analyzer=backend,
        human="Ann",
        turns=3,
        analyze_every=3,
        word_limit=WORDS,
        on_event=lambda e: e.kind == "chunk" and chunks.append(e.text),
    )
    # the analysis is checked for being tried and recorded (valid or not), not for its content:
    # a shorter budget than a class's (1,100 tokens) keeps the session to a minute
    s.analyzer.options = Options(max_tokens=ANALYSIS_TOKENS)  # type: ignore[union-attr]
    return s


@pytest.fixture(scope="module")
def warm(local) -> dict:
    """The short session with prefix reuse on (the default), and its streamed chunks."""
    from argnb.llm import Ledger, LocalBackend

    backend = LocalBackend(prefix_cache=True, ledger=Ledger())
    assert backend.llm is local.llm  # one model for the module
    backend.llm.prefix_store.clear()
    chunks: list[str] = []
    return {"on": _table(backend, chunks).run(HUMAN), "chunks": chunks}


@pytest.fixture(scope="module")
def sessions(local, warm) -> dict:
    """The same session again with prefix reuse off (only the comparison below needs it)."""
    from argnb.llm import Ledger, LocalBackend

    cold = LocalBackend(prefix_cache=False, ledger=Ledger())
    assert cold.llm is local.llm  # one model: only the cache use differs
    return {**warm, "off": _table(cold, []).run(HUMAN)}


def test_a_short_session_on_the_embedded_model(warm) -> None:
    s, chunks = warm["on"], warm["chunks"]
    tr = s.transcript
    assert len(s.speakers) == 3 and "Ann" in s.speakers
    assert all(a != b for a, b in zip(s.speakers, s.speakers[1:], strict=False))
    for i, t in enumerate(tr.turns):
        p = t.payload
        if isinstance(p, Contribution) and t.valid:
            assert p.words <= WORDS and t.calls >= 1 and t.model == "smollm2-135m"
            first_try = tr.turns[i - 1] if p.revised else t  # the chunk timed is the first try's
            assert p.first_chunk_s is not None and 0 < p.first_chunk_s <= first_try.latency_s
    assert len(chunks) > 3  # the embedded model streams its replies in pieces
    tried = tr.of_kind("roundtable.analysis", valid=None)
    assert len(tried) == 1  # valid, or recorded as unusable -- never lost
    assert tr.calls == sum(t.calls for t in tr.turns) and tr.calls >= 6
    assert s.ended is not None and s.ended.reason == "turns"


def _record(s: Session) -> list[tuple]:
    """Every turn as recorded, timings and the reuse count left out (they always differ)."""
    out = []
    for t in s.transcript.turns:
        p = t.payload.model_dump(exclude={"first_chunk_s"})
        u = t.usage
        out.append((t.speaker, t.role, t.text, t.valid, p, u.prompt_tokens, u.completion_tokens))
    return out


@pytest.mark.full  # make test-all only: a second whole session (docs/testing.md)
def test_prefix_reuse_gives_a_byte_identical_session_and_reuses_most_prompt_tokens(
    sessions,
) -> None:
    off, on = sessions["off"], sessions["on"]
    assert _record(on) == _record(off)
    assert all(t.usage.reused_tokens == 0 for t in off.transcript.turns)
    # the calls made (a seat's unusable turn, recorded after the gate stopped it twice, made none)
    used = [t.usage for t in on.transcript.turns if t.calls]
    assert len(used) >= 7  # agenda, 2 moderator steps, 2 contributions, 1 analysis, ...
    # every call after the agenda finds at least the system text and the context's header
    # (whole 64-token blocks) saved by the call before it; a seat's own task is always new
    assert used[0].reused_tokens == 0 and all(u.reused_tokens >= 64 for u in used[1:])
    reused = sum(u.reused_tokens for u in used)
    prompt = sum(u.prompt_tokens for u in used)
    assert reused >= prompt // 4, f"only {reused} of {prompt} prompt tokens reused"
