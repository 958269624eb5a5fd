"""The gate (argnb.gate): what the embedded model was seen to say never reaches a learner as an
answer -- the outputs quoted in issue 29 are the fixtures -- and what a learner should see passes.
"""

from __future__ import annotations

import pytest

from argnb.agents import Agent
from argnb.gate import Gate, inspect, static
from argnb.llm import ScriptedBackend
from argnb.llm.answer import Answer
from argnb.prompts import context_first, load
from argnb.roundtable.schemas import step_schema
from argnb.transcript import Rejected

TABLE = Gate(instructions=static(load("argnb.roundtable", "table", sectioned=True)))
DEBATE = Gate(instructions=static(load("argnb.debate", "context", sectioned=True)))
DELIBERATOR_TASK = (
    "You are Deliberator 2. Also at the table: Deliberator 1, Ann (human). Put forward proposals "
    "with their reasons (facts, examples, values); take objections seriously."
)

#: seen on screen (issue 29), each with the rule that must stop it
SEEN = [
    ("Your task / Agenda: Your task / Criteria: Your task; type':'json'}}", TABLE, "echo"),
    ("Criteria: Your task; type':'object; title':'AgendaAnswer'}}", TABLE, "echo"),
    (
        "Your task You are Deliberator 2. Also at the table: Deliberator 1, Ann (human). "
        "Your task You are Deliberator 2. Also at the table: Deliberator 1, Ann (human).",
        TABLE,
        "echo",
    ),
    (
        "I think you have a lot of ideas, and I think you have a lot of ideas, and I think",
        TABLE,
        "loop",
    ),
    (
        'The team argues against the motion "Cities should ban private cars". The team argues '
        "against",
        DEBATE,
        "echo",
    ),
]


@pytest.mark.parametrize(("text", "gate", "rule"), SEEN)
def test_what_was_seen_on_screen_is_stopped(text, gate, rule):
    assert rule in [s.rule for s in inspect(text, gate)]


def test_the_quoted_outputs_break_every_rule_they_show():
    schema = inspect("Criteria: Your task; type':'object; title':'AgendaAnswer'}}", TABLE)
    assert {s.rule for s in schema} >= {"echo", "schema"}
    cut = inspect('The team argues against the motion "Cities should ban cars". The team', DEBATE)
    assert {s.rule for s in cut} >= {"echo", "cut"}


def test_a_run_of_six_words_of_the_own_task_is_an_echo_but_the_material_may_be_quoted():
    msgs = [
        {"role": "system", "content": "You take part in a small, friendly discussion."},
        {
            "role": "user",
            "content": context_first(
                "Question under discussion: should cities ban private cars from their centres?",
                DELIBERATOR_TASK,
            ),
        },
    ]
    gate = TABLE.seen(msgs)
    assert [s.rule for s in inspect("Well, put forward proposals with their reasons.", gate)] == [
        "echo"
    ]
    assert [s.rule for s in inspect("I take part in a small, friendly discussion.", gate)] == [
        "echo"
    ]
    quoted = "Should cities ban private cars from their centres? I think so: the air is bad."
    assert inspect(quoted, gate) == []


def test_the_rules_of_a_shared_context_are_instructions_even_though_the_context_shows_them():
    gate = TABLE.seen(
        [{"role": "user", "content": context_first("Rules: nobody speaks twice in a row.", "Go.")}]
    )
    assert [s.rule for s in inspect("Rules say nobody speaks twice in a row.", gate)] == ["echo"]


@pytest.mark.parametrize(
    "text",
    [
        '{"scope": "cars"}',
        'it has "properties" inside',
        "the $defs of it",
        "the ModeratorStep is here",
        "so next_speaker: Ann",
    ],
)
def test_schema_words_and_answer_class_names_are_stopped(text):
    class Step(Answer):
        scope: str
        next_speaker: str

    step_schema(("Ann", "Bo"))  # answer classes made at run time count once they exist

    assert [s.rule for s in inspect(text + ".", Gate(), Step)] == ["schema"]


def test_a_loop_is_any_repeated_run_of_words_not_only_a_repeated_sentence():
    looped = "We could try it, we could try it out, and then we could try it again later."
    assert [s.rule for s in inspect(looped, Gate())] == ["loop"]
    twice = "Buses would carry people to work on time, so buses would carry people to work on time."
    assert [s.rule for s in inspect(twice, Gate())] == ["loop"]


def test_a_copy_of_another_speakers_turn_is_stopped_a_short_agreement_is_not():
    turn = "Could teachers ask us to show our steps, so copying is pointless?"
    gate = Gate(others=(turn,))
    assert [s.rule for s in inspect(f"Indeed. {turn}", gate)] == ["copy"]
    assert inspect("Showing steps makes copying pointless, I agree with Ann.", gate) == []


def test_a_sentence_cut_off_is_stopped_in_prose_only():
    assert [s.rule for s in inspect("Cars should go because the air in the", Gate())] == ["cut"]

    class Node(Answer):
        claim: str
        message: str

    node = Node(claim="Cars should go from the city centre", message="")
    assert inspect(node, Gate(prose=("message",)), Node) == []
    cut = Node(claim="Cars should go", message="We agree that the air in the")
    assert [s.rule for s in inspect(cut, Gate(prose=("message",)), Node)] == ["cut"]
    # over the word limit, the protocol cuts at a sentence end itself: the rule waits for that
    assert inspect("One. Two three four five", Gate(limit=3)) == []


@pytest.mark.parametrize(
    "text",
    [
        "My task is to convince you, and your task is to listen: AI helps with explanations.",
        "Banning cars in the centre helps the air, but shops need deliveries.",
        "I agree with Deliberator 1: rules for AI at school are fair.",
        # a moderator's fair request (the gate's retry note said this once; no note is sent now)
        "Sam, could you say that again in your own words? Then we answer again together.",
        "",
    ],
)
def test_ordinary_answers_pass(text):
    assert inspect(text, TABLE) == []


def test_a_stopped_answer_gets_one_retry_and_a_second_stop_is_recorded_with_its_reason():
    echo = "Your task You are Ada. Say what you think."
    b = ScriptedBackend([echo, "Cars pollute the centre, so I would ban them."])
    r = Agent("Ada", b).respond("What do you think?")
    assert r.valid and r.value.startswith("Cars pollute")
    assert [t.role for t in r.turns] == ["gated answer", "answer"]
    assert r.turns[0].payload.gate == "the model echoed its instructions"
    # the retry is the request itself, sampled anew: neither the stopped answer (a small model
    # copies its echo) nor a note about it (the gate's words would become content)
    first, retry = b.requests
    assert retry.messages == first.messages
    assert retry.options.temperature >= 0.7 and retry.options.seed == first.options.seed + 1

    b = ScriptedBackend([echo, echo])
    r = Agent("Ada", b).respond("What do you think?")
    assert not r.valid and r.value is None and r.gated == "the model echoed its instructions"
    assert [t.role for t in r.turns] == ["gated answer", "gated answer"]
    assert isinstance(r.turn.payload, Rejected) and r.turn.payload.raw == echo
    assert r.cost.calls == 2


def test_a_structured_answer_is_gated_string_by_string():
    class Agenda(Answer):
        scope: str
        criteria: list[str]

    bad = {"scope": "Cars in the centre", "criteria": ["Your task"]}
    good = {"scope": "Cars in the centre", "criteria": ["clean air"]}
    r = Agent("Mo", ScriptedBackend([bad, good])).respond("Agenda?", Agenda)
    assert r.valid and r.value.criteria == ["clean air"] and len(r.turns) == 2


def test_the_gate_can_be_switched_off_and_a_check_still_gets_its_repair():
    echo = "Your task"
    r = Agent("Ada", ScriptedBackend([echo]), gate=Gate(on=False)).respond("Go.")
    assert r.valid and r.value == echo
    b = ScriptedBackend(["one two three four five six seven.", "Short one."])
    r = Agent("Ada", b).respond("Go.", check=lambda v: ["too long"] if len(v) > 20 else [])
    assert r.valid and [t.role for t in r.turns] == ["rejected answer", "answer"]


def test_an_answer_that_is_one_schema_word_is_stopped():
    class Agenda(Answer):
        scope: str
        criteria: list[str]

    seen = {"scope": "AgendaAnswer", "criteria": ["items", "maxLength", "type"]}  # the retry, seen
    assert [s.rule for s in inspect(Agenda(**seen), Gate(), Agenda)] == ["schema"]
    assert [s.rule for s in inspect(Agenda(scope="fair", criteria=["scope"]), Gate(), Agenda)] == [
        "schema"
    ]
    assert inspect(Agenda(scope="fair", criteria=["cost", "type of task"]), Gate(), Agenda) == []


def test_pieces_of_json_and_a_schema_key_with_its_colon_are_stopped():
    """Seen on the hub: the embedded model drafted a room's candidate statements as "] {" and
    "items:", and the learners were asked to rank them."""

    class Statements(Answer):
        statements: list[str]

    for junk in (["] {", "Cars should go."], ["items:", "Cars should go."], ['"}]', "A b c."]):
        assert [s.rule for s in inspect(Statements(statements=junk), Gate(), Statements)] == [
            "schema"
        ], junk
    fine = ["Cars should go [mostly].", "Ten: 10 — fine!", "Ça va."]
    assert inspect(Statements(statements=fine), Gate(), Statements) == []


def test_naming_the_motion_as_the_task_does_is_a_quote_not_an_echo():
    motion = "Cities should ban private cars from their centres"
    msgs = [
        {
            "role": "user",
            "content": context_first(
                f"Motion: {motion}", f'You are Pro, a debater speaking for the motion "{motion}".'
            ),
        }
    ]
    gate = DEBATE.seen(msgs)
    assert inspect(f'I stand for the motion "{motion}": the air is bad.', gate) == []
    assert [s.rule for s in inspect("I am Pro, a debater speaking for it.", gate)] == []
    assert [s.rule for s in inspect("You are Pro, a debater speaking for us.", gate)] == ["echo"]


def test_a_line_written_as_another_participant_is_stopped_naming_them_is_not():
    g = Gate(voices=("Ann", "Bea Li"))
    assert [s.rule for s in inspect("Thank you.\nAnn: I agree with all of it.", g)] == ["voice"]
    assert [s.rule for s in inspect("Bea Li (human): yes, ban it.", g)] == ["voice"]
    assert inspect("Ann said she agrees; Bea Li, what do you think?", g) == []
    assert inspect("Ann: I agree.", Gate()) == []  # only the seats the request names


#: seen over the class path (issue 35: the embedded model served by llama.cpp's server through
#: the gateway), each with the rule that must stop it
CLASS_PATH = [
    (
        "Your task is to answer the question: Should students be allowed to use AI tools like "
        "ChatGPT for homework? Your response should contain at least 3 sentences. The response "
        "must have exactly 2 paragraphs.",
        "echo",
    ),
    ("{{<text>}", "schema"),
    ("{<text>}", "schema"),
    ("Your response should contain at * multiple sentences with a single JSON object.", "echo"),
    ("multiple sentences with a single JSON object.", "schema"),
    ("At least three sentences.", "echo"),
    ("This answer cannot be used.", "echo"),
    ("maxLength:200", "schema"),
    ("Your task has been completed. You may now ask for the next step.", "echo"),
    ("Your task is to choose a topic, define it clearly in 3 sentences.", "echo"),
    ("You", "bare"),
    ("Deliberator 1", "bare"),
]


@pytest.mark.parametrize(("text", "rule"), CLASS_PATH)
def test_what_the_class_path_showed_is_stopped(text, rule):
    prose = Gate(prose=("message",))
    assert rule in [s.rule for s in inspect({"message": text}, TABLE + prose)]


def test_a_fields_name_as_the_label_of_its_text_is_stopped():
    from argnb.roundtable.schemas import analysis_schema

    schema = analysis_schema(("Deliberator 1", "Deliberator 2", "You"), 3)
    arg = {"claim": "Allow it with rules.", "by": "You", "counterarguments": []}
    bad = {"summary": [], "agreements": [], "open_questions": [], "argument_map": [
        {**arg, "premises": ["By: Deliberator 2"]}]}  # fmt: skip
    assert [s.rule for s in inspect(bad, TABLE, schema)] == ["schema"]
    good = {**bad, "argument_map": [{**arg, "premises": ["Rules by teachers are fair."]}]}
    assert inspect(good, TABLE, schema) == []


def test_one_sentence_three_times_across_the_fields_of_an_answer_is_a_loop():
    same = "You are allowed to use AI tools like ChatGPT for homework."
    prose = TABLE + Gate(prose=("claim", "objections"))
    answer = {"claim": same, "objections": [same, same.replace(".", "?")]}
    assert [s.rule for s in inspect(answer, prose)] == ["loop"]
    assert inspect({"claim": same, "objections": [same, "It invites copying."]}, prose) == []
    assert inspect(answer, TABLE) == []  # fields that are not prose may repeat a literal


def test_a_sentence_the_speaker_said_at_an_earlier_turn_is_a_loop():
    """A moderator opening every step with one line, a debater copying its own side's earlier
    turn (issue 35): ``Gate.earlier`` holds what the speaker said before."""
    g = Gate(earlier=("Cars pollute the centre every day. Ban them.",))
    assert [s.rule for s in inspect("Yes. Cars pollute the centre every day.", g)] == ["loop"]
    assert inspect("Ban them. Buses can stay.", g) == []  # a short sentence may come back
    # while it streams, only a finished sentence counts
    assert inspect("Cars pollute the centre every", g, partial=True) == []
