"""Dung semantics via python-argumentation, and on dialogues."""

from __future__ import annotations

from argnb.dialectic import camera_reference_backend, run_dialogue
from argnb.dialectic.record import framework_of, labelling, preferred
from argnb.dialectic.semantics import grounded_extension, grounded_labelling, preferred_extensions


def test_grounded_on_a_chain_and_a_cycle():
    assert grounded_extension("abcd", [("b", "a"), ("c", "b"), ("d", "c")]) == {"b", "d"}
    assert grounded_labelling("ab", [("a", "b"), ("b", "a")]) == {"a": "UNDEC", "b": "UNDEC"}
    # an odd cycle with an unattacked attacker knocking one member out
    lab = grounded_labelling("abcd", [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")])
    assert lab == {"a": "OUT", "b": "IN", "c": "OUT", "d": "IN"}


def test_preferred_extensions():
    assert preferred_extensions("ab", [("a", "b"), ("b", "a")]) == [{"a"}, {"b"}]
    assert preferred_extensions("abc", [("a", "b"), ("b", "c")]) == [{"a", "c"}]


def test_camera_dialogue_framework():
    d = run_dialogue(camera_reference_backend(), "camera")
    args, ds = framework_of(d.transcript)
    assert args == ["A1", "A2", "A3", "A4", "A5"]
    assert ds == {("A2", "A1"), ("A4", "A3")}
    assert labelling(d.transcript) == d.labelling
    assert preferred(d.transcript) == [{"A2", "A4", "A5"}]


def test_symmetric_rebuts_make_the_conflict_undecided():
    """Read as Prakken & Sartor without priorities, 'buy a' and 'do not buy a' rebut each other."""
    d = run_dialogue(camera_reference_backend(), "camera")
    lab = labelling(d.transcript, symmetric_rebuts=True)
    assert lab == {"A1": "UNDEC", "A2": "UNDEC", "A3": "UNDEC", "A4": "UNDEC", "A5": "IN"}
    assert len(preferred(d.transcript, symmetric_rebuts=True)) == 4
