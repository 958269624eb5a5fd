"""Every agent of one debate turn starts its prompt with the same bytes (prefix reuse)."""

from __future__ import annotations

from argnb.debate.context import TurnContext
from argnb.debate.corpora import example_memory
from argnb.debate.generate import Debater
from argnb.debate.retrieve import Retriever
from argnb.prompts import TASK_MARK

from .test_generate import HISTORY, TOPIC, agent_of, role_backend


def _shared(a: str, b: str) -> int:
    """Characters two prompts share from the start."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))


def test_every_agent_of_a_turn_shares_the_system_text_and_the_context_before_its_task():
    b = role_backend(accept=lambda n: n > 1)  # one rejection: the reviser runs too
    retriever = Retriever(example_memory(), method="bm25", k=3)
    u = Debater(b, "rdebater", retriever, max_revisions=1).next(TOPIC, HISTORY)
    assert u.revisions == 1
    base = TurnContext.of(TOPIC, "pro", HISTORY)
    systems = {r.messages[0].content for r in b.requests}
    assert systems == {base.system}, "one system text for every agent (schema notes go after)"
    users = [(agent_of(r), r.messages[1].content) for r in b.requests]
    assert len(users) == 10 and all(m.startswith(base.text + "\n\n") for _, m in users)
    # the context grows by appending: from the draft on, the flaws and the evidence are shared
    draft = next(m for who, m in users if who == "text")
    context = draft.split(TASK_MARK)[0]
    assert "Weak points found" in context and "Passages that worked" in context
    later = users[users.index(("text", draft)) + 1 :]
    assert all(m.startswith(context) for _, m in later)
    # the summary, the judge and the reviser share the candidate too; only the task differs
    judged = [m for who, m in later if who in ("SummaryAnswer", "VerdictAnswer")][:2]
    assert "The team's candidate turn" in judged[0].split(TASK_MARK)[0]
    assert _shared(*judged) >= judged[0].index(TASK_MARK) + len(TASK_MARK)
    # the structured answers' schema note ends the task instead of changing the system text
    assert all(m.rstrip().endswith("}") for who, m in users if who != "text")
