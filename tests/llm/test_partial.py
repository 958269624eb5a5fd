"""FieldStream: one string field of JSON text that arrives in chunks, decoded as it comes."""

from __future__ import annotations

import json
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from argnb.llm.partial import FieldStream


def fed(text: str, cuts: list[int], name: str = "message") -> list[str]:
    """``text`` cut at ``cuts`` and fed piece by piece; the pieces the extractor returned."""
    f = FieldStream(name)
    bounds = [0, *sorted(set(cuts)), len(text)]
    return [f.feed(text[a:b]) for a, b in pairwise(bounds)]


# JSON values other keys hold: strings that may mention the field, nested objects that hold it
SNEAKY = st.sampled_from(['"message": "no"', '\\"message\\": \\"no', "message", '{"message": 1}'])
TEXT = st.text() | SNEAKY | st.text(alphabet='"\\\n\t/\u00e9\U0001f600\u2028\x00{}[]:,')
LEAF = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT
JSONISH = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def answers(draw) -> tuple[dict, str]:
    """A dict holding ``message`` among other keys (in any order), and its message."""
    others = draw(st.dictionaries(TEXT.filter(lambda k: k != "message"), JSONISH, max_size=4))
    value = draw(TEXT)
    items = list(others.items())
    at = draw(st.integers(0, len(items)))
    return dict([*items[:at], ("message", value), *items[at:]]), value


@settings(max_examples=400, deadline=None)
@given(answers(), st.booleans(), st.booleans(), st.lists(st.integers(0, 2000), max_size=30))
def test_any_split_of_any_serialisation_gives_the_fields_value(answer, ascii, spaced, cuts):
    obj, value = answer
    text = json.dumps(obj, ensure_ascii=ascii, separators=None if spaced else (",", ":"))
    cuts = [c % (len(text) + 1) for c in cuts]
    assert "".join(fed(text, cuts)) == value


@settings(max_examples=200, deadline=None)
@given(TEXT, st.booleans())
def test_one_character_at_a_time(value, ascii):
    text = json.dumps({"intent": "invite", "message": value, "next": "Ann"}, ensure_ascii=ascii)
    assert "".join(fed(text, list(range(len(text))))) == value


def test_a_surrogate_pair_split_anywhere_is_one_character():
    text = json.dumps({"message": "a\U0001f600b"})  # "a\ud83d\ude00b"
    assert "\\ud83d\\ude00" in text
    for cut in range(len(text) + 1):
        pieces = fed(text, [cut])
        assert "".join(pieces) == "a\U0001f600b", cut
        assert all("\ud83d" not in p for p in pieces)  # never half a character on screen


def test_a_lone_surrogate_stays_as_json_loads_keeps_it():
    for text in (
        '{"message": "x\\ud83dy"}',
        '{"message": "x\\ud83d\\u0041"}',
        '{"message": "\\ud83d"}',
    ):
        want = json.loads(text)["message"]
        for cut in range(len(text) + 1):
            assert "".join(fed(text, [cut])) == want, (text, cut)


def test_it_streams_while_the_rest_of_the_answer_is_unknown():
    f = FieldStream("message")
    assert f.feed('{"intent": "invite", "message": "Let us') == "Let us"
    assert not f.done and f.value == "Let us"
    assert f.feed(' hear Bo.", "next_speaker": "B') == " hear Bo."
    assert f.done and f.feed('o"}') == ""


def test_the_name_elsewhere_does_not_count():
    text = (
        '{"note": "\\"message\\": \\"fake\\"", "nested": {"message": "deep"}, '
        '"list": ["message", {"message": "x"}], "message": "real"}'
    )
    assert "".join(fed(text, [])) == "real"
    assert "".join(fed('{"messages": "plural", "message": "one"}', [])) == "one"


def test_an_answer_without_the_field_gives_nothing_and_ends():
    f = FieldStream("message")
    assert f.feed('{"intent": "invite", "message": null}') == "" and f.done
    assert FieldStream("message").feed("chatter, then no object") == ""


def test_text_before_the_object_is_ignored():
    assert "".join(fed('```json\n{"message": "hi"}\n```', [3, 9])) == "hi"
