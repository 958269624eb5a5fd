"""The fallacy prompts: Markdown templates in this folder, read by :mod:`argnb.prompts`.

``load("zero_shot")`` is ``argnb.prompts.load("argnb.fallacy", "zero_shot")``; pass a
``directory`` to use an adapted copy of this folder.

>>> sorted(load("zero_shot").sections)
['system', 'user']
"""

from __future__ import annotations

from pathlib import Path

from argnb import prompts
from argnb.prompts import Prompt

PROMPTS_DIR = Path(__file__).parent
#: the template class (one for all modules), under the name this package used first
PromptTemplate = Prompt


def load(name: str, directory: str | Path | None = None) -> Prompt:
    """``prompts/<name>.md`` of the fallacy module (or ``<directory>/<name>.md``); the fallacy
    templates are sectioned (``## system``, ``## user``, ...)."""
    return prompts.load("argnb.fallacy", name, directory, sectioned=True)


def parse(name: str, text: str) -> Prompt:
    """Parse the text of a fallacy template (sections required)."""
    return prompts.parse(name, text, sectioned=True)


__all__ = ["PROMPTS_DIR", "Prompt", "PromptTemplate", "load", "parse"]
