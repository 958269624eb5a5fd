"""Keep a graded notebook from reaching the network, the instructor's secrets or their files.

Student code is untrusted. Every notebook runs in its own process tree, in a temporary copy of the
exercise folder, with a scrubbed environment (no proxies, API keys or tokens; ``HOME`` and the
caches inside the copy). On top of that, the strongest isolation this machine offers:

* ``bwrap`` (bubblewrap, Linux): the whole filesystem read-only except the copy, no network,
  its own process namespace;
* ``unshare`` (util-linux, Linux with unprivileged user namespaces): no network, its own process
  namespace (killing the grader's child kills the kernel too);
* otherwise (macOS, Windows, locked-down Linux) only a socket guard inside the kernel: Python code
  cannot open a connection or resolve a name beyond this machine.

The kernel talks to its client over Unix sockets (ZeroMQ ``ipc``), so a namespace without any
network still works. The level used is printed with the grading summary.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

#: environment variables a kernel may inherit; everything else (keys, proxies, tokens) stays out
KEEP_ENV = (
    "PATH",
    "PYTHONPATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
    "ARGNB_GGUF",
    "ARGNB_THREADS",
)

#: runs in the kernel before the student's first cell
SOCKET_GUARD = """\
def _argnb_no_network():
    import ipaddress
    import socket

    def local(host):
        if host in (None, "", "localhost"):
            return True
        try:
            return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
        except ValueError:
            return False

    def refuse(what):
        raise PermissionError(f"no network while grading ({what})")

    for name in ("connect", "connect_ex"):
        original = getattr(socket.socket, name)

        def guarded(self, address, _original=original, _name=name):
            if self.family in (socket.AF_INET, socket.AF_INET6) and not local(address[0]):
                refuse(f"{_name} to {address[0]}")
            return _original(self, address)

        setattr(socket.socket, name, guarded)
    original_sendto = socket.socket.sendto

    def sendto(self, data, *args):
        address = args[-1]
        if self.family in (socket.AF_INET, socket.AF_INET6) and not local(address[0]):
            refuse(f"sendto {address[0]}")
        return original_sendto(self, data, *args)

    socket.socket.sendto = sendto
    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex"):
        original = getattr(socket, name)

        def resolve(host, *args, _original=original, **kwargs):
            if not local(host) and not _is_ip(host):
                refuse(f"resolving {host}")
            return _original(host, *args, **kwargs)

        setattr(socket, name, resolve)

    def _is_ip(host):
        try:
            ipaddress.ip_address(str(host))
            return True
        except ValueError:
            return False


_argnb_no_network()
del _argnb_no_network
"""


def clean_env(workdir: Path) -> dict[str, str]:
    """The environment of a graded kernel: a short allow-list, with home and caches in ``workdir``."""
    env = {k: v for k, v in os.environ.items() if k in KEEP_ENV}
    home = workdir / ".home"
    for sub in ("", ".ipython", ".runtime", "tmp", "cache"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        USERPROFILE=str(home),
        TMPDIR=str(home / "tmp"),
        TEMP=str(home / "tmp"),
        TMP=str(home / "tmp"),
        IPYTHONDIR=str(home / ".ipython"),
        JUPYTER_RUNTIME_DIR=str(home / ".runtime"),
        JUPYTER_PLATFORM_DIRS="1",
        ARGNB_CACHE_DIR=str(home / "cache"),
        ARGNB_CONFIG=str(home / "config.toml"),
        ARGNB_GRADING="1",
        MPLBACKEND="agg",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    if "ARGNB_GGUF" not in env:
        gguf = _embedded_model()
        if gguf:
            env["ARGNB_GGUF"] = gguf  # found via the instructor's home; the kernel has another
    return env


def _embedded_model() -> str | None:
    try:
        from argnb.llm.local import embedded_gguf

        found = embedded_gguf()
    except Exception:
        return None
    return str(found) if found else None


def _works(cmd: list[str]) -> bool:
    try:
        return (
            subprocess.run(
                cmd, capture_output=True, timeout=20, check=False, stdin=subprocess.DEVNULL
            ).returncode
            == 0
        )
    except (OSError, subprocess.SubprocessError):
        return False


def _bwrap(workdir: str) -> list[str]:
    return [
        "bwrap",
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/dev/shm",
        "--bind", workdir, workdir,
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        "--new-session",
        "--chdir", workdir,
    ]  # fmt: skip


UNSHARE = ["unshare", "--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"]


@functools.lru_cache(maxsize=1)
def available() -> str:
    """The strongest isolation that works here: ``"bwrap"``, ``"unshare"`` or ``"guard"``.

    ``ARGNB_SANDBOX`` forces a level (e.g. ``guard`` where namespaces misbehave).
    """
    forced = os.environ.get("ARGNB_SANDBOX")
    if forced in ("bwrap", "unshare", "guard"):
        return forced
    if not sys.platform.startswith("linux"):
        return "guard"
    probe = str(Path.cwd())
    if shutil.which("bwrap") and _works([*_bwrap(probe), sys.executable, "-c", "pass"]):
        return "bwrap"
    if shutil.which("unshare") and _works([*UNSHARE, sys.executable, "-c", "pass"]):
        return "unshare"
    return "guard"


DESCRIPTION = {
    "bwrap": "bubblewrap: read-only filesystem except the notebook's copy, no network",
    "unshare": "Linux namespaces: no network, own process tree (files: a temporary copy)",
    "guard": "socket guard inside the kernel (files: a temporary copy; no OS-level sandbox here)",
}


def wrap(cmd: list[str], workdir: Path, level: str | None = None) -> list[str]:
    """``cmd`` prefixed by the sandbox ``level`` (default: :func:`available`)."""
    level = level or available()
    if level == "bwrap":
        return [*_bwrap(str(workdir)), *cmd]
    if level == "unshare":
        return [*UNSHARE, *cmd]
    return list(cmd)
