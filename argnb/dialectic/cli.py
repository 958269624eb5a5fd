"""``argnb dialectic``: run the protocol from the shell.

    argnb dialectic run --example camera --json
    argnb dialectic run --example my_stances.yaml --backend ollama --model llama3.2
    argnb dialectic run --example camera --reference --export argdown --to camera.argdown
    argnb dialectic examples

The dialogue is printed turn by turn; with ``--json`` the last line is one JSON object with
``terminated``, ``turns``, ``outcome`` (``justified`` / ``synthesis`` / ``none``),
``final_answer`` and the grounded ``labelling``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from argnb.errors import ArgnbError

EXPORTS = ("aif", "argdown", "graphml", "html")


def register(subparsers) -> None:
    from argnb.cli_common import add_backend_args, add_run_args, positive_int

    p = subparsers.add_parser(
        "dialectic", help="dialectical protocol: arguments, attacks, synthesis"
    )
    sub = p.add_subparsers(dest="dialectic_command", required=True)

    run = sub.add_parser("run", help="run a two-agent dialectical dialogue")
    run.add_argument(
        "--example",
        required=True,
        metavar="NAME|FILE",
        help="a packaged example (camera, camera_values, school_cleaning) or a stances YAML file",
    )
    add_backend_args(run)
    run.add_argument(
        "--reference",
        action="store_true",
        help="no model: replay the formal example's answers (camera only)",
    )
    run.add_argument(
        "--max-attacks", type=positive_int, default=6, help="attacks per line (hard cap, >= 1)"
    )
    run.add_argument("--export", choices=EXPORTS, help="also write the argument map")
    run.add_argument("--to", type=Path, help="file for --export")
    run.add_argument("--transcript", type=Path, help="save the transcript (JSON) here")
    add_run_args(run)
    run.set_defaults(func=cmd_run)

    ex = sub.add_parser("examples", help="list the packaged examples")
    ex.set_defaults(func=cmd_examples)


def load_case(spec: str):
    from argnb.dialectic.case import Case
    from argnb.dialectic.examples import EXAMPLES, load_example

    if spec in EXAMPLES:
        return load_example(spec)
    if Path(spec).exists():
        return Case.load(spec)
    raise ArgnbError(
        f"{spec!r} is neither an example nor a file",
        hint=f"use one of {', '.join(EXAMPLES)} or a path to a stances YAML file",
    )


def cmd_run(args: argparse.Namespace) -> int:
    from argnb.cli_common import output_path
    from argnb.dialectic.protocol import run_dialogue
    from argnb.dialectic.views import format_turn

    if args.export and not args.to:
        raise ArgnbError("--export needs --to FILE", hint="e.g. --export aif --to dialogue.json")
    case = load_case(args.example)
    output_path(args.to, "--to")  # checked before the (possibly paid) dialogue runs
    output_path(args.transcript, "--transcript")
    if args.reference:
        if args.example != "camera":
            raise ArgnbError(
                "--reference replays the formal camera example only",
                hint="use --example camera, or drop --reference to ask a model",
            )
        from argnb.dialectic.examples import camera_reference_backend

        backend = camera_reference_backend()
    else:
        from argnb.cli_common import backend_from_args

        backend = backend_from_args(args)
    out = sys.stdout

    def on_turn(t):
        if not args.quiet:
            print(format_turn(t), file=out, flush=True)

    print(f"issue: {case.issue}  ({backend.name}, {backend.model})", file=out, flush=True)
    dialogue = run_dialogue(backend, case, max_attacks=args.max_attacks, on_turn=on_turn)
    if args.transcript:
        dialogue.transcript.save(args.transcript)
    if args.export:
        write_export(dialogue, args.export, args.to)
        print(f"wrote {args.export} to {args.to}", file=out)
    summary = dialogue.summary()
    if args.json:
        print(json.dumps(summary, ensure_ascii=False), file=out, flush=True)
    else:
        print(f"outcome: {summary['outcome']}", file=out)
        print(f"final answer: {summary['final_answer']}", file=out)
        print(f"grounded labelling: {summary['labelling']}", file=out)
    return 0


def write_export(dialogue, kind: str, path: Path) -> None:
    dialogue.to_map().save(path, kind)


def cmd_examples(args: argparse.Namespace) -> int:
    from argnb.dialectic.examples import EXAMPLES, load_example

    for name in EXAMPLES:
        case = load_example(name)
        print(f"{name:16s} {case.issue}  ({' vs '.join(a.name for a in case.agents)})")
    return 0
