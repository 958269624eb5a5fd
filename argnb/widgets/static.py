"""A plain HTML line under every widget, so a saved notebook still says what the widget did.

A widget lives in the kernel; the saved notebook keeps only a reference to it. After a kernel
restart, in a copy sent by a classmate, on GitHub or in an HTML export, JupyterLab shows "Error
displaying widget: model not found" where the widget was. So each argnb widget displays, right
under itself, an ordinary HTML output (with a display id) that

* says how to get the widget back (run the cell again), and
* is updated with the widget's latest result (``update_display_data`` works from a button's
  callback), so the answer the learner got is saved with the notebook and shows everywhere.

While the widget itself is on the page the note has nothing to say (and "if it shows Error
displaying widget…" under a working widget only worries a learner), so the note carries one CSS
rule: an output that follows a rendered live widget (:data:`LIVE_CLASS`, set by :func:`live_box`)
in the same cell hides it. Where the widget cannot render -- a saved, shared, untrusted or
exported copy -- no element has that class and the note shows.

Only escaped text goes in: callers pass plain text or HTML they built from escaped pieces.
"""

from __future__ import annotations

from typing import Any

from argnb.views import esc

#: what a learner reads where a widget cannot be shown
RESTART = (
    "Live widget: if it shows “Error displaying widget: model not found” (after a kernel "
    "restart, or in a saved or shared copy), run this cell again."
)
#: the class of every argnb widget's view (see :func:`live_box`)
LIVE_CLASS = "argnb-live"
#: hides the note in a cell where the live widget rendered (JupyterLab, Notebook 7)
HIDE_WHEN_LIVE = (
    f"<style>.jp-OutputArea-child:has(.{LIVE_CLASS}) ~ .jp-OutputArea-child "
    ".argnb-static-note{display:none}</style>"
)
_STYLE = "font:12px sans-serif;color:#555;border-left:3px solid #ccc;padding:2px 8px;margin:4px 0"


class StaticNote:
    """The static line of one widget: ``display()`` it under the widget, ``update()`` it later."""

    def __init__(self) -> None:
        self.result_html = ""
        self._handle: Any = None

    def html(self) -> str:
        """The note as HTML: the restart hint, then the latest result (if any)."""
        result = (
            f"<div class='argnb-static-result' style='margin-top:2px;color:#222'>"
            f"{self.result_html}</div>"
            if self.result_html
            else ""
        )
        return (
            f"{HIDE_WHEN_LIVE}<div class='argnb-static-note' style='{_STYLE}'>"
            f"<div>{esc(RESTART)}</div>{result}</div>"
        )

    def display(self) -> None:
        from IPython.display import HTML, display

        self._handle = display(HTML(self.html()), display_id=True)

    def update(self, result_html: str) -> None:
        """Replace the result part (already escaped HTML) in the notebook's saved output."""
        self.result_html = result_html
        if self._handle is not None:
            from IPython.display import HTML

            self._handle.update(HTML(self.html()))

    def text(self, result: str) -> None:
        """Like :meth:`update`, for plain text."""
        self.update(esc(result))


_LIVE_BOX: Any = None


def live_box(name: str, children: list[Any], **kw: Any) -> Any:
    """A ``VBox`` whose plain-text form (what an untrusted or exported notebook shows instead of
    the widget) names it and says how to get it back, instead of ``VBox(children=(...``."""
    global _LIVE_BOX
    if _LIVE_BOX is None:
        import ipywidgets as w

        class LiveBox(w.VBox):  # same front-end model as VBox: only the text form differs
            def __repr__(self) -> str:
                name = getattr(self, "argnb_name", "widget")
                return f"{name} (a live widget: run this cell to use it)"

        _LIVE_BOX = LiveBox
    box = _LIVE_BOX(children, **kw)
    box.argnb_name = name
    box.add_class(LIVE_CLASS)  # its rendered view hides the static note (see the module doc)
    return box
