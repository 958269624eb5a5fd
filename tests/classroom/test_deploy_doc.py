"""docs/deploy.md, "By hand, without TLJH", run as written (issue 36): its marked bash blocks, in
the doc's order, in one bash session, as an instructor pastes them into one terminal.

The setup blocks build the wheel in a copy of this checkout, make a fresh environment every
user can read from the system's Python, install the wheel and the embedded model into it, start
the class model behind its key and the hub with the gateway. A real local user then logs in,
finds the course in their home and runs lesson 01's model cell through the gateway. The
during-term blocks show that learner's usage, and collect, grade (from the copy's solutions)
and return their exercise. The stop block stops it all, and no process is left.

Only the settings the doc's first block reads from the environment change (the folder and the
ports: free ones, in a temporary folder). Marker ``full`` (``make test-all``): it installs a
whole environment from PyPI, minutes that ``test_hub.py`` already spends on the same pieces; the
doc's blocks and this harness are checked in ``make test``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from argnb.classroom.local import find_proxy, free_port
from tests.classroom.learners import Learner, add_system_user, remove_system_user
from tests.classroom.test_hub import REPORT, _skip_reason, lesson_cells

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "deploy.md"
BLOCK = re.compile(r"^<!-- by-hand: (\w+) -->\n```bash\n(.*?)^```\n", re.S | re.M)
DONE = "__argnb_block_done__"


def blocks(stage: str | None = None) -> list[str]:
    """The doc's marked blocks (of one stage), in order."""
    found = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    return [code for st, code in found if stage in (None, st)]


def test_the_doc_has_its_by_hand_blocks_in_the_order_an_instructor_runs_them():
    stages = [st for st, _ in BLOCK.findall(DOC.read_text(encoding="utf-8"))]
    assert stages and stages == sorted(stages, key=["setup", "term", "stop"].index), stages
    assert "CLASS=${CLASS:-" in blocks("setup")[0]  # the one place a reader (or this test) edits


class Session:
    """One bash that reads each block from a file (the blocks' own commands never read the
    control pipe), keeping variables and the working folder from block to block."""

    def __init__(self, env: dict[str, str], cwd: Path, folder: Path) -> None:
        self.folder, self.n = folder, 0
        self.proc = subprocess.Popen(
            ["bash"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, cwd=cwd, env=env, start_new_session=True,
        )  # fmt: skip
        self.run("set -euo pipefail", timeout=10)  # a command that fails ends the session

    def run(self, code: str, timeout: float) -> str:
        self.n += 1
        script = self.folder / f"block{self.n}.sh"
        script.write_text(code)
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f"source {script} < /dev/null\necho {DONE}\n")
        self.proc.stdin.flush()
        out, end = [], time.monotonic() + timeout
        while time.monotonic() < end:
            line = self.proc.stdout.readline()
            if not line:  # set -e: a command failed, and the shell is gone
                raise AssertionError(f"block {self.n} failed:\n{code}\n---\n{''.join(out)[-4000:]}")
            if line.strip() == DONE:
                return "".join(out)
            out.append(line)
        raise AssertionError(f"block {self.n} ran over {timeout:.0f} s:\n{''.join(out)[-4000:]}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def copy_checkout(dest: Path) -> Path:
    """The checkout's files as git sees them (a clone with this working tree), sharing its
    virtualenv: ``make dist`` there builds what would be committed, not a stale HEAD."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\0")  # fmt: skip
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    (dest / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    return dest


def processes_of(folder: Path) -> list[str]:
    """Processes whose command line or working folder is in ``folder``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if str(folder) in cmd or cwd.startswith(str(folder)):
            found.append(f"{pid} {cmd[:200]}")
    return found


def _kill(folder: Path) -> None:
    for line in processes_of(folder):
        with contextlib.suppress(OSError):
            os.kill(int(line.split()[0]), 9)


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def test_a_block_whose_command_fails_stops_the_session_with_its_output(tmp_path):
    shell = Session(dict(os.environ), tmp_path, tmp_path)
    try:
        assert shell.run("X=1\ncd /tmp", timeout=10) == ""
        assert shell.run('echo "$X $PWD"', timeout=10) == "1 /tmp\n"  # kept between blocks
        with pytest.raises(AssertionError, match=r"(?s)block 4 failed.*said this"):
            shell.run("echo said this\nfalse\necho never", timeout=10)
    finally:
        shell.close()


@pytest.mark.server
@pytest.mark.model
@pytest.mark.full
def test_deploy_md_by_hand_runs_as_written_and_a_learner_works_through_the_gateway():
    why = _skip_reason()
    if why:
        pytest.skip(why)
    for tool in ("/usr/bin/python3", "openssl", "curl", "make", "git"):
        if not shutil.which(tool):
            pytest.skip(f"docs/deploy.md's blocks need {tool}")
    stamp = ROOT / ".venv" / ".installed"
    if not stamp.exists() or stamp.stat().st_mtime < (ROOT / "pyproject.toml").stat().st_mtime:
        # else make would reinstall the shared venv from the copy (an editable install there)
        pytest.skip("make dist needs the checkout's .venv up to date: run make first")
    work = Path(tempfile.mkdtemp(prefix="argnb-deploy-doc-"))
    os.chmod(work, 0o755)  # the gateway's user and the learners reach $CLASS inside it
    cls, clone = work / "class", copy_checkout(work / "clone")
    ports = {k: str(free_port()) for k in
             ("HUB_PORT", "HUB_API_PORT", "PROXY_API_PORT", "GATEWAY_PORT", "MODEL_PORT")}  # fmt: skip
    proxy_dir = str(Path(find_proxy() or "").parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGNB_", "VIRTUAL_ENV"))}
    env.update(
        ports, CLASS=str(cls), PATH=f"{proxy_dir}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    )
    had_gateway_user = _user_exists("argnb-gateway")
    shell = Session(env, clone, work)
    learner = "argnbdoc1"
    try:
        setup = blocks("setup")
        said = [shell.run(code, timeout=1500) for code in setup]
        assert "asked without the key: HTTP 401" in "".join(said)
        assert '"version"' in said[-1]
        # a learner, as the doc says: a local user with a private home; the hub's login form
        password = add_system_user(learner)
        lr = Learner(f"http://127.0.0.1:{ports['HUB_PORT']}", learner, password)
        lr.login()
        lr.spawn()
        assert Path(f"/home/{learner}/argnb-course/notebooks").is_dir()  # the course, copied
        kernel = lr.open_notebook("argnb-course/notebooks/01_fallacy_deliberation.ipynb")
        out = lr.run(kernel, "import argnb; print(argnb.__file__)\n" + lesson_cells() + REPORT)
        assert out.status == "ok", out.traceback[-2000:]
        assert out.stdout.startswith(f"{cls}/env/lib/")  # argnb from the doc's wheel, no other
        report = json.loads(out.stdout.strip().splitlines()[-1])
        assert report["backend"]["backend"] == "class" and report["calls"] >= 1, report

        usage, grading = (shell.run(code, timeout=600) for code in blocks("term"))
        assert learner in usage and "01_fallacy" in usage, usage
        assert "1 learner(s) collected" in grading and "1 feedback page(s) returned" in grading
        page = Path(f"/home/{learner}/argnb-course/feedback/02_dialectic.html")
        assert page.is_file() and page.stat().st_uid == __import__("pwd").getpwnam(learner).pw_uid

        start = time.monotonic()
        (stop,) = blocks("stop")
        shell.run(stop, timeout=180)
        took = time.monotonic() - start
        print(f"the doc's stop block took {took:.1f} s")
        left = [p for p in processes_of(cls) if p.split()[0] != str(shell.proc.pid)]
        assert not left, left
    finally:
        shell.close()
        _kill(cls)
        remove_system_user(learner)
        if not had_gateway_user and _user_exists("argnb-gateway"):
            subprocess.run(["userdel", "argnb-gateway"], check=False, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
