"""Baselines: the prompts they build and how answers map to 0 / 1 / invalid."""

from __future__ import annotations

import pytest

from argnb.errors import ArgnbError, BackendError, BackendUnavailable
from argnb.fallacy.baselines import (
    TEXT_RULE,
    Baseline,
    build_messages,
    classify,
    default_examples,
)
from argnb.fallacy.prompts import load, parse
from argnb.fallacy.schemas import parse_label
from argnb.llm import ScriptedBackend

ARG = "All my friends like jazz, so jazz is the best music. $100 says so."


def test_zero_shot_messages():
    msgs = build_messages(ARG, "zero")
    assert [m.role for m in msgs] == ["system", "user"]
    assert msgs[1].content.endswith(f"Argument: {ARG}"), "a $ in the argument is left alone"


def test_few_shot_uses_example_turns_default_and_custom():
    msgs = build_messages(ARG, "few")
    n = len(default_examples())
    assert n >= 4 and {e.label for e in default_examples()} == {0, 1}
    assert [m.role for m in msgs] == ["system", *(["user", "assistant"] * n), "user"]
    assert msgs[2].content == '{"label": 1}'
    custom = build_messages(ARG, "few", examples=[("Cats purr.", 0)], structured=False)
    assert [m.content for m in custom if m.role == "assistant"] == ["0"]
    assert "Cats purr." in custom[1].content and ARG in custom[-1].content
    with pytest.raises(ArgnbError):
        build_messages(ARG, "few", examples=[{"text": "x", "label": 5}])


def test_cot_prompt_lists_the_steps_and_text_mode_adds_the_output_rule():
    msgs = build_messages(ARG, "cot")
    assert "conclusion" in msgs[0].content and "follows" in msgs[0].content
    assert TEXT_RULE not in msgs[0].content
    assert build_messages(ARG, "cot", structured=False)[0].content.endswith(TEXT_RULE)
    with pytest.raises(ArgnbError, match="unknown method"):
        build_messages(ARG, "tot")


def test_structured_answers_map_to_labels_and_invalid():
    assert classify(ARG, ScriptedBackend([{"label": 1}])).label == 1
    backend = ScriptedBackend(['{"label": "yes"}', "1 I think"])
    pred = classify(ARG, backend)
    assert pred.label == "invalid" and not pred.valid
    assert pred.calls == 2 and len(backend.requests) == 2, "one repair turn, then give up"
    assert pred.transcript.turns[0].valid is False
    assert pred.transcript.outcome == {"label": "invalid"}


def test_repair_turn_can_rescue_an_answer():
    pred = classify(ARG, ScriptedBackend(["one", {"label": 0}]))
    assert (pred.label, pred.calls) == (0, 2)


def test_cot_keeps_its_reasoning():
    answer = {
        "restatement": "Friends like jazz so it is best.",
        "conclusion": "Jazz is the best music.",
        "premises": ["My friends like jazz."],
        "follows": False,
        "fallacy": "hasty generalization",
        "label": 1,
    }
    pred = classify(ARG, ScriptedBackend([answer]), "cot")
    assert pred.label == 1 and pred.reasoning["fallacy"] == "hasty generalization"
    assert pred.transcript.turns[0].payload["follows"] is False


def test_text_mode_parses_plain_answers_without_repair():
    assert classify(ARG, ScriptedBackend(["1"]), structured=False).label == 1
    backend = ScriptedBackend(["The argument is weak."])
    pred = classify(ARG, backend, structured=False)
    assert pred.label == "invalid" and len(backend.requests) == 1
    assert backend.requests[0].options.max_tokens == 16
    assert backend.requests[0].schema is None


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("1", 1),
        ("0", 0),
        (" '1'. ", 1),
        ("**0**", 0),
        ("<vote>0</vote> and more", 0),
        ("1 - slippery slope", 1),
        ("1 or 0", "invalid"),
        ("10", "invalid"),
        ("0.5", "invalid"),
        ("fallacious", "invalid"),
        ("", "invalid"),
    ],
)
def test_parse_label(text, label):
    assert parse_label(text) == label


def test_a_backend_error_for_this_input_is_invalid_but_an_outage_propagates():
    pred = classify(ARG, ScriptedBackend([BackendError("prompt too long")]))
    assert pred.label == "invalid" and "prompt too long" in pred.error
    with pytest.raises(BackendUnavailable):
        classify(ARG, ScriptedBackend([BackendUnavailable("down")]))


def test_baseline_names_and_describe():
    b = Baseline("few", ScriptedBackend([], model="m1"))
    assert b.name == "few@scripted:m1"
    assert b.describe()["method"] == "few" and b.describe()["model"] == "m1"
    with pytest.raises(ArgnbError):
        Baseline("nope", ScriptedBackend([]))


def test_templates_parse_and_need_every_placeholder(tmp_path):
    t = load("deliberate")
    assert {"argument", "context", "round", "max_rounds", "name"} <= t.placeholders("user")
    with pytest.raises(ArgnbError, match="needs a value"):
        t.render("user", argument="x")
    with pytest.raises(ArgnbError, match="no section"):
        t.render("assistant")
    with pytest.raises(ArgnbError, match="no '## section'"):
        parse("x", "just text")
    # an instructor's own copy of a template is used when its folder is given
    (tmp_path / "zero_shot.md").write_text("## system\nBe brief.\n## user\nJudge: $argument\n")
    msgs = build_messages("A.", "zero", prompt_dir=tmp_path)
    assert msgs[0].content == "Be brief." and msgs[1].content == "Judge: A."
