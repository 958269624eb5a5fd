"""The dialectic prompts: Markdown templates in this folder, read by :mod:`argnb.prompts`.

Each file is one template with ``$name`` placeholders, so an instructor can read and adapt the
wording without touching the protocol. Values are substituted as text: a ``$`` inside a stance or
a model answer is never interpreted.
"""

from __future__ import annotations

from argnb import prompts
from argnb.errors import ArgnbError

NAMES = ("system", "argue", "attack", "characterize", "generalize", "answer", "repair")


def fixed(*names: str) -> tuple[str, ...]:
    """The fixed words of templates (placeholders as wildcards): what an agent that recites
    them echoes (:func:`argnb.gate.static`); its stance and the arguments it quotes are values."""
    from argnb.gate import static

    out: tuple[str, ...] = ()
    for name in names or NAMES:
        out += static(prompts.load("argnb.dialectic", name))
    return out


def render(name: str, **values: object) -> str:
    """Fill the template ``name`` (one of :data:`NAMES`); every placeholder must be given."""
    if name not in NAMES:
        raise ArgnbError(f"no dialectic prompt {name!r}", hint=f"known: {', '.join(NAMES)}")
    return prompts.load("argnb.dialectic", name).render(**values).strip()
