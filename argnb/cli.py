"""The ``argnb`` command line.

Each capability registers its own sub-commands from ``argnb/<module>/cli.py`` (a ``register``
function taking the sub-parsers), so this file only knows their names. The flags they share are
declared once, in :mod:`argnb.cli_common`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from argnb.errors import ArgnbError

#: modules that may contribute sub-commands; missing ones are skipped
MODULES = (
    "argnb.doctor",
    "argnb.llm.cli",
    "argnb.fallacy.cli",
    "argnb.dialectic.cli",
    "argnb.critique.cli",
    "argnb.debate.cli",
    "argnb.roundtable.cli",
    "argnb.exercises.cli",
    "argnb.classroom.cli",
    "argnb.course",
)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: what was wrong and where to read more, not the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="argnb", description="Argumentation with LLMs.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue
            raise
        mod.register(sub)
    return parser


def one_line(exc: ArgnbError) -> str:
    """``error: what went wrong -- fix: what to do``, on one line whatever the message holds
    (and with no control sequence acting on the terminal: messages quote files and models)."""
    from argnb.terminal import inert

    msg = " ".join(str(exc.message).split())
    return inert(f"error: {msg}" + (f" -- fix: {' '.join(exc.hint.split())}" if exc.hint else ""))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from argnb.terminal import InertStream

    stdout = sys.stdout
    sys.stdout = InertStream(stdout)  # type: ignore[assignment]  # model and human text is untrusted
    try:
        return int(args.func(args) or 0)
    except ArgnbError as exc:
        print(one_line(exc), file=sys.stderr)
        return 2
    except OSError as exc:  # the file system said no (permissions, a full disk, ...)
        from argnb.terminal import inert

        where = f" ({exc.filename})" if exc.filename else ""
        print(inert(f"error: {exc.strerror or exc}{where}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "interrupted; finished items are saved, run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    finally:
        sys.stdout = stdout


if __name__ == "__main__":
    sys.exit(main())
