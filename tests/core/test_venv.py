"""The venv `make` builds: what it leaves out on purpose, and why."""

from __future__ import annotations

import subprocess
import sys


def test_jsonschema_loads_without_building_the_iri_parsers():
    """``make`` uninstalls ``rfc3987-syntax``: it built its parsers on import, 2.8 s of CPU in
    every process that reads a notebook or starts a Jupyter server (no Jupyter schema checks an
    ``iri``); nbformat still validates notebooks without it."""
    code = (
        "import sys, nbformat\n"
        "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1')])\n"
        "nbformat.validate(nb)\n"
        "print('rfc3987_syntax' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out
