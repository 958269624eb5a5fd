"""The learner-debates-the-agent widget, driven from Python (the browser suite drives it in
JupyterLab)."""

from __future__ import annotations

from argnb.debate.corpora import example_memory
from argnb.debate.generate import Debater
from argnb.debate.record import utterances
from argnb.debate.retrieve import Retriever
from argnb.debate.widget import DebateWidget
from argnb.transcript import Transcript

from .test_generate import agent_of, role_backend

#: markup in a model answer (which ends with a sentence: one cut off is the gate's, argnb.gate)
EVIL = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def test_a_learner_turn_gets_a_streamed_reply_with_its_steps(tmp_path):
    b = role_backend(text=f"Shops adapt when streets are calm. {EVIL} They did in Oslo.")
    d = Debater(b, "rdebater", Retriever(example_memory(), method="bm25", k=3), name="Agent")
    w = DebateWidget(d, ["Cities should close their centres to cars"], autosave=tmp_path / "s.json")
    w.start()
    assert not w.input.disabled  # the learner argues for the motion: the learner opens
    w.send(f"Fumes harm children on their way to school. {EVIL}")
    w.wait(30)
    assert w.error is None
    said = utterances(w.transcript)
    assert [(t.speaker, t.payload.stance) for t in said] == [("You", "pro"), ("Agent", "con")]
    assert "<script>" not in w.dialogue.value and "&lt;script&gt;" in w.dialogue.value
    assert "<img" not in w.steps.value and "flaws" in w.steps.value
    assert "verdict" in w.steps.value and not w.input.disabled
    assert "Last reply (rdebater" in w.note.result_html
    saved = Transcript.load(tmp_path / "s.json")
    assert len(utterances(saved)) == 2


def test_the_agent_opens_when_the_learner_argues_against_and_empty_turns_are_refused(tmp_path):
    d = Debater(role_backend(text="Cars poison the air."), "llm", name="Agent")
    w = DebateWidget(d, ["Ban cars"], side="con", autosave=None)
    w.start()
    w.wait(30)
    assert [t.payload.stance for t in utterances(w.transcript)] == ["pro"]
    w.send("   ")
    assert "Write your argument first" in w.status.value
    assert len(utterances(w.transcript)) == 1


def test_the_reference_turn_replays_beside_start_and_the_learner_can_answer_it():
    d = Debater(role_backend(text="Shops adapt."), "llm", name="Agent")
    w = DebateWidget(d, ["Ban cars"], autosave=None)
    assert w.reference_button.description == "Replay the reference turn"
    w.replay_reference()
    w.wait(30)
    assert w.error is None
    said = utterances(w.transcript)
    assert [t.payload.stance for t in said] == ["pro", "con", "pro"] and said[-1].speaker == "Pro"
    assert "third" in said[-1].text and "Oslo" in w.dialogue.value
    assert "not produced by a model" in w.status.value
    assert "flaws" in w.steps.value and "verdict" in w.steps.value
    assert w.learner_side == "con" and not w.input.disabled  # the learner may answer it
    w.send("Oslo is not my city.")
    w.wait(30)
    assert [t.payload.stance for t in utterances(w.transcript)] == [
        "pro",
        "con",
        "pro",
        "con",
        "pro",
    ]


def test_the_live_panel_names_each_step_shows_what_it_made_and_gives_way_to_the_reply(tmp_path):
    inner = role_backend(text=f"Shops adapt when streets are calm. {EVIL} They did in Oslo.")
    panels: list[str] = []
    at_request: list[str] = []

    def answer(req):  # what the learner saw when each model call went out
        at_request.append(w.live.value)
        return inner._next(req)

    from argnb.llm import ScriptedBackend

    b = ScriptedBackend(answer)
    d = Debater(b, "rdebater", Retriever(example_memory(), method="bm25", k=3), name="Agent")
    w = DebateWidget(d, ["Cities should close their centres to cars"], autosave=None)
    w.live.observe(lambda ch: panels.append(ch["new"]), names="value")
    statuses: list[str] = []
    w.status.observe(lambda ch: statuses.append(ch["new"]), names="value")
    w.start()
    w.send(f"Fumes harm children on their way to school. {EVIL}")
    w.wait(30)
    assert w.error is None
    # before the first model call the panel already says what the agent is doing
    assert "finding your premises…" in at_request[0]
    # the logic agent's findings show as soon as they are made, under the next step's label
    kw = next(i for i, r in enumerate(b.requests) if agent_of(r) == "KeywordsAnswer")
    assert "recalling earlier debates…" in at_request[kw]
    assert "predicates: Cause(ClosingCentre, ShopsRuined)" in at_request[kw]
    assert "flaws: false dichotomy" in at_request[kw]
    streamed = [p for p in panels if "draft…" in p and "Shops adapt" in p]
    assert streamed, "the draft's words show while it is written, under its label"
    assert any("writing a draft…" in p for p in panels)
    assert "The agent is writing a draft…" in " ".join(statuses), "a sentence, not 'is draft…'"
    assert any("checking the draft…" in p for p in panels)
    assert all("<script>" not in p and "<img" not in p for p in panels)
    assert w.live.value == "" and "Shops adapt" in w.dialogue.value  # the reply replaces it
