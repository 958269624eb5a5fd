"""``%load_ext argnb.exercises`` in a real kernel: a failed check shows its hint, not the checker."""

from __future__ import annotations

import os
import re
import tempfile

import nbformat
import pytest

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def unix_socket_kernel(folder: str):
    """A kernel manager whose kernel listens on Unix sockets in ``folder`` (short: a socket path
    has about 107 bytes), not on TCP ports another process may take first (``tests/conftest.py``)."""
    from jupyter_client.manager import AsyncKernelManager

    km = AsyncKernelManager(kernel_name="python3", transport="ipc")
    km.ip = os.path.join(folder, "k")
    return km


@pytest.mark.notebook
def test_failed_checks_show_messages_and_the_learners_frames_only():
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(s)
        for s in [
            "%load_ext argnb.exercises\nfrom argnb.exercises.checks.dialectic import check_grounded\n"
            "from argnb.exercises.checks import critique as checks",
            "check_grounded({'a'}, None)",
            "def mine(p, h, m):\n    return p[99]\n\nchecks.check_weighted_pairwise(mine)",
            "assert 1 == 2, 'my own assert'",
            "def (",
        ]
    ]
    with tempfile.TemporaryDirectory(prefix="argnb-kernel-") as folder:
        NotebookClient(nb, timeout=120, allow_errors=True, km=unix_socket_kernel(folder)).execute()
    errors = [[o for o in c.outputs if o.output_type == "error"] for c in nb.cells]
    assert errors[0] == []
    (check,), (own_bug,), (own_assert,), (syntax,) = errors[1:]
    text = [ANSI.sub("", "\n".join(e.traceback)) for e in (check, own_bug, own_assert, syntax)]

    assert check.ename == "AssertionError" and "missing" in check.evalue
    assert text[0].startswith("✗ 1 argument(s) are missing")
    assert "Traceback" not in text[0] and "grounded_labelling" not in text[0]

    assert own_bug.ename == "IndexError"
    assert "return p[99]" in text[1] and "argnb" not in text[1] and "ranking_pairs" not in text[1]

    assert (
        "my own assert" in text[2] and "assert 1 == 2" in text[2]
    )  # a learner's own traceback stays
    assert syntax.ename == "SyntaxError"
