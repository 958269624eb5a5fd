"""``argnb course open``: what is copied, what is kept, and the real thing from a built wheel."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
import tokenize
import urllib.request
import zipfile
from pathlib import Path

import pytest

from argnb import course
from argnb.cli import main
from tests.serve import accepting

ROOT = Path(__file__).resolve().parents[2]


def test_course_files_are_notebooks_student_exercises_and_assets():
    files = {p.as_posix() for p in course.course_files(ROOT)}
    assert {p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks").glob("*.ipynb")} <= files
    assert {
        p.relative_to(ROOT).as_posix() for p in (ROOT / "exercises").glob("*/student/*.ipynb")
    } <= files
    assert "assets/critique/examples.jsonl" in files
    assert not [f for f in files if "solutions" in f or "checkpoint" in f]


def test_copy_keeps_the_learners_files(tmp_path):
    first = course.copy_course(tmp_path / "c", root=ROOT)
    assert first.written and not first.kept
    mine = tmp_path / "c" / "notebooks" / "00_setup.ipynb"
    mine.write_text("my edits")
    again = course.copy_course(tmp_path / "c", root=ROOT)
    assert not again.written and len(again.kept) == len(first.written)
    assert mine.read_text() == "my edits"


def test_an_update_brings_untouched_files_up_to_date_and_keeps_the_learners_edits(tmp_path):
    """Issue 36: the class hub copies the course into a learner's home at every start."""
    import shutil

    src = tmp_path / "src"
    for rel in course.course_files(ROOT):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, src / rel)
    home = tmp_path / "home" / "argnb-course"
    first = course.copy_course(home, root=src, update=True)
    assert first.written and not first.kept and (home / course.MANIFEST).exists()
    lesson, mine, gone = (Path(n) for n in ("notebooks/00_setup.ipynb", course.HOME,
                                            "notebooks/02_dialectic_synthesis.ipynb"))  # fmt: skip
    (home / mine).write_text("my notes")  # the learner edits one file and deletes another
    (home / gone).unlink()
    (src / lesson).write_text((src / lesson).read_text() + " ")  # the instructor updates two
    (src / mine).write_text((src / mine).read_text() + " ")
    again = course.copy_course(home, root=src, update=True)
    assert again.updated == [lesson] and again.written == [gone]
    assert (home / lesson).read_bytes() == (src / lesson).read_bytes()
    assert (home / mine).read_text() == "my notes" and mine in again.kept
    third = course.copy_course(home, root=src, update=True)  # nothing new: nothing written
    assert not third.updated and not third.written and (home / mine).read_text() == "my notes"


def test_a_learners_server_copies_the_course_then_becomes_the_server(tmp_path):
    import subprocess

    env = {**os.environ, "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "argnb.classroom.singleuser", "course", "--", sys.executable,
         "-c", "import sys; print('server', sys.argv[1:])", "--port=1"],
        capture_output=True, text=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == "server ['--port=1']"
    assert "argnb: the course in ~/course:" in done.stderr
    assert (tmp_path / "course" / course.HOME).exists()
    (tmp_path / "file").write_text("x")  # a copy that fails still starts the server
    done = subprocess.run(
        [sys.executable, "-m", "argnb.classroom.singleuser", "file", "--", sys.executable, "-c",
         "print('server')"], capture_output=True, text=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == "server" and "was not copied" in done.stderr


def test_cli_no_lab_only_copies(tmp_path, capsys):
    assert main(["course", "open", str(tmp_path / "c"), "--no-lab"]) == 0
    out = capsys.readouterr().out
    assert "files copied" in out and "start with" in out and course.HOME in out
    assert (
        tmp_path / "c" / "exercises" / "02_dialectic" / "student" / "ex2_grounded.ipynb"
    ).exists()
    (tmp_path / "f").write_text("x")
    assert main(["course", "open", str(tmp_path / "f"), "--no-lab"]) == 2


# -- the course folder stands alone: every relative link and path it mentions resolves ----------

_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)")
_HREF = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1", re.S | re.M)
#: a relative path: at least one "/" between names (``../assets/x.jsonl``, ``exercises/01_fallacy/``)
_PATH = re.compile(r"(?<![\w$@:/.~-])((?:\.{1,2}/)*[\w*.-]+(?:/[\w*.-]*)+)(?![\w/])")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def _paths(text: str) -> list[str]:
    """Relative paths in ``text``. Not paths: ``n/a``-like pairs of short words, and a first part in
    capitals (``DATA/fallacy-bench/dev.jsonl``), which is a placeholder the reader fills in."""
    out = []
    for m in _PATH.finditer(text):
        p = m.group(1).rstrip(".,;:")
        first = p.split("/")[0]
        if re.fullmatch(r"\w{1,2}/\w{1,2}", p) or (first.isupper() and len(first) > 1):
            continue
        out.append(p)
    return out


def _strings_and_comments(code: str) -> list[str]:
    try:
        tokens = tokenize.generate_tokens(io.StringIO(code).readline)
        return [t.string for t in tokens if t.type in (tokenize.STRING, tokenize.COMMENT)]
    except (tokenize.TokenError, SyntaxError):  # a magic or shell line: every quoted text
        return [m[1] for m in re.findall(r"([\"'])(.*?)\1", code)]


def mentions(file: Path) -> list[tuple[str, str]]:
    """``("link", target)`` for Markdown and HTML links (resolved from the file's folder, as
    Jupyter does) and ``("path", text)`` for paths in code spans, fenced blocks and code cells'
    strings and comments (resolved from the file's folder or the course folder)."""
    if file.suffix == ".ipynb":
        nb = json.loads(file.read_text(encoding="utf-8"))
        cells = [(c["cell_type"], "".join(c["source"])) for c in nb["cells"]]
    else:
        cells = [("markdown", file.read_text(encoding="utf-8"))]
    out: list[tuple[str, str]] = []
    for kind, src in cells:
        if kind == "markdown":
            out += [("link", m.group(1)) for m in (*_LINK.finditer(src), *_HREF.finditer(src))]
            for m in _FENCE.finditer(src):
                out += [("path", p) for p in _paths(m.group(2))]
            for m in _CODE_SPAN.finditer(_FENCE.sub("", src)):
                out += [("path", p) for p in _paths(m.group(2))]
        elif kind == "code":
            for text in _strings_and_comments(src):
                out += [("path", p) for p in _paths(text)]
    return out


def dangling(folder: Path) -> list[str]:
    """Every link or path mentioned in the course folder's notebooks and Markdown files that
    names nothing in the folder."""
    bad = []
    for file in sorted(folder.rglob("*")):
        if file.suffix not in (".ipynb", ".md") or ".ipynb_checkpoints" in file.parts:
            continue
        for kind, target in mentions(file):
            if _SCHEME.match(target) or target.startswith(("#", "/", "~", "work/")):
                continue  # a URL, an anchor, an absolute or home path, what a widget saves
            target = target.split("#", 1)[0].split("?", 1)[0]
            bases = [file.parent] if kind == "link" else [file.parent, folder]
            found = any(
                any(b.glob(target)) if "*" in target else (b / target).exists() for b in bases
            )
            if target and not found:
                bad.append(f"{file.relative_to(folder)}: {kind} {target}")
    return bad


def test_the_link_checker_finds_what_dangles(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "a.jsonl").write_text("{}")
    cells = [
        {"cell_type": "markdown", "source": [
            "[ok](../assets/a.jsonl) [gone](../assets/b.jsonl) [web](https://x.org/a/b) [top](#s)\n",
            "`assets/a.jsonl` and `argnb/fallacy/prompts/` and `DATA/x/y.jsonl` and `n/a`\n",
            "saved to `work/session.json` as you go\n",
            "```bash\nargnb x --data ../shared/data/dev.jsonl --out out.jsonl\n```\n",
        ]},
        {"cell_type": "code", "source": [
            'p = Path("../assets/a.jsonl")  # see ../docs/x.md\n', "r = a/b\n", "%time f()\n"
        ]},
    ]  # fmt: skip
    (tmp_path / "notebooks" / "n.ipynb").write_text(json.dumps({"cells": cells}))
    assert sorted(dangling(tmp_path)) == [
        "notebooks/n.ipynb: link ../assets/b.jsonl",
        "notebooks/n.ipynb: path ../docs/x.md",
        "notebooks/n.ipynb: path ../shared/data/dev.jsonl",
        "notebooks/n.ipynb: path argnb/fallacy/prompts/",
    ]


def test_the_course_folder_stands_alone(tmp_path):
    """Copied from the source tree: a home page, and nothing it or a lesson mentions is missing."""
    dest = course.copy_course(tmp_path / "c", root=ROOT).dest
    home = (dest / course.HOME).read_text(encoding="utf-8")
    for needed in ("learning path", "Connect a real model", "Where help is", "argnb doctor"):
        assert needed in home
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"notebooks/{nb.name}" in home, f"the home page does not link {nb.name}"
    assert dangling(dest) == []
    assert course.lab_command(dest, browser=False)[-1] == str(dest / course.HOME), "opens home"


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")))
def test_every_lesson_has_objectives_and_a_self_check(name):
    cells = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
    text = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    goals = next((t for t in text[:3] if "After this lesson you can" in t), None)
    assert goals is not None, "learning objectives near the top"
    assert 3 <= len(re.findall(r"^- ", goals, re.M)) <= 5, "3 to 5 objectives"
    assert text[-1].startswith("## Self-check") and len(re.findall(r"^\d\. ", text[-1], re.M)) >= 3
    assert "<details>" in text[-1], "answers to the self-check, folded"


def test_assets_are_found_in_a_checkout():
    assert course.asset_dir("critique").joinpath("examples.jsonl").exists()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.server
def test_course_open_from_a_built_wheel_in_a_fresh_venv(tmp_path):
    """Build the wheel, install it (no deps) into a fresh venv that borrows the shared venv's
    dependencies through a .pth line, copy the course and start JupyterLab; then ask it for the
    notebooks over HTTP and stop it."""
    wheels = tmp_path / "wheels"
    # as `make dist` does: the sdist, the wheel built from it, both checked by twine
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(wheels), str(ROOT)],
        check=True, cwd=tmp_path, timeout=600, capture_output=True,
    )  # fmt: skip
    (wheel,) = wheels.glob("argnb-*.whl")
    (sdist,) = wheels.glob("argnb-*.tar.gz")
    subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        check=True, timeout=120, capture_output=True,
    )  # fmt: skip
    import tarfile

    with tarfile.open(sdist) as t:
        assert not [n for n in t.getnames() if "/solutions/" in n]
    names = zipfile.ZipFile(wheel).namelist()
    assert "argnb/_course/notebooks/00_setup.ipynb" in names
    assert "argnb/_course/START_HERE.ipynb" in names
    assert "argnb/_course/assets/fallacy/reference_deliberation.json" in names
    assert "argnb/_course/exercises/02_dialectic/student/ex2_grounded.ipynb" in names
    assert not [n for n in names if "solutions" in n]

    # no PYTHONPATH: this checkout must not be what the fresh venv imports (or what pip sees)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    venv = tmp_path / "fresh"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    py = venv / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)],
        check=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    (site / "shared-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    where = subprocess.check_output(
        [py, "-c", "import argnb; print(argnb.__file__)"], env=env, text=True, cwd=tmp_path
    )
    assert where.startswith(str(venv))
    replayed = subprocess.check_output(
        [py, "-c", "from argnb.fallacy.reference import replay_reference as r; print(r().label)"],
        env=env, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert replayed.strip() == "0", "the reference session replays from the installed wheel"

    learner = tmp_path / "learner"
    port = _free_port()
    proc = subprocess.Popen(
        [venv / "bin" / "argnb", "course", "open", str(learner), "--no-browser", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        url, lines, deadline = None, [], time.monotonic() + 180
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(rf"http://127\.0\.0\.1:{port}/lab\?token=(\w+)", line)
            url = m and m.group(0)
        assert url, "".join(lines[-20:])
        assert (learner / "notebooks" / "02_dialectic_synthesis.ipynb").exists()
        assert (learner / course.HOME).exists()
        assert dangling(learner) == [], "every link and path in the learner's folder resolves"
        token = url.rsplit("=", 1)[1]
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/contents/exercises/02_dialectic/student",
            headers={"Authorization": f"token {token}"},
        )
        assert accepting(proc, port, 30)  # the server prints its URL a moment before it listens
        listing = json.load(urllib.request.urlopen(req, timeout=30))
        assert {c["name"] for c in listing["content"]} == {
            "ex1_attack_kinds.ipynb", "ex2_grounded.ipynb", "ex3_undercut_stances.ipynb"
        }  # fmt: skip
        assert urllib.request.urlopen(url, timeout=30).status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=5)  # no orphan server


def _metadata_warnings() -> tuple[list[str], object]:
    """The warnings reading pyproject.toml gives, and the metadata. A ResourceWarning is left
    out: it comes from the garbage collector finding another test's unclosed file in this
    worker (a clean-clone run failed on one, 2026-11-28), never from reading the metadata."""
    import warnings

    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist = apply_configuration(Distribution(), ROOT / "pyproject.toml")
    found = [w for w in caught if not issubclass(w.category, ResourceWarning)]
    return [str(w.message).strip().splitlines()[0] for w in found], dist


def test_the_package_metadata_reads_without_setuptools_deprecations():
    """pip printed setuptools' deprecation of a ``project.license`` table at every install."""
    found, dist = _metadata_warnings()
    assert found == []
    assert dist.metadata.license_expression == "MIT"  # type: ignore[attr-defined]


def test_another_tests_unclosed_file_does_not_fail_the_metadata_check(monkeypatch):
    """The flake's cause, made to happen: an unclosed file collected while the check listens."""
    import gc
    import os
    import warnings

    from setuptools.config import pyprojecttoml

    real = pyprojecttoml.apply_configuration

    def leaky(*args, **kwargs):
        open(os.devnull, "w")  # noqa: SIM115 - dropped unclosed on purpose
        gc.collect()
        return real(*args, **kwargs)

    monkeypatch.setattr(pyprojecttoml, "apply_configuration", leaky)
    with warnings.catch_warnings(record=True) as seen:  # the warning does fire
        warnings.simplefilter("always")
        open(os.devnull, "w")  # noqa: SIM115
        gc.collect()
    assert any(issubclass(w.category, ResourceWarning) for w in seen)
    found, _ = _metadata_warnings()
    assert found == []


def test_the_setup_lessons_learning_path_lists_every_lesson():
    """00's table stopped at 03 while the course went on to 05."""
    cells = json.loads((ROOT / "notebooks" / "00_setup.ipynb").read_text(encoding="utf-8"))["cells"]
    table = next("".join(c["source"]) for c in cells if "**Learning path**" in "".join(c["source"]))
    rows = re.findall(r"^\| (\d\d) ", table, re.M)
    assert rows == sorted(p.name[:2] for p in (ROOT / "notebooks").glob("*.ipynb"))


def test_what_the_widgets_save_beside_a_lesson_is_not_left_untracked_in_a_clone():
    """The debate and roundtable widgets autosave the learner's session beside the notebook
    (04 and 05 say so); in a clone that file is git-ignored, not an untracked change."""
    import inspect
    import shutil

    from argnb.debate.widget import DebateWidget
    from argnb.roundtable.widget import RoundtableWidget

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for widget in (DebateWidget, RoundtableWidget):
        name = inspect.signature(widget.__init__).parameters["autosave"].default
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", f"notebooks/{name}"], cwd=ROOT, check=False
        )
        assert ignored.returncode == 0, f"notebooks/{name} is not git-ignored"
