"""Run a notebook's code cells in this process (no kernel), to test what its cells do and show.
Only for cells that call no model."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path
from typing import Any

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def code_cells(name: str) -> list[str]:
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _run(source: str, name: str, ns: dict[str, Any]) -> Any:
    """Execute one cell; return the value of its last expression (what Jupyter would show)."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, name, "exec"), ns)
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), name, "eval"), ns)


def run_cells(name: str, *markers: str) -> tuple[dict[str, Any], Any]:
    """Execute, in order and in the notebook's folder, the code cells of ``name`` that hold one of
    ``markers``; return the namespace and what the last of them shows."""
    cells = code_cells(name)
    chosen = [c for c in cells if any(m in c for m in markers)]
    for m in markers:
        assert any(m in c for c in chosen), f"no cell of {name} contains {m!r}"
    ns: dict[str, Any] = {"__name__": "__notebook__"}
    shown = None
    here = os.getcwd()
    os.chdir(NOTEBOOKS)
    try:
        for source in chosen:
            shown = _run(source, name, ns)
    finally:
        os.chdir(here)
    return ns, shown


def run_until(name: str, marker: str) -> dict[str, Any]:
    """Execute every code cell of ``name`` up to and including the one holding ``marker``."""
    cells = code_cells(name)
    assert any(marker in c for c in cells), f"no cell of {name} contains {marker!r}"
    upto = next(i for i, c in enumerate(cells) if marker in c)
    ns: dict[str, Any] = {"__name__": "__notebook__"}
    here = os.getcwd()
    os.chdir(NOTEBOOKS)
    try:
        for source in cells[: upto + 1]:
            _run(source, name, ns)
    finally:
        os.chdir(here)
    return ns
