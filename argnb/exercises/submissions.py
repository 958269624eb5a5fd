"""Reading a class's submissions: untrusted paths, names and archives.

The grader may run as root, so a submission is never trusted to point where it claims: a link
(symbolic, or a hard link when root reads) is refused with one line in that student's feedback
instead of being followed to a solution, ``/etc/shadow`` or another student's folder; a notebook
is opened with ``O_NOFOLLOW`` and read only if it is a regular file of bounded size. Zip and tar
uploads (``STUDENT.zip``, ``STUDENT.tar[.gz]``) are unpacked into the grader's own folder without
links, absolute paths or ``..``, within a size and a file-count bound. A student's name is bytes:
it is shown escaped (one line, no control characters, bounded) and feedback files get safe names.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from argnb.errors import GradingError

#: the largest notebook read (bytes)
MAX_NOTEBOOK = 50 * 2**20
#: an archive's bounds: files and bytes unpacked
MAX_FILES, MAX_UNPACKED = 2000, 200 * 2**20
#: characters of a student's name shown before it is cut (a short hash keeps it unique)
MAX_NAME = 64
ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz")
LINK = "refused: {what} is a link, which the grader does not follow"
#: what ``argnb class collect`` writes beside the learners' folders (who handed in what)
COLLECTED = "collected.json"


def _digest(raw: str) -> str:
    return hashlib.sha256(os.fsencode(raw)).hexdigest()[:8]


def shown_name(raw: str) -> str:
    """A file name (any bytes) as one printable line: invalid UTF-8 as ``\\xNN``, controls as
    ``\\uNNNN``, at most :data:`MAX_NAME` characters; a hash is added when anything changed."""
    text = os.fsencode(raw).decode("utf-8", "backslashreplace")
    text = "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in text)
    if text == raw and len(text) <= MAX_NAME:
        return text
    return f"{text[: MAX_NAME - 10]}~{_digest(raw)}"


def page_name(student: str) -> str:
    """A safe file name (no extension) for a student's feedback page: the name itself when it is
    short and plain, else a plain prefix and a short hash."""
    plain = re.sub(r"[^A-Za-z0-9_.-]+", "_", student).strip("._") or "student"
    if plain == student and len(plain) <= MAX_NAME:
        return plain
    return f"{plain[:40]}-{_digest(student)}"


def read_notebook(path: Path) -> Any:
    """The notebook at ``path``, opened without following a link (``GradingError`` otherwise)."""
    import nbformat

    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise GradingError(LINK.format(what=shown_name(path.name))) from None
        raise GradingError(f"cannot open {shown_name(path.name)}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise GradingError(f"refused: {shown_name(path.name)} is not a regular file")
        if info.st_nlink > 1 and os.geteuid() == 0:
            raise GradingError(
                f"refused: {shown_name(path.name)} is a hard link, which the grader does not follow"
            )
        data = f.read(MAX_NOTEBOOK + 1)
    if len(data) > MAX_NOTEBOOK:
        raise GradingError(f"refused: {shown_name(path.name)} is larger than {MAX_NOTEBOOK} bytes")
    return nbformat.reads(data.decode("utf-8"), as_version=4)


def _safe_member(name: str) -> str | None:
    """A member's relative path, or ``None`` when it is absolute or climbs out."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or name.startswith(("/", "\\")) or ".." in parts or "\x00" in name:
        return None
    if re.match(r"^[A-Za-z]:", parts[0]):
        return None
    return "/".join(parts)


def _write(dest: Path, rel: str, chunks: Iterable[bytes], budget: list[int]) -> None:
    target = dest.joinpath(*rel.split("/"))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        for chunk in chunks:
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise GradingError(
                    f"refused: the archive unpacks to more than {MAX_UNPACKED} bytes"
                )
            out.write(chunk)


def unpack(archive: Path, dest: Path) -> tuple[list[str], set[str]]:
    """Unpack ``archive`` into the new folder ``dest``: regular files and folders only.

    Returns one note per member left out (a link, an absolute path or ``..``, a device) and the
    base names of the members that were links; ``GradingError`` when the archive is unreadable
    or over a bound.
    """
    dest.mkdir(parents=True)
    notes: list[str] = []
    links: set[str] = set()
    budget = [MAX_UNPACKED]
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                members = z.infolist()
                if len(members) > MAX_FILES:
                    raise GradingError(f"refused: the archive holds over {MAX_FILES} files")
                for info in members:
                    rel = _safe_member(info.filename)
                    kind = stat.S_IFMT(info.external_attr >> 16)
                    shown = shown_name(info.filename)
                    if rel is None:
                        notes.append(f"left out {shown}: an absolute path or '..'")
                    elif kind == stat.S_IFLNK:
                        notes.append(LINK.format(what=shown))
                        links.add(rel.rsplit("/", 1)[-1])
                    elif info.is_dir():
                        dest.joinpath(*rel.split("/")).mkdir(parents=True, exist_ok=True)
                    elif kind in (0, stat.S_IFREG):
                        with z.open(info) as src:
                            _write(dest, rel, iter(lambda s=src: s.read(2**16), b""), budget)
                    else:
                        notes.append(f"left out {shown}: not a regular file")
            return notes, links
        with tarfile.open(archive) as t:
            for count, member in enumerate(t, 1):
                if count > MAX_FILES:
                    raise GradingError(f"refused: the archive holds over {MAX_FILES} files")
                rel = _safe_member(member.name)
                shown = shown_name(member.name)
                if rel is None:
                    notes.append(f"left out {shown}: an absolute path or '..'")
                elif member.issym() or member.islnk():
                    notes.append(LINK.format(what=shown))
                    links.add(rel.rsplit("/", 1)[-1])
                elif member.isdir():
                    dest.joinpath(*rel.split("/")).mkdir(parents=True, exist_ok=True)
                elif member.isreg():
                    src = t.extractfile(member)
                    assert src is not None
                    _write(dest, rel, iter(lambda s=src: s.read(2**16), b""), budget)
                else:
                    notes.append(f"left out {shown}: not a regular file")
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
        # an OSError names the grader's own folder: the student and the report get the reason only
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        for folder in (str(dest), str(archive.parent)):
            why = why.replace(folder, "…")
        raise GradingError(f"cannot unpack {shown_name(archive.name)}: {why}") from None
    return notes, links


def _archive_stem(name: str) -> str | None:
    for suffix in ARCHIVES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


#: ``{student: {notebook: path, or why it is refused}}``
Found = dict[str, dict[str, Path | str]]


def _walk(top: Path, names: set[str], who: str) -> tuple[dict[str, Path | str], list[str]]:
    """A student's folder: notebooks by name (a link: the reason it is refused), warnings."""
    mine: dict[str, Path | str] = {}
    warnings = []
    for here, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d != ".ipynb_checkpoints")
        for d in dirs:
            if os.path.islink(os.path.join(here, d)):
                warnings.append(f"{who}: ignored {shown_name(d)}: a link to a folder")
        for f in sorted(files):
            path = Path(here) / f
            if not f.endswith(".ipynb"):
                continue
            if f in names and f not in mine:
                mine[f] = LINK.format(what=f) if path.is_symlink() else path
            else:
                rel = shown_name(str(path.relative_to(top)))
                warnings.append(f"{who}: ignored {rel}")
    return mine, warnings


def find(folder: Path, names: Iterable[str], unpack_to: Path | None) -> tuple[Found, list[str]]:
    """``{student: {notebook: path, or why it is refused}}`` and warnings (escaped, one line each).

    Archives are unpacked under ``unpack_to`` (the caller's folder, removed after grading); without
    one they are listed as warnings.
    """
    if not folder.is_dir():
        raise GradingError(f"no submissions folder {shown_name(str(folder))}")
    names = set(names)
    found: Found = {}
    warnings: list[str] = []
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: os.fsencode(e.name))
    for n, entry in enumerate(entries):
        raw = entry.name
        if raw.startswith(".") or raw == COLLECTED:
            continue
        stem = _archive_stem(raw)
        if entry.is_symlink():
            reason = LINK.format(what=shown_name(raw))
            who, _, name = raw.partition("__")
            if raw.endswith(".ipynb") and name in names:
                found.setdefault(shown_name(who), {})[name] = reason
            else:
                found.setdefault(shown_name(stem or raw), {}).update(dict.fromkeys(names, reason))
        elif entry.is_dir(follow_symlinks=False):
            student = shown_name(raw)
            mine, notes = _walk(Path(entry.path), names, student)
            found.setdefault(student, {}).update(mine)
            warnings += notes
        elif stem is not None and entry.is_file(follow_symlinks=False) and unpack_to is None:
            warnings.append(f"ignored {shown_name(raw)}: archives are unpacked only while grading")
        elif stem is not None and entry.is_file(follow_symlinks=False):
            assert unpack_to is not None
            student = shown_name(stem)
            try:
                notes, links = unpack(Path(entry.path), unpack_to / f"{n:05d}")
                mine, more = _walk(unpack_to / f"{n:05d}", names, student)
            except GradingError as exc:
                mine, notes, links, more = dict.fromkeys(names, str(exc)), [], set(), []
            for name in links & names:  # a notebook that came as a link: refused, in its feedback
                mine[name] = LINK.format(what=name)
            for name, got in mine.items():
                if isinstance(got, str) or name not in found.get(student, {}):
                    found.setdefault(student, {})[name] = got
            found.setdefault(student, {})
            warnings += [f"{student}: {note}" for note in notes] + more
        elif raw.endswith(".ipynb") and "__" in raw:
            who, _, name = raw.partition("__")
            if name in names:
                found.setdefault(shown_name(who), {})[name] = Path(entry.path)
            else:
                warnings.append(
                    f"ignored {shown_name(raw)}: no solution notebook {shown_name(name)}"
                )
        else:
            warnings.append(
                f"ignored {shown_name(raw)}: neither a student folder, an archive nor NAME__file.ipynb"
            )
    if not found:
        raise GradingError(
            f"no submissions in {shown_name(str(folder))}",
            hint="one folder (or STUDENT.zip) per student, or files named STUDENT__notebook.ipynb",
        )
    return found, warnings
