"""Turn renderings: readable text for the CLI, escaped HTML for notebooks."""

from __future__ import annotations

from argnb.dialectic import Argument, camera_reference_backend, run_dialogue
from argnb.dialectic.views import dialogue_html, format_turn
from argnb.llm.scripted import ScriptedBackend

XSS = "<img src=x onerror=alert(1)>"


def test_format_turn_reads_like_the_dialogue():
    d = run_dialogue(camera_reference_backend(stubborn=True), "camera")
    text = "\n".join(format_turn(t) for t in d.transcript.turns)
    assert "[line 1] AG1 argues A1: We should buy a." in text
    assert "r1: a is a camera. ; a is compact." in text
    assert "AG2 rebuts A1 on 'We should buy a.' with A2: We should not buy a.  (defeats A1)" in text
    assert "AG1 (rejected, attempt 1): undercut is impossible" in text
    assert "== line 2: AG2's main argument A3 is defeated — AG2 cannot counter A4" in text
    assert "AG1 answers (A5): Choose camera c" in text


def test_dialogue_html_escapes_model_text():
    evil = Argument.simple(
        [f"{XSS} is a fact"], f"We should {XSS} buy it", [f"no evidence of {XSS}"]
    )

    def script(req):
        if req.schema["title"] == "MainArgumentAnswer":
            return {"argument": evil.model_dump()}
        return {"can_defeat": "NO", "attack": "none", "target": "", "argument": None}

    d = run_dialogue(ScriptedBackend(script), "camera")
    page = dialogue_html(d.transcript)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt; is a fact" in page
    assert "<img" not in d._repr_html_()
