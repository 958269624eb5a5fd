"""What every ``argnb`` sub-command shares: flags, their validation, the backend, outputs.

One place declares ``--backend --model --host --base-url --timeout --no-cache`` (the model) and
``--out --limit --concurrency --json --quiet`` (a run), so every command spells and checks them
the same way. Numbers are validated by argparse (``--limit 0`` is an error, not "everything"),
and output paths are checked -- and their folder created -- before the first model call, so a
paid run never fails at the end for want of a folder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from argnb.config import BACKENDS
from argnb.errors import ArgnbError


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def seconds(text: str) -> float:
    """An argparse type: a finite number of seconds >= 0 (a pause, not a deadline)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < 86400:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds (under a day), got {text}")
    return value


def add_backend_args(p: argparse.ArgumentParser) -> None:
    """The options of every command that calls a model."""
    g = p.add_argument_group("model")
    g.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="model backend (default: ARGNB_BACKEND, config file, or local)",
    )
    g.add_argument("--model", default=None, help="model name (default: ARGNB_MODEL or per backend)")
    g.add_argument("--host", default=None, help="Ollama host (default: OLLAMA_HOST)")
    g.add_argument("--base-url", default=None, help="OpenAI-compatible base URL")
    g.add_argument(
        "--timeout",
        type=positive_float,
        default=None,
        help="seconds one request may take in all before it is retried (default 120)",
    )
    g.add_argument("--no-cache", action="store_true", help="do not use the response cache")


def add_run_args(
    p: argparse.ArgumentParser,
    *,
    out: str | None = None,
    out_required: bool = False,
    limit: bool = False,
    concurrency: bool = False,
) -> None:
    """``--json`` and ``--quiet`` always; ``--out`` (help text ``out``), ``--limit`` and
    ``--concurrency`` for commands that run over many items."""
    g = p.add_argument_group("run")
    if out is not None:
        g.add_argument("--out", required=out_required, default=None, help=out)
    if limit:
        g.add_argument("--limit", type=positive_int, default=None, help="only the first N items")
    if concurrency:
        g.add_argument(
            "--concurrency", type=positive_int, default=1, help="requests in flight (default 1)"
        )
    g.add_argument("--json", action="store_true", help="last line: one JSON object")
    g.add_argument("--quiet", action="store_true", help="no progress bar or per-turn output")


def connect_kw(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments for :func:`argnb.config.connect` from the shared model flags."""
    kw: dict[str, Any] = {"cache": False if getattr(args, "no_cache", False) else None}
    for name in ("host", "base_url", "timeout"):
        value = getattr(args, name, None)
        if value is not None:
            kw[name] = value
    return kw


def backend_from_args(args: argparse.Namespace):
    """Connect the backend the shared options describe (this is where defaults are chosen)."""
    from argnb.config import connect

    return connect(args.backend, args.model, **connect_kw(args))


def output_path(
    path: str | Path | None, flag: str = "--out", *, suffixes: tuple[str, ...] = ()
) -> Path | None:
    """Check an output file before any work: not a folder, its folder created, writable (the file
    itself is not created, so a run that fails leaves nothing behind); with ``suffixes``, one of
    the formats the command writes (``x.docx`` is refused, not written as HTML)."""
    if path is None:
        return None
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise ArgnbError(
            f"cannot tell a format to write from {flag} {p.name!r}",
            hint=f"end the file name in {' or '.join(suffixes)}",
        )
    if p.is_dir():
        raise ArgnbError(
            f"{flag} {p} is a folder", hint=f"give a file name, e.g. {p / 'out.jsonl'}"
        )
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArgnbError(
            f"cannot create the folder of {flag} {p}: {exc.strerror or exc}",
            hint="choose a writable location",
        ) from None
    target = p if p.exists() else p.parent
    if not os.access(target, os.W_OK):
        raise ArgnbError(f"cannot write {flag} {p}", hint="choose a writable location")
    return p


def print_json(obj: Any) -> None:
    """The machine-readable last line of a command."""
    print(json.dumps(obj, ensure_ascii=False, default=str), file=sys.stdout)


def history_cut(turns: list[Any], cut: int | None, what: str = "the debate") -> list[Any]:
    """The first ``cut`` turns of a history (all without ``cut``); a cut past its end is an
    error, not a silent run on the whole debate."""
    if cut is None:
        return list(turns)
    if cut > len(turns):
        raise ArgnbError(
            f"--cut {cut}: {what} has only {len(turns)} argumentative turns",
            hint=f"choose --cut {len(turns)} or less",
        )
    return list(turns[:cut])
