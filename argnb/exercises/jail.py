"""Start one graded kernel inside its sandbox: ``python -m argnb.exercises.jail SPEC -- CMD...``.

The runner's kernel manager starts this instead of the kernel. It reads the spec that
:func:`argnb.exercises.sandbox.write_spec` wrote (in the grader's private folder) and replaces
itself with ``bwrap`` (mode ``bwrap``) or with the kernel itself (mode ``none``). Standard library
only: it runs once per notebook, before anything of the student's.

When the grader runs as root, the sandbox must not: the sources of the mounts are first bound
into a staging folder in a mount namespace of this process alone (so an unprivileged user can
reach a Python installed under ``/root``), then the process drops to the sandbox user and group
(no supplementary groups) before bubblewrap starts. Inside, a few lines of Python set the
resource limits (per user namespace, so one student's processes never count against another's)
and start the kernel.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

#: in the sandbox, before the kernel: the limits (``AS,NPROC,FSIZE,CPU``), no core dumps
INNER = (
    "import os,resource as r,sys\n"
    "for k,v in zip(('AS','NPROC','FSIZE','CPU'),map(int,sys.argv[1].split(','))):\n"
    " r.setrlimit(getattr(r,'RLIMIT_'+k),(v,v))\n"
    "r.setrlimit(r.RLIMIT_CORE,(0,0))\n"
    "os.execv(sys.argv[2],sys.argv[2:])\n"
)
_CLONE_NEWNS = 0x00020000
_PR_SET_PDEATHSIG = 1
_MS_BIND, _MS_REC, _MS_PRIVATE = 0x1000, 0x4000, 0x40000


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _stage(binds: list[list], stage: str) -> list[list]:
    """Bind every source into ``stage`` in a private mount namespace; the staged binds."""
    libc = ctypes.CDLL(None, use_errno=True)
    _check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate /")
    out = []
    for i, (src, dst, mode) in enumerate(binds):
        target = os.path.join(stage, str(i))
        if os.path.isdir(src):
            os.mkdir(target)
        else:
            open(target, "w").close()
        _check(libc.mount(src.encode(), target.encode(), None, _MS_BIND | _MS_REC, None), src)
        out.append([target, dst, mode])
    return out


def bwrap_argv(spec: dict, binds: list[list], seccomp_fd: int) -> list[str]:
    """The bubblewrap command line of ``spec`` (see :func:`argnb.exercises.sandbox.write_spec`)."""
    uid = str(spec["inner_uid"])
    argv = [
        spec["bwrap"],
        "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
        "--unshare-cgroup-try", "--uid", uid, "--gid", uid, "--hostname", "grading",
        "--die-with-parent", "--new-session", "--clearenv",
        "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp",
    ]  # fmt: skip
    for target, link in spec["symlinks"]:
        argv += ["--symlink", target, link]
    for src, dst, mode in binds:
        argv += ["--bind" if mode == "rw" else "--ro-bind", src, dst]
    for key, value in spec["env"].items():
        argv += ["--setenv", key, value]
    argv += ["--seccomp", str(seccomp_fd), "--chdir", spec["chdir"], "--"]
    return argv


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m argnb.exercises.jail SPEC -- CMD...", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        spec = json.load(f)
    cmd = argv[2:]
    for procs in spec.get("cgroup", []):  # this submission's control group, before anything runs
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    # nothing outlives the runner: bubblewrap has --die-with-parent, an unconfined kernel this
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)
    if os.getppid() == 1:
        return 1  # the runner is already gone
    limits = ",".join(str(spec["limits"][k]) for k in ("AS", "NPROC", "FSIZE", "CPU"))
    inner = [spec["python"], "-I", "-S", "-c", INNER, limits, *cmd]
    if spec["mode"] == "none":  # trusted submissions: clean environment and limits only
        os.chdir(spec["chdir"])
        os.execve(inner[0], inner, spec["env"])
    binds = spec["binds"]
    if spec.get("stage"):
        binds = _stage(binds, spec["stage"])
    fd = os.open(spec["seccomp"], os.O_RDONLY)
    os.set_inheritable(fd, True)
    if spec.get("host_uid") is not None:
        os.setgroups([])
        os.setgid(spec["host_uid"])
        os.setuid(spec["host_uid"])
    full = [*bwrap_argv(spec, binds, fd), *inner]
    # bwrap stays in the sandbox as its PID 1, readable in /proc/1: it gets no grader variable
    os.execve(full[0], full, {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
