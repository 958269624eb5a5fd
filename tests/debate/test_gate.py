"""04's agent reply was an echo of its instructions, and the judge accepted it (issue 29): a draft
the gate stops is rejected in code, before any judge sees it, and the views say why."""

from __future__ import annotations

import html

from argnb.debate.corpora import example_memory
from argnb.debate.generate import Debater
from argnb.debate.retrieve import Retriever
from argnb.debate.simulate import simulate
from argnb.debate.views import debate_html, utterance_html
from argnb.llm import ScriptedBackend
from argnb.views import GATED

from .test_generate import agent_of, role_backend

#: seen on screen in 04, marked accepted
ECHO = 'The team argues against the motion "Cities should close their centres to cars". The team argues against'
HISTORY = [("pro", "Closing the centre to cars cleans the air for children.")]


def test_an_echoed_draft_never_reaches_the_judge_and_is_shown_marked():
    b = role_backend(text=ECHO)
    d = Debater(b, "rdebater", Retriever(example_memory(), method="bm25", k=3), name="Agent")
    u = d.next("Cities should close their centres to cars", HISTORY, stance="con")
    judged = [r for r in b.requests if agent_of(r) in ("VerdictAnswer", "SummaryAnswer")]
    assert judged == [], "no judge and no summary saw the draft"
    assert u.text == "" and u.accepted is None and not u.utterance.valid
    assert u.utterance.payload.gated.startswith("the model echoed its instructions")
    drafts = [t for t in u.turns if t.role == "gated draft"]
    assert len(drafts) == 2 and all(t.payload.raw == ECHO for t in drafts)  # one retry
    assert any("the gate stopped it" in n for n in u.notes)
    page = utterance_html(u)
    assert GATED in page and "the model echoed its instructions" in page
    shown = html.unescape(page.replace("\n", " "))
    # the echo is there only inside the marked blocks (one click away)
    outside = shown
    for block in shown.split(f"<div class='{GATED}'")[1:]:
        outside = outside.replace(block.split("</details></div>")[0], "")
    assert ECHO not in outside


def test_a_retry_that_passes_the_gate_is_judged_as_usual():
    answers = iter([ECHO, "Shops in car-free streets sell more, as Oslo shows."])

    def answer(req):
        return next(answers) if agent_of(req) == "text" else role_backend()._next(req)

    d = Debater(ScriptedBackend(answer), "llm", name="Agent")
    u = d.next("Cities should close their centres to cars", HISTORY, stance="con")
    assert u.text.startswith("Shops in car-free streets") and u.utterance.valid
    assert [t.role for t in u.turns] == ["gated draft", "draft", "utterance"]


def test_a_simulated_debate_records_every_gated_turn_and_shows_it_marked():
    pro = Debater(
        role_backend(text="Clean air matters most for children, point {n}."), "llm", name="Pro"
    )
    con = Debater(role_backend(text=ECHO), "llm", name="Con")
    tr = simulate("Cities should close their centres to cars", pro, con, turns=4, check=False)
    said = [t for t in tr.turns if t.role == "utterance"]
    # the run ends as planned; a stopped turn is recorded (skipped, with the reason) and the
    # floor passes all the same: Pro speaks again (issue 35: before, Con kept the floor and Pro
    # never spoke again)
    assert [(t.payload.stance, t.valid) for t in said] == [
        ("pro", True), ("con", False), ("pro", True), ("con", False)
    ]  # fmt: skip
    assert all(t.payload.gated for t in said[1::2])
    page = debate_html(tr)
    assert page.count("no judge saw the draft") == 2 and ECHO not in html.unescape(
        page.split(f"<div class='{GATED}'")[0]
    )
    # what the model wrote is one click away in each marked turn (issue 35)
    assert page.count("show what the model wrote") >= 2 and html.escape(ECHO[:30]) in page
    # Pro's prompts never held the stopped text
    assert pro.backend.requests and ECHO[:40] not in str(pro.backend.requests)
    from argnb.debate.evaluate import DebatrixJudge

    # a side whose every turn was stopped is not judged: no model call, no winner
    judge_backend = ScriptedBackend([])
    turns = [{"stance": t.payload.stance, "text": t.text} for t in said]
    result = DebatrixJudge(judge_backend).judge(turns, topic="Cities should close their centres")
    assert result.winner is None and result.unjudged == "con has no usable turn: no winner"
    assert judge_backend.requests == [] and "not judged" in str(result)


def test_a_step_that_never_fit_its_format_shows_marked_with_the_raw_text_behind_a_click():
    """04's steps panel: an answer that did not parse is shown like a stopped one, the model's
    words (escaped) one click away, the parser's error (it may quote them) off the screen."""
    import re

    from argnb.debate.views import step_html
    from argnb.transcript import Rejected, Turn
    from argnb.views import GATED, UNREADABLE

    raw = "<script>alert(1)</script> PredicatesAnswer type':'object'"
    t = Turn(
        speaker="logic agent",
        role="invalid",
        text=raw,
        valid=False,
        payload=Rejected(error=f"Invalid JSON [input_value='{raw}']", raw=raw),
    )
    html = step_html(t)
    assert f"class='{GATED}'" in html and f"not shown as an answer: {UNREADABLE}" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    shown = re.sub(r"<details>.*?</details>", "", html, flags=re.S)
    assert "PredicatesAnswer" not in shown and "type&#x27;:" not in shown


def test_a_table_row_of_a_stopped_turn_says_why_it_is_empty():
    """04's table of methods showed empty rows for stopped drafts, with no sign why (issue 35)."""
    d = Debater(role_backend(text=ECHO), "llm", name="Agent")
    u = d.next("Cities should close their centres to cars", HISTORY, stance="con")
    assert u.text == "" and u.shown.startswith(
        "(no turn: the gate stopped the draft: the model echoed its instructions"
    )
    ok = Debater(role_backend(text="Shops in car-free streets sell more."), "llm").next(
        "Cities should close their centres to cars", HISTORY, stance="con"
    )
    assert ok.shown == ok.text == "Shops in car-free streets sell more."
