"""Prompt templates: Markdown files beside the code that uses them, one loader for all modules.

A template file is either one text or a sequence of sections, each starting with a ``## <name>``
line (``system``, ``user``, ``example``, ...); text before the first section and HTML comments
document the file and are never sent. Placeholders use :class:`string.Template` syntax
(``$argument``), so braces need no escaping and a ``$`` inside an inserted value is left alone;
a literal dollar sign in a template is written ``$$``. A missing value is an error, never a gap.

An instructor adapts wording by copying a module's ``prompts/`` folder and passing the copy's
directory (``load("argnb.fallacy", "zero_shot", directory="my_prompts")``).

>>> t = load("argnb.fallacy", "zero_shot")
>>> sorted(t.sections)
['system', 'user']
>>> "Argument: Cats are mammals." in t.render("user", argument="Cats are mammals.")
True
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from string import Template

from argnb.errors import ArgnbError

BODY = "body"
_SECTION = re.compile(r"^## +([A-Za-z_][A-Za-z0-9_]*) *$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
#: the files of a prompts folder: templates, and the schemas and lists they go with
_SUFFIXES = (".md", ".json", ".yaml")


@dataclass(frozen=True)
class Prompt:
    """The named sections of one template file (a file without headings has one: ``body``)."""

    name: str
    sections: dict[str, str]

    def render(self, section: str = BODY, /, **values: object) -> str:
        """Fill one section; every placeholder needs a value."""
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
        except ValueError as exc:
            raise ArgnbError(
                f"prompt {self.name!r}, section {section!r}: {exc}",
                hint="write a literal dollar sign as $$",
            ) from None

    def placeholders(self, section: str = BODY) -> set[str]:
        """Names a section expects (what ``render`` must be given)."""
        return {
            m.group("named") or m.group("braced")
            for m in Template.pattern.finditer(self.sections[section])
            if m.group("named") or m.group("braced")
        }


def parse(name: str, text: str, *, sectioned: bool = False) -> Prompt:
    """Split a template file into its sections (``sectioned``: headings are required)."""
    body = _COMMENT.sub("", text)
    parts = _SECTION.split(body)
    if len(parts) == 1:
        if sectioned:
            raise ArgnbError(f"prompt {name!r} has no '## section' headings")
        return Prompt(name, {BODY: body.strip()})
    return Prompt(name, {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)})


def prompts_dir(package: str) -> Path:
    """The ``prompts/`` folder of a package such as ``"argnb.fallacy"`` (found without importing it)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ArgnbError(f"no package {package!r} to load prompts from")
    return Path(next(iter(spec.submodule_search_locations))) / "prompts"


@lru_cache(maxsize=128)
def _load(path: Path, name: str, sectioned: bool) -> Prompt:
    if not path.is_file():
        raise ArgnbError(f"no prompt template at {path}", hint="check the name or the directory")
    return parse(name, path.read_text(encoding="utf-8"), sectioned=sectioned)


def load(
    package: str, name: str, directory: str | Path | None = None, *, sectioned: bool = False
) -> Prompt:
    """``<package>/prompts/<name>.md``, or ``<directory>/<name>.md`` for an adapted copy."""
    folder = Path(directory) if directory else prompts_dir(package)
    return _load(folder / f"{name}.md", name, sectioned)


def fingerprint(*folders: str | Path) -> str:
    """A short hash of every template in ``folders``: part of a run's configuration, so results
    made with other prompts are never mixed in when a run resumes."""
    h = hashlib.sha256()
    for folder in folders:
        for p in sorted(Path(folder).iterdir()):
            if p.suffix in _SUFFIXES:
                h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()[:12]


_MODULE = re.compile(r"[a-z][a-z0-9_]*")


def modules_with_prompts() -> list[str]:
    """The argnb modules that send prompts: the ones with a ``prompts/`` folder."""
    here = Path(__file__).resolve().parent
    return sorted(p.parent.name for p in here.glob("*/prompts") if p.is_dir())


def _folder(module: str) -> tuple[str, Path]:
    """``(package, its prompts/ folder)`` for a module name such as ``"fallacy"``. Anything else
    -- a path (``"../../etc"``), a module without prompts (``"exercises"``) -- is an error that
    lists the modules: :func:`show` and :func:`copy` never read outside a module's folder."""
    name = str(module).removeprefix("argnb.")
    known = modules_with_prompts()
    if not _MODULE.fullmatch(name) or name not in known:
        raise ArgnbError(
            f"argnb has no module {module!r} with prompts", hint=f"one of: {', '.join(known)}"
        )
    return f"argnb.{name}", prompts_dir(f"argnb.{name}")


def _names(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.md"))


@dataclass(frozen=True)
class Shown:
    """A prompt file (or a module's list of them) that reads well printed and in a notebook."""

    title: str
    text: str

    def __str__(self) -> str:
        return f"{self.title}\n\n{self.text}"

    def _repr_markdown_(self) -> str:
        fence = "~~~~" if "```" in self.text else "```"
        return f"**{self.title}**\n\n{fence}markdown\n{self.text}\n{fence}\n"


def show(module: str, name: str | None = None) -> Shown:
    """Read the prompts a module sends, from any install (no clone needed).

    ``show("fallacy")`` lists the module's templates; ``show("fallacy", "deliberate")`` shows one
    file whole, its comments included (they say what each placeholder is).

    >>> "deliberate" in show("fallacy").text
    True
    """
    package, folder = _folder(module)
    names = _names(folder)
    if name is None:
        listing = "\n".join(f"- {n}" for n in names)
        return Shown(f"prompts of {package} ({folder})", listing)
    if name not in names:  # only a listed name: never a path out of the folder
        raise ArgnbError(f"{package} has no prompt {name!r}", hint=f"one of: {', '.join(names)}")
    path = folder / f"{name}.md"
    return Shown(f"{package}: {name}.md", path.read_text(encoding="utf-8").strip())


def copy(module: str, to: str | Path) -> Path:
    """Copy a module's prompt templates into ``to`` to adapt them (pass ``prompt_dir=to``
    afterwards); a file already there is an edited copy and is kept."""
    import shutil

    _, folder = _folder(module)
    target = Path(to)
    if target.exists() and not target.is_dir():
        raise ArgnbError(f"{target} is a file, not a folder", hint="name a folder for the copies")
    try:
        target.mkdir(parents=True, exist_ok=True)
        for p in sorted(folder.iterdir()):
            if p.suffix in _SUFFIXES and not (target / p.name).exists():
                shutil.copyfile(p, target / p.name)
    except OSError as exc:
        raise ArgnbError(
            f"cannot copy the prompts into {target}: {exc.strerror or exc}",
            hint="name a folder you can write to",
        ) from None
    return target


#: the line between a turn's shared context and one agent's task (see :func:`context_first`)
TASK_MARK = "## Your task"


def context_first(context: str, task: str) -> str:
    """One message that starts with the turn's shared context and ends with this agent's task.

    Why: llama.cpp (like vLLM and SGLang) reuses only a token-identical prefix from the first
    token, so when every agent of a turn sends the same system text and this same ``context``,
    only the short task after it is evaluated again. Keep per-agent words out of ``context``.

    >>> a = context_first("Motion: tea.", "Judge it.")
    >>> b = context_first("Motion: tea.", "Summarise it.")
    >>> a[: len("Motion: tea.")] == b[: len("Motion: tea.")] and a.endswith("Judge it.")
    True
    """
    return f"{context.rstrip()}\n\n{TASK_MARK}\n{task.strip()}"
