"""Where verdicts are decided: the solution's check cells, run in a process of ours.

``python -m argnb.exercises.checker JOB`` (started by :mod:`.runner`, in a sandbox of its own
that sees the exercise's files but never the student's) runs each check cell's code unchanged,
hidden tests included, with the solution's imports. A name the code uses that neither the check
nor those imports define is the student's: a function becomes a :class:`Remote` that forwards
calls over the kernel's socket (its file descriptor arrives on standard input once the
student's cells have run), a variable is read once per check. Only plain data crosses
(:mod:`.codec`), so the comparisons run here, on values the checker built: the student's process
never sees an expected value, a hidden test or a verdict, and nothing it runs can skip a line
of a check.

Standard output carries one JSON line per check: ``{"index", "status": "ok" | "error",
"ename", "evalue", "text"}``, or ``{"index", "stop": "dead kernel" | "timeout"}`` when the
kernel stopped answering (what is left did not run).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import json
import os
import random
import socket
import sys
from typing import Any, TextIO

from argnb.errors import KernelGone, StudentError
from argnb.exercises import codec
from argnb.exercises.build import mark_hidden

#: characters of a check's printed output kept as its message
TEXT_LIMIT = 600


class Kernel:
    """The student's kernel, one JSON line per request and per reply; ``None`` socket: absent."""

    def __init__(self, sock: socket.socket | None, timeout: float) -> None:
        self.sock = sock
        self.stream = sock.makefile("rwb") if sock else None
        if sock:
            sock.settimeout(timeout)

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        if self.stream is None:
            raise StudentError(
                "RuntimeError",
                "the notebook's kernel did not answer the grader (did a cell break its Python?)",
            )
        try:
            self.stream.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self.stream.flush()
            line = self.stream.readline(codec.MAX_BYTES + 2)
        except TimeoutError:
            raise KernelGone("timeout") from None
        except OSError:
            raise KernelGone("dead kernel") from None
        if not line:
            raise KernelGone("dead kernel")
        if not line.endswith(b"\n"):
            self.stream = None  # the rest of that line would be read as the next answer
            raise StudentError("ValueError", "the answer was too large to grade")
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise StudentError("ValueError", "the kernel's answer was not readable")
        return reply

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.stream is not None:
                self.stream.write(b'{"op":"bye"}\n')
                self.stream.flush()
        if self.sock is not None:
            self.sock.close()


def _value(reply: dict[str, Any], what: str) -> Any:
    error = reply.get("error")
    if isinstance(error, dict):
        raise StudentError(
            str(error.get("type", "Error"))[:80], str(error.get("message", ""))[:2000]
        )
    if "value" not in reply:
        raise StudentError("ValueError", f"no value came back for {what}")
    try:
        return codec.decode(reply["value"])
    except codec.CodecError as exc:
        raise StudentError("TypeError", f"{what}: {exc}") from None


def _write_back(sent: list[Any], after: Any) -> None:
    """Mutations the student's function made to its arguments, made to ours too."""
    try:
        changed = codec.decode(after)
    except codec.CodecError:
        return
    if not isinstance(changed, list) or len(changed) != len(sent):
        return
    for mine, theirs in zip(sent, changed, strict=True):
        if type(mine) is list and isinstance(theirs, list):
            mine[:] = theirs
        elif (type(mine), type(theirs)) in ((dict, dict), (set, set)):
            mine.clear()
            mine.update(theirs)
        elif isinstance(mine, random.Random) and isinstance(theirs, random.Random):
            mine.setstate(theirs.getstate())


class Remote:
    """A student's function, called in the student's kernel with plain arguments."""

    def __init__(self, kernel: Kernel, name: str) -> None:
        self._kernel, self._name = kernel, name
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        sent = list(args)
        reply = self._kernel.request(
            {
                "op": "call",
                "name": self._name,
                "args": codec.encode(sent),
                "kwargs": codec.encode(kwargs),
            }
        )
        if reply.get("missing"):
            raise NameError(f"name {self._name!r} is not defined")
        value = _value(reply, f"{self._name}()")
        if "args" in reply:
            _write_back(sent, reply["args"])
        return value

    def __repr__(self) -> str:
        return f"<function {self._name}>"


def free_names(tree: ast.AST) -> list[str]:
    """Names the code reads but never binds itself (in order of first use)."""
    bound: set[str] = set()
    read: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read.append if isinstance(node.ctx, ast.Load) else bound.add)(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return [n for n in dict.fromkeys(read) if n not in bound]


#: the start of a stop reason that is the grader's fault, never the student's (grade retries)
GRADER_FAULT = "grader:"


def setup(imports: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The namespace checks run in: the solution's imports, made here; and the lines that failed.

    A failed import must stop the checks: a name it should have defined would otherwise be read
    from the student's kernel, so the student's own ``check_grounded`` (or the kernel's copy,
    with the exercise's functions withheld) would decide the verdict."""
    ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    ns["display"] = lambda *values, **_: print(*values)
    failed = []
    for line in imports:
        try:
            exec(line, ns)
        except BaseException as exc:  # SystemExit, MemoryError, ...: the same stop
            failed.append(f"{line.strip()[:120]}: {type(exc).__name__}: {exc}"[:300])
    return ns, failed


def run_check(source: str, ns: dict[str, Any], kernel: Kernel, own: set[str]) -> dict[str, Any]:
    """Run one check cell; its verdict (``own``: names the checker defined itself)."""
    out = io.StringIO()
    try:
        tree = ast.parse(mark_hidden(source))
        for name in free_names(tree):
            if name in own or hasattr(builtins, name):
                continue
            ns.pop(name, None)
            reply = kernel.request({"op": "get", "name": name})
            if reply.get("missing"):
                continue  # NameError when the check reads it, as in the notebook
            ns[name] = Remote(kernel, name) if reply.get("callable") else _value(reply, name)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        with contextlib.redirect_stdout(out):
            exec(compile(tree, "<check>", "exec"), ns)
            value = eval(compile(last, "<check>", "eval"), ns) if last else None
            if value is not None:
                print(repr(value))
    except KernelGone as gone:
        return {"stop": str(gone)}
    except StudentError as exc:
        return {"status": "error", "ename": exc.ename, "evalue": str(exc)}
    except Exception as exc:
        return {"status": "error", "ename": type(exc).__name__, "evalue": str(exc)}
    return {"status": "ok", "text": out.getvalue().strip()[:TEXT_LIMIT]}


def _receive_kernel(control: socket.socket, timeout: float) -> Kernel:
    """The kernel's socket, when the runner sends one (an empty message: no kernel)."""
    try:
        _, fds, _, _ = socket.recv_fds(control, 16, 1)
    except OSError:
        fds = []
    if not fds:
        return Kernel(None, timeout)
    return Kernel(socket.socket(fileno=fds[0]), timeout)


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as f:
        job = json.load(f)
    results: TextIO = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # whatever else prints, the results stay one JSON line each
    ns, failed = setup(job["imports"])
    own = set(ns)
    control = socket.socket(fileno=0)
    kernel = _receive_kernel(control, float(job["timeout"]))
    try:
        if failed and job["checks"]:
            stop = f"{GRADER_FAULT} the checker could not import what the checks use ({failed[0]})"
            results.write(json.dumps({"index": job["checks"][0]["index"], "stop": stop}) + "\n")
            results.flush()
            return 0
        for check in job["checks"]:
            verdict = {"index": check["index"], **run_check(check["source"], ns, kernel, own)}
            results.write(json.dumps(verdict, ensure_ascii=False) + "\n")
            results.flush()
            if "stop" in verdict:
                break
    finally:
        kernel.close()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    # every verdict is written and flushed, and the runner waits for this process to end:
    # skip the teardown of the solution's imports (pandas and the like, ~0.4 s per notebook)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
