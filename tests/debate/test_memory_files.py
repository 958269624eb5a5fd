"""The memory file itself: another application's database is refused, a read-only one is read.

A class shares one memory on a read-only disk (a mounted dataset, a folder only the instructor
may write): ``memory info``, ``retrieve`` and ``next`` must read it there. The read-only test
mounts the folder read-only with bubblewrap (or ``mount --bind`` in a private mount namespace)
and skips where neither works.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from argnb.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_21_3_build_refuses_another_applications_database(tmp_path, capsys):
    other = tmp_path / "app.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE users (name TEXT)")
    db.execute("INSERT INTO users VALUES ('ada')")
    db.commit()
    db.close()
    before = other.read_bytes()
    assert main(["debate", "memory", "build", "--from", "example", "--db", str(other)]) == 2
    err = capsys.readouterr().err
    assert "not a debate memory" in err and "tables: users" in err
    assert len(err.strip().splitlines()) == 1
    assert other.read_bytes() == before  # not one table added
    assert main(["debate", "memory", "info", "--db", str(other)]) == 2
    assert "not a debate memory" in capsys.readouterr().err


def test_an_empty_file_is_not_a_memory_to_read_but_one_to_build(tmp_path, capsys):
    db = tmp_path / "m.db"
    db.write_bytes(b"")
    assert main(["debate", "memory", "info", "--db", str(db)]) == 2
    assert "not a debate memory" in capsys.readouterr().err
    assert main(["debate", "memory", "build", "--from", "example", "--db", str(db), "--quiet"]) == 0


SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {root!r})
    import argnb.cli_common
    from argnb.cli import main
    from tests.debate.test_generate import role_backend

    argnb.cli_common.backend_from_args = lambda args: role_backend()
    db, debates, out = sys.argv[1:4]
    codes = {{
        "info": main(["debate", "memory", "info", "--db", db, "--json"]),
        "retrieve": main(["debate", "retrieve", "--db", db, "--text", "cars in the centre",
                          "--method", "bm25", "--json"]),
        "next": main(["debate", "next", "--debates", debates, "--cut", "1", "--method",
                      "rdebater", "--db", db, "--out", out, "--json", "--quiet"]),
        "build": main(["debate", "memory", "build", "--from", "example", "--db", db]),
    }}
    print("CODES " + json.dumps(codes))
    """
)


def _read_only_runner(ro: Path) -> list[str] | None:
    """A command prefix that runs a program with ``ro`` mounted read-only, or None."""
    probe = ["sh", "-c", f"touch {ro}/probe 2>/dev/null && exit 1 || exit 0"]
    bwrap = shutil.which("bwrap")
    candidates = []
    if bwrap:
        candidates.append([bwrap, "--dev-bind", "/", "/", "--ro-bind", str(ro), str(ro), "--"])
    unshare = shutil.which("unshare")
    if unshare:
        mount = f'mount --bind {ro} {ro} && mount -o remount,ro,bind {ro} && exec "$@"'
        candidates.append([unshare, "-m", "sh", "-c", mount, "sh"])
    for prefix in candidates:
        try:
            ok = subprocess.run([*prefix, *probe], capture_output=True, timeout=30).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            continue
        if ok:
            return prefix
    return None


def test_21_4_a_memory_on_a_read_only_mount_is_read(tmp_path, capsys):
    from tests.debate.test_cli_generate import ROWS

    ro = tmp_path / "ro"
    ro.mkdir()
    db = ro / "memory.db"
    assert main(["debate", "memory", "build", "--from", "example", "--db", str(db), "--quiet"]) == 0
    assert sorted(p.name for p in ro.iterdir()) == ["memory.db"]  # no -wal/-shm left behind
    debates = tmp_path / "debates.jsonl"
    debates.write_text(
        "".join(
            json.dumps({"debate_id": d, "topic": t, "turn": n, "stance": s, "text": x}) + "\n"
            for d, t, n, s, x in ROWS
        ),
        encoding="utf-8",
    )
    runner = _read_only_runner(ro)
    if runner is None:
        pytest.skip("cannot mount a folder read-only here (no bwrap, no mount namespace)")
    out = tmp_path / "next.jsonl"
    proc = subprocess.run(
        [
            *runner,
            sys.executable,
            "-c",
            SCRIPT.format(root=str(ROOT)),
            str(db),
            str(debates),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    codes = json.loads(proc.stdout.split("CODES ", 1)[1]) if "CODES " in proc.stdout else None
    assert codes == {"info": 0, "retrieve": 0, "next": 0, "build": 2}, proc.stdout + proc.stderr
    info = json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith('{"path"')))
    assert info["records"] == 40
    assert (
        "cannot write" in proc.stderr
        and "read-only" in proc.stderr
        and "Traceback" not in proc.stderr
    )
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert {r["id"] for r in recs} == {"d1@1", "d2@1"} and all(r["evidence"] for r in recs)
    assert sorted(p.name for p in ro.iterdir()) == ["memory.db"]
