"""``argnb roundtable``: run, replay and export sessions from the shell.

    argnb roundtable run --topic "Should homework allow AI tools?" --human-script turns.txt --json
    argnb roundtable run --topic "..." --deliberators local:smollm2-135m,ollama:llama3.2 --turns 12
    argnb roundtable run --config session.yaml --out session.json --markdown session.md
    argnb roundtable replay session.json --delay 0.5
    argnb roundtable export session.json --markdown log.md --map map.argdown

Without ``--human-script`` the human's turns are read from the terminal (an empty line passes,
``/end`` ends). With ``--json`` the last line is one JSON object: ``turns``, ``speakers`` (who
had the floor, in order; moderator messages excluded), ``human``, ``overrides`` (a count),
``analyses`` (a count), ``analysis`` (the final one), ``ended``, ``calls``, ``seconds``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError

MAP_FORMATS = {".json": "aif", ".argdown": "argdown", ".graphml": "graphml", ".html": "html"}


def register(subparsers) -> None:
    from argnb.cli_common import add_backend_args, add_run_args, positive_int, seconds

    p = subparsers.add_parser(
        "roundtable", help="moderated deliberation of a human with LLM deliberators"
    )
    sub = p.add_subparsers(dest="roundtable_command", required=True)

    run = sub.add_parser("run", help="run a session (the human from a script or the terminal)")
    run.add_argument("--topic", help="the question to deliberate on")
    run.add_argument("--config", type=Path, help="a session YAML file (flags given override it)")
    run.add_argument(
        "--deliberators",
        metavar="SPECS",
        help="comma-separated backend:model, one per deliberator (default: two on --backend)",
    )
    run.add_argument("--moderator", metavar="SPEC", help="the moderator's backend:model")
    run.add_argument("--analyzer", metavar="SPEC", help="the analyzer's backend:model")
    run.add_argument("--no-analyzer", action="store_true", help="run without the analyzer")
    run.add_argument("--human", help="the human's name (default: You)")
    run.add_argument(
        "--human-script",
        type=Path,
        metavar="FILE",
        help="the human's turns: a JSON list of texts or one turn per line (/pass, /end)",
    )
    run.add_argument("--turns", type=positive_int, help="speaker turns (default 12)")
    run.add_argument("--analyze-every", type=_natural, help="analyze every K turns (0: at the end)")
    run.add_argument(
        "--human-every", type=positive_int, help="the human speaks once in every N turns"
    )
    run.add_argument("--word-limit", type=positive_int, help="words per deliberator turn (150)")
    run.add_argument(
        "--fallacy-check",
        metavar="METHOD[@SPEC]",
        help="check every contribution: zero, few or cot (optionally @backend:model)",
    )
    add_backend_args(run)
    add_run_args(run, out="save the transcript (JSON) here, after every turn")
    _outputs(run)
    run.set_defaults(func=cmd_run)

    rep = sub.add_parser("replay", help="show a saved session turn by turn")
    rep.add_argument("session", type=Path, help="the JSON file --out wrote")
    rep.add_argument("--delay", type=seconds, default=0.0, help="seconds between turns")
    add_run_args(rep)
    rep.set_defaults(func=cmd_replay)

    exp = sub.add_parser("export", help="write a saved session's log and final map")
    exp.add_argument("session", type=Path, help="the JSON file --out wrote")
    _outputs(exp)
    exp.set_defaults(func=cmd_export)


def _outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--markdown", type=Path, metavar="FILE", help="write a readable log")
    p.add_argument(
        "--map",
        type=Path,
        metavar="FILE",
        help="write the final argument map: .json (AIF), .argdown, .graphml or .html",
    )


def _natural(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def config_from_args(args: argparse.Namespace) -> Any:
    """The session's config: the YAML file (if any), then the flags given on top."""
    from argnb.roundtable.config import SessionConfig

    data: dict[str, Any] = {}
    if args.config:
        data = SessionConfig.from_yaml(args.config).model_dump(exclude_unset=True)
    flags = {
        "topic": args.topic,
        "human": args.human,
        "deliberators": args.deliberators,
        "moderator": args.moderator,
        "analyzer": args.analyzer,
        "turns": args.turns,
        "analyze_every": args.analyze_every,
        "human_every": args.human_every,
        "word_limit": args.word_limit,
        "fallacy_check": args.fallacy_check,
    }
    data.update({k: v for k, v in flags.items() if v is not None})
    if args.no_analyzer:
        data["analysis"] = False
    if not data.get("topic"):
        raise ArgnbError(
            "no topic", hint='give --topic "a question" or a --config file with topic:'
        )
    return SessionConfig.parse(data, where="--config / flags")


def _terminal_human(session) -> str | None:
    from argnb.roundtable.session import HUMAN_END, YOUR_TURN

    sys.stderr.write(YOUR_TURN.format(name=session.human) + " (empty line: pass, /end: end)\n> ")
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.strip() if line else HUMAN_END  # "" only at the end of the input


def cmd_run(args: argparse.Namespace) -> int:
    from argnb import cli_common
    from argnb.roundtable.session import HumanScript
    from argnb.roundtable.views import format_turn

    config = config_from_args(args)
    _check_map_suffix(args.map)
    for path, flag in ((args.out, "--out"), (args.markdown, "--markdown"), (args.map, "--map")):
        cli_common.output_path(path, flag)  # checked before any model is called
    from argnb.agents import connect_spec

    human = HumanScript(args.human_script) if args.human_script else HumanScript(_terminal_human)
    backend = cli_common.backend_from_args(args) if config.needs_backend() else None
    connect = cli_common.connect_kw(args)  # the shared flags reach every seat
    seats = {spec: connect_spec(spec, **connect) for spec in config.specs()}
    out = sys.stdout

    def on_event(e) -> None:
        if args.quiet:
            return
        if e.kind == "turn":
            print(format_turn(session.transcript, e.turn), file=out, flush=True)

    session = config.build(backend, seats, autosave=args.out, on_event=on_event)
    print(f"topic: {session.topic}", file=out, flush=True)
    session.run(human)
    write_exports(session.transcript, args.markdown, args.map, out)
    if args.out:
        print(f"saved the session to {args.out}", file=out)
    _finish(session.summary(), args.json, out)
    return 0


def _finish(summary: dict[str, Any], as_json: bool, out) -> None:
    if as_json:
        print(json.dumps(summary, ensure_ascii=False), file=out)
    else:
        print(
            f"{summary['turns']} turns ({', '.join(summary['speakers'])}); "
            f"{summary['overrides']} overrides; {summary['analyses']} analyses; "
            f"{summary['calls']} model calls, {summary['seconds']} s",
            file=out,
        )


def write_exports(tr, markdown: Path | None, map_path: Path | None, out=None) -> None:
    """The Markdown log and/or the final map (format by file suffix) of a session."""
    from argnb.roundtable import record

    out = out or sys.stdout
    from argnb.roundtable.analyzer import analysis_map
    from argnb.roundtable.views import to_markdown

    if markdown:
        markdown.write_text(to_markdown(tr), encoding="utf-8")
        print(f"wrote the log to {markdown}", file=out)
    if map_path:
        kind = _check_map_suffix(map_path)
        last = record.latest_analysis(tr)
        if last is None:
            raise ArgnbError("the session has no analysis, so no map", hint="run with the analyzer")
        analysis_map(last, tr.title, record.spoken(tr, last.upto)).save(map_path, kind)
        print(f"wrote the map ({kind}) to {map_path}", file=out)


def _check_map_suffix(map_path: Path | None) -> str | None:
    if map_path is None:
        return None
    kind = MAP_FORMATS.get(map_path.suffix.lower())
    if kind is None:
        raise ArgnbError(
            f"cannot tell the map format from {map_path.name!r}",
            hint="end the file name in .json (AIF), .argdown, .graphml or .html",
        )
    return kind


def cmd_replay(args: argparse.Namespace) -> int:
    from argnb.roundtable import record
    from argnb.roundtable.session import load_session, replay
    from argnb.roundtable.views import format_turn

    tr = load_session(args.session)
    partial = tr
    for turn, partial in replay(tr, args.delay):
        if not args.quiet:
            print(format_turn(partial, turn), flush=True)
    _finish(record.summary(partial), args.json, sys.stdout)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from argnb.roundtable.session import load_session

    if not args.markdown and not args.map:
        raise ArgnbError("nothing to export", hint="give --markdown FILE and/or --map FILE")
    write_exports(load_session(args.session), args.markdown, args.map)
    return 0
