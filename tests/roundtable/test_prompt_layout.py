"""Every seat of a roundtable step sends the same system text and shared context first, and the
context grows at its end from step to step: the layout a local model's prefix cache reuses."""

from __future__ import annotations

import itertools

import pytest

from argnb.prompts import TASK_MARK
from argnb.roundtable import Session
from argnb.roundtable.testing import table_backend


def _requests(context_turns: int = 24, turns: int = 6):
    """One scripted backend in every seat: its requests are the session's calls in order."""
    b = table_backend(words=170)  # too long: every contribution is revised once
    s = Session(
        "Should phones be allowed in class?",
        moderator=b,
        deliberators=[b, b],
        analyzer=b,
        human="Ann",
        turns=turns,
        analyze_every=2,
        word_limit=60,
        perspectives=["a teacher", "a parent"],
        context_turns=context_turns,
    )
    s.run(["Phones help me look things up.", "/pass"])
    return s, b.requests


def _split(req) -> tuple[str, str, str]:
    """(system text, shared context, task) of a request's first user message."""
    system, first = req.messages[0], req.messages[1]
    assert system.role == "system" and first.role == "user"
    context, task = first.content.split(f"\n\n{TASK_MARK}\n")
    return system.content, context, task


def test_every_seat_starts_with_the_same_system_text_and_its_task_comes_last():
    _, reqs = _requests()
    roles = {r.schema.get("title") if r.schema else "contribution" for r in reqs}
    assert roles == {"AgendaAnswer", "ModeratorStep", "RoundtableAnalysis", "contribution"}
    systems = {_split(r)[0] for r in reqs}
    assert len(systems) == 1  # the moderator, both deliberators and the analyzer
    for r in reqs:
        _, context, task = _split(r)
        assert context.startswith("Question under discussion: Should phones")
        assert "JSON schema" not in context and "You are" not in context
        if r.schema:  # the schema note joins the task, after the shared prefix
            assert task.rstrip().endswith("}") and "JSON schema" in task
    tasks = [_split(r)[2] for r in reqs if not r.schema]
    assert any("a teacher" in t for t in tasks) and any("a parent" in t for t in tasks)
    # a revision only appends to the conversation: the first request is its prefix
    revised = [r for r in reqs if any(m.role == "assistant" for m in r.messages)]
    assert revised and all(r.messages[2].role == "assistant" for r in revised)
    # the moderator's step after the human's turn sends her line in a message of its own, after
    # the task (what Session.prewarm read ahead while she typed); every other call has one
    latest = [r for r in reqs if len(r.messages) == 3 and r.messages[2].role == "user"]
    assert any("Phones help me look things up" in r.messages[2].content for r in latest)
    for r in latest:
        assert r.schema["title"] == "ModeratorStep" and r.messages[2].content.startswith("Ann")
        assert "next message" in _split(r)[2]  # the task says where the newest line is
    assert all(len(r.messages) == 2 for r in reqs if r not in revised and r not in latest)


def test_the_shared_context_only_grows_at_its_end_from_call_to_call():
    _, reqs = _requests()
    contexts = [_split(r)[1] for r in reqs]
    for before, after in itertools.pairwise(contexts):
        kept = before.split("\n\nNote: ")[0]  # a fallacy note closes one step and then goes
        assert after.startswith(kept)
    assert len(contexts[-1]) > 3 * len(contexts[0])  # it did grow: the whole discussion


@pytest.mark.parametrize("window", [4, 6])
def test_a_narrow_window_moves_in_jumps_so_most_calls_still_share_the_last_context(window):
    _, reqs = _requests(context_turns=window, turns=8)
    contexts = [_split(r)[1] for r in reqs]
    lines = [c.split("The discussion so far:")[1].strip().splitlines() for c in contexts]
    assert max(len([x for x in ls if not x.startswith("(")]) for ls in lines) <= window
    assert lines[-1][0].startswith("(... ") and "earlier messages" in lines[-1][0]
    broken = sum(not b.startswith(a) for a, b in itertools.pairwise(contexts))
    starts = len({ls[0] for ls in lines if ls})  # each first line: one position of the window
    # the prefix breaks only where the window jumps, and most calls extend the previous one
    assert 0 < broken <= starts < len(contexts) // 2
