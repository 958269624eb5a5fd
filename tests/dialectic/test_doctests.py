"""The examples in the docstrings are part of the documentation: keep them true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "argnb.dialectic",
    "argnb.dialectic.attacks",
    "argnb.dialectic.novelty",
    "argnb.dialectic.semantics",
    "argnb.maps.graph",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
