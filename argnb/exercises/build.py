"""The notebook the grader runs: the student's cells first, then the solution's checks.

``graded_notebook(student, solution)`` returns::

    [SETUP]  the student's code cells (their check cells dropped)  [RESTORE]  check, check, ...

* **SETUP** (before any student code) imports what the checks use, replaces the functions the
  exercise withholds (``### NOT AVAILABLE:``) by stubs that say so, and keeps a pristine copy of
  the machinery a student could rewrite: builtins, the argnb modules (functions, classes, data),
  the functions and classes of every other module loaded (``random.Random``, ...), IPython's
  exception and display handling, input and AST transformers, event callbacks, ``sys`` hooks
  and import machinery.
* **RESTORE** (after every student cell) puts that copy back, drops names that shadow a builtin
  or a check's import, and runs the solution's imports again, so the kernel answers the checker
  with the student's own functions on a working interpreter.
* **each check** is the solution's cell (hidden tests included). It never runs in the student's
  kernel: the runner hands it to the checker (:mod:`.checker`), which calls the student's
  functions through plain data and decides the verdict in its own process.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from argnb.exercises.markers import HIDDEN_BEGIN, HIDDEN_END, Check, MarkerError, check_of

#: cells the notebook itself marks as not for automatic runs (nbval's marker) are not run
SKIP = "NBVAL_SKIP"
#: the kernel-side name of the pristine copy (a module in sys.modules, gone after RESTORE)
VAULT = "_argnb_pristine"

SETUP = """\
def _argnb_setup(imports, withheld):
    import builtins, copy, importlib, sys, threading, types
    shell = get_ipython()
    scratch = {}
    for line in imports:
        try:
            exec(line, scratch)
        except Exception:
            pass
    for dotted in withheld:
        where, _, attr = dotted.rpartition(".")
        try:
            real = getattr(importlib.import_module(where), attr)
        except Exception:
            continue

        def stub(*args, _name=dotted, **kwargs):
            raise RuntimeError(_name + " is not available in this exercise: write it yourself")

        for mod in list(sys.modules.values()):
            d = getattr(mod, "__dict__", None)
            if isinstance(d, dict):
                for k in [k for k, v in list(d.items()) if v is real]:
                    d[k] = stub
    del scratch
    plain = (list, dict, set, tuple, frozenset, str, bytes, int, float, bool, type(None))

    def keep(value):
        if isinstance(value, plain):
            try:
                return copy.deepcopy(value)
            except Exception:
                return value
        return value

    modules = {
        name: (mod, {k: keep(v) for k, v in vars(mod).items()})
        for name, mod in list(sys.modules.items())
        if (name == "argnb" or name.startswith("argnb.")) and isinstance(mod, types.ModuleType)
    }
    code = (types.FunctionType, types.BuiltinFunctionType, type)
    others = {
        name: (mod, {k: v for k, v in vars(mod).items() if isinstance(v, code)})
        for name, mod in list(sys.modules.items())
        if name not in modules and isinstance(mod, types.ModuleType)
    }
    vault = types.ModuleType("%(vault)s")
    vault.state = {
        "imports": list(imports),
        "modules": modules,
        "others": others,
        "builtins": dict(vars(builtins)),
        "classes": [(c, dict(vars(c))) for c in type(shell).__mro__ if c is not object],
        "shell": {k: shell.__dict__[k] for k in (
            "CustomTB", "custom_exceptions", "display_pub", "displayhook",
            "display_formatter", "InteractiveTB", "SyntaxTB", "events",
            "input_transformer_manager", "compile") if k in shell.__dict__},
        "lists": {k: list(getattr(shell, k)) for k in (
            "input_transformers_cleanup", "input_transformers_post", "ast_transformers")},
        "callbacks": {k: list(v) for k, v in shell.events.callbacks.items()},
        "sys": {k: getattr(sys, k) for k in (
            "excepthook", "displayhook", "stdout", "stderr", "stdin", "breakpointhook",
            "unraisablehook")},
        "meta_path": list(sys.meta_path),
        "path_hooks": list(sys.path_hooks),
        "path": list(sys.path),
        "recursion": sys.getrecursionlimit(),
        "threading_excepthook": threading.excepthook,
    }
    sys.modules["%(vault)s"] = vault


_argnb_setup(%(imports)r, %(withheld)r)
del _argnb_setup
"""

RESTORE = """\
def _argnb_restore():
    import sys
    state = sys.modules.pop("%(vault)s").state
    import builtins, threading
    sys.settrace(None)
    sys.setprofile(None)
    threading.settrace(None)
    threading.setprofile(None)
    for k, v in state["sys"].items():
        setattr(sys, k, v)
    threading.excepthook = state["threading_excepthook"]
    sys.setrecursionlimit(state["recursion"])
    sys.meta_path[:] = state["meta_path"]
    sys.path_hooks[:] = state["path_hooks"]
    sys.path[:] = state["path"]
    sys.path_importer_cache.clear()
    b = vars(builtins)
    for k in [k for k in b if k not in state["builtins"]]:
        del b[k]
    b.update(state["builtins"])
    for cls, attrs in state["classes"]:
        for k in [k for k in vars(cls) if k not in attrs]:
            try:
                delattr(cls, k)
            except (AttributeError, TypeError):
                pass
        for k, v in attrs.items():
            if vars(cls).get(k, None) is not v and not k.startswith("__"):
                try:
                    setattr(cls, k, v)
                except (AttributeError, TypeError):
                    pass
    shell = get_ipython()
    for k in [k for k in list(shell.__dict__)
              if any(k in attrs for _, attrs in state["classes"]) and callable(shell.__dict__[k])]:
        del shell.__dict__[k]
    shell.__dict__.update(state["shell"])
    for k, v in state["lists"].items():
        getattr(shell, k)[:] = v
    shell.events.callbacks.clear()
    shell.events.callbacks.update({k: list(v) for k, v in state["callbacks"].items()})
    for name, (mod, attrs) in state["modules"].items():
        sys.modules[name] = mod
        d = vars(mod)
        for k in [k for k in d if k not in attrs]:
            del d[k]
        d.update(attrs)
    for name, (mod, attrs) in state["others"].items():
        sys.modules[name] = mod
        d = vars(mod)
        for k, v in attrs.items():
            if d.get(k) is not v:
                d[k] = v
    for name in [n for n in sys.modules if n == "argnb" or n.startswith("argnb.")]:
        if name not in state["modules"]:
            del sys.modules[name]
    ns = shell.user_ns
    for k in [k for k in ns if k in state["builtins"] and not k.startswith("_")]:
        del ns[k]
    for line in state["imports"]:
        exec(line, ns)


_argnb_restore()
del _argnb_restore
"""


#: what only code that tampers with the grader needs: a submission using any is flagged for review
SUSPICIOUS = (
    "addaudithook", "settrace", "setprofile", "ctypes", "gc.get_objects", "gc.get_referrers",
    "_argnb", "set_custom_exc", "showtraceback", "input_transformers", "ast_transformers",
    "events.register", "meta_path", "path_hooks", "excepthook", "displayhook", "unload_ext",
    "import builtins", "__builtins__", "f_lineno", "f_locals", "__code__", "sys.modules[",
    "f_back", "import inspect", "inspect.", "reload(", "spec_from_file_location",
    # routes to a withheld function's code (issue 37): another module runner, a helper
    # process, the compiled cache, the source file run by hand
    "runpy", "run_module", "run_path", "subprocess", "os.system", "os.popen", "os.exec",
    "os.spawn", "sys.executable", "multiprocessing", "marshal", "importlib", "__import__",
    "__pycache__", "__file__", "exec(",
)  # fmt: skip


def suspicious(student: Any) -> list[str]:
    """The :data:`SUSPICIOUS` names a student's code cells use (none in an honest notebook)."""
    code = "\n".join(c.get("source", "") for c in student.cells if c.get("cell_type") == "code")
    return [name for name in SUSPICIOUS if name in code]


def _imports(cells: list[Any]) -> list[str]:
    """Top-level import statements of the solution's non-check code cells (what checks use)."""
    out: list[str] = []
    for cell in cells:
        if cell.get("cell_type") != "code" or _check_id(cell) is not None:
            continue
        try:
            tree = ast.parse(_python_only(cell.source))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.append(ast.unparse(node))
    return list(dict.fromkeys(out))


def _python_only(source: str) -> str:
    """The cell without IPython's magics and shell lines (``%load_ext ...``, ``!pip ...``)."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
    )


def _check_id(cell: Any) -> str | None:
    try:
        marked = check_of(cell)
    except MarkerError:
        return None
    return marked[0] if marked else None


def mark_hidden(source: str) -> str:
    """Wrap top-level hidden tests so a failure there says it was a hidden test."""
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == HIDDEN_BEGIN and not line.startswith((" ", "\t")):
            inside = True
            out.append("try:")
        elif line.strip() == HIDDEN_END and inside:
            inside = False
            out += [
                "    pass",
                "except Exception as _argnb_hidden:",
                "    raise AssertionError(",
                "        'hidden test: ' + (str(_argnb_hidden) or type(_argnb_hidden).__name__)",
                "    ) from None",
            ]
        elif inside:
            out.append("    " + line if line.strip() else line)
        else:
            out.append(line)
    return "\n".join(out)


def graded_notebook(student: Any, solution: Any) -> tuple[Any, dict[int, Check], list[str]]:
    """The notebook to run (see the module docstring), ``{cell index: check}`` and notes.

    Each check cell says which check it is in ``metadata.argnb.check``; the notebook's
    ``metadata.argnb`` holds the imports the checker makes and the functions withheld.
    """
    import nbformat

    from argnb.exercises.markers import not_available

    nb = copy.deepcopy(student)
    imports = _imports(solution.nb.cells)
    withheld = not_available(solution.nb)
    setup = SETUP % {"vault": VAULT, "imports": imports, "withheld": withheld}
    cells = [nbformat.v4.new_code_cell(setup)]
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        if _check_id(cell) is not None:
            continue  # the solution's version runs after every student cell
        cell.outputs, cell.execution_count = [], None
        if SKIP in cell.source:
            cell.source = f"# {SKIP}: not run while grading"
        cells.append(cell)
    cells.append(nbformat.v4.new_code_cell(RESTORE % {"vault": VAULT}))
    where: dict[int, Check] = {}
    for check in solution.checks:
        cell = nbformat.v4.new_code_cell(check.source)
        cell.metadata["argnb"] = {"check": check.id}
        where[len(cells)] = check
        cells.append(cell)
    nb.cells = cells
    nb.metadata["argnb"] = {"imports": imports, "withheld": withheld}
    return nb, where, []
