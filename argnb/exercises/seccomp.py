"""A seccomp filter for graded kernels, in the spirit of Flatpak's (built with libseccomp).

bubblewrap's README says it is "not a complete, ready-made sandbox": the caller adds a seccomp
filter. Ours refuses (``EPERM``) what a notebook never needs and what a sandbox escape starts
with: new namespaces and mounts, ``TIOCSTI``/``TIOCLINUX`` (typing into a terminal), tracing
another process or its memory, kernel keyrings, modules, BPF, ``perf_event_open``,
``userfaultfd``, ``io_uring``. ``clone3`` answers ``ENOSYS`` so the C library falls back to
``clone``, whose flags the filter can see. Syscalls of another architecture (32-bit calls on
x86_64) kill the process (libseccomp's default for a foreign architecture).

libseccomp is loaded through ctypes (it ships with every systemd distribution; no Python
binding to install). :func:`write_filter` writes the compiled BPF program that ``bwrap
--seccomp FD`` loads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
from pathlib import Path

from argnb.errors import SeccompUnavailable

#: refused outright (EPERM)
DENY = (
    "syslog", "uselib", "acct", "quotactl", "add_key", "keyctl", "request_key", "move_pages",
    "mbind", "get_mempolicy", "set_mempolicy", "migrate_pages", "unshare", "setns", "mount",
    "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "perf_event_open", "ptrace", "process_vm_readv",
    "process_vm_writev", "bpf", "userfaultfd", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "reboot", "swapon", "swapoff", "name_to_handle_at",
    "open_by_handle_at", "lookup_dcookie", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "pidfd_getfd",
)  # fmt: skip
#: ioctl requests refused: TIOCSTI (push input into a terminal), TIOCLINUX
IOCTLS = (0x5412, 0x541C)
#: clone flags that make a namespace
CLONE_NEW = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)

_ALLOW = 0x7FFF0000
_CMP_MASKED_EQ = 7


def _errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


@functools.lru_cache(maxsize=1)
def _lib() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompUnavailable(f"libseccomp not found ({exc})") from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp)
    ]  # fmt: skip
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def available() -> str | None:
    """``None`` when a filter can be built here, else why not."""
    try:
        _lib()
    except SeccompUnavailable as exc:
        return str(exc)
    return None


def write_filter(path: Path) -> Path:
    """Compile the filter and write the BPF program to ``path``."""
    lib = _lib()
    ctx = lib.seccomp_init(_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    try:

        def rule(action: int, name: str, *cmps: tuple[int, int, int]) -> None:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:  # not a syscall of this architecture (or this libseccomp is too old)
                return
            arr = (_ArgCmp * max(1, len(cmps)))(
                *[_ArgCmp(a, _CMP_MASKED_EQ, m, v) for a, m, v in cmps]
            )
            rc = lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), arr)
            if rc < 0:
                raise SeccompUnavailable(f"seccomp rule for {name} refused ({os.strerror(-rc)})")

        for name in DENY:
            rule(_errno(errno.EPERM), name)
        for request in IOCTLS:
            rule(_errno(errno.EPERM), "ioctl", (1, 0xFFFFFFFF, request))
        for flag in CLONE_NEW:
            rule(_errno(errno.EPERM), "clone", (0, flag, flag))
        rule(_errno(errno.ENOSYS), "clone3")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            rc = lib.seccomp_export_bpf(ctx, fd)
        finally:
            os.close(fd)
        if rc < 0:
            raise SeccompUnavailable(f"seccomp_export_bpf failed ({os.strerror(-rc)})")
    finally:
        lib.seccomp_release(ctx)
    return path
