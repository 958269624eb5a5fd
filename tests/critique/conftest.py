"""Fixtures for the critique tests: the example dataset written for argnb."""

from __future__ import annotations

import pytest

from argnb.critique.data import CritiqueDataset, load_examples


@pytest.fixture(scope="session")
def examples() -> CritiqueDataset:
    return load_examples()
