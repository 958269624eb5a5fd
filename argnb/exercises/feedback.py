"""Clean check failures in exercise notebooks: the message and the learner's own code, nothing else.

A check that fails raises ``AssertionError`` from inside argnb. The default traceback would show
the checker's source: its reference calls and expected values — the answer, one scroll away. With
``%load_ext argnb.exercises`` (the first cell of every exercise notebook):

* a check's own ``AssertionError`` shows as ``✗ <message>``: what is wrong and the hint;
* any other error keeps its traceback, minus the frames inside argnb, so a bug in the learner's
  function still points at the learner's line.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

_PACKAGE = str(Path(__file__).resolve().parents[1])


def _internal(tb: types.TracebackType) -> bool:
    return tb.tb_frame.f_code.co_filename.startswith(_PACKAGE)


def without_internals(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The same traceback chain minus frames in argnb's own files."""
    kept = []
    while tb is not None:
        if not _internal(tb):
            kept.append(tb)
        tb = tb.tb_next
    chain = None
    for t in reversed(kept):
        chain = types.TracebackType(chain, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return chain


def _innermost(tb: types.TracebackType | None) -> types.TracebackType | None:
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _touches_argnb(tb: types.TracebackType | None) -> bool:
    while tb is not None:
        if _internal(tb):
            return True
        tb = tb.tb_next
    return False


def check_message(value: BaseException) -> str:
    """How a failed check reads in the notebook."""
    text = str(value).strip() or "the check failed (no message)"
    return f"\x1b[1;31m✗ {text}\x1b[0m"


def _handler(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> None:
    if issubclass(etype, SyntaxError):
        shell.showsyntaxerror()
        return None
    if not _touches_argnb(tb):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    inner = _innermost(tb)
    if issubclass(etype, AssertionError) and inner is not None and _internal(inner):
        stb = [check_message(value)]
    else:
        for exc in (value.__cause__, value.__context__):
            if exc is not None:
                exc.__traceback__ = without_internals(exc.__traceback__)
        stb = shell.InteractiveTB.structured_traceback(
            etype, value, without_internals(tb), tb_offset=tb_offset
        )
    shell._showtraceback(etype, value, stb)
    return None


def install(shell: Any) -> None:
    """Route errors through :func:`_handler` in this IPython session."""
    shell.set_custom_exc((Exception,), _handler)


def uninstall(shell: Any) -> None:
    shell.set_custom_exc((), None)
