from __future__ import annotations

import pytest

from argnb.debate.schemas import annotation_schema
from argnb.debate.schemes import LABELS, SCHEMES_FILE, load_schemes, score
from argnb.errors import ArgnbError

PAPER_SEVEN = {
    "example",
    "expert_opinion",
    "positive_consequences",
    "negative_consequences",
    "cause_to_effect",
    "analogy",
    "values",
}


def test_the_seven_schemes_of_the_paper_each_with_a_pattern_and_critical_questions():
    s = load_schemes()
    assert set(s.ids) == PAPER_SEVEN
    for x in s:
        assert x.premises and x.conclusion and len(x.critical_questions) >= 3
        assert x.example and len(x.definition) > 40
    assert "CQ1:" in s["expert_opinion"].questions()
    assert list(s.to_frame().columns)[:2] == ["id", "name"]


def test_label_scores_follow_the_paper():
    assert [score(lab) for lab in LABELS] == [1, 2, 3, 4]
    assert score(None) == 0
    with pytest.raises(ArgnbError):
        score("great")


def test_an_instructor_adds_a_scheme_by_editing_the_file(tmp_path):
    text = SCHEMES_FILE.read_text(encoding="utf-8") + (
        "\n  - id: popular_opinion\n    name: Argument from popular opinion\n"
        "    definition: Most people accept it, so it is plausibly true.\n"
        "    premises: ['Most people accept A.']\n    conclusion: So A is plausible.\n"
        "    critical_questions: ['What evidence shows that most people accept A?']\n"
    )
    p = tmp_path / "schemes.yaml"
    p.write_text(text)
    s = load_schemes(p)
    assert s.ids[-1] == "popular_opinion" and len(s) == 8
    enum = annotation_schema(s.ids).model_json_schema()["properties"]["schemes"]["items"]
    assert "popular_opinion" in enum["properties"]["scheme"]["enum"]


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("schemes: 3", "no 'schemes:' list"),
        ("schemes:\n  - id: Bad Id\n    name: x", "malformed"),
        ("schemes: [", "cannot read"),
    ],
)
def test_malformed_scheme_files_say_what_is_wrong(tmp_path, yaml_text, message):
    p = tmp_path / "s.yaml"
    p.write_text(yaml_text)
    with pytest.raises(ArgnbError, match=message):
        load_schemes(p)


def test_duplicate_ids_are_refused(tmp_path):
    one = (
        "  - id: a_b\n    name: abc\n    definition: a definition here\n"
        "    premises: [p]\n    conclusion: ccc\n    critical_questions: [q]\n"
    )
    p = tmp_path / "s.yaml"
    p.write_text("schemes:\n" + one + one)
    with pytest.raises(ArgnbError, match="appears twice"):
        load_schemes(p)
