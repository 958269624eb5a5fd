"""Prompt templates, kept as Markdown files in this folder so an instructor can read and edit them.

A template file is a sequence of sections, each starting with a ``## <name>`` line (``system``,
``user``, ``example``); text before the first section (an HTML comment) documents the file.
Placeholders use :class:`string.Template` syntax (``$argument``), so braces in a prompt need no
escaping and a ``$`` inside an inserted argument is left alone.

>>> t = load("zero_shot")
>>> sorted(t.sections)
['system', 'user']
>>> "Argument: Cats are mammals." in t.render("user", argument="Cats are mammals.")
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from string import Template

from argnb.errors import ArgnbError

PROMPTS_DIR = Path(__file__).parent
_SECTION = re.compile(r"^## +([A-Za-z_]+) *$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True)
class PromptTemplate:
    """The named sections of one template file."""

    name: str
    sections: dict[str, str]

    def render(self, section: str, **values: object) -> str:
        """Fill one section; a missing placeholder value is an error, not a silent gap."""
        if section not in self.sections:
            raise ArgnbError(
                f"prompt {self.name!r} has no section {section!r}",
                hint=f"sections: {', '.join(self.sections)}",
            )
        try:
            return Template(self.sections[section]).substitute(
                {k: str(v) for k, v in values.items()}
            )
        except KeyError as exc:
            raise ArgnbError(
                f"prompt {self.name!r}, section {section!r} needs a value for {exc.args[0]!r}"
            ) from None

    def placeholders(self, section: str) -> set[str]:
        """Names a section expects (what ``render`` must be given)."""
        return {
            m.group("named") or m.group("braced")
            for m in Template.pattern.finditer(self.sections[section])
            if m.group("named") or m.group("braced")
        }


def parse(name: str, text: str) -> PromptTemplate:
    """Split a template file into its sections."""
    body = _COMMENT.sub("", text)
    parts = _SECTION.split(body)
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if not sections:
        raise ArgnbError(f"prompt {name!r} has no '## section' headings")
    return PromptTemplate(name, sections)


@lru_cache(maxsize=32)
def load(name: str, directory: str | None = None) -> PromptTemplate:
    """Load ``prompts/<name>.md`` (or ``<directory>/<name>.md`` for a customised copy)."""
    path = Path(directory or PROMPTS_DIR) / f"{name}.md"
    if not path.exists():
        raise ArgnbError(f"no prompt template at {path}", hint="check the name or the directory")
    return parse(name, path.read_text(encoding="utf-8"))
