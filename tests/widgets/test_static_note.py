"""The static line under every widget: says how to get the widget back, keeps its last result,
and is never a way to inject markup."""

from __future__ import annotations

from argnb.widgets.static import RESTART, StaticNote, live_box


def test_note_says_how_to_get_the_widget_back_and_keeps_the_result():
    note = StaticNote()
    assert "run this cell again" in RESTART and "model not found" in RESTART
    assert "run this cell again" in note.html() and "argnb-static-result" not in note.html()
    note.text("<script>alert(1)</script> answered")
    page = note.html()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; answered" in page


def test_update_goes_to_the_displayed_output(monkeypatch):
    shown = []

    class Handle:
        def update(self, obj):
            shown.append(obj.data)

    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda obj, display_id=None: Handle())
    note = StaticNote()
    note.display()
    note.text("connected")
    assert shown and "connected" in shown[-1]


def test_a_widget_without_its_kernel_model_reads_as_a_sentence():
    import ipywidgets as w

    box = live_box("Rating widget", [w.HTML("x")])
    text = box._repr_mimebundle_()["text/plain"]
    assert text == "Rating widget (a live widget: run this cell to use it)"


def test_the_note_hides_itself_only_beside_a_rendered_live_widget():
    """The note's rule names the class every live widget's view carries, and nothing else
    hides it: a copy without the widget's view (saved, untrusted, exported) shows the note."""
    import ipywidgets as w

    from argnb.widgets.static import HIDE_WHEN_LIVE, LIVE_CLASS

    box = live_box("Rating widget", [w.HTML("x")])
    assert LIVE_CLASS in box._dom_classes
    page = StaticNote().html()
    assert page.startswith(HIDE_WHEN_LIVE)
    assert f":has(.{LIVE_CLASS})" in HIDE_WHEN_LIVE and "display:none" in HIDE_WHEN_LIVE
    assert "display:none" not in page.removeprefix(HIDE_WHEN_LIVE)
