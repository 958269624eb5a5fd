"""``argnb class ...``: the instructor's commands on the hub host.

``usage`` and ``limits`` read and write the gateway's usage database directly (the instructor
runs them where the hub runs; a limit applies to the learner's next request, nothing restarts);
``collect``, ``return`` and ``report`` move exercises and feedback through learners' homes;
``model`` and ``try`` start the class model, or a whole trial class, on this machine.
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


def _home_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("exercise", help="the exercise folder, e.g. 02_dialectic")
    p.add_argument("--homes", default="/home", help="where the learners' homes are (/home)")
    p.add_argument("--prefix", default="", help="home folder = PREFIX + hub name (TLJH: jupyter-)")
    p.add_argument("--course", default="argnb-course", help="the course folder in each home")
    p.add_argument("--only", default=None, help="these hub names only (comma-separated)")


def _only(args: argparse.Namespace) -> set[str] | None:
    return None if args.only is None else {n.strip() for n in args.only.split(",") if n.strip()}


def _collect(args: argparse.Namespace) -> int:
    from pathlib import Path

    from argnb.classroom.homes import collect
    from argnb.terminal import one_line

    got = collect(args.exercise, Path(args.to), root=Path(args.homes), prefix=args.prefix,
                  course=args.course, only=_only(args))  # fmt: skip
    for name, files in got.taken.items():
        print(one_line(f"{name}: {', '.join(files)}"))
    for name, why in got.refused.items():
        print(one_line(f"{name}: refused {'; '.join(why)}"))
    if got.missing:
        print(one_line(f"nothing handed in: {', '.join(got.missing)}"))
    print(f"{len(got.taken)} learner(s) collected into {args.to}")
    return 0


def _return(args: argparse.Namespace) -> int:
    from pathlib import Path

    from argnb.classroom.homes import return_feedback
    from argnb.exercises.submissions import page_name
    from argnb.terminal import one_line

    folder = Path(args.feedback)
    if not folder.is_dir():
        raise ArgnbError(f"no feedback folder {folder}", hint="the grader's --feedback folder")
    learners = sorted(p.name for p in Path(args.submissions).iterdir() if p.is_dir())
    pages = {n: folder / f"{page_name(n)}.html" for n in learners}
    pages = {n: p for n, p in pages.items() if p.is_file()}
    written = return_feedback(args.exercise, pages, root=Path(args.homes), prefix=args.prefix,
                              course=args.course, only=_only(args))  # fmt: skip
    for name, where in written.items():
        print(one_line(f"{name}: {where}"))
    print(f"{len(written)} feedback page(s) returned")
    return 0


def _report(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pandas as pd

    from argnb.classroom.views import grades_usage_page

    try:
        grades = pd.read_csv(args.grades).to_dict("records")
    except (OSError, ValueError) as exc:
        raise ArgnbError(
            f"cannot read {args.grades}: {exc}", hint="the grader's --out CSV"
        ) from exc
    if grades and not {"student", "points", "max_points"} <= set(grades[0]):
        raise ArgnbError(f"{args.grades} is not a grades CSV", hint="the grader's --out CSV")
    usage = _store(args.db).summary()
    Path(args.out).write_text(grades_usage_page(args.exercise, grades, usage), encoding="utf-8")
    print(
        f"wrote {args.out}: {len({g['student'] for g in grades})} graded, {len(usage)} usage rows"
    )
    return 0


def _try(args: argparse.Namespace) -> int:
    import sys

    from argnb.classroom.trial import run

    if not (args.yes or sys.stdin.isatty()):  # a script, a cron job, a test's fuzz: not by chance
        raise ArgnbError(
            "argnb class try makes local users and runs a whole class until Ctrl-C",
            hint="run it in a terminal, or pass --yes to run it without one",
        )
    return run(args.learners, args.port)


def _model(args: argparse.Namespace) -> int:
    from pathlib import Path

    from argnb.classroom.local import serve_model

    serve_model(Path(args.key_file), args.port, Path(args.gguf) if args.gguf else None,
                args.alias, args.n_ctx)  # fmt: skip
    return 1  # not reached: the server took this process over


def register(sub: argparse._SubParsersAction) -> None:
    from argnb.cli_common import positive_int

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
    c = cmds.add_parser("collect", help="copy each learner's exercise notebooks from their home")
    _home_args(c)
    c.add_argument("--to", required=True, help="the submissions folder (one folder per learner)")
    c.set_defaults(func=_collect)
    r = cmds.add_parser("return", help="put each learner's feedback page in their own home")
    _home_args(r)
    r.add_argument("--feedback", required=True, help="the grader's feedback folder")
    r.add_argument("--submissions", required=True, help="the folder collect wrote")
    r.set_defaults(func=_return)
    t = cmds.add_parser(
        "try", help="a whole class on this machine to try before term (root; Ctrl-C stops it)"
    )
    t.add_argument("--learners", type=positive_int, default=3, help="demo learners (3)")
    t.add_argument("--port", type=int, default=None, help="the hub's port (a free one)")
    t.add_argument("--yes", action="store_true", help="run without a terminal (a script, a test)")
    t.set_defaults(func=_try)
    m = cmds.add_parser(
        "model", help="llama.cpp's server as the class model (the embedded one), behind a key"
    )
    m.add_argument("--key-file", required=True, help="the key, one line, a file only you read")
    m.add_argument("--port", type=int, default=8100, help="its port on 127.0.0.1 (8100)")
    m.add_argument("--gguf", default=None, help="a GGUF file (default: the embedded SmolLM2)")
    m.add_argument("--alias", default="smollm2-135m", help="the model's name in the API")
    m.add_argument("--n-ctx", type=int, default=4096, help="context length in tokens")
    m.set_defaults(func=_model)
    rep = cmds.add_parser("report", help="grades beside each learner's model use (HTML)")
    rep.add_argument("exercise")
    rep.add_argument("--grades", required=True, help="the grader's CSV")
    rep.add_argument("--db", default=None, help=DB_HELP)
    rep.add_argument("--out", required=True)
    rep.set_defaults(func=_report)
