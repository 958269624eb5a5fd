"""One layout for every module (docs/architecture.md, "Where to change…"), checked on the code.

* every ``Answer`` a model fills in lives in ``<module>/schemas.py``, every transcript payload in
  ``<module>/payloads.py``, every exception class in ``argnb/errors.py``;
* HTML is built only in views (``views.py``, ``argnb/maps/``, widgets), and ``html.escape`` is
  called in one place (``argnb.views.esc``);
* no default backend is chosen (and no backend connected from the settings) outside entry points;
* every batch run that writes a file passes ``config=`` (so a resume into another run's file is
  refused);
* every module has the same files: ``schemas.py``, ``payloads.py``, ``prompts/``, ``views.py``
  (or only a widget), ``cli.py``, and its exercise graders in
  ``argnb/exercises/checks/<module>.py``.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import argnb

ROOT = Path(__file__).resolve().parents[2] / "argnb"
MODULES = ("fallacy", "dialectic", "critique", "debate", "roundtable")

#: files that build HTML although they are not called views: each is a view in all but name
HTML_ALSO = {
    "roundtable/feedback.py": "the feedback form (a widget)",
    "exercises/report.py": "the class report page (a view of class data)",
    "exercises/pages.py": "the grader's feedback page per student (a view of its scores)",
    "llm/testserver.py": "a fake server's login page, for the misbehaving-server tests",
}
#: modules where a backend may be chosen or connected from the settings: the entry points, and
#: the two helpers that connect an explicit ``backend:model`` spec for them
ENTRY_POINTS = re.compile(
    r"^(__init__|cli|cli_common|config|doctor|agents|[a-z]+/cli(_\w+)?|[a-z]+/widget"
    r"|widgets/\w+|debate/embed)\.py$"
)
_TAG = re.compile(
    r"(?<![\w])</?(div|span|table|tr|td|th|p|b|i|ul|ol|li|h[1-6]|details|summary|pre|small"
    r"|blockquote|br|a|iframe|style|script|html|body|code|em|strong)\b[^>]*>",
    re.I,
)


@functools.cache  # parsed once for the file's six tests (they only read the trees)
def _sources() -> dict[str, ast.Module]:
    return {
        p.relative_to(ROOT).as_posix(): ast.parse(p.read_text(encoding="utf-8"))
        for p in sorted(ROOT.rglob("*.py"))
    }


def _is_view(rel: str) -> bool:
    return (
        rel.endswith(("views.py", "widget.py"))
        or rel.startswith(("maps/", "widgets/"))
        or rel in HTML_ALSO
    )


def _docstrings(tree: ast.Module) -> set[int]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = n.body[0] if n.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _subclasses(base: type) -> list[type]:
    for mod in pkgutil.walk_packages(argnb.__path__, "argnb."):
        importlib.import_module(mod.name)
    found, todo = [], [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("argnb."):
                found.append(sub)
    return found


def test_every_answer_schema_is_in_a_schemas_module():
    """Read from the source (a doctest's example class is not the package's): every class
    statement or ``create_model(__base__=...)`` that derives from an ``Answer``."""
    from argnb.llm.answer import Answer

    answers = {"Answer"} | {s.__name__ for s in _subclasses(Answer)}
    where = []
    for rel, tree in _sources().items():
        for n in ast.walk(tree):
            if isinstance(n, ast.ClassDef):
                bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in n.bases}
                if bases & answers and n.name != "Answer":
                    where.append((rel, n.name))
            elif isinstance(n, ast.Call) and getattr(n.func, "id", None) == "create_model":
                base = next((k.value for k in n.keywords if k.arg == "__base__"), None)
                if base is not None and ast.unparse(base).rsplit(".", 1)[-1] in answers:
                    where.append((rel, ast.unparse(n.args[0]) if n.args else "?"))
    assert len(where) >= 30
    bad = [f"{rel}: {name}" for rel, name in where if not rel.endswith("schemas.py")]
    assert bad == [], "Answer subclasses outside <module>/schemas.py: " + ", ".join(bad)


def test_every_payload_is_in_a_payloads_module():
    from argnb.transcript import Payload, Rejected

    payloads = [p for p in _subclasses(Payload) if p is not Rejected]  # the transcript's own
    assert {p.__module__ for p in payloads} == {f"argnb.{m}.payloads" for m in MODULES}


def test_every_exception_class_is_in_errors_py():
    found = {f"{e.__module__}.{e.__qualname__}" for e in _subclasses(BaseException)}
    bad = sorted(e for e in found if not e.startswith("argnb.errors."))
    assert bad == []


def test_html_is_built_only_in_views_and_escaped_in_one_place():
    built, escaped = [], []
    for rel, tree in _sources().items():
        docs = _docstrings(tree)
        for n in ast.walk(tree):
            if (
                isinstance(n, ast.Constant)
                and isinstance(n.value, str)
                and id(n) not in docs
                and _TAG.search(n.value)
                and not _is_view(rel)
            ):
                built.append(f"{rel}:{n.lineno}")
            if (
                isinstance(n, ast.Attribute)
                and n.attr == "escape"
                and isinstance(n.value, ast.Name)
                and n.value.id == "html"
                and rel != "views.py"
            ):
                escaped.append(f"{rel}:{n.lineno}")
    assert built == [], "HTML outside views: " + ", ".join(built)
    assert escaped == [], "use argnb.views.esc, not html.escape: " + ", ".join(escaped)


def test_the_scanner_sees_html_but_not_notation():
    assert _TAG.search("<b>x</b>") and _TAG.search("<div class='a'>")
    assert not _TAG.search("a claim is A<i>, its objections A<i>.x<k>") and not _TAG.search("1<2")


def test_no_default_backend_is_chosen_outside_entry_points():
    bad = []
    for rel, tree in _sources().items():
        if ENTRY_POINTS.match(rel):
            continue
        for n in ast.walk(tree):
            if (isinstance(n, ast.ImportFrom) and n.module == "argnb.config") or (
                isinstance(n, ast.Import) and any(a.name == "argnb.config" for a in n.names)
            ):
                bad.append(f"{rel}:{n.lineno} imports argnb.config")
            elif isinstance(n, ast.Name | ast.Attribute) and (
                getattr(n, "id", None) == "default_backend"
                or getattr(n, "attr", None) == "default_backend"
            ):
                bad.append(f"{rel}:{n.lineno} default_backend")
    assert bad == [], "; ".join(bad)


def test_every_batch_that_writes_a_file_passes_its_config():
    calls = []
    for rel, tree in _sources().items():
        for n in ast.walk(tree):
            if not isinstance(n, ast.Call):
                continue
            name = getattr(n.func, "id", None) or getattr(n.func, "attr", None)
            if name not in ("run_batch", "arun_batch"):
                continue
            kw = {k.arg for k in n.keywords}
            if None in kw:  # forwards **kw (the sync twin in batch.py)
                continue
            calls.append((f"{rel}:{n.lineno}", kw))
    assert len(calls) >= 6
    bad = [where for where, kw in calls if "out" in kw and "config" not in kw]
    assert bad == [], "run_batch(out=...) without config=: " + ", ".join(bad)


@pytest.mark.parametrize("module", MODULES)
def test_every_module_has_the_same_layout(module):
    folder = ROOT / module
    for name in ("__init__.py", "schemas.py", "payloads.py", "cli.py"):
        assert (folder / name).is_file(), f"argnb/{module}/{name}"
    # how it looks: views.py, or the widget alone where a module has no other picture (critique)
    assert (folder / "views.py").is_file() or (folder / "widget.py").is_file()
    assert list((folder / "prompts").glob("*.md")), f"argnb/{module}/prompts/*.md"
    assert (ROOT / "exercises" / "checks" / f"{module}.py").is_file()
    assert not (folder / "checks.py").exists(), "graders live in argnb/exercises/checks/"
    if (folder / "record.py").exists():  # the module's one reader of its transcript
        text = (folder / "record.py").read_text(encoding="utf-8")
        assert "transcript" in text.split('"""')[1].lower()


def test_teaching_modules_never_import_the_exercises():
    bad = []
    for rel, tree in _sources().items():
        if rel.split("/")[0] not in MODULES:
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("argnb.exercises"):
                bad.append(f"{rel}:{n.lineno}")
    assert bad == []


def test_the_where_to_change_table_names_files_that_exist():
    """docs/architecture.md's per-module table: every file it names is in that module, every
    ``module.name`` it names is defined there."""
    doc = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [
        ln for ln in doc.splitlines() if ln.startswith("| ") and ln.split("|")[1].strip() in MODULES
    ]
    assert {r.split("|")[1].strip() for r in rows} == set(MODULES)
    for row in rows:
        module = row.split("|")[1].strip()
        for ref in re.findall(r"`([a-z_]+)\.(py|[a-z_]+)`", row):
            stem, rest = ref
            path = ROOT / module / f"{stem}.py"
            assert path.is_file(), f"{module}: {stem}.py"
            if rest != "py":
                assert re.search(rf"^def {rest}\b", path.read_text(encoding="utf-8"), re.M)
        for name in re.findall(r"`([A-Z]\w+)`", row):  # result classes
            assert any(
                re.search(rf"^class {name}\b", p.read_text(encoding="utf-8"), re.M)
                for p in (ROOT / module).glob("*.py")
            ), f"{module}: class {name}"
