"""The student's kernel answers the checker: reads of named variables and calls of named functions.

The runner executes ``serve.loop(PATH)`` in the kernel after the student's cells. It connects to
the runner's socket (handed on to the checker, :mod:`.checker`) and answers one JSON line per
request until ``bye``. Nothing here decides a grade: it runs in the student's process, which may
replace any of it, and everything it sends is plain data the checker decodes and compares
itself (:mod:`.codec`). The kernel sees the calls' arguments, never a check, an expected value or
a verdict.
"""

from __future__ import annotations

import contextlib
import json
import socket
from typing import Any

from argnb.exercises import codec


def _error(exc: BaseException) -> dict[str, Any]:
    name = type(exc).__name__
    return {"error": {"type": name[:80], "message": str(exc)[:2000]}}


def answer(request: dict[str, Any], namespace: dict[str, Any]) -> dict[str, Any]:
    """The reply to one request (``get`` a name, or ``call`` a function by name)."""
    name = request.get("name")
    if not isinstance(name, str) or name not in namespace:
        return {"missing": True}
    value = namespace[name]
    if request.get("op") == "get":
        if callable(value) and not isinstance(value, type):
            return {"callable": True}
        try:
            return {"value": codec.encode(value)}
        except codec.CodecError as exc:
            return {"error": {"type": "TypeError", "message": f"{name}: {exc}"}}
    try:
        args = codec.decode(request.get("args", []))
        kwargs = codec.decode(request.get("kwargs", {"$dict": []}))
    except codec.CodecError as exc:
        return _error(exc)
    try:
        result = value(*args, **kwargs)
    except (Exception, SystemExit) as exc:  # the student's error, reported as theirs
        return _error(exc)
    try:
        reply: dict[str, Any] = {"value": codec.encode(result)}
    except codec.CodecError as exc:
        return {"error": {"type": "TypeError", "message": f"{name} returned {exc}"}}
    with contextlib.suppress(codec.CodecError):  # else no write-back of the arguments
        reply["args"] = codec.encode(args)
    return reply


def loop(path: str) -> None:
    """Answer requests on the runner's socket at ``path`` until ``bye`` or the end of the line."""
    from IPython import get_ipython

    namespace = get_ipython().user_ns
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
            reply = answer(request, namespace)
            try:
                data = json.dumps(reply, separators=(",", ":"), allow_nan=False)
            except (TypeError, ValueError) as exc:
                data = json.dumps(_error(exc))
            stream.write(data.encode() + b"\n")
            stream.flush()
