"""The examples in docstrings are part of the documentation: every module's examples run here."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import argnb


def modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(argnb.__path__, "argnb."):
        spec = importlib.util.find_spec(info.name)
        if spec and spec.origin and ">>> " in Path(spec.origin).read_text(encoding="utf-8"):
            names.append(info.name)
    return names


MODULES = modules_with_examples()


def test_the_examples_are_found():
    assert {"argnb.agents", "argnb.prompts", "argnb.fallacy.deliberation"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
