"""The widget in real JupyterLab, driven by headless Chromium: streaming panels, the input box
active only on the human's turn, XSS payloads from the models and from the human shown as inert
text in every panel, and the notice when the kernel is gone."""

from __future__ import annotations

from pathlib import Path

import pytest

from .browser import CHROMIUM, HUMAN_XSS, SCRIPTED_CELL, drive, jupyter_lab, write_notebook

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed"),
]
pytest.importorskip("playwright")


def test_widget_in_jupyterlab(tmp_path) -> None:
    write_notebook(tmp_path, SCRIPTED_CELL)
    with jupyter_lab(tmp_path) as (base, token):
        seen = drive(
            base,
            token,
            "roundtable.ipynb",
            human_text=HUMAN_XSS,
            shot=tmp_path / "rt.png",
            reopen=tmp_path / "roundtable.ipynb",
        )
    assert seen["input_disabled_after_send"]
    # no payload ran, in the page or in the map's iframe, and no alert() fired
    assert seen["xss"] is None and all(x is None for x in seen["frame_xss"]), seen
    assert seen["dialogs"] == [] and seen["raw_img"] == 0
    # the payloads are there as text: the human's, the models' and the human's name
    text = seen["dialogue_text"]
    assert '<img src=x onerror="window.__xss=(window.__xss||0)+1">' in text
    assert "<script>window.__xss=2</script>" in text
    assert "</script><script>alert(2)</script>" in text  # the moderator's message
    assert 'Ann <svg onload="window.__xss=9"> · human' in text
    assert "<img src=x onerror=alert(1)>" in seen["analysis_text"]
    assert seen["map_frames"] == 1
    assert (tmp_path / "rt.png").stat().st_size > 10_000
    # the kernel watch: hidden while the kernel answers, shown once it is gone
    assert seen["gone_visible_before"] is False and seen["beats"] >= 2
    assert seen["gone_visible_after"] is True and "kernel" in seen["gone_text"]
    # saved with its widget state and opened again: the panels are back, the notice says why
    # nothing answers, and still no payload runs
    assert seen["saved_widget_state"]
    assert "<script>window.__xss=2</script>" in seen["reopened_dialogue_text"]
    assert seen["gone_visible_reopened"] is True and seen["xss_reopened"] is None
