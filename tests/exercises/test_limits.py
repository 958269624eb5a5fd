"""Limits per submission: a control group where one can be made, else the watchdog's measure."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from argnb.exercises import cgroups

HOG = "b = bytearray(300 * 2**20)\nb[::4096] = b'x' * len(b[::4096])\nprint('held')"


def test_a_control_group_ends_what_goes_over_its_memory_and_leaves_nothing():
    group = cgroups.create(memory_mb=100, processes=64)
    if group is None:
        pytest.skip("no control group can be made here (the watchdog applies)")
    join = "import sys\nfor p in sys.argv[1:]:\n    open(p, 'w').write('0')\n"
    try:
        done = subprocess.run(
            [sys.executable, "-c", join + HOG, *group.procs],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == -9 and "held" not in done.stdout  # killed at 100 MB
        assert group.oom_killed()
    finally:
        group.remove()
    assert not any(d.exists() for d in group.dirs)


def test_the_watchdog_measures_a_whole_process_tree():
    child = subprocess.Popen(
        [sys.executable, "-c", HOG + "\nimport time\ntime.sleep(30)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        total, pids = cgroups.tree_rss(os.getpid())
        assert child.pid in pids and total > 300 * 2**20
    finally:
        child.kill()
        child.wait()
