"""The layering rules of docs/architecture.md, checked on the source (no imports needed).

* no import cycle anywhere in ``argnb`` -- counting imports inside functions too, since a lazy
  import that closes a cycle still ties the two modules together (``if TYPE_CHECKING:`` blocks
  are annotations, not imports, and do not count);
* the model layer (``argnb.llm``) never imports a protocol or a view;
* protocols and views never import a model client library: only ``argnb/llm`` may.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2] / "argnb"
CLIENTS = ("ollama", "openai", "llama_cpp")
PROTOCOL_PACKAGES = ("fallacy", "dialectic", "critique", "debate", "roundtable", "maps", "widgets")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def imports(path: Path) -> set[str]:
    """Every name ``path`` imports (absolute), outside TYPE_CHECKING blocks.

    ``from a.b import c`` yields ``a.b`` and ``a.b.c``; :func:`graph` keeps ``a.b.c`` when it is a
    module (importing a submodule is not importing its package's ``__init__`` code) and ``a.b``
    otherwise."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.update(f"{base}:{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def graph() -> nx.DiGraph:
    files = {module_name(p): p for p in ROOT.rglob("*.py")}
    g = nx.DiGraph()
    g.add_nodes_from(files)
    for name, path in files.items():
        for imported in imports(path):
            base, _, member = imported.partition(":")
            target = f"{base}.{member}" if f"{base}.{member}" in files else base
            if target in files and target != name:
                g.add_edge(name, target)
    return g


def test_the_scanner_sees_lazy_imports_and_skips_type_checking(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import argnb.x\n"
        "def f():\n    from argnb.y import z\n",
        encoding="utf-8",
    )
    global ROOT
    old, ROOT = ROOT, tmp_path
    try:
        assert "argnb.y:z" in imports(src) and "argnb.x" not in imports(src)
    finally:
        ROOT = old


def test_no_import_cycles():
    cycles = sorted(sorted(c) for c in nx.simple_cycles(graph()))
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles[:10])


def test_the_model_layer_imports_no_protocol():
    g = graph()
    above = tuple(f"argnb.{p}" for p in (*PROTOCOL_PACKAGES, "agents", "transcript"))
    bad = [(a, b) for a, b in g.edges if a.startswith("argnb.llm") and b.startswith(above)]
    assert bad == []


def test_only_the_model_layer_imports_client_libraries():
    bad = []
    for path in ROOT.rglob("*.py"):
        name = module_name(path)
        if name.startswith("argnb.llm"):
            continue
        used = {m.split(".")[0].split(":")[0] for m in imports(path)} & set(CLIENTS)
        if used:
            bad.append((name, sorted(used)))
    assert bad == []
