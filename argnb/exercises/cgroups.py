"""Limits per submission, not per process or uid: one control group per sandbox.

Address space and ``RLIMIT_NPROC`` are per process and per uid, and every sandbox shares uid
65534: eight processes of 1.5 GB each pass a 2 GB address-space limit. So each submission's
kernel (everything it starts included) goes into a control group of its own:

* cgroup v2 (``memory.max``, ``pids.max``) where the grader may create one (root, or a delegated
  subtree);
* otherwise, as root, the v1 ``memory`` controller (``memory.limit_in_bytes``, swap included
  where the kernel counts it) and the v1 ``pids`` controller;
* otherwise nothing here: the runner's watchdog (:func:`tree_rss`) sums the sandbox's resident
  memory twice a second and ends the sandbox over the limit.

The jail (:mod:`.jail`) moves itself into the group before anything of the student's starts;
:meth:`Cgroup.remove` kills whatever is left in it and removes it, so nothing outlives a run.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path


def _mounts() -> dict[str, Path]:
    """``{"v2": mount}`` and ``{controller: mount}`` for the v1 hierarchies."""
    out: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, extra = left.split(), right.split()
        if len(fields) < 5 or len(extra) < 3:
            continue
        if extra[0] == "cgroup2":
            out.setdefault("v2", Path(fields[4]))
        elif extra[0] == "cgroup":
            for opt in extra[2].split(","):
                if opt in ("memory", "pids"):
                    out.setdefault(opt, Path(fields[4]))
    return out


def _own() -> dict[str, str]:
    """This process's group in each hierarchy (``"v2"`` for the unified one)."""
    out: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers == "":
                out["v2"] = path
            for c in controllers.split(","):
                out[c] = path
    return out


@dataclass
class Cgroup:
    """One submission's control group(s); ``procs`` are the files a process joins through."""

    kind: str  # "v2" | "v1"
    dirs: list[Path] = field(default_factory=list)

    @property
    def procs(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def oom_killed(self) -> bool:
        """Whether the memory limit ended a process of the group."""
        for d in self.dirs:
            for name, key in (("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")):
                with contextlib.suppress(OSError, ValueError):
                    for line in (d / name).read_text().splitlines():
                        k, _, v = line.partition(" ")
                        if k == key and int(v) > 0:
                            return True
        return False

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError, ValueError):
                found |= {int(p) for p in (d / "cgroup.procs").read_text().split()}
        return found

    def remove(self) -> None:
        """Kill every process left in the group, then remove it."""
        for d in self.dirs:
            with contextlib.suppress(OSError):
                (d / "cgroup.kill").write_text("1")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            left = self.pids()
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            gone = True
            for d in self.dirs:
                try:
                    d.rmdir()
                except FileNotFoundError:
                    pass
                except OSError:
                    gone = False
            if gone:
                return
            time.sleep(0.05)


def _v2(mount: Path, own: str, name: str, memory: int, processes: int) -> Cgroup | None:
    parent = mount / own.lstrip("/")
    try:
        available = (parent / "cgroup.controllers").read_text().split()
        if "memory" not in available:
            return None
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        if "memory" not in enabled:
            (parent / "cgroup.subtree_control").write_text("+memory")
        if "pids" in available and "pids" not in enabled:
            with contextlib.suppress(OSError):
                (parent / "cgroup.subtree_control").write_text("+pids")
        d = parent / name
        d.mkdir()
    except OSError:
        return None
    group = Cgroup("v2", [d])
    try:
        (d / "memory.max").write_text(str(memory))
        with contextlib.suppress(OSError):
            (d / "memory.swap.max").write_text("0")
        with contextlib.suppress(OSError):
            (d / "pids.max").write_text(str(processes))
    except OSError:
        group.remove()
        return None
    return group


def _v1(mounts: dict[str, Path], own: dict[str, str], name: str, memory: int, processes: int):
    if "memory" not in mounts:
        return None
    group = Cgroup("v1")
    try:
        d = mounts["memory"] / own.get("memory", "/").lstrip("/") / name
        d.mkdir()
        group.dirs.append(d)
        (d / "memory.limit_in_bytes").write_text(str(memory))
        with contextlib.suppress(OSError):
            (d / "memory.memsw.limit_in_bytes").write_text(str(memory))
        if "pids" in mounts:
            with contextlib.suppress(OSError):
                p = mounts["pids"] / own.get("pids", "/").lstrip("/") / name
                p.mkdir()
                group.dirs.append(p)
                (p / "pids.max").write_text(str(processes))
    except OSError:
        group.remove()
        return None
    return group


def create(memory_mb: int, processes: int) -> Cgroup | None:
    """A new group limited to ``memory_mb`` and ``processes``, or ``None`` where none can be
    made here (then the runner's watchdog applies)."""
    if not os.path.isdir("/sys/fs/cgroup"):
        return None
    mounts, own = _mounts(), _own()
    name = f"argnb-grade-{secrets.token_hex(6)}"
    memory = memory_mb * 2**20
    if "v2" in mounts and "v2" in own:
        group = _v2(mounts["v2"], own["v2"], name, memory, processes)
        if group:
            return group
    if os.geteuid() == 0:
        return _v1(mounts, own, name, memory, processes)
    return None


def tree_rss(root: int) -> tuple[int, list[int]]:
    """Resident bytes of ``root`` and every process below it, and their ids (the watchdog's
    measure where no control group can be made)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    page = os.sysconf("SC_PAGE_SIZE")
    todo, seen, total = [root], [], 0
    while todo:
        pid = todo.pop()
        seen.append(pid)
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
        todo += children.get(pid, [])
    return total, seen
