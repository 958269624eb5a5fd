"""One exception tree for everything argnb raises on purpose; every class is defined here.

Every error a learner can meet carries a ``hint``: the exact command or setting that fixes it,
so a notebook cell that fails tells the person what to do next instead of showing a stack trace
from an HTTP library. ``tests/core/test_architecture.py`` checks that no exception class is
defined anywhere else::

    ArgnbError
    ├── BackendError              one input's request failed (a batch records it, carries on)
    │   ├── BackendUnavailable    ┐
    │   ├── ModelNotFound         │
    │   ├── AuthenticationError   │ the server or the setup: these stop a run
    │   ├── BackendTimeout        │
    │   ├── ServerError           │
    │   ├── BadRequest            │
    │   ├── BadResponse           ┘
    │   ├── AllowanceUsed         the class gateway's limit for this learner is reached (stops)
    │   └── SchemaUnsupported     callers fall back to a weaker structured mode
    ├── ConfigError               config.toml or the response cache unreadable
    ├── MissingDependency         an optional package is not installed
    ├── InvalidOutput             an answer failed its schema after the repair turn
    ├── DataError                 a data file missing, unreadable or in the wrong format
    ├── ScriptExhausted           a ScriptedBackend has no answer left (tests, notebooks)
    ├── ReferenceMismatch         an authored reference session the protocol would not produce
    ├── MapError (+ ValueError)   an argument-map operation would make the map inconsistent
    │   └── AIFError              a document that is not AIF in OVA's shape
    ├── LockTaken                 another writer holds a results file's lock (argnb.locks)
    ├── QueueFull                 a learner has as many requests waiting as the class gateway allows
    ├── RoomRefused               the class server refused a move in a room (not your turn, ...)
    ├── GradingError              the grader cannot start (exercises, submissions, sandbox)
    │   ├── SeccompUnavailable (+ RuntimeError)  libseccomp missing or refused a rule
    │   └── CodecError (+ ValueError)  a value that cannot cross between checker and kernel
    ├── StudentError              a student's code raised while the checker called it
    ├── ClassDataError            a class data file is missing, empty or malformed
    └── MarkerError (+ ValueError)  a solution notebook's markers are inconsistent
    KernelGone (BaseException)    the student's kernel stopped answering the checker
    GradingStopped (SystemExit)   SIGTERM while grading: unwinds so every run is cleaned up
"""

from __future__ import annotations


class ArgnbError(Exception):
    """Base of every error argnb raises deliberately."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message + (f"\n  fix: {hint}" if hint else ""))


class BackendError(ArgnbError):
    """A model backend could not answer this request.

    A plain ``BackendError`` belongs to one input (e.g. the prompt does not fit the local context
    window): a batch records it for that item and carries on. Every subclass describes the server
    or the setup, would hit every item alike, and so stops a run.
    """


class BackendUnavailable(BackendError):
    """The server is not running or not reachable (wrong host, wrong base URL)."""


class ModelNotFound(BackendError):
    """The server runs but does not have the requested model."""


class AuthenticationError(BackendError):
    """No API key, or the server refused the key."""


class BackendTimeout(BackendError):
    """The server did not answer in time, even after retries."""


class ServerError(BackendError):
    """The server failed (HTTP 5xx) without refusing anything in particular: retried, since it
    may recover; stops the run when it does not."""


class BadRequest(BackendError):
    """The server rejected the request itself (HTTP 400/422, e.g. "model does not support ..."):
    every item would get the same answer, so the run stops until the setup is fixed."""


class AllowanceUsed(BackendError):
    """The class gateway refused: this learner's tokens for today are used. Its message is the
    one line a learner reads; retrying cannot help, only the instructor can raise the limit."""


class QueueFull(ArgnbError):
    """The class gateway already holds as many waiting requests of this learner as it may."""


class RoomRefused(ArgnbError):
    """The class server refused a learner's move in a room (:mod:`argnb.roundtable.remote`):
    its one line, and the HTTP ``status`` (400 bad move, 403 not joined, 404 no such room,
    409 not now, e.g. not your turn)."""

    def __init__(self, message: str, *, status: int = 0, hint: str | None = None) -> None:
        self.status = status
        super().__init__(message, hint=hint)


class BadResponse(BackendError):
    """The server answered with something that is not its protocol (e.g. HTTP 200 whose body is
    not JSON: a proxy, a login page, the wrong URL)."""


class SchemaUnsupported(BackendError):
    """The server refused a structured-output request; callers fall back to a weaker mode."""


class ConfigError(ArgnbError):
    """A settings file (``config.toml``) or a local database (the response cache) is unreadable."""


class MissingDependency(ArgnbError):
    """An optional package (llama-cpp-python, the embedded GGUF, ...) is not installed."""


class InvalidOutput(ArgnbError):
    """A model answer did not match the requested schema, even after one repair turn.

    ``raw`` keeps the model's last text so nothing is lost; callers decide what an invalid
    answer means (fallacy detection counts it as "invalid", the dialectic protocol as
    "cannot counter").
    """

    def __init__(
        self, message: str, *, raw: str, errors: str = "", replies: list | None = None
    ) -> None:
        self.raw = raw
        self.errors = errors
        #: every :class:`~argnb.llm.base.Reply` the failed call cost (the repair turn included),
        #: so a caller can count what an invalid answer cost
        self.replies = list(replies or [])
        super().__init__(message)


class DataError(ArgnbError):
    """A data file is missing, unreadable or not in the expected format."""


class ScriptExhausted(ArgnbError):
    """The script has no more answers for a request it was sent."""


class MapError(ArgnbError, ValueError):
    """An argument-map operation that would make the map inconsistent (``argnb.maps``)."""


class AIFError(MapError):
    """A document that is not AIF in OVA's shape; ``problems`` lists every reason."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(
            "invalid AIF: " + "; ".join(problems[:5]),
            hint="argnb.maps.validate_aif(doc) lists every problem; AIF must be OVA-shaped JSON",
        )


class ReferenceMismatch(ArgnbError):
    """The protocol, fed a reference session's authored answers, did not produce the session
    (:mod:`argnb.reference`): a turn out of order, an answer refused, answers left over."""

    def __init__(self, name: str, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            f"reference session {name!r} does not replay: " + "; ".join(self.problems),
            hint="fix the reference file so that it follows the protocol's rules",
        )


class LockTaken(ArgnbError):
    """Another process (or another open file of this one) holds the lock (:mod:`argnb.locks`)."""


# exercises


class GradingError(ArgnbError):
    """The grader cannot start (no such exercise, empty submissions folder, no sandbox here)."""


class ClassDataError(ArgnbError):
    """A class data file is missing, empty or malformed."""


class MarkerError(ArgnbError, ValueError):
    """A solution notebook's markers are inconsistent (the release refuses to write it)."""


class SeccompUnavailable(GradingError, RuntimeError):
    """libseccomp cannot be loaded or refused a rule (:mod:`argnb.exercises.seccomp`)."""


class CodecError(GradingError, ValueError):
    """A value that cannot cross between the checker and a student's kernel (a type the grader
    does not carry, too large, too deep): :mod:`argnb.exercises.codec`."""


class StudentError(ArgnbError):
    """The student's code raised (or answered what cannot be read) while the checker called it;
    ``ename`` is the name of the student's exception, shown as theirs."""

    def __init__(self, ename: str, message: str) -> None:
        super().__init__(message)
        self.ename = ename if ename.isidentifier() else "Error"


class KernelGone(BaseException):
    """The student's kernel stopped answering the checker (it died, or the time ran out). Not an
    ``Exception``, so no check's ``except Exception`` can swallow it."""


class GradingStopped(SystemExit):
    """SIGTERM reached the grader: it unwinds like Ctrl+C, so every kernel, process and scratch
    folder of the run is ended and removed before it exits."""
