"""``argnb class usage`` and ``argnb class limits``: the instructor's commands on the hub host.

Both read the gateway's usage database directly (the instructor runs them where the hub runs);
the limits they set apply to the learner's next request, without restarting anything.
"""

from __future__ import annotations

import argparse
import json
import os

from argnb.errors import ArgnbError

DB_HELP = "the gateway's database URL (default: $ARGNB_GATEWAY_DB, else ./argnb-usage.sqlite)"


def _store(url: str | None):  # -> UsageStore (sqlalchemy loads on first use)
    from argnb.classroom.usage import UsageStore

    url = url or os.environ.get("ARGNB_GATEWAY_DB") or "sqlite:///argnb-usage.sqlite"
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") :]
        if path and not os.path.exists(path):
            raise ArgnbError(
                f"no usage database at {path}",
                hint="pass --db with the URL hub.configure used (ARGNB_GATEWAY_DB)",
            )
    try:
        return UsageStore(url)
    except ImportError as exc:
        raise ArgnbError(
            f"cannot open {url}: {exc}", hint="pip install 'argnb[classroom]'"
        ) from exc
    except Exception as exc:  # sqlalchemy: a malformed URL, a database that is not ours
        raise ArgnbError(
            f"cannot open the usage database {url!r}: {' '.join(str(exc).split())[:200]}",
            hint="pass --db sqlite:///PATH/argnb-usage.sqlite (what hub.configure used)",
        ) from exc


def _usage(args: argparse.Namespace) -> int:
    rows = _store(args.db).summary()
    if args.json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print("no requests yet")
        return 0
    print(f"{'learner':20s} {'lesson':28s} {'requests':>8s} {'tokens':>10s} {'seconds':>8s}")
    for r in rows:
        tokens = r["prompt_tokens"] + r["completion_tokens"]
        print(
            f"{r['user'][:20]:20s} {(r['lesson'] or '-')[:28]:28s} {r['requests']:8d} "
            f"{tokens:10,d} {r['seconds']:8.1f}"
        )
    return 0


def _limits(args: argparse.Namespace) -> int:
    store = _store(args.db)
    values = {"tokens_per_day": args.tokens_per_day, "concurrent": args.concurrent}
    try:
        store.set_limits(args.learner, **values)
    except ValueError as exc:
        raise ArgnbError(str(exc), hint="e.g. --tokens-per-day 400000 --concurrent 2") from exc
    shown = ", ".join(f"{k}={v}" for k, v in values.items() if v is not None) or "class defaults"
    print(f"{args.learner}: {shown}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("class", help="a class on JupyterHub: model usage and limits per learner")
    cmds = p.add_subparsers(dest="class_command", required=True)
    u = cmds.add_parser("usage", help="requests, tokens and seconds per learner and lesson")
    u.add_argument("--db", default=None, help=DB_HELP)
    u.add_argument("--json", action="store_true")
    u.set_defaults(func=_usage)
    lim = cmds.add_parser("limits", help="give one learner limits of their own")
    lim.add_argument("learner", help="the learner's hub name")
    lim.add_argument("--tokens-per-day", type=int, default=None)
    lim.add_argument("--concurrent", type=int, default=None, help="requests at once")
    lim.add_argument("--db", default=None, help=DB_HELP)
    lim.set_defaults(func=_limits)
