"""The student's kernel answers the checker: reads of named variables and calls of named functions.

The runner executes ``serve.loop(PATH)`` in the kernel after the student's cells. It connects to
the runner's socket (handed on to the checker, :mod:`.checker`) and answers one JSON line per
request until ``bye``. Nothing here decides a grade: it runs in the student's process, which may
replace any of it, and everything it sends is plain data the checker decodes and compares
itself (:mod:`.codec`). The kernel sees the calls' arguments, never a check, an expected value or
a verdict.

Whatever a student's value does while it is read (a generator that raises part-way, an exception
whose text raises, a number too large to print, a reply too large to send) becomes that one
answer's error, and the loop goes on: a student's bug costs the check that met it, never the
rest. What the student's functions print while they are checked is dropped, so debug prints
cost nothing (the runner ignores this cell's output anyway).
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any

from argnb.exercises import codec

#: characters of an error message sent back (the checker cuts again)
MESSAGE = 2000


def describe(exc: BaseException) -> tuple[str, str]:
    """The exception's type name and text, whatever its ``__str__`` or ``__repr__`` do."""
    name = getattr(type(exc), "__name__", "Exception")
    name = name if isinstance(name, str) else "Exception"
    for show in (str, repr):
        try:
            text = show(exc)
            if isinstance(text, str):
                return name[:80], text[:MESSAGE]
        except BaseException:  # (a student's __str__ may raise anything)
            continue
    return name[:80], "(its message could not be shown: its __str__ raised)"


def _error(exc: BaseException, prefix: str = "") -> dict[str, Any]:
    name, text = describe(exc)
    return {"error": {"type": name, "message": (prefix + text)[:MESSAGE]}}


def _encoded(value: Any, what: str) -> dict[str, Any]:
    """``{"value": ...}``, or the error a student can read when ``value`` cannot be sent."""
    try:
        return {"value": codec.encode(value)}
    except codec.CodecError as exc:
        return {"error": {"type": "TypeError", "message": f"{what}: {exc}"[:MESSAGE]}}
    except RecursionError:
        return {"error": {"type": "ValueError", "message": f"{what} is nested too deeply"}}
    except BaseException as exc:  # (a generator or __iter__ of the student's)
        if isinstance(exc, KeyboardInterrupt):
            raise
        name, text = describe(exc)
        return {
            "error": {
                "type": name,
                "message": f"{what} raised {name} while the grader read it: {text}"[:MESSAGE],
            }
        }


def answer(request: dict[str, Any], namespace: dict[str, Any]) -> dict[str, Any]:
    """The reply to one request (``get`` a name, or ``call`` a function by name)."""
    name = request.get("name")
    if not isinstance(name, str) or name not in namespace:
        return {"missing": True}
    value = namespace[name]
    if request.get("op") == "get":
        if callable(value) and not isinstance(value, type):
            return {"callable": True}
        return _encoded(value, name)
    try:
        args = codec.decode(request.get("args", []))
        kwargs = codec.decode(request.get("kwargs", {"$dict": []}))
    except codec.CodecError as exc:
        return _error(exc)
    try:
        result = value(*args, **kwargs)
    except BaseException as exc:  # (the student's error, reported as theirs)
        return _error(exc)
    reply = _encoded(result, f"the value {name}() returned")
    if "value" in reply:
        after = _encoded(args, "its arguments")
        if "value" in after:  # else no write-back of the arguments
            reply["args"] = after["value"]
    return reply


class _Dropped:
    """A standard stream that keeps nothing: prints while a check runs cost no memory."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        return len(text) if isinstance(text, str) else 0

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True


def _line(reply: dict[str, Any]) -> bytes:
    try:
        data = json.dumps(reply, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        data = json.dumps(_error(exc))
    if len(data) > codec.MAX_BYTES:
        data = json.dumps(
            {
                "error": {
                    "type": "ValueError",
                    "message": f"the answer was too large to grade ({len(data)} characters; "
                    f"at most {codec.MAX_BYTES})",
                }
            }
        )
    return data.encode() + b"\n"


def loop(path: str) -> None:
    """Answer requests on the runner's socket at ``path`` until ``bye`` or the end of the line."""
    from IPython import get_ipython

    namespace = get_ipython().user_ns
    sys.stdout = sys.stderr = _Dropped()  # type: ignore[assignment]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        stream = s.makefile("rwb")
        for line in stream:
            try:
                request = json.loads(line)
            except ValueError:
                break
            if not isinstance(request, dict) or request.get("op") == "bye":
                break
            try:
                reply = answer(request, namespace)
            except Exception as exc:  # (never leave the checker waiting)
                reply = _error(exc, "the grader could not read your answer: ")
            stream.write(_line(reply))
            stream.flush()
