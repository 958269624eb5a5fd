"""The course as files: notebooks, student exercises and assets, for a learner without a clone.

``pip install "argnb[local]"`` ships the course inside the package (``argnb/_course``, copied in by
the build, see ``setup.py``; solutions never). ``argnb course open [DIR]`` copies it into a folder
of the learner's and starts JupyterLab there::

    argnb course open                 # ./argnb-course, then JupyterLab on its START_HERE.ipynb
    argnb course open ~/course --no-browser
    argnb course open ~/course --no-lab          # only copy

Copying never overwrites a file that is already there: a learner's edited notebook is their work.
In a clone (or an editable install) the course is the checkout itself.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from argnb.errors import ArgnbError, MissingDependency

#: inside an installed wheel
PACKAGED = Path(__file__).resolve().parent / "_course"
#: a checkout: the package's parent folder
CHECKOUT = Path(__file__).resolve().parents[1]
FIRST_NOTEBOOK = "notebooks/00_setup.ipynb"
#: the course's home page: the learning path, how to connect a real model, where help is
HOME = "START_HERE.ipynb"
DEFAULT_DIR = "argnb-course"
_SKIP = {".ipynb_checkpoints", "__pycache__", ".git"}


def course_root() -> Path:
    """Where the course files are: the packaged copy, else the checkout this package runs from."""
    if (PACKAGED / "notebooks").is_dir():
        return PACKAGED
    if (CHECKOUT / "notebooks").is_dir() and (CHECKOUT / "exercises").is_dir():
        return CHECKOUT
    raise ArgnbError(
        "the course files are not installed with this copy of argnb",
        hint="pip install --force-reinstall argnb, or work in a clone of the project",
    )


def asset_dir(*parts: str) -> Path:
    """A folder of the course's assets, wherever the course lives (``asset_dir("critique")``)."""
    for root in (PACKAGED, CHECKOUT):
        if (root / "assets").is_dir():
            return root.joinpath("assets", *parts)
    return CHECKOUT.joinpath("assets", *parts)


def _files(folder: Path) -> list[Path]:
    return [
        p
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not any(part in _SKIP for part in p.relative_to(folder).parts)
    ]


def course_files(root: Path) -> list[Path]:
    """The course's files relative to ``root``: the home page, notebooks and assets whole, each
    exercise folder as a student gets it (no solutions; see
    :func:`argnb.exercises.release.student_files`)."""
    from argnb.exercises.release import student_files

    out: list[Path] = [Path(HOME)] if (root / HOME).is_file() else []
    for part in ("notebooks", "assets"):
        out += [p.relative_to(root) for p in _files(root / part)]
    for folder in sorted(p for p in (root / "exercises").iterdir() if p.is_dir()):
        if folder.name in _SKIP:
            continue
        out += [folder.relative_to(root) / rel for rel in student_files(folder)]
    return out


def doc_files(root: Path) -> list[Path]:
    """The reference docs (``docs/*.md``) relative to ``root``: pages of the course site (packaged
    with the course, never copied into a learner's folder)."""
    return sorted(p.relative_to(root) for p in (root / "docs").glob("*.md"))


#: what :func:`copy_course` last wrote into a folder (with ``update``): each file's SHA-256
MANIFEST = ".argnb-course.json"


@dataclass
class Copied:
    """What :func:`copy_course` did."""

    dest: Path
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)  # already there (maybe edited): left alone
    updated: list[Path] = field(default_factory=list)  # a newer version over an untouched copy


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest(target: Path) -> dict[str, str]:
    import json

    try:
        data = json.loads((target / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def copy_course(dest: str | Path, *, root: Path | None = None, update: bool = False) -> Copied:
    """Copy the course into ``dest``; files that already exist there are kept as they are.

    With ``update`` (a class hub copies the course into every learner's home at each start):
    a file the learner never changed (the same as what was copied last time, by the hashes in
    :data:`MANIFEST`) gets the course's newer version; a file they changed is kept as theirs;
    a file they deleted comes back; a new lesson is added. nbgitpuller merges the same way."""
    import json

    root = root or course_root()
    target = Path(dest).expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise ArgnbError(f"{target} is a file", hint="name a folder for the course")
    result = Copied(target)
    last = _manifest(target) if update else {}
    now: dict[str, str] = {}
    for rel in course_files(root):
        src, out, key = root / rel, target / rel, rel.as_posix()
        new = _sha(src) if update else ""
        if out.exists():
            mine = _sha(out) if update and out.is_file() else ""
            if not update or mine == new or last.get(key) != mine:
                result.kept.append(rel)
                now[key] = last.get(key, "") if mine != new else new
                continue
            result.updated.append(rel)
        else:
            result.written.append(rel)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, out)
        now[key] = new
    if update:
        (target / MANIFEST).write_text(json.dumps(now, indent=0, sort_keys=True), encoding="utf-8")
    return result


def lab_command(folder: Path, *, browser: bool = True, port: int | None = None) -> list[str]:
    """The JupyterLab command for ``folder`` (opened on the home page, else the first notebook)."""
    import importlib.util

    if importlib.util.find_spec("jupyterlab") is None:
        raise MissingDependency(
            "JupyterLab is not installed",
            hint="pip install 'argnb[local]' (or pip install jupyterlab), or use --no-lab",
        )
    cmd = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={folder}"]
    if not browser:
        cmd.append("--no-browser")
    if port:
        cmd.append(f"--port={port}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # containers often run as root; JupyterLab refuses otherwise
    first = next((f for f in (HOME, FIRST_NOTEBOOK) if (folder / f).exists()), None)
    if first:
        cmd.append(str(folder / first))
    return cmd


def cmd_open(args: argparse.Namespace) -> int:
    copied = copy_course(args.dir)
    print(
        f"course in {copied.dest}: {len(copied.written)} files copied"
        + (f", {len(copied.kept)} already there and kept as they are" if copied.kept else "")
    )
    try:
        from argnb.llm.local import embedded_gguf

        if embedded_gguf() is None:
            print(
                "the embedded model is not installed yet: run `argnb model fetch` (needs internet)"
            )
    except ImportError:  # pragma: no cover - the llm package is always there
        pass
    if (copied.dest / HOME).exists():
        print(
            f"start with {copied.dest / HOME}: the learning path, and how to connect a real model"
        )
    if args.no_lab:
        return 0
    cmd = lab_command(copied.dest, browser=not args.no_browser, port=args.port)
    print("starting JupyterLab (Ctrl+C stops it) ...", flush=True)
    return run_lab(cmd, copied.dest)


def run_lab(cmd: list[str], cwd: Path) -> int:
    """Run JupyterLab until it exits; Ctrl+C or SIGTERM here stops it too (no orphan server)."""
    proc = subprocess.Popen(cmd, cwd=cwd)

    def stop(*_: object) -> None:
        proc.terminate()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)


def register(sub: argparse._SubParsersAction) -> None:
    """``argnb course open [DIR]`` and ``argnb course site --out DIR``."""
    p = sub.add_parser(
        "course", help="copy the course into a folder and open it in JupyterLab, or build its site"
    )
    inner = p.add_subparsers(dest="course_command", required=True)
    o = inner.add_parser("open", help="copy notebooks, exercises and assets, then start JupyterLab")
    o.add_argument("dir", nargs="?", default=DEFAULT_DIR, help=f"folder (default ./{DEFAULT_DIR})")
    o.add_argument("--no-browser", action="store_true", help="start JupyterLab without a browser")
    o.add_argument("--no-lab", action="store_true", help="only copy the files")
    o.add_argument(
        "--port", type=int, default=None, help="JupyterLab's port (default 8888 or next)"
    )
    o.set_defaults(func=cmd_open)
    s = inner.add_parser(
        "site", help="build the course website (lessons executed on the embedded model, cached)"
    )
    s.add_argument("--out", required=True, help="folder for the site (new, empty or a site)")
    s.add_argument(
        "--work",
        default=None,
        help="folder for the sources, doctrees and the execution cache (default: argnb's "
        "cache folder, $ARGNB_CACHE_DIR or the user's); keep it to rebuild without executing",
    )
    s.add_argument("--quiet", action="store_true", help="print only the summary line")
    s.set_defaults(func=_cmd_site)


def _cmd_site(args: argparse.Namespace) -> int:
    from argnb.site.build import cmd_site
    from argnb.site.stage import Sources

    root = course_root()
    sources = Sources(root, course_files(root), doc_files(root), HOME)
    return cmd_site(args, sources)
