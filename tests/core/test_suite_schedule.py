"""``make test``'s two workers: a file's tests run on one worker and its module fixture once, and
both workers share one response cache for the run (not the developer's).

A real pytest-xdist run over a scratch suite with this repository's hooks: the check that failed
silently when pytest 9.2 stopped reading the ``@group`` suffix pytest-xdist's ``loadgroup``
writes (every module fixture of the suite then ran once per worker).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from tests.conftest import RUN_CACHE, unit

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = (
    "from tests.conftest import pytest_collection_modifyitems, pytest_xdist_make_scheduler\n"
    "from tests.conftest import pytest_configure, pytest_unconfigure\n"
)
MODULE = """
import os
import pytest

@pytest.fixture(scope="module")
def once():
    with open(os.environ["LOG"], "a") as log:
        log.write(f"setup {{__name__}} {{os.getpid()}}\\n")

@pytest.mark.parametrize("i", range({n}))
def test_x(once, i):
    with open(os.environ["LOG"], "a") as log:
        log.write(f"test {{__name__}} {{os.getpid()}} {{os.environ['ARGNB_CACHE_DIR']}}\\n")
"""


def test_a_file_runs_on_one_worker_and_its_module_fixture_once_and_both_share_a_run_cache(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTEST)
    for name, n in (("test_big", 8), ("test_mid", 5), ("test_small", 3), ("test_tiny", 2)):
        (suite / f"{name}.py").write_text(MODULE.format(n=n))
    log = tmp_path / "log.txt"
    env = {**os.environ, "LOG": str(log), "PYTHONPATH": str(ROOT)}
    for var in (RUN_CACHE, "ARGNB_CACHE_DIR"):  # this run's: the scratch run makes its own
        env.pop(var, None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    cmd += ["-n", "2", "--dist", "loadfile", "--no-loadscope-reorder", str(suite)]
    run = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    setups: dict[str, int] = defaultdict(int)
    workers: dict[str, set[str]] = defaultdict(set)
    caches: set[str] = set()
    for line in log.read_text().splitlines():
        what, module, pid, *cache = line.split()
        if what == "setup":
            setups[module] += 1
        else:
            workers[module].add(pid)
            caches.update(cache)
    assert dict(setups) == {m: 1 for m in ("test_big", "test_mid", "test_small", "test_tiny")}
    assert all(len(pids) == 1 for pids in workers.values()), dict(workers)
    assert len(set().union(*workers.values())) == 2, "both workers should get work"
    (cache,) = caches  # one folder for both workers: nbval's kernels and the site build inherit it
    assert Path(cache).parent == Path(tempfile.gettempdir())
    assert not Path(cache).exists(), "the run's cache should go with the run"


def test_each_browser_notebook_is_a_unit_of_its_own_and_any_other_test_goes_with_its_file():
    a = "tests/browser/test_notebooks.py::test_notebook_in_the_browser[04_retrieval_debate.ipynb]"
    b = "tests/browser/test_notebooks.py::test_notebook_in_the_browser[05_roundtable.ipynb]"
    assert unit(a) != unit(b)
    assert unit("tests/site/test_site.py::test_x[a@b]") == "tests/site/test_site.py"
    assert unit("notebooks/01_fallacy_deliberation.ipynb::Cell 3") == (
        "notebooks/01_fallacy_deliberation.ipynb"
    )
