"""The gateway's files are its own: 0600/0700, owned by its user, never reached through a link.

``take_over`` changes the process's umask and, for a user, drops root: each case runs in a child
Python so the test process keeps both.
"""

from __future__ import annotations

import json
import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = """
import json, os, sys
from pathlib import Path
from argnb.classroom.service_user import take_over
from argnb.errors import ArgnbError
user, db, rooms = sys.argv[1] or None, Path(sys.argv[2]), Path(sys.argv[3])
try:
    take_over(user, db, rooms)
except ArgnbError as exc:
    print(json.dumps({"error": str(exc)}))
    raise SystemExit(0)
new = Path(rooms, "new.json")
new.write_text("{}")
print(json.dumps({"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
                  "new": oct(new.stat().st_mode & 0o777)}))
"""


def _take_over(user: str, db: Path, rooms: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, user, str(db), str(rooms)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def tmp_path():
    """A folder other users can reach (pytest's own is under a private one), as the hub's
    state folder is."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="argnb-service-user-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _state(tmp_path: Path) -> tuple[Path, Path]:
    """What an older gateway left: a world-readable database and rooms."""
    state = tmp_path / "state"
    (state / "argnb-rooms").mkdir(parents=True)
    db = state / "usage.sqlite"
    db.write_text("")
    room = state / "argnb-rooms" / "K7QM2XAB.json"
    room.write_text("{}")
    for p, m in ((state, 0o755), (state / "argnb-rooms", 0o755), (db, 0o644), (room, 0o644)):
        p.chmod(m)
    return db, state / "argnb-rooms"


def test_without_a_user_the_files_become_private_to_the_hubs_user(tmp_path: Path) -> None:
    db, rooms = _state(tmp_path)
    seen = _take_over("", db, rooms)
    assert seen["uid"] == os.getuid() and seen["new"] == "0o600"
    assert (_mode(db), _mode(rooms), _mode(rooms / "K7QM2XAB.json")) == (0o600, 0o700, 0o600)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_as_root_the_gateway_takes_its_files_over_and_becomes_its_user(tmp_path: Path) -> None:
    nobody = pwd.getpwnam("nobody")
    db, rooms = _state(tmp_path)
    made = tmp_path / "var" / "gateway" / "usage.sqlite"  # a folder that is not there yet
    seen = _take_over("nobody", db, rooms)
    assert "error" in seen and "cannot write in" in seen["error"]  # state/ is root's
    assert "install -d -o nobody" in seen["error"]
    seen = _take_over("nobody", made, made.parent / "argnb-rooms")  # as configure sets them
    assert "uid" in seen, seen
    seen = _take_over("nobody", made, rooms)
    assert (seen["uid"], seen["gid"], seen["groups"]) == (nobody.pw_uid, nobody.pw_gid, [])
    for path, mode in ((made.parent, 0o700), (rooms, 0o700), (rooms / "K7QM2XAB.json", 0o600)):
        st = path.stat()
        assert (stat.S_IMODE(st.st_mode), st.st_uid) == (mode, nobody.pw_uid), path
    assert _mode(made.parent.parent) == 0o755  # a parent made on the way stays root's and open
    assert (rooms / "new.json").stat().st_uid == nobody.pw_uid


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_a_link_in_place_of_a_file_is_refused_and_nothing_changes_through_it(tmp_path: Path):
    db, rooms = _state(tmp_path)
    target = tmp_path / "etc-shadow-like"
    target.write_text("root's")
    target.chmod(0o640)
    db.unlink()
    db.symlink_to(target)
    seen = _take_over("nobody", tmp_path / "fresh" / "usage.sqlite", rooms)
    assert "uid" in seen  # the db elsewhere: fine
    (rooms / "AAAAAA.json").symlink_to(target)
    seen = _take_over("", db, rooms)
    assert "error" in seen and "not links" in seen["error"], seen
    assert (_mode(target), target.stat().st_uid) == (0o640, 0)


def test_an_unknown_user_is_one_line_saying_how_to_make_it(tmp_path: Path) -> None:
    db, rooms = _state(tmp_path)
    seen = _take_over("no-such-user-argnb", db, rooms)
    assert "no system user 'no-such-user-argnb'" in seen["error"]
    assert "useradd --system" in seen["error"]
