"""The dialectic prompts: Markdown templates in this folder, read by :mod:`argnb.prompts`.

Each file is one template with ``$name`` placeholders, so an instructor can read and adapt the
wording without touching the protocol. Values are substituted as text: a ``$`` inside a stance or
a model answer is never interpreted.
"""

from __future__ import annotations

from argnb import prompts
from argnb.errors import ArgnbError

NAMES = ("system", "argue", "attack", "characterize", "generalize", "answer", "repair")


def render(name: str, **values: object) -> str:
    """Fill the template ``name`` (one of :data:`NAMES`); every placeholder must be given."""
    if name not in NAMES:
        raise ArgnbError(f"no dialectic prompt {name!r}", hint=f"known: {', '.join(NAMES)}")
    return prompts.load("argnb.dialectic", name).render(**values).strip()
