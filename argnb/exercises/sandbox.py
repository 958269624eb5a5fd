"""Where a graded notebook runs: one bubblewrap sandbox per submission, nothing shared.

The isolation is configuration, decided here and nowhere else (the threat model is in
``docs/classroom.md``). For every submitted notebook the grader makes a scratch folder with

* ``box/`` — a copy of the exercise's student files (notebooks and data, never ``solutions/``),
  the kernel's connection file and sockets, ``HOME``: the one writable place the kernel sees.
  Once a student's cell has run, the grader creates, changes or removes nothing in it (a link
  planted there leads nowhere of ours); the whole scratch folder is removed without following
  links;
* ``private/`` — the graded notebook with its hidden checks, the event log, the seccomp program
  and the sandbox spec: only the grader reads it, it is never mounted;
* ``check/`` — the checker's own copy of the exercise's files and its job (the check cells,
  hidden tests included): mounted read-only in the checker's sandbox (:mod:`.checker`), never in
  the kernel's;
* ``sockets/`` — the runner's socket for the checker (mounted read-only in the kernel's sandbox:
  the kernel connects, never creates or redirects anything there);
* ``stage/`` — mount points used when the grader runs as root (see :mod:`.jail`), and the masks
  over withheld functions (:mod:`.withhold`).

The kernel then runs (:mod:`.jail`) under ``bwrap`` with new user, PID, IPC, network, UTS and
cgroup namespaces, as user 65534 (also on the host when the grader is root), a private ``/tmp``,
only ``/usr``, the Python environment and the argnb package mounted read-only (never the project
tree, the submissions, the instructor's home, ``/etc``, ``/run`` or the host's ``/tmp``), an
environment built from nothing, a seccomp filter (:mod:`.seccomp`), ``--die-with-parent``,
``--new-session``, and limits on memory, processes, file size and CPU time. Its client (the
runner) stays outside and talks to it over Unix sockets in ``box/``.

Without bubblewrap the grader refuses, unless the instructor asks for ``none`` for trusted
submissions (a clean environment and the limits, no isolation).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

MODES = ("bwrap", "none")
#: the sandbox user inside, and on the host when the grader is root (``nobody``)
SANDBOX_UID = 65534
#: where the runner's socket for the checker appears in the kernel's sandbox (read-only: the
#: kernel connects, and nothing it did to its own folder can redirect what the runner creates)
SOCKET_DIR, SOCKET = "/run/argnb", "grader.sock"
#: where the embedded model file appears in the sandbox (no path of the instructor's leaks in)
MODEL_PATH = "/opt/argnb/model.gguf"
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap), "
    "or pass --sandbox none --i-understand for submissions you trust"
)

DESCRIPTION = {
    "bwrap": "bubblewrap: own namespaces, user 65534, only Python and the copy mounted, seccomp, "
    "limits",
    "none": "NO SANDBOX (--sandbox none): trusted submissions only; clean environment and limits",
}


@dataclass(frozen=True)
class Limits:
    """What one notebook's kernel may use; over a limit it dies and loses only its own checks."""

    memory_mb: int = 2048  # address space per process
    processes: int = 256  # processes and threads of the sandbox user, per sandbox
    file_mb: int = 256  # largest file it may write
    cpu_seconds: int = 600  # CPU time per process
    total_memory_mb: int = 3072  # memory of the whole sandbox (a control group, or the watchdog)

    def rlimits(self) -> dict[str, int]:
        return {
            "AS": self.memory_mb * 2**20,
            "NPROC": self.processes,
            "FSIZE": self.file_mb * 2**20,
            "CPU": self.cpu_seconds,
        }


@dataclass
class Scratch:
    """The folders of one submission's run (see the module docstring)."""

    root: Path
    box: Path
    private: Path
    stage: Path
    check: Path
    sockets: Path

    @classmethod
    def create(cls) -> Scratch:
        root = Path(tempfile.mkdtemp(prefix="argnb-grade-")).resolve()
        os.chmod(root, 0o711)  # the sandbox user may pass through, never list
        box, private, stage = root / "box", root / "private", root / "stage"
        check, sockets = root / "check", root / "sockets"
        box.mkdir()
        private.mkdir(mode=0o700)
        stage.mkdir()
        check.mkdir()
        sockets.mkdir()
        os.chmod(stage, 0o711)
        os.chmod(sockets, 0o755)  # the sandbox user connects; only the grader creates
        return cls(root, box, private, stage, check, sockets)

    def hand_over(self) -> None:
        """Give ``box`` to the sandbox user (when the grader is root)."""
        if _is_root():
            for path in [self.box, *self.box.rglob("*")]:
                os.lchown(path, SANDBOX_UID, SANDBOX_UID)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _package_dir() -> Path:
    import argnb

    return Path(argnb.__file__).resolve().parent


def read_only_mounts() -> list[Path]:
    """What the kernel needs to start: the Python installation, the environment, the package."""
    found: list[Path] = []
    for p in (sys.base_prefix, sys.prefix, _package_dir()):
        path = Path(p).resolve()
        if path == Path("/") or any(path == f or f in path.parents for f in found):
            continue
        if path.parts[1:2] == ("usr",):
            continue  # /usr is mounted whole
        found.append(path)
    return found


def _symlinks() -> list[list[str]]:
    """``/bin``, ``/lib``, ... as on the host: symlinks into ``/usr`` (merged /usr) or mounts."""
    out = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = Path("/") / name
        if p.is_symlink():
            out.append([os.readlink(p), str(p)])
    return out


def _real_dirs() -> list[Path]:
    return [
        Path("/") / n
        for n in ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
        if (Path("/") / n).is_dir() and not (Path("/") / n).is_symlink()
    ]


def kernel_env(box: Path, model: str | None) -> dict[str, str]:
    """The kernel's whole environment, built from nothing (no variable of the grader's)."""
    home = box / ".home"
    for sub in ("", ".ipython", "cache"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "IPYTHONDIR": str(home / ".ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "ARGNB_CACHE_DIR": str(home / "cache"),
        "ARGNB_CONFIG": str(home / "config.toml"),
        "ARGNB_GRADING": "1",
        "MPLBACKEND": "agg",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    if sys.prefix != sys.base_prefix:
        env["VIRTUAL_ENV"] = sys.prefix
    if model:
        env["ARGNB_GGUF"] = model
    return env


def _embedded_model() -> str | None:
    try:
        from argnb.llm.local import embedded_gguf

        found = embedded_gguf()
    except Exception:
        return None
    return str(found) if found and Path(found).is_file() else None


def write_spec(
    scratch: Scratch,
    mode: str,
    limits: Limits,
    chdir: Path,
    *,
    checker: bool = False,
    cgroup: list[str] | None = None,
    withheld: list[str] | None = None,
) -> Path:
    """The jail's instructions for this submission, in ``private/`` (see :mod:`.jail`).

    ``checker``: the checker's sandbox instead of the kernel's: its own read-only folder
    (``check/``, the exercise's files and the job), never ``box/``, and no model. ``cgroup``:
    the ``cgroup.procs`` files the jail joins first (:mod:`.cgroups`). ``withheld``: the
    functions the exercise withholds, masked in the kernel's sandbox (:mod:`.withhold`).
    """
    from argnb.exercises import seccomp

    model = None if checker else _embedded_model()
    inside_model = MODEL_PATH if mode == "bwrap" else model
    own = scratch.check if checker else scratch.box
    env = kernel_env(own, inside_model if model else None)
    spec: dict = {
        "mode": mode,
        "python": sys.executable,
        "env": env,
        "chdir": str(chdir),
        "limits": limits.rlimits(),
        "cgroup": list(cgroup or []),
    }
    if mode == "bwrap":
        binds = [["/usr", "/usr", "ro"]]
        binds += [[str(p), str(p), "ro"] for p in _real_dirs()]
        binds += [[str(p), str(p), "ro"] for p in read_only_mounts()]
        if model:
            binds.append([model, MODEL_PATH, "ro"])
        if not checker:  # the runner's socket, in a folder of ours the kernel cannot write
            binds.append([str(scratch.sockets), SOCKET_DIR, "ro"])
        if withheld and not checker:
            from argnb.exercises.withhold import binds as masks

            visible = [Path("/usr"), *_real_dirs(), *read_only_mounts()]
            binds += masks(withheld, scratch.stage / "masks", visible)
        binds.append([str(own), str(own), "ro" if checker else "rw"])
        stage = scratch.stage / ("checker" if checker else "kernel")
        stage.mkdir(exist_ok=True)
        os.chmod(stage, 0o711)
        spec.update(
            bwrap=shutil.which("bwrap") or "bwrap",
            binds=binds,
            symlinks=_symlinks(),
            inner_uid=SANDBOX_UID,
            seccomp=str(seccomp.write_filter(scratch.private / "seccomp.bpf")),
            stage=str(stage) if _is_root() else None,
            host_uid=SANDBOX_UID if _is_root() else None,
        )
    if not checker:
        inside = SOCKET_DIR if mode == "bwrap" else str(scratch.sockets)
        spec["socket"] = {"host": str(scratch.sockets / SOCKET), "inside": f"{inside}/{SOCKET}"}
    path = scratch.private / ("checker.json" if checker else "sandbox.json")
    path.write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return path


def jail_command(spec: Path) -> list[str]:
    """What the runner starts in place of ``python -m ipykernel_launcher ...``."""
    return [sys.executable, "-m", "argnb.exercises.jail", str(spec), "--"]


@functools.lru_cache(maxsize=1)
def unavailable() -> str | None:
    """``None`` when a bubblewrap sandbox works here, else the reason, in one line."""
    from argnb.exercises import seccomp

    if not sys.platform.startswith("linux"):
        return "bubblewrap sandboxes need Linux"
    if not shutil.which("bwrap"):
        return "bubblewrap (bwrap) is not installed"
    why = seccomp.available()
    if why:
        return f"no seccomp filter can be built: {why}"
    scratch = Scratch.create()
    try:
        scratch.hand_over()
        spec = write_spec(scratch, "bwrap", Limits(), scratch.box)
        cmd = [*jail_command(spec), sys.executable, "-c", "pass"]
        try:
            done = subprocess.run(
                cmd, capture_output=True, timeout=60, check=False, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return f"bubblewrap does not start here: {exc}"
        if done.returncode != 0:
            last = (done.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
            return f"bubblewrap does not start here: {last}"
    finally:
        scratch.remove()
    return None
