"""A Sphinx extension that takes the build machine's paths out of the pages.

Lessons print where things are (``argnb doctor``: the embedded model's file, the config file); on
a published site those would show the builder's checkout, virtual environment and home folder.
After a page is read (and its notebook executed), every text in its doctree -- prose, outputs,
raw HTML -- has each such folder (``ARGNB_SITE_REDACT``, set by the build) followed by ``/``
replaced with ``…/``, as the README writes it. Only a folder followed by ``/`` is a path: prose
that names ``/root`` as a place stays as written.
"""

from __future__ import annotations

import os
from typing import Any

ENV = "ARGNB_SITE_REDACT"


def prefixes() -> list[str]:
    """The folders to hide, longest first (a venv inside the checkout before the checkout)."""
    found = {p.rstrip("/") for p in os.environ.get(ENV, "").split(os.pathsep) if len(p) > 1}
    return sorted(found, key=len, reverse=True)


def redact(text: str, folders: list[str]) -> str:
    """``text`` with ``<folder>/`` written as ``…/`` for each folder."""
    for folder in folders:
        text = text.replace(folder + "/", "…/")
    return text


def _doctree_read(app: Any, doctree: Any) -> None:
    from docutils import nodes

    folders = prefixes()
    if not folders:
        return
    for node in list(doctree.findall(nodes.Text)):
        new = redact(str(node), folders)
        if new != str(node):
            node.parent.replace(node, nodes.Text(new))


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-read", _doctree_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
