"""One prompt loader and one answer-schema base for every module."""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys

import pytest

import argnb
from argnb.errors import ArgnbError
from argnb.llm.answer import Answer, unbounded
from argnb.prompts import load, parse, prompts_dir


def test_sections_placeholders_and_errors(tmp_path):
    p = parse("t", "<!-- about $x -->\n## system\nBe $tone.\n## user\nCost: $$5 for $item\n")
    assert sorted(p.sections) == ["system", "user"] and p.placeholders("user") == {"item"}
    assert p.render("user", item="tea") == "Cost: $5 for tea"
    with pytest.raises(ArgnbError, match="needs a value for 'tone'"):
        p.render("system")
    with pytest.raises(ArgnbError, match="no section"):
        p.render("assistant")
    assert parse("b", "Just $one text.").render(one="a") == "Just a text."
    with pytest.raises(ArgnbError, match="write a literal dollar sign"):
        parse("c", "costs $5").render()
    with pytest.raises(ArgnbError, match="no '## section'"):
        parse("d", "text", sectioned=True)
    # a value's own $ is never interpreted
    assert parse("e", "$a").render(a="$b") == "$b"


def test_an_adapted_copy_is_read_from_its_folder(tmp_path):
    (tmp_path / "baseline.md").write_text("Judge: $position / $critique", encoding="utf-8")
    p = load("argnb.critique", "baseline", tmp_path)
    assert p.render(position="P", critique="C") == "Judge: P / C"
    with pytest.raises(ArgnbError, match="no prompt template"):
        load("argnb.critique", "nope")


@pytest.mark.parametrize(
    "package", [f"argnb.{m}" for m in ("fallacy", "dialectic", "critique", "debate", "roundtable")]
)
def test_every_shipped_template_parses(package):
    assert list(prompts_dir(package).glob("*.md"))
    for path in prompts_dir(package).glob("*.md"):
        prompt = load(package, path.stem)
        for section in prompt.sections:
            prompt.placeholders(section)  # no malformed $ anywhere


def _all_answer_schemas() -> list[type]:
    for mod in pkgutil.walk_packages(argnb.__path__, "argnb."):
        importlib.import_module(mod.name)
    found, todo = [], [Answer]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            module = sys.modules.get(sub.__module__)
            # the package's own schemas: not ones made by tests or doctest examples
            if sub.__module__.startswith("argnb.") and getattr(module, sub.__name__, None) is sub:
                found.append(sub)
    return found


def test_every_answer_schema_bounds_its_strings_and_lists_and_sends_no_docstring():
    schemas = _all_answer_schemas()
    assert len(schemas) >= 10
    for schema in schemas:
        assert unbounded(schema) == [], schema.__name__
        js = schema.model_json_schema()
        assert "description" not in js and "$defs" not in js, schema.__name__


def test_prompts_show_and_copy_work_without_a_clone(tmp_path):
    """What the lessons point learners at, instead of paths inside the package."""
    import argnb
    from argnb.errors import ArgnbError

    listing = argnb.prompts.show("fallacy")
    assert "deliberate" in listing.text and "argnb.fallacy" in listing.title
    one = argnb.prompts.show("argnb.fallacy", "deliberate")
    assert "$argument" in one.text and "```markdown" in one._repr_markdown_()
    with pytest.raises(ArgnbError, match="no prompt 'nothing'"):
        argnb.prompts.show("fallacy", "nothing")
    copied = argnb.prompts.copy("fallacy", tmp_path / "mine")
    (copied / "cot.md").write_text("edited")
    argnb.prompts.copy("fallacy", copied)
    assert (copied / "cot.md").read_text() == "edited", "an edited copy is kept"
    assert (copied / "deliberate.md").exists()


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda d: argnb.prompts.show("../../etc"), "no module '../../etc' with prompts"),
        (lambda d: argnb.prompts.show("exercises"), "no module 'exercises' with prompts"),
        (lambda d: argnb.prompts.show("fallacy", "../../../README"), "no prompt '../../../README'"),
        (lambda d: argnb.prompts.show("fallacy", "/etc/passwd"), "no prompt '/etc/passwd'"),
        (lambda d: argnb.prompts.copy("exercises", d / "mine"), "no module 'exercises'"),
        (lambda d: argnb.prompts.copy("../dialectic", d / "mine"), "no module '../dialectic'"),
        (lambda d: argnb.prompts.copy("fallacy", d / "taken.md"), "is a file, not a folder"),
        (lambda d: argnb.prompts.copy("fallacy", d / "taken.md" / "x"), "cannot copy"),
    ],
)
def test_prompts_show_and_copy_refuse_what_is_not_a_modules_prompt(tmp_path, call, says):
    """A path, a module without prompts or a file as the target: one clear error naming what
    exists, nothing read outside a module's prompts folder and nothing written."""
    (tmp_path / "taken.md").write_text("mine")
    with pytest.raises(ArgnbError, match=re.escape(says)) as info:
        call(tmp_path)
    assert "one of:" in str(info.value) or "folder" in str(info.value)
    assert (tmp_path / "taken.md").read_text() == "mine"
    assert not (tmp_path / "mine").exists()
    assert argnb.prompts.modules_with_prompts() == [
        "critique", "debate", "dialectic", "fallacy", "roundtable"
    ]  # fmt: skip
