"""A debate turn on the embedded model: prefix reuse on gives the very same turn as reuse off.

The turn's agents share one prompt prefix (:mod:`argnb.debate.context`); the local backend
restores its saved KV state instead of reading it again. Reuse must never change one byte of
what a lesson shows, and it must really happen (most of the turn's prompt tokens restored).
"""

from __future__ import annotations

import json

import pytest

from argnb.debate.corpora import example_memory
from argnb.debate.generate import Debater
from argnb.debate.retrieve import Retriever
from argnb.llm import Ledger, LocalBackend

TOPIC = "Cities should ban private cars from their centres"
HISTORY = [
    ("pro", "Cars fill our city centres with fumes, and children breathe them on the way to "
            "school. Cities that closed their centres saw cleaner air within a year, and the "
            "streets became places where people walk, sit and talk instead of waiting at lights. "
            "Noise fell, accidents fell, and the money spent on parking went to parks and buses."),
    ("con", "Close the centre to cars and the shops there will die: either we keep cars or we "
            "lose the high street. Older people and disabled drivers would be shut out, and "
            "families who shop once a week for everything cannot carry it home on a bus. The "
            "traffic does not vanish either: it moves to the ring road and the suburbs."),
    ("pro", "Shops live on people who walk past them, not on cars that drive past them. Where "
            "streets were closed to traffic, footfall rose and empty units filled again. Blue "
            "badge holders and deliveries can keep their access, so nobody is shut out."),
    ("con", "A rise in footfall in one tourist street proves nothing about a market town. "
            "Buses are slow and rare outside the big cities, so a ban punishes the people "
            "who have no other way in, while the rich simply shop elsewhere."),
]  # fmt: skip


def said(turns) -> list[tuple]:
    """What each step of the turn said (token counts and timings left out)."""
    return [
        (t.speaker, t.role, t.text, json.dumps(t.payload.model_dump(), sort_keys=True))
        for t in turns
    ]


@pytest.mark.model
@pytest.mark.full  # make test-all only (docs/testing.md)
def test_a_debate_turn_with_prefix_reuse_is_byte_identical_and_reuses_most_of_its_prompt(local):
    warm = LocalBackend(prefix_cache=True, ledger=Ledger())
    cold = LocalBackend(prefix_cache=False, ledger=Ledger())
    assert warm.llm is cold.llm == local.llm  # one model: only the cache use differs
    warm.llm.prefix_store.clear()
    retriever = Retriever(example_memory(), method="bm25", k=3)
    turns = {}
    for name, backend in (("cold", cold), ("warm", warm)):
        # a short turn (two turns of history, a 20-word draft): the machinery, not the text
        d = Debater(backend, "rdebater", retriever, max_revisions=1, words=20, same_motion=True)
        turns[name] = d.next(TOPIC, HISTORY[:2], stance="pro").turns
    assert said(turns["warm"]) == said(turns["cold"])
    used = [t for t in turns["warm"] if t.usage.prompt_tokens]
    assert len(used) >= 6  # logic, keywords, draft, summary, verdict at least
    prompt = sum(t.usage.prompt_tokens for t in used)
    restored = sum(t.usage.reused_tokens for t in used)
    assert all(t.usage.reused_tokens == 0 for t in turns["cold"])
    assert prompt == sum(t.usage.prompt_tokens for t in turns["cold"])
    # every call after the first starts with the context the earlier ones already read
    assert restored > prompt / 2, f"only {restored} of {prompt} prompt tokens restored"
    assert all(t.usage.reused_tokens > 0 for t in used[1:])


@pytest.mark.model
@pytest.mark.parametrize("switch", ["0", "1"])
def test_argnb_debate_next_honours_argnb_prefix_cache(local, tmp_path, capsys, monkeypatch, switch):
    """The CLI builds its local backend through connect: the switch reaches the run."""
    from argnb.cli import main

    rows = [
        {"debate_id": d, "topic": TOPIC, "turn": n, "stance": s, "speaker": s, "text": x}
        for d in ("a", "b")
        for n, (s, x) in enumerate(
            [*HISTORY[:2], ("pro", f"In debate {d} the buses carry everyone who needs to come in.")]
        )
    ]
    debates = tmp_path / "debates.jsonl"
    debates.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    monkeypatch.setenv("ARGNB_PREFIX_CACHE", switch)
    argv = ["debate", "next", "--debates", str(debates), "--cut", "2", "--method", "llm"]
    argv += ["--backend", "local", "--words", "20", "--no-stance-check", "--json", "--quiet"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 2 and out["prompt_tokens_per_utterance"] > 200
    # two items with the same motion and history: the second restores the first one's prefix
    reused = out["reused_tokens_per_utterance"]
    assert reused == 0 if switch == "0" else reused > 0
