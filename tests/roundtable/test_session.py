"""Headless sessions: what the record holds, the word limit, the human's moves, failures, the
fallacy flag, streaming, saving and replay."""

from __future__ import annotations

import json

import pytest

from argnb.errors import ArgnbError
from argnb.fallacy.baselines import Baseline
from argnb.llm.scripted import ScriptedBackend
from argnb.prompts import TASK_MARK
from argnb.roundtable import record
from argnb.roundtable.payloads import Analysis, Contribution, Decision, Override
from argnb.roundtable.rules import NO_ANSWER, NO_REPEAT
from argnb.roundtable.session import HumanScript, load_session, read_script, replay
from argnb.roundtable.testing import table_backend
from argnb.transcript import Transcript
from argnb.words import count_words, cut_to_words


def kinds(s) -> list[str]:
    return [t.payload.kind.split(".")[-1] for t in s.transcript.turns]


def test_a_headless_session_records_every_step(make_session) -> None:
    s = make_session().run(["Phones help me look things up.", "/pass"])
    k = kinds(s)
    assert k[0] == "agenda" and k[-1] == "end"
    assert s.speakers == ["Deliberator 1", "Deliberator 2", "Ann"] * 2
    # one moderator decision before every speaker turn, and nothing speaks without one
    decisions = record.decisions(s.transcript)
    assert [d.payload.speaker for d in decisions] == s.speakers
    assert len(s.analyses) == 2 and [a.upto for a in s.analyses] == [3, 6]
    assert s.ended.reason == "turns" and s.ended.turns == 6
    agenda = s.agenda
    assert agenda.topic == "Should phones be allowed in class?" and agenda.turns == 6
    assert [p.role for p in agenda.participants] == [
        "moderator",
        "deliberator",
        "deliberator",
        "human",
        "analyzer",
    ]
    summary = s.summary()
    assert {"turns", "speakers", "human", "overrides", "analyses", "analysis"} <= set(summary)
    assert summary["turns"] == 6 and summary["human"] == "Ann"
    assert summary["overrides"] == len(s.overrides) == 2  # the script names D1 when Ann is due
    json.dumps(summary)


def test_overrides_are_recorded_with_the_rule(make_session) -> None:
    s = make_session(moderator=table_backend(lambda req: "Deliberator 1")).run(["ok"] * 3)
    rules = [o.rules for o in s.overrides]
    assert [NO_REPEAT] in rules and ["human-every-3"] in rules
    turns = record.overrides(s.transcript)
    assert all(t.speaker == "turn rules" and "Override:" in t.text for t in turns)
    # the override sits right after the decision it overrode
    idx = [s.transcript.turns.index(t) for t in turns]
    assert all(isinstance(s.transcript.turns[i - 1].payload, Decision) for i in idx)


def test_an_unusable_moderator_answer_is_overridden_and_its_cost_kept(make_session) -> None:
    def moderator(req):
        if (req.schema or {}).get("title") == "ModeratorStep":
            return "I cannot decide."
        return table_backend()._fn(req)  # type: ignore[misc]

    s = make_session(moderator=ScriptedBackend(moderator), turns=3).run(["fine"])
    assert all(o.rules == [NO_ANSWER] for o in s.overrides) and len(s.overrides) == 3
    assert s.speakers == ["Deliberator 1", "Deliberator 2", "Ann"]
    rejected = [t for t in s.transcript.turns if not t.valid and t.speaker == "Moderator"]
    assert rejected and sum(t.calls for t in rejected) == 6  # each step: answer + schema repair
    assert s.transcript.calls == sum(t.calls for t in s.transcript.turns)


def test_a_long_reply_is_revised_once_then_cut_at_a_sentence_end(make_session) -> None:
    s = make_session(deliberators=[table_backend(words=170), table_backend(words=20)], turns=2)
    s.run([])
    first, second = record.speaker_turns(s.transcript)
    p = first.payload
    assert isinstance(p, Contribution) and p.revised and p.cut and p.words_before_cut > 150
    assert p.words == count_words(first.text) <= 150 and first.text.endswith(".")
    rejected = s.transcript.turns[s.transcript.turns.index(first) - 1]
    assert not rejected.valid and "words, but the limit is 150" in rejected.text
    assert first.calls == 1 and rejected.calls == 1
    q = second.payload
    assert not q.revised and not q.cut and q.words_before_cut is None


def test_a_revision_that_fits_is_kept_whole(make_session) -> None:
    # too long, not a loop (one word 200 times is the gate's, argnb.gate)
    answers = iter([" ".join(f"point{i}" for i in range(200)) + ".", "Short and clear."])
    d = ScriptedBackend(lambda req: next(answers))
    s = make_session(deliberators=[d, table_backend()], turns=1).run([])
    p = record.speaker_turns(s.transcript)[0].payload
    assert p.revised and not p.cut and p.words == 3


@pytest.mark.parametrize(
    "text, limit, expected",
    [
        ("One. Two three. Four five six.", 3, "One. Two three."),
        ('Ends with a quote." Next one here.', 4, 'Ends with a quote."'),
        ("no punctuation at all here", 3, "no punctuation at…"),
        ("Fits.", 150, "Fits."),
    ],
)
def test_cut_to_words(text, limit, expected) -> None:
    assert cut_to_words(text, limit) == expected
    assert count_words(cut_to_words(text, limit).rstrip("…")) <= limit


def test_the_human_can_pass_and_end(make_session) -> None:
    s = make_session(turns=12).run(["/pass", "/end"])
    actions = [t.payload.action for t in s.transcript.turns if t.payload.kind == "roundtable.human"]
    assert actions == ["pass", "end"]
    assert s.ended.reason == "human" and s.ended.turns == 6
    assert s.analyses[-1].trigger == "final" and s.analyses[-1].upto == 6
    assert "(passes)" in record.render_context(s.transcript)


def test_human_turns_only_when_due_and_bounded(make_session) -> None:
    s = make_session()
    with pytest.raises(ArgnbError, match="not Ann's turn"):
        s.say("hello")
    s.advance()
    assert s.waiting_for_human
    before = len(s.transcript)
    with pytest.raises(ArgnbError, match="at most 2000"):
        s.say("x" * 2001)
    assert len(s.transcript) == before and s.waiting_for_human  # nothing lost, still her turn


def test_human_scripts_from_lists_files_and_functions(tmp_path, make_session) -> None:
    j = tmp_path / "turns.json"
    j.write_text(json.dumps(["First point.", "/end"]))
    t = tmp_path / "turns.txt"
    t.write_text("First point.\n\n/end\n")
    assert read_script(j) == read_script(t) == ["First point.", "/end"]
    for source in (j, t, ["First point.", "/end"]):
        s = make_session(turns=12).run(source)
        assert s.ended.reason == "human"
        said = [x.text for x in record.speaker_turns(s.transcript) if x.speaker == "Ann"]
        assert said == ["First point.", ""]

    seen = []

    def human(session):
        seen.append(len(session.speakers))
        return f"Turn {len(seen)}."

    s = make_session(turns=6).run(human)
    assert seen == [2, 5]
    assert [h.payload.source for h in record.speaker_turns(s.transcript) if h.speaker == "Ann"] == [
        "function"
    ] * 2

    bad = tmp_path / "bad.json"
    bad.write_text('["unterminated')
    with pytest.raises(ArgnbError, match="not valid JSON"):
        HumanScript(bad)
    with pytest.raises(ArgnbError, match="no human script"):
        HumanScript(tmp_path / "missing.txt")


def test_an_exhausted_script_passes(make_session) -> None:
    s = make_session(turns=6).run([])
    humans = [t for t in record.speaker_turns(s.transcript) if t.speaker == "Ann"]
    assert [h.payload.action for h in humans] == ["pass", "pass"]


def test_an_unusable_analysis_is_recorded_and_the_session_goes_on(make_session) -> None:
    s = make_session(analyzer=ScriptedBackend(lambda req: "no json here")).run(["x"])
    failed = [t for t in s.transcript.turns if isinstance(t.payload, Analysis) and not t.valid]
    assert len(failed) == 2 and all(f.payload.error for f in failed)
    assert s.analyses == [] and s.ended.reason == "turns"


def test_the_fallacy_flag_reaches_the_moderator(make_session) -> None:
    moderator = table_backend()
    checker = Baseline("zero", ScriptedBackend(lambda req: {"label": 1}))
    s = make_session(moderator=moderator, fallacy=checker, turns=2).run([])
    flags = [t for t in s.transcript.turns if t.payload.kind == "roundtable.flag"]
    assert len(flags) == 2 and all(f.payload.label == 1 for f in flags)
    target = s.transcript.turns[flags[0].payload.target]
    assert target.speaker == "Deliberator 1"
    steps = [r for r in moderator.requests if (r.schema or {}).get("title") == "ModeratorStep"]
    note = "Note: a quick automatic check suggests that Deliberator 1's last contribution"
    assert note not in steps[0].last
    # the note closes the shared context; the moderator's task (after the mark) says what to do
    context, task = steps[1].last.split(TASK_MARK)
    assert note in context and "say what is weak in plain words" in task
    d2 = record.decisions(s.transcript)[1].payload
    assert "may rest on weak reasoning" in d2.flag


def test_streaming_shows_chunks_before_the_turn_is_recorded(make_session) -> None:
    events = []
    d = ScriptedBackend(lambda req: "Phones help. They also distract. Rules can balance both.")
    s = make_session(deliberators=[d, table_backend()], turns=1, on_event=events.append)
    s.run([])
    start = next(i for i, e in enumerate(events) if e.kind == "start" and e.label != "moderator")
    turn = next(
        i
        for i, e in enumerate(events)
        if e.kind == "turn" and e.turn.payload.kind == "roundtable.contribution"
    )
    chunks = [e.text for e in events[start:turn] if e.kind == "chunk"]
    assert len(chunks) == 9 and "".join(chunks) == events[turn].turn.text
    p = events[turn].turn.payload
    assert p.first_chunk_s is not None and p.first_chunk_s >= 0
    assert events[start].label == "Deliberator 1" and events[start].model == "script"


def test_a_backend_without_streaming_gives_one_chunk(make_session) -> None:
    events = []
    plain = table_backend()
    plain.astream = None  # type: ignore[method-assign,assignment]  # as a backend without it
    make_session(deliberators=[plain, table_backend()], turns=1, on_event=events.append).run([])
    chunks = [e for e in events if e.kind == "chunk" and e.speaker == "Deliberator 1"]
    assert len(chunks) == 1


def test_each_moderator_step_is_announced_from_the_rules_before_its_model_answers(
    make_session,
) -> None:
    events = []
    s = make_session(turns=6, on_event=events.append).run(["Phones help me.", "/pass"])
    said = [  # the announcements (the message's own chunks carry label="message")
        e.text
        for e in events
        if e.kind == "chunk" and e.speaker == "Moderator" and e.label != "message"
    ]
    starts = [i for i, e in enumerate(events) if e.kind == "start" and e.label == "moderator"]
    steps = [i for i, e in enumerate(events) if e.kind == "turn" and e.turn.role == "moderator"]
    assert len(said) == len(starts) == len(steps) == 6  # one announcement per step, no more
    assert all(a < b for a, b in zip(starts, steps, strict=True))
    assert said[0] == "Next: Deliberator 1, Deliberator 2 or Ann. Choosing…"
    assert said[1].startswith("Next: Deliberator 2 or Ann (Deliberator 1 spoke last")
    # Ann is due at step 3 and 6: the rules name her before the moderator's model does
    due = "Ann, you have the floor next: everyone hears the human participant at least once in"
    assert said[2].startswith(due) and said[5].startswith(due)
    assert s.speakers[2] == s.speakers[5] == "Ann"
    # the announcement is never recorded: the transcript holds the moderator's own words
    assert not any("Choosing" in t.text for t in s.transcript.turns)


def test_saved_sessions_load_replay_and_give_the_same_views(tmp_path, make_session) -> None:
    path = tmp_path / "s.json"
    s = make_session(autosave=path).run(["A point <b>bold</b>."])
    tr = load_session(path)
    assert tr.model_dump() == Transcript.from_json(s.transcript.to_json()).model_dump()
    assert record.summary(tr) == s.summary()
    steps = list(replay(tr))
    assert [t for t, _ in steps] == tr.turns
    assert [len(p.turns) for _, p in steps] == list(range(1, len(tr.turns) + 1))
    assert isinstance(tr.turns[0].payload, type(s.transcript.turns[0].payload))
    assert isinstance(record.overrides(tr)[0].payload, Override)


def test_autosave_writes_after_every_turn(tmp_path, make_session) -> None:
    path = tmp_path / "s.json"
    sizes = []

    def watch(e):
        if e.kind == "turn":
            sizes.append(len(Transcript.load(path).turns))

    make_session(autosave=path, on_event=watch, turns=3).run(["x"])
    assert sizes == list(range(1, len(sizes) + 1))


def test_load_session_refuses_other_files(tmp_path) -> None:
    other = tmp_path / "d.json"
    other.write_text(Transcript(kind="dialectic").to_json())
    with pytest.raises(ArgnbError, match="not a roundtable"):
        load_session(other)
    junk = tmp_path / "junk.json"
    junk.write_text("{")
    with pytest.raises(ArgnbError, match="not a saved transcript"):
        load_session(junk)


def test_the_roles_read_the_conversation_not_the_bookkeeping(make_session) -> None:
    s = make_session(turns=3, moderator=table_backend(lambda r: "Deliberator 1")).run(["mine"])
    ctx = record.render_context(s.transcript, last=None)
    assert "Override" not in ctx and "summary" not in ctx.lower()
    assert "Ann (human): mine" in ctx and "Deliberator 2:" in ctx


def test_bad_tables_are_refused(make_session) -> None:
    with pytest.raises(ArgnbError, match="cannot be called"):
        make_session(human="Deliberator 1")
    with pytest.raises(ArgnbError, match="topic is empty"):
        make_session(topic="  ")
    with pytest.raises(ArgnbError):
        make_session(turns=0)


def test_an_override_for_the_human_named_you_reads_you_speak(make_session) -> None:
    """The override line agrees with "You" ("You speak instead", never "You speaks")."""
    s = make_session(human="You", moderator=table_backend(lambda req: "Deliberator 1"))
    s.run(["ok"] * 3)
    lines = [t.text for t in record.overrides(s.transcript)]
    assert any("You speak instead" in x for x in lines), lines
    assert not any("You speaks" in x for x in lines)


def test_while_the_human_types_the_moderator_reads_ahead_up_to_their_line(make_session) -> None:
    """Session.prewarm hands the moderator's backend the next step's request up to the human's
    line; after Send that step sends exactly those messages, then the line in one more message
    (so the embedded model only evaluates the line). Other steps keep one message."""
    moderator = table_backend()
    s = make_session(moderator=moderator, turns=4)
    s.advance()
    assert s.waiting_for_human and moderator.prefilled == []
    kept = s.prewarm()
    (ahead,) = moderator.prefilled
    assert kept > 0 and [m.role for m in ahead] == ["system", "user"]
    assert ahead[-1].content.rstrip().endswith("}")  # the schema note ends what is read ahead
    before = len(moderator.requests)
    s.say("Phones help me look things up, but they distract my friends.")
    s.advance()
    steps = [
        r for r in moderator.requests[before:] if (r.schema or {}).get("title") == "ModeratorStep"
    ]
    first, later = steps[0], steps[1:]
    assert first.messages[: len(ahead)] == ahead  # byte for byte: the prefix a cache restores
    (line,) = first.messages[len(ahead) :]
    assert line.role == "user" and line.content.startswith("Ann")
    assert "Phones help me look things up" in line.content
    assert TASK_MARK not in line.content and "Phones help me" not in ahead[-1].content
    assert all(len(r.messages) == 2 for r in later)  # system + one message, as before
    d = record.decisions(s.transcript)[-len(steps)].payload
    assert d.speaker in ("Deliberator 1", "Deliberator 2")  # the step after Send chose as usual
    s.run([])  # to the end
    n = len(moderator.prefilled)
    assert s.prewarm() == 0 and len(moderator.prefilled) == n  # only while the floor is Ann's
