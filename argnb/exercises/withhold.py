"""Withheld means unreachable: the files a graded kernel must not read when an exercise withholds
functions (``### NOT AVAILABLE:``).

The setup cell (:mod:`.build`) replaces a withheld function by a stub in every module already
loaded, but that alone leaves the code one step away: the module's source can be read and run
again, the module popped from ``sys.modules`` and imported afresh, its compiled cache loaded, a
helper process started that imports it, or the library's other functions composed into the same
answer. So the kernel's sandbox (never the checker's, which computes the expected values with the
real ones) gets, bound read-only over the real files:

* for a function of ours (``argnb...``): its module's source rewritten so that each withheld
  function raises and says so (the module's other functions, which lessons use, stay), and over
  the module's compiled caches the rewritten module, compiled (so loading a cache by hand meets
  the same note);
* for a function of any other library (``py_arg...``): the whole library, replaced by a package
  whose import says it is withheld. Its other functions would rebuild the answer.

Without bubblewrap (``--sandbox none``) nothing can be masked: only the stubs hold.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path

NOTE = "{name} is not available in this exercise: write it yourself"
LIBRARY_NOTE = (
    "{name} is withheld in this exercise (it would do the exercise for you): write it yourself"
)


@dataclass(frozen=True)
class Mask:
    """A file (``data``) or, with ``package``, a folder holding ``__init__.py`` = ``data``,
    bound over ``target`` in the kernel's sandbox."""

    target: str
    data: bytes
    package: bool = False


def _compiled(source: str, path: Path) -> bytes:
    """``source`` as this Python's cache file (PEP 552, checked against the source's hash)."""
    import importlib.util
    import marshal

    data = source.encode("utf-8")
    code = compile(data, str(path), "exec", dont_inherit=True)
    flags = (0b11).to_bytes(4, "little")  # hash-based, checked
    return (
        importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(data) + marshal.dumps(code)
    )


def _stubbed(source: str, module: str, names: set[str]) -> str:
    """``source`` with the top-level functions ``names`` raising :data:`NOTE`."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names:
            note = NOTE.format(name=f"{module}.{node.name}")
            node.body = [
                ast.Raise(
                    exc=ast.Call(ast.Name("RuntimeError", ast.Load()), [ast.Constant(note)], []),
                    cause=None,
                )
            ]
    head = f"# withheld while grading: {', '.join(sorted(names))}\n"
    return head + ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _library_paths(top: str) -> list[Path]:
    """Every copy of the top-level package (or module) ``top`` on the import path."""
    found: list[Path] = []
    for entry in sys.path:
        base = Path(entry or ".")
        for candidate in (base / top, base / f"{top}.py"):
            if candidate.exists() and candidate.resolve() not in found:
                found.append(candidate.resolve())
    return found


def masks(withheld: tuple[str, ...]) -> tuple[Mask, ...]:
    """What to bind over in the kernel's sandbox so that none of ``withheld`` can be reached.

    Made afresh for every notebook (a few milliseconds): a cache file compiled since the last
    one must be masked too."""
    ours: dict[Path, tuple[str, set[str]]] = {}
    libraries: dict[str, list[Path]] = {}
    for dotted in withheld:
        top = dotted.split(".")[0]
        if top != "argnb":
            libraries[top] = _library_paths(top)
            continue
        where, _, attr = dotted.rpartition(".")
        try:
            real = inspect.unwrap(getattr(importlib.import_module(where), attr))
            module = sys.modules[real.__module__]
            file = Path(inspect.getsourcefile(module) or "").resolve()
        except Exception:  # (a name that is not there withholds nothing)
            continue
        if file.suffix == ".py" and file.is_file():
            ours.setdefault(file, (module.__name__, set()))[1].add(real.__name__)
    out: list[Mask] = []
    tag = sys.implementation.cache_tag
    for file, (module, names) in ours.items():
        stub = _stubbed(file.read_text(encoding="utf-8"), module, names)
        out.append(Mask(str(file), stub.encode("utf-8")))
        for cache in sorted((file.parent / "__pycache__").glob(f"{file.stem}.*.pyc")):
            mine = cache.name.startswith(f"{file.stem}.{tag}.")
            out.append(Mask(str(cache.resolve()), _compiled(stub, file) if mine else b""))
    for top, paths in libraries.items():
        text = f"raise ImportError({LIBRARY_NOTE.format(name=top)!r})\n".encode()
        out.extend(Mask(str(path), text, package=path.is_dir()) for path in paths)
    return tuple(out)


def binds(withheld: list[str], folder: Path, visible: list[Path]) -> list[list[str]]:
    """Write the masks of ``withheld`` into ``folder``; bubblewrap's ``[source, target, "ro"]``
    for each whose target the sandbox would show (under one of ``visible``)."""
    out: list[list[str]] = []
    for i, mask in enumerate(masks(tuple(withheld))):
        target = Path(mask.target)
        if not any(target == v or v in target.parents for v in visible):
            continue
        folder.mkdir(mode=0o755, exist_ok=True)
        folder.chmod(0o755)
        source = folder / str(i)
        file = source / "__init__.py" if mask.package else source
        if mask.package:
            source.mkdir(mode=0o755)
        file.write_bytes(mask.data)
        file.chmod(0o644)
        out.append([str(source), str(target), "ro"])
    return out
