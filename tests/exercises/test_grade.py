"""The grader: unit tests without a kernel, then real runs (marker ``notebook``)."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import nbformat
import pytest

from argnb.exercises import execute, jail, sandbox
from argnb.exercises import grade as g
from argnb.exercises.cli import main
from tests.exercises.conftest import grounded_exercise, grounded_submissions, toy_student, write_nb

# -- without a kernel ----------------------------------------------------------------------------


def test_submissions_as_folders_or_flat_files(tmp_path):
    write_nb(tmp_path / "ana" / "add.ipynb", ["1"])
    write_nb(tmp_path / "ana" / "notes.ipynb", ["1"])
    write_nb(tmp_path / "ben__add.ipynb", ["1"])
    (tmp_path / "readme.txt").write_text("hi")
    (tmp_path / "collected.json").write_text("{}")  # `argnb class collect`'s list: no warning
    found, warnings = g.find_submissions(tmp_path, ["add.ipynb"])
    assert found == {"ana": {"add.ipynb": tmp_path / "ana" / "add.ipynb"},
                     "ben": {"add.ipynb": tmp_path / "ben__add.ipynb"}}  # fmt: skip
    assert len(warnings) == 2
    with pytest.raises(g.GradingError):
        g.find_submissions(tmp_path / "empty", ["add.ipynb"])


def test_submissions_refuse_links_unpack_safely_and_escape_names(tmp_path):
    import os
    import tarfile
    import zipfile

    from argnb.exercises import submissions

    subs = tmp_path / "subs"
    write_nb(subs / "ana" / "add.ipynb", ["1"])
    (subs / "ben").mkdir()
    (subs / "ben" / "add.ipynb").symlink_to(subs / "ana" / "add.ipynb")
    (subs / "cem").symlink_to(subs / "ana", target_is_directory=True)
    with zipfile.ZipFile(subs / "dan.zip", "w") as z:
        link = zipfile.ZipInfo("sub/add.ipynb")
        link.external_attr = 0o120777 << 16
        z.writestr(link, "/etc/shadow")
        z.writestr("../../up.txt", "x")
        z.writestr("/abs.txt", "x")
    with tarfile.open(subs / "eve.tar", "w") as t:
        member = tarfile.TarInfo("add.ipynb")
        member.type, member.linkname = tarfile.LNKTYPE, "/etc/shadow"
        t.addfile(member)
    os.mkdir(os.path.join(os.fsencode(subs), b"caf\xe9\nfake line"))
    found, warnings = g.find_submissions(subs, ["add.ipynb"], tmp_path / "unpacked")
    assert found["ana"] == {"add.ipynb": subs / "ana" / "add.ipynb"}
    for who in ("ben", "cem", "dan", "eve"):
        assert "is a link, which the grader does not follow" in found[who]["add.ipynb"], who
    odd = next(s for s in found if s.startswith("caf"))
    assert odd.startswith("caf\\xe9\\u000afake line~") and "\n" not in odd
    assert sum("absolute path or '..'" in w for w in warnings) == 2
    assert not (tmp_path / "up.txt").exists() and not Path("/abs.txt").exists()
    with pytest.raises(g.GradingError, match="is a link"):
        submissions.read_notebook(subs / "ben" / "add.ipynb")
    assert submissions.page_name("ana") == "ana"
    long = submissions.page_name("n" * 251)
    assert len(long) < 64 and long != submissions.page_name("n" * 250)


def test_a_refused_archive_says_why_without_the_graders_folders(tmp_path):
    import zipfile

    from argnb.exercises import submissions

    with zipfile.ZipFile(tmp_path / "ana.zip", "w") as z:  # a file, then a file inside it
        z.writestr("x.ipynb", "{}")
        z.writestr("x.ipynb/y", "{}")
    with pytest.raises(g.GradingError) as err:
        submissions.unpack(tmp_path / "ana.zip", tmp_path / "grader-work" / "ana")
    assert str(err.value).startswith("cannot unpack ana.zip: ") and "File exists" in str(err.value)
    assert str(tmp_path) not in str(err.value) and "grader-work" not in str(err.value)


def test_checks_run_after_every_student_cell_and_never_in_the_kernel(toy):
    (solution,) = g.load_solutions(toy / "99_toy").values()
    student = nbformat.v4.new_notebook()
    student.cells = [
        nbformat.v4.new_code_cell(s)
        for s in toy_student("return 3", check="### CHECK add: 2 points\npass  # trust me")[:3]
    ]
    student.cells.append(nbformat.v4.new_code_cell("# NBVAL_SKIP\nimport time; time.sleep(999)"))
    nb, where, _ = g.graded_notebook(student, solution)
    sources = [c.source for c in nb.cells]
    assert "_argnb_setup" in sources[0] and "_argnb_restore" in sources[-3]
    assert not any("trust me" in s for s in sources)  # the student's check cell is dropped
    assert not any("sleep" in s for s in sources)  # NBVAL_SKIP cells do not run
    assert [c.id for c in where.values()] == ["add", "data"]
    assert sorted(where) == [len(nb.cells) - 2, len(nb.cells) - 1]
    assert [nb.cells[i].metadata["argnb"]["check"] for i in sorted(where)] == ["add", "data"]
    # the checker's job: the check cells, hidden tests included; none of it before them
    job = execute._job(nb, 5)
    assert [c["index"] for c in job["checks"]] == sorted(where)
    assert "negative numbers" in job["checks"][0]["source"]
    assert not any("negative numbers" in s for s in sources[: min(where)])
    assert job["imports"] == [] and nb.metadata["argnb"]["withheld"] == []


def test_the_checker_runs_a_check_on_plain_data_from_a_fake_kernel():
    """A check cell runs in the checker with the student's names as proxies; only values cross."""
    import socket
    import threading

    from argnb.exercises import checker, serve

    ours, theirs = socket.socketpair()
    student = {"add": lambda a, b: abs(a) + abs(b), "answer": {1, 2}, "grow": list.append}

    def kernel():
        stream = theirs.makefile("rwb")
        for line in stream:
            request = __import__("json").loads(line)
            if request.get("op") == "bye":
                break
            reply = serve.answer(request, student)
            stream.write(__import__("json").dumps(reply).encode() + b"\n")
            stream.flush()

    threading.Thread(target=kernel, daemon=True).start()
    k = checker.Kernel(ours, 10)
    ns, failed = checker.setup(["import math"])
    assert failed == []
    own = set(ns)
    src = "### CHECK add: 2 points\nassert add(1, 2) == 3\nassert answer == {1, 2}\nmath.pi"
    assert checker.run_check(src, ns, k, own) == {"status": "ok", "text": "3.141592653589793"}
    hidden = "assert add(1, 1) == 2\n### BEGIN HIDDEN TESTS\nassert add(-1, 1) == 0, 'neg'\n"
    hidden += "### END HIDDEN TESTS"
    got = checker.run_check(hidden, ns, k, own)
    assert got == {"status": "error", "ename": "AssertionError", "evalue": "hidden test: neg"}
    mutated = checker.run_check("xs = [1]\ngrow(xs, 2)\nassert xs == [1, 2]", ns, k, own)
    assert mutated["status"] == "ok"  # the student's function changed its argument: so did ours
    assert checker.run_check("nothing_here", ns, k, own)["ename"] == "NameError"
    k.close()


def test_a_failed_import_in_the_checker_stops_the_checks_as_the_graders_fault(tmp_path):
    """The checker's own import of what a check uses failed once in a loaded make test-all run;
    the check then read ``check_grounded`` from the student's kernel (where the exercise's
    functions are withheld: the correct answer scored 0; or a student's own ``check_grounded``
    could have passed itself). Now no check runs, and the stop says it is the grader's."""
    import json
    import socket
    import subprocess
    import sys

    from argnb.exercises import checker

    ns, failed = checker.setup(["import math", "from no_such_module_here import check_it"])
    assert "math" in ns and "check_it" not in ns
    assert failed == [
        "from no_such_module_here import check_it: ModuleNotFoundError: "
        "No module named 'no_such_module_here'"
    ]
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"imports": ["from no_such_module_here import check_it"],
                               "timeout": 5, "checks": [{"index": 4, "source": "check_it()"}]}))  # fmt: skip
    ours, theirs = socket.socketpair()
    ours.close()  # no kernel is handed over
    done = subprocess.run([sys.executable, "-m", "argnb.exercises.checker", str(job)],
                          stdin=theirs, capture_output=True, text=True, timeout=60)  # fmt: skip
    (verdict,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert verdict["index"] == 4 and verdict["stop"].startswith(checker.GRADER_FAULT), verdict
    assert "no_such_module_here" in verdict["stop"]


def test_hidden_tests_fail_with_their_own_label():
    src = "x = 1\n### BEGIN HIDDEN TESTS\nassert x == 2, 'two'\n### END HIDDEN TESTS"
    with pytest.raises(AssertionError, match="hidden test: two"):
        exec(compile(g.mark_hidden(src), "<cell>", "exec"), {})
    exec(compile(g.mark_hidden(src.replace("x == 2", "x == 1")), "<cell>", "exec"), {})


def test_score_needs_the_checkers_verdict_and_gives_zero_for_what_did_not_run(toy):
    (solution,) = g.load_solutions(toy / "99_toy").values()
    student = nbformat.v4.new_notebook()
    student.cells = [nbformat.v4.new_code_cell(s) for s in toy_student("return a + b")]
    nb, where, _ = g.graded_notebook(student, solution)
    first, second = sorted(where)
    events = [
        {"event": "cell", "index": 0, "status": "ok", "text": ""},
        {"event": "cell", "index": first, "status": "ok", "text": "'fine'", "checked": True},
        {"event": "stop", "index": second, "reason": "timeout"},
    ]
    rows, status, _ = g.score("ana", solution, nb, where, events, 5)
    assert [(r.points, r.status) for r in rows] == [(2.0, "passed"), (0.0, "timeout")]
    assert rows[0].message == "fine" and "5 s limit" in rows[1].message
    del events[1]["checked"]  # "ok" from anywhere but the checker earns nothing
    rows, status, _ = g.score("ana", solution, nb, where, events, 5)
    assert rows[0].points == 0 and "not decided" in rows[0].message
    events[-1]["reason"] = "dead kernel"
    rows, status, _ = g.score("ana", solution, nb, where, events, 5)
    assert status == "crashed" and rows[1].status == "crashed"


def test_feedback_page_escapes_student_text():
    row = g.Row(
        "<b>x</b>", "nb.ipynb", "c", 0, 1, False, "failed", "AssertionError: <script>x</script>"
    )
    page = g.feedback_html("<b>x</b>", [g.Outcome("<b>x</b>", "nb.ipynb", [row], 1.0, "ok")], "ex")
    assert "<script>" not in page and "&lt;script&gt;" in page and "<b>x</b>" not in page
    assert g.safe_name("../../etc/passwd") == "etc_passwd"


def test_grades_csv_shows_control_bytes_of_student_text_as_escapes(tmp_path):
    """ESC and BEL from a student's exception would recolour or beep the instructor's terminal."""
    text = "boom \x1b[2J\x1b]0;owned\x07 end\r=1+1"
    row = g.Row("ana\x1b[31m", "nb.ipynb", "c", 0, 1, False, "failed", text)
    grades = g.Grades("ex", [g.Outcome("ana\x1b[31m", "nb.ipynb", [row], 1.0, "ok")], 1.0, "none")
    g.write(grades, tmp_path / "grades.csv")
    raw = (tmp_path / "grades.csv").read_bytes()
    assert not any(b in raw for b in (b"\x1b", b"\x07", b"\r=")), raw
    with (tmp_path / "grades.csv").open(newline="", encoding="utf-8") as f:
        (read,) = list(csv.DictReader(f))
    assert read["message"] == "boom \\x1b[2J\\x1b]0;owned\\x07 end\\x0d=1+1"
    assert read["student"] == "ana\\x1b[31m"


def test_kernel_env_is_built_from_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    env = sandbox.kernel_env(tmp_path, None)
    assert not {"OPENAI_API_KEY", "HTTPS_PROXY", "PYTHONPATH"} & set(env)
    assert "sk-secret" not in str(env)
    assert env["HOME"].startswith(str(tmp_path)) and env["ARGNB_CONFIG"].startswith(str(tmp_path))


# -- real runs -----------------------------------------------------------------------------------


@pytest.mark.notebook
def test_misbehaving_notebooks_cost_only_their_own_points(toy, tmp_path, bwrap):
    subs = tmp_path / "subs"
    canary = tmp_path / "instructor_file.txt"  # outside the notebook's copy
    canary.write_text("keep me")
    cases = {
        "correct": toy_student("return a + b"),
        "hidden_fail": toy_student("return abs(a) + abs(b)"),
        "network": toy_student(
            "import socket\n    socket.create_connection(('93.184.215.14', 80), timeout=3)\n"
            "    return a + b"
        ),
        "deletes": toy_student("return a + b", before="import shutil\nshutil.rmtree('../data')"),
        "asks_input": toy_student("return a + b", before="name = input('your name? ')"),
        "waits_widget": toy_student(
            "return a + b",
            before="import time\nclicked = False\nwhile not clicked:\n    time.sleep(0.1)",
        ),
        "tampers": toy_student("return 3", check="### CHECK add: 2 points\npass"),
        "vandal": toy_student("return a + b", before=f"import os\nos.remove({str(canary)!r})"),
    }
    for who, cells in cases.items():
        write_nb(subs / who / "add.ipynb", cells)
    (subs / "garbage__add.ipynb").write_text("not a notebook")
    t0 = time.monotonic()
    grades = g.grade(subs, toy / "99_toy", timeout=8, jobs=2)
    assert time.monotonic() - t0 < 240
    rows = {(r.student, r.check): r for r in grades.rows}
    points = {s: sum(r.points for r in grades.rows if r.student == s) for s in [*cases, "garbage"]}
    # "deletes" removes its own copy of the data: the data check reads the checker's copy
    assert points == {
        "correct": 3, "hidden_fail": 1, "network": 1, "deletes": 3, "asks_input": 3,
        "waits_widget": 3, "tampers": 1, "vandal": 3, "garbage": 0,
    }  # fmt: skip
    assert canary.read_text() == "keep me"  # not even mounted in the sandbox
    assert rows["hidden_fail", "add"].message == "AssertionError: hidden test: negative numbers"
    assert "unreachable" in rows["network", "add"].message
    # the waiting cell hit the limit, was skipped, and the notebook ran again: only it is lost
    (waits,) = [o for o in grades.outcomes if o.student == "waits_widget"]
    assert (
        waits.status == "timeout" and "skipped it" in waits.note and "`import time`" in waits.note
    )
    assert rows["garbage", "add"].status == "unreadable"
    assert (toy / "99_toy" / "data" / "x.txt").read_text() == "ok"  # the original is untouched


#: one-liners against a real exercise (02_dialectic/ex2_grounded): its checks call a check
#: function and compare with a reference solver; each trick leaves the answers wrong
REAL_TRICKS = {
    "redefine_check": "check_grounded = lambda *a, **k: 'right'",
    "patch_checks_module": "import argnb.exercises.checks.dialectic as c\n"
    "c.check_grounded = lambda *a, **k: None",
    "patch_reference": "import argnb.dialectic as d\nd.grounded_extension = lambda a, b: set()",
    "patch_stdlib": "import random\n"
    "class R:\n    def __init__(self, seed): pass\n    def randint(self, a, b): return a\n"
    "    def random(self): return 1.0\n"
    "random.Random = R",
    "shadow_builtin": "def set(*a):\n    return grounded_extension(FRAMEWORK_ARGUMENTS, [])",
    "mutate_data": "FRAMEWORK_DEFEATS.clear()\nFRAMEWORK_ARGUMENTS.clear()",
}


#: issue 37: every way around a withheld function, tried in turn by one student's
#: grounded_extension; the first that works answers (3 points), else it raises what each met
SHORTCUTS = r"""
import glob, importlib, importlib.util, json, marshal, os, runpy, subprocess, sys
import argnb

SEMANTICS = os.path.join(os.path.dirname(argnb.__file__), "dialectic", "semantics.py")
PYARG_FILE = "py_arg/algorithms/semantics/get_grounded_extension.py"


def _pyarg_names(ext):
    return {a.name for a in ext}


def _pyarg_source(arguments, defeats):  # the library's function, its source file run by hand
    spec = importlib.util.find_spec("py_arg.algorithms.semantics.get_grounded_extension")
    ns = {"__name__": "copy"}
    exec(open(spec.origin).read(), ns)
    from argnb.dialectic.semantics import framework
    return _pyarg_names(ns["get_grounded_extension"](framework(arguments, defeats)))


def _pyarg_file(arguments, defeats):  # the same file, found on disk without importing
    found = [os.path.join(b, PYARG_FILE) for b in sys.path if os.path.isfile(os.path.join(b, PYARG_FILE))]
    if not found:
        raise FileNotFoundError("no " + PYARG_FILE + " on the path")
    ns = {"__name__": "copy"}
    exec(open(found[0]).read(), ns)
    from argnb.dialectic.semantics import framework
    return _pyarg_names(ns["get_grounded_extension"](framework(arguments, defeats)))


def _reimport(arguments, defeats):  # popped from sys.modules, imported afresh
    for k in [k for k in sys.modules if k.startswith(("py_arg", "argnb.dialectic"))]:
        del sys.modules[k]
    return importlib.import_module("argnb.dialectic.semantics").grounded_extension(
        arguments, defeats)


def _reload(arguments, defeats):
    import argnb.dialectic.semantics as sem
    return importlib.reload(sem).grounded_extension(arguments, defeats)


def _our_source(arguments, defeats):  # argnb's module, its source run by hand
    ns = {"__name__": "copy"}
    exec(open(SEMANTICS).read(), ns)
    return ns["grounded_extension"](arguments, defeats)


def _compiled(arguments, defeats):  # the module's compiled cache, loaded by hand
    folder = os.path.join(os.path.dirname(SEMANTICS), "__pycache__")
    caches = glob.glob(os.path.join(folder, "semantics.*.pyc"))
    if not caches:
        raise FileNotFoundError("no compiled cache")
    ns = {"__name__": "copy"}
    exec(marshal.loads(open(caches[0], "rb").read()[16:]), ns)
    return ns["grounded_extension"](arguments, defeats)


def _run_module(arguments, defeats):
    ns = runpy.run_module("argnb.dialectic.semantics", run_name="copy")
    return ns["grounded_extension"](arguments, defeats)


def _compose(arguments, defeats):  # py_arg's helpers that are not withheld
    from py_arg.algorithms.semantics.get_acceptable_with_respect_to import (
        get_acceptable_with_respect_to)
    from py_arg.utils.fixpoint import get_least_fixed_point
    from argnb.dialectic.semantics import framework
    af = framework(arguments, defeats)
    return _pyarg_names(get_least_fixed_point(
        lambda x: get_acceptable_with_respect_to(x, af), set()))


def _helper(arguments, defeats, line):  # a helper Python process imports the solver
    code = ("import json, sys\n" + line + "\na, d = json.load(sys.stdin)\n"
            "print(json.dumps(sorted(solve(a, [tuple(x) for x in d]))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          input=json.dumps([list(arguments), list(defeats)]))
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1])
    return set(json.loads(done.stdout))


ROUTES = {
    "pyarg_source": _pyarg_source, "pyarg_file": _pyarg_file, "reimport": _reimport,
    "reload": _reload, "our_source": _our_source, "compiled": _compiled,
    "run_module": _run_module, "compose": _compose,
    "helper_ours": lambda a, d: _helper(
        a, d, "from argnb.dialectic import grounded_extension as solve"),
    "helper_pyarg": lambda a, d: _helper(
        a, d, "from py_arg.algorithms.semantics.get_grounded_extension import "
        "get_grounded_extension as g\nfrom argnb.dialectic.semantics import framework\n"
        "solve = lambda a, d: {x.name for x in g(framework(a, d))}"),
}


def grounded_extension(arguments, defeats):
    failed = {}
    for name, route in ROUTES.items():
        try:
            return set(route(list(arguments), list(defeats)))
        except BaseException as exc:  # what it met, short: the grades cut long messages
            text = f"{type(exc).__name__}: {exc}"
            named = "not available in this exercise" in text or "withheld in this" in text
            failed[name] = "named" if named else text[:40]
    raise RuntimeError("ROUTES " + json.dumps(failed))
"""

#: issue 37: careless or hostile notebooks of ex2_grounded (each starts from the solution):
#: ``func`` replaces its grounded_extension cell, ``hand`` its by-hand cell, ``extra`` is a cell
#: added before the checks
ISSUE37 = {
    "shortcuts": {"func": SHORTCUTS},
    "empties_inputs": {
        "func": "def grounded_extension(arguments, defeats):\n"
        "    arguments.clear()\n    defeats.clear()\n    return set()"
    },
    "overfits": {
        "func": "def grounded_extension(arguments, defeats):\n"
        "    if list(arguments) == list(FRAMEWORK_ARGUMENTS):\n"
        "        return {'a', 'c'}  # the visible framework's answer, read off the map\n"
        "    return set(arguments)"
    },
    # ordinary bugs, each in one check: that check 0 with its message, the other keeps its points
    "huge_number": {"hand": "grounded = 10**100000\nlabels = {}"},
    "generator_raises": {
        "func": "def grounded_extension(arguments, defeats):\n"
        "    def accepted():\n"
        "        for a in arguments:\n"
        "            if a > 'b':\n"
        "                raise ValueError('\x1b[31m' + a + ' has no label\x07')\n"
        "            yield a\n\n"
        "    return accepted()"
    },
    "str_raises": {
        "func": "class Odd(Exception):\n"
        "    def __str__(self):\n        raise RuntimeError('no text')\n"
        "    __repr__ = __str__\n\n\n"
        "def grounded_extension(arguments, defeats):\n    raise Odd()"
    },
    "iter_raises": {
        "func": "class Frozen(frozenset):\n"
        "    def __iter__(self):\n        raise RuntimeError('cannot be read')\n\n\n"
        "def grounded_extension(arguments, defeats):\n    return Frozen(arguments)"
    },
    # a correct answer among debug prints and big values: full marks
    "noisy": {
        "func": "def grounded_extension(arguments, defeats):\n"
        "    print('debug ' * 500_000)  # 3 MB a call\n"
        "    accepted, rejected = set(), set()\n"
        "    while True:\n"
        "        new = {a for a in arguments if a not in accepted\n"
        "               and all(s in rejected for s, d in defeats if d == a)}\n"
        "        if not new:\n            return accepted\n"
        "        accepted |= new\n"
        "        rejected |= {d for s, d in defeats if s in accepted}",
        "extra": "blob = bytes(50_000_000)\nshown = 'y' * 50_000_000\nshown",
    },
    # links in every place the kernel can write, to a folder of the host's outside the scratch
    "plants_links": {
        "extra": "import glob, os\n"
        "box = os.path.abspath('../..')\n"
        "os.rename(box + '/.k', box + '/.k-moved')\n"
        "os.symlink('{outside}', box + '/.k')\n"
        "for f in glob.glob(box + '/.k-moved/*'):\n"
        "    os.rename(f, f + '-moved')\n"
        "    os.symlink('{outside}/' + os.path.basename(f), f)\n"
        "os.symlink('{outside}', 'here')"
    },
}


@pytest.fixture(scope="module")
def grounded_batch(tmp_path_factory):
    """One run of ``argnb exercises grade`` over ex2_grounded (a 20 s limit, two jobs): the
    demo of the issue (correct, unsolved, an endless loop, a crash) and the tricks against the
    exercise's real checks, which share its correct solution (and the loop's 20 s, which would
    leave the second job idle otherwise)."""
    import contextlib
    import io

    from argnb.exercises.sandbox import unavailable

    why = unavailable()
    if why:
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp("grounded")
    root = grounded_exercise(tmp / "exercises")
    folder = root / "02_dialectic"
    subs = grounded_submissions(folder, tmp / "subs")
    solution = nbformat.read(folder / "solutions" / "ex2_grounded.ipynb", as_version=4)
    student = nbformat.read(folder / "student" / "ex2_grounded.ipynb", as_version=4)
    assert len(student.cells) == len(solution.cells)
    for name, trick in REAL_TRICKS.items():
        nb = nbformat.read(folder / "student" / "ex2_grounded.ipynb", as_version=4)
        for cell in nb.cells:  # a wrong function: nothing is ever accepted
            if cell.source.startswith("def grounded_extension"):
                cell.source = "def grounded_extension(arguments, defeats):\n    return set()"
        nb.cells.append(nbformat.v4.new_code_cell(trick))
        (subs / name).mkdir()
        nbformat.write(nb, subs / name / "ex2_grounded.ipynb")
    # issue 30, attack 8: delegation -- hand in the library's own function as the answer, and
    # compute the by-hand answer with the library too
    delegates = nbformat.read(folder / "solutions" / "ex2_grounded.ipynb", as_version=4)
    for cell in delegates.cells:
        if cell.source.startswith("def grounded_extension"):
            cell.source = "from argnb.dialectic import grounded_extension"
        elif "### BEGIN SOLUTION" in cell.source and "labels" in cell.source:
            cell.source = (
                "from argnb.dialectic import grounded_labelling\n"
                "labels = grounded_labelling(FRAMEWORK_ARGUMENTS, FRAMEWORK_DEFEATS)\n"
                "grounded = {a for a, label in labels.items() if label == 'IN'}"
            )
    (subs / "delegates").mkdir()
    nbformat.write(delegates, subs / "delegates" / "ex2_grounded.ipynb")
    outside = tmp / "outside"  # where planted links lead: the host's, never the sandbox's
    outside.mkdir()
    for who, case in ISSUE37.items():
        nb = nbformat.read(folder / "solutions" / "ex2_grounded.ipynb", as_version=4)
        for cell in nb.cells:
            if cell.source.startswith("def grounded_extension") and "func" in case:
                cell.source = case["func"]
            elif "### BEGIN SOLUTION" in cell.source and "labels" in cell.source and "hand" in case:
                cell.source = case["hand"]
        if "extra" in case:
            extra = case["extra"].replace("{outside}", str(outside))
            nb.cells.insert(-1, nbformat.v4.new_code_cell(extra))
        (subs / who).mkdir()
        nbformat.write(nb, subs / who / "ex2_grounded.ipynb")
    import py_compile

    from argnb.dialectic import semantics

    py_compile.compile(semantics.__file__)  # the compiled cache a student could load by hand
    out = tmp / "grades.csv"
    roster = tmp / "roster.csv"  # two of the class on the LMS's roster, and one not graded
    roster.write_text(
        "hub_name,name,sis_login_id,email\n"
        "correct,Cora Rect,c.rect,cora@uni.example\n"
        'loops,"Loo, P.",l.oops,loops@uni.example\n'
        "absent,Ab Sent,a.sent,absent@uni.example\n"
    )
    graded: list[g.Grades] = []  # what the command graded, as well as what it wrote
    grade = g.grade

    def kept(*args, **kwargs):
        graded.append(grade(*args, **kwargs))
        return graded[-1]

    printed = io.StringIO()
    g.grade = kept  # type: ignore[assignment]
    try:
        with contextlib.redirect_stdout(printed):
            code = main(
                ["grade", str(subs), "--exercise", "02_dialectic", "--root", str(root),
                 "--timeout", "20", "--out", str(out), "--jobs", "2",
                 "--canvas", str(tmp / "canvas.csv"), "--moodle", str(tmp / "moodle.csv"),
                 "--roster", str(roster), "--assignment", "Grounded extension"]
            )  # fmt: skip
    finally:
        g.grade = grade  # type: ignore[assignment]
    with out.open() as f:
        rows = list(csv.DictReader(f))
    return {"code": code, "printed": printed.getvalue(), "rows": rows, "grades": graded[0],
            "tmp": tmp, "outside": outside, "csv": out.read_bytes()}  # fmt: skip


@pytest.mark.notebook
def test_grading_demo_correct_unsolved_loop_crash(grounded_batch):
    """The demo of the issue: four students, one exercise notebook, a 20 s limit."""
    printed = grounded_batch["printed"]
    print(printed)  # the table and the wall time, for the record
    assert grounded_batch["code"] == 0
    demo = ("correct", "unsolved", "loops", "crashes")
    got = {
        (r["student"], r["check"]): (float(r["points"]), r["status"])
        for r in grounded_batch["rows"]
        if r["student"] in demo
    }
    assert got == {
        ("correct", "grounded_by_hand"): (2.0, "passed"),
        ("correct", "grounded_code"): (3.0, "passed"),
        ("crashes", "grounded_by_hand"): (2.0, "passed"),
        ("crashes", "grounded_code"): (0.0, "crashed"),
        ("loops", "grounded_by_hand"): (2.0, "passed"),
        ("loops", "grounded_code"): (0.0, "timeout"),
        ("unsolved", "grounded_by_hand"): (0.0, "failed"),
        ("unsolved", "grounded_code"): (0.0, "failed"),
    }
    assert "wall time" in printed and "5/5" in printed
    feedback = (grounded_batch["tmp"] / "grades_feedback" / "loops.html").read_text()
    assert "20 s limit" in feedback and "grounded_code" in feedback


@pytest.mark.notebook
def test_tricks_against_a_real_check_score_nothing(grounded_batch):
    grades = grounded_batch["grades"]
    got = {
        s: sum(r.points for r in grades.rows if r.student == s)
        for s in ["correct", "delegates", *REAL_TRICKS]
    }
    assert got == {"correct": 5, "delegates": 0, **{name: 0 for name in REAL_TRICKS}}, grades.rows
    rows = {r.check: r for r in grades.rows if r.student == "delegates"}
    # the delegation ran and met the stub, and the feedback says why
    assert "not available in this exercise" in rows["grounded_code"].message
    (outcome,) = [o for o in grades.outcomes if o.student == "delegates"]
    assert outcome.status == "ok"


def test_bwrap_command_line_isolates_everything():
    spec = {
        "bwrap": "bwrap", "inner_uid": 65534, "symlinks": [["usr/lib", "/lib"]],
        "env": {"HOME": "/tmp/x/box/.home"}, "chdir": "/tmp/x/box/ex/student",
    }  # fmt: skip
    binds = [["/usr", "/usr", "ro"], ["/tmp/x/box", "/tmp/x/box", "rw"]]
    argv = jail.bwrap_argv(spec, binds, 7)
    for flag in ("--unshare-user", "--unshare-net", "--unshare-ipc", "--unshare-pid",
                 "--die-with-parent", "--new-session", "--clearenv"):  # fmt: skip
        assert flag in argv
    assert argv[argv.index("--uid") + 1] == "65534" and argv[argv.index("--seccomp") + 1] == "7"
    assert argv[argv.index("--tmpfs") + 1] == "/tmp"
    assert argv[argv.index("--bind") + 1] == "/tmp/x/box"  # the only writable place
    assert "/" not in [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]


def test_read_only_mounts_leave_out_the_project_tree():
    mounts = sandbox.read_only_mounts()
    root = Path(__file__).resolve().parents[2]
    assert root not in mounts and root / "exercises" not in mounts
    assert not any(m == Path.home() for m in mounts)


def test_the_grader_refuses_to_run_unconfined_by_surprise(toy, tmp_path, monkeypatch):
    write_nb(tmp_path / "subs" / "ana" / "add.ipynb", ["1"])
    with pytest.raises(g.GradingError, match="i-understand"):
        g.grade(tmp_path / "subs", toy / "99_toy", level="none")
    monkeypatch.setattr(sandbox, "unavailable", lambda: "bubblewrap (bwrap) is not installed")
    with pytest.raises(g.GradingError, match="not installed") as info:
        g.grade(tmp_path / "subs", toy / "99_toy")
    assert "apt install bubblewrap" in str(info.value)


PROBE = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def err(rc):
    return errno.errorcode.get(ctypes.get_errno(), "?") if rc == -1 else "allowed"
print("uid", os.getuid(), os.getgid(), os.getgroups())
print("userns", err(libc.unshare(0x10000000)))
print("mountns", err(libc.unshare(0x00020000)))
print("tiocsti", err(libc.ioctl(0, 0x5412, ctypes.c_char_p(b"x"))))
print("ptrace", err(libc.ptrace(0, 0, 0, 0)))
print("etc", os.path.exists("/etc"), "home", os.path.exists(os.path.expanduser("~")))
print("env", sorted(k for k in os.environ if "SECRET" in k))
"""


def test_the_sandbox_runs_as_nobody_and_its_seccomp_filter_refuses(bwrap, monkeypatch):
    """Nested namespaces, TIOCSTI and ptrace answer EPERM (without the filter: allowed/ENOTTY)."""
    import subprocess
    import sys

    monkeypatch.setenv("GRADER_SECRET", "x")
    scratch = sandbox.Scratch.create()
    try:
        scratch.hand_over()
        spec = sandbox.write_spec(scratch, "bwrap", sandbox.Limits(), scratch.box)
        done = subprocess.run(
            [*sandbox.jail_command(spec), sys.executable, "-c", PROBE],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        scratch.remove()
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["uid"] == "65534 65534 []", done.stderr
    for call in ("userns", "mountns", "tiocsti", "ptrace"):
        assert lines[call] == "EPERM", (call, lines[call])
    assert lines["etc"] == "False home True" and lines["env"] == "[]"


def test_cli_refuses_an_unconfined_run_without_the_explicit_flag(toy, tmp_path, capsys):
    write_nb(tmp_path / "subs" / "ana" / "add.ipynb", ["1"])
    args = ["grade", str(tmp_path / "subs"), "--exercise", "99_toy", "--root", str(toy),
            "--out", str(tmp_path / "g.csv"), "--sandbox", "none"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr()
    assert "--i-understand" in err.err and "grading" not in err.out
    assert not (tmp_path / "g.csv").exists()


def test_grading_without_the_solutions_says_where_they_come_from(tmp_path, capsys):
    (tmp_path / "ex" / "02_dialectic" / "student").mkdir(parents=True)  # what a wheel ships
    args = ["grade", str(tmp_path), "--exercise", "02_dialectic", "--root", str(tmp_path / "ex")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "no exercise '02_dialectic' with solutions" in err[0]
    assert "--root path/to/clone/exercises" in err[-1]


EXERCISES = sorted(p.name for p in (Path(__file__).resolve().parents[2] / "exercises").iterdir())


@pytest.mark.notebook
@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_solution_scores_full_marks_through_the_checker(exercise, tmp_path, bwrap):
    """Every check of every exercise runs in the checker with the solution's answers carried over
    plain data (frames, arrays, generators, pydantic arguments, ...): full marks, nothing refused."""
    import shutil

    folder = Path(__file__).resolve().parents[2] / "exercises" / exercise
    (tmp_path / "subs" / "solution").mkdir(parents=True)
    for nb in (folder / "solutions").glob("*.ipynb"):
        shutil.copy(nb, tmp_path / "subs" / "solution" / nb.name)
    grades = g.grade(tmp_path / "subs", folder, timeout=120, jobs=2)
    missed = [(r.notebook, r.check, r.message) for r in grades.rows if not r.passed]
    assert missed == [] and len(grades.rows) >= 2


def _scores(batch, who: str) -> dict[str, tuple[float, str]]:
    return {r.check: (r.points, r.message) for r in batch["grades"].rows if r.student == who}


@pytest.mark.notebook
def test_withheld_functions_are_unreachable_by_every_route(grounded_batch):
    """Issue 37: the library's source run by hand, the module imported or reloaded afresh, its
    compiled cache, runpy, the library's other helpers, a helper process: none reaches a withheld
    function, each says so, and the notebook is flagged for review."""
    import json

    got = _scores(grounded_batch, "shortcuts")
    assert got["grounded_by_hand"][0] == 2 and got["grounded_code"][0] == 0, got
    failed = json.loads(got["grounded_code"][1].split("ROUTES ", 1)[1])
    assert failed.pop("pyarg_file").startswith("FileNotFoundError")  # the folder holds the note
    assert failed == dict.fromkeys(failed, "named") and len(failed) == 9, failed
    (outcome,) = [o for o in grounded_batch["grades"].outcomes if o.student == "shortcuts"]
    assert {"runpy", "subprocess", "marshal", "importlib", "exec("} <= set(outcome.flags)


@pytest.mark.notebook
def test_expected_values_come_from_the_checkers_own_inputs(grounded_batch):
    """Emptying the framework it is given no longer empties the reference answer; an answer fit
    to the visible framework fails the others."""
    for who in ("empties_inputs", "overfits"):
        got = _scores(grounded_batch, who)
        assert got["grounded_by_hand"][0] == 2 and got["grounded_code"][0] == 0, (who, got)
    assert (
        "not the grounded extension"
        in _scores(grounded_batch, "empties_inputs")["grounded_code"][1]
    )


@pytest.mark.notebook
def test_an_ordinary_bug_costs_its_own_check_and_nothing_else(grounded_batch):
    grades = grounded_batch["grades"]
    want = {
        "huge_number": ("grounded_by_hand", "more than 4000 digits"),
        "generator_raises": ("grounded_code", "raised ValueError while the grader read it"),
        "str_raises": ("grounded_code", "Odd: (its message could not be shown"),
        "iter_raises": ("grounded_code", "raised RuntimeError while the grader read it"),
    }
    for who, (broken, message) in want.items():
        got = _scores(grounded_batch, who)
        other = "grounded_code" if broken == "grounded_by_hand" else "grounded_by_hand"
        assert got[broken][0] == 0 and message in got[broken][1], (who, got)
        assert got[other][0] == {"grounded_code": 3, "grounded_by_hand": 2}[other], (who, got)
        (outcome,) = [o for o in grades.outcomes if o.student == who]
        assert outcome.status == "ok", (who, outcome.status, outcome.note)
    # the student's ESC and BEL bytes are kept as visible escapes, in the CSV and in the page
    page = (grounded_batch["tmp"] / "grades_feedback" / "generator_raises.html").read_bytes()
    for raw in (grounded_batch["csv"], page):
        assert b"\x1b" not in raw and b"\x07" not in raw
    assert b"\\x1b[31m" in page


@pytest.mark.notebook
def test_debug_prints_and_big_values_cost_nothing(grounded_batch):
    got = _scores(grounded_batch, "noisy")
    assert {k: v[0] for k, v in got.items()} == {"grounded_by_hand": 2, "grounded_code": 3}, got


@pytest.mark.notebook
def test_links_planted_in_the_kernels_folders_lead_nowhere_of_the_graders(grounded_batch):
    """The runner's socket lives in a folder of its own, and nothing is removed through the
    kernel's folder: the links lead to an empty folder, and the student keeps full marks."""
    got = _scores(grounded_batch, "plants_links")
    assert {k: v[0] for k, v in got.items()} == {"grounded_by_hand": 2, "grounded_code": 3}, got
    assert list(grounded_batch["outside"].iterdir()) == []


@pytest.mark.notebook
def test_one_graded_batch_goes_into_canvas_and_moodle(grounded_batch):
    """Issue 36: the grade command also writes the LMS's gradebook import files."""
    tmp = grounded_batch["tmp"]
    with (tmp / "canvas.csv").open(encoding="utf-8") as f:
        canvas = {r["SIS Login ID"]: r for r in csv.DictReader(f)}
    assert (
        canvas["c.rect"]["Grounded extension"] == "5" and canvas["c.rect"]["Student"] == "Cora Rect"
    )
    assert (
        canvas["l.oops"]["Grounded extension"] == "2" and canvas["l.oops"]["Student"] == "Loo, P."
    )
    assert canvas["a.sent"]["Grounded extension"] == ""  # on the roster, not graded: no change
    assert canvas["crashes"]["Grounded extension"] == "2"  # graded, not on the roster: hub name
    totals: dict[str, float] = {}
    for r in grounded_batch["rows"]:
        totals[r["student"]] = totals.get(r["student"], 0) + float(r["points"])
    with (tmp / "moodle.csv").open(encoding="utf-8") as f:
        moodle = {r["username"]: r for r in csv.DictReader(f)}
    assert set(moodle) == {*totals, "absent"}  # no usernames on this roster: the hub names
    for who, points in totals.items():
        assert float(moodle[who]["Grounded extension"]) == points
    assert "grounded_code 0/3 timeout" in moodle["loops"]["Grounded extension feedback"]
