"""Prompt templates, kept as readable Markdown files next to the code that uses them.

Each file in ``prompts/`` is a :class:`string.Template` (``$name`` placeholders), so an instructor
can read and adapt the wording without touching the protocol. Values are substituted as text:
a ``$`` inside a stance or a model answer is never interpreted.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template

NAMES = ("system", "argue", "attack", "characterize", "generalize", "answer", "repair")


@cache
def template(name: str) -> Template:
    """The template called ``name`` (one of :data:`NAMES`)."""
    if name not in NAMES:
        raise KeyError(f"no prompt {name!r}; known: {', '.join(NAMES)}")
    text = resources.files("argnb.dialectic").joinpath(f"prompts/{name}.md").read_text("utf-8")
    return Template(text)


def render(name: str, **values: object) -> str:
    """Fill a template; every placeholder must be given (a missing one is a bug)."""
    return template(name).substitute({k: str(v) for k, v in values.items()}).strip()
