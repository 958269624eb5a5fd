"""The ``argnb`` command line.

Each capability registers its own sub-commands from ``argnb/<module>/cli.py`` (a ``register``
function taking the sub-parsers), so this file only knows their names.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

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
    "argnb.course",
)


def add_backend_args(p: argparse.ArgumentParser) -> None:
    """The options every command that calls a model shares."""
    p.add_argument(
        "--backend",
        choices=["local", "ollama", "openai"],
        default=None,
        help="model backend (default: ARGNB_BACKEND, config file, or local)",
    )
    p.add_argument("--model", default=None, help="model name (default: ARGNB_MODEL or per backend)")
    p.add_argument("--host", default=None, help="Ollama host (default: OLLAMA_HOST)")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible base URL")
    p.add_argument("--no-cache", action="store_true", help="do not use the response cache")


def backend_from_args(args: argparse.Namespace):
    """Connect the backend the shared options describe."""
    from argnb.config import connect

    return connect(
        args.backend,
        args.model,
        host=args.host,
        base_url=args.base_url,
        cache=False if args.no_cache else None,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="argnb", description="Argumentation with LLMs.")
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ArgnbError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "interrupted; finished items are saved, run the same command again to resume",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
