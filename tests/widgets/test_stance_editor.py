"""Walkthrough item 3: when no argument passes the checks, learners read a sentence -- never
``None`` -- and see no empty map."""

from __future__ import annotations

from argnb.dialectic import camera_reference_backend, load_example, run_dialogue
from argnb.dialectic.views import dialogue_html, format_turn, outcome_text, turn_html
from argnb.dialectic.widget import NO_MAP, StanceEditor
from argnb.llm import ScriptedBackend


def nothing_valid() -> ScriptedBackend:
    """A model that never fills the schema (what SmolLM2 often amounts to)."""
    return ScriptedBackend(lambda request: {"argument": {"rules": "none"}})


def test_no_argument_reads_as_a_sentence():
    d = run_dialogue(nothing_valid(), "camera", max_attacks=1)
    assert d.outcome == "none" and [line["main_id"] for line in d.lines] == [None, None]
    shown = [format_turn(t) for t in d.transcript.turns]
    shown += [turn_html(t) for t in d.transcript.turns]
    shown += [t.text for t in d.transcript.turns]
    shown += [dialogue_html(d.transcript), outcome_text(d.transcript.outcome)]
    for text in shown:
        assert "None" not in text, text
    verdicts = [t.text for t in d.transcript.turns if t.role == "verdict"]
    assert verdicts == [
        "line 1: AG1 gave no main argument that passed the checks, so there is nothing to dispute",
        "line 2: AG2 gave no main argument that passed the checks, so there is nothing to dispute",
    ]


def test_editor_says_why_there_is_no_map():
    editor = StanceEditor(load_example("camera"), nothing_valid(), max_attacks=1)
    d = editor.run()
    assert d is not None and "None" not in editor.status.value
    assert "gave no main argument" in editor.status.value
    view = editor.map_view(d)
    assert NO_MAP in view.data  # a sentence, not an empty 430 px canvas
    assert "gave no main argument" in editor.note.result_html
    rejected = sum(1 for t in d.transcript.turns if not t.valid)
    assert rejected > 0 and f"0 valid turns, {rejected} rejected" in editor.note.result_html


def test_editor_draws_the_map_when_there_are_arguments():
    editor = StanceEditor(load_example("camera"), camera_reference_backend())
    d = editor.run()
    assert d.outcome == "synthesis"
    assert NO_MAP not in str(getattr(editor.map_view(d), "data", ""))
    assert "synthesis answers" in editor.status.value


def test_a_server_that_fails_is_reported_in_the_editor():
    from argnb.errors import BackendUnavailable

    down = ScriptedBackend(lambda r: BackendUnavailable("cannot reach Ollama", hint="ollama serve"))
    editor = StanceEditor(load_example("camera"), down)
    assert editor.run() is None
    assert "ollama serve" in editor.status.value and not editor.button.disabled
    assert "stopped: cannot reach Ollama" in editor.note.result_html  # the saved copy says so
