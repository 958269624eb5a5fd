"""``argnb fallacy ...``: classify one argument, let agents deliberate, run and report benchmarks.

argnb fallacy classify "Everyone does it, so it must be fine." --method cot
argnb fallacy deliberate "..." --agents local:smollm2-135m,ollama:llama3.2
argnb fallacy bench --data dev.jsonl --method ensemble --out results.jsonl --json
argnb fallacy report results.jsonl
argnb fallacy fetch cocolofa --split test --out cocolofa-test.jsonl
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from argnb.cli_common import print_json


def _members(args: argparse.Namespace, backend: Any) -> list:
    """``--members zero,few`` or ``zero@ollama:llama3.2,few@local:smollm2-135m``."""
    from argnb.agents import method_backend
    from argnb.cli_common import connect_kw
    from argnb.errors import ArgnbError
    from argnb.fallacy.baselines import Baseline

    specs = [s.strip() for s in args.members.split(",") if s.strip()]
    if len(specs) != 2:
        raise ArgnbError(
            f"--members needs exactly two configurations, got {len(specs)}",
            hint="e.g. --members zero,few  or  --members zero@ollama:llama3.2,few",
        )
    out = []
    for spec in specs:
        method, b = method_backend(spec, backend, **connect_kw(args))
        out.append(Baseline(method, b, structured=not args.text_mode))
    return out


def _backend(args: argparse.Namespace) -> Any:
    from argnb.cli_common import backend_from_args

    return backend_from_args(args)


def _agents(args: argparse.Namespace) -> list | None:
    from argnb.agents import parse_agents
    from argnb.cli_common import connect_kw

    return parse_agents(args.agents, **connect_kw(args)) if args.agents else None


def _bench(args: argparse.Namespace) -> int:
    from argnb.cli_common import output_path
    from argnb.fallacy.benchmark import bench
    from argnb.fallacy.data import load_any
    from argnb.fallacy.metrics import format_report

    items = load_any(args.data, format=args.format)
    output_path(args.out)
    backend = _backend(args)
    kw: dict[str, Any] = {
        "method": args.method,
        "backend": backend,
        "agents": _agents(args),
        "resolver": args.resolver,
        "max_rounds": args.max_rounds,
        "seed": args.seed,
        "structured": not args.text_mode,
    }
    if args.method == "ensemble":
        kw["members"] = _members(args, backend)
    rep = bench(
        items,
        out=args.out,
        limit=args.limit,
        concurrency=args.concurrency,
        progress=not args.quiet,
        **kw,
    )
    stream = sys.stderr if args.json else sys.stdout
    print(format_report(rep), file=stream)
    print(f"wall time this run: {rep['wall_s_this_run']} s", file=stream)
    if args.json:
        print_json(rep)
    return 0


def _report(args: argparse.Namespace) -> int:
    from argnb.fallacy.benchmark import report
    from argnb.fallacy.metrics import format_report

    rep = report(args.results)
    if args.json:
        print_json(rep)
    else:
        print(format_report(rep))
    return 0


def _classify(args: argparse.Namespace) -> int:
    from argnb.fallacy.baselines import classify

    pred = classify(args.text, _backend(args), args.method, structured=not args.text_mode)
    if args.json:
        print_json({"label": pred.label, "reasoning": pred.reasoning, "raw": pred.raw})
    else:
        print(f"label: {pred.label}" + (f"   ({pred.error})" if pred.error else ""))
        for k, v in pred.reasoning.items():
            print(f"  {k}: {v}")
    return 0


def _deliberate(args: argparse.Namespace) -> int:
    from argnb.agents import Agent
    from argnb.fallacy.deliberation import deliberate

    agents = _agents(args)
    if not agents:
        b = _backend(args)
        agents = [Agent("agent A", b), Agent("agent B", b)]
    res = deliberate(args.text, agents, max_rounds=args.max_rounds, seed=args.seed)
    if args.json:
        print(res.transcript.to_json())
        return 0
    for t in res.transcript.turns:
        p = t.payload
        head = f"round {t.round} · {t.speaker} · {t.role}"
        if t.valid:
            head += f" · vote {p.get('vote')} · confidence {p.get('confidence')}"
        print(head + "\n  " + t.text.replace("\n", "\n  "))
    print(f"result: {res.label} by {res.resolution} after {res.rounds} round(s)")
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from argnb.cli_common import output_path
    from argnb.fallacy.data import fetch, load, save_jsonl

    output_path(args.out)
    path = fetch(args.source, args.split, url=args.url, refresh=args.refresh)
    print(f"downloaded: {path}")
    if args.out:
        items = load(args.source, split=args.split, path=path)
        save_jsonl(items, args.out)
        print(f"{len(items)} items written to {args.out}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from argnb.cli_common import add_backend_args, add_run_args, positive_int
    from argnb.fallacy.benchmark import BENCH_METHODS
    from argnb.fallacy.data import SOURCES

    top = sub.add_parser("fallacy", help="fallacy detection: baselines, deliberation, benchmark")
    cmds = top.add_subparsers(dest="fallacy_command", required=True)

    def model_args(p: argparse.ArgumentParser) -> None:
        add_backend_args(p)
        p.add_argument(
            "--agents",
            default=None,
            help="deliberating agents, comma separated backend:model "
            "(e.g. local:smollm2-135m,ollama:llama3.2); default: from --backend/--model",
        )
        p.add_argument("--max-rounds", type=positive_int, default=3, help="deliberation rounds (3)")
        p.add_argument("--seed", type=int, default=0, help="seed for random tie-breaks (0)")
        p.add_argument(
            "--text-mode", action="store_true", help="plain-text answers (the paper's format)"
        )

    p = cmds.add_parser("bench", help="run a method over a dataset (resumable)")
    p.add_argument("--data", required=True, help="items: our JSONL or an original dataset file")
    p.add_argument("--format", default="auto", choices=["auto", "jsonl", *SOURCES])
    p.add_argument("--method", required=True, choices=BENCH_METHODS)
    p.add_argument(
        "--members",
        default="zero,few",
        help="ensemble members: two method[@backend:model] (default zero,few)",
    )
    p.add_argument(
        "--resolver",
        default="deliberate",
        choices=["deliberate", "random"],
        help="how the ensemble settles disagreements (random is also always reported)",
    )
    model_args(p)
    add_run_args(p, out="results JSONL; re-run with it to resume", limit=True, concurrency=True)
    p.set_defaults(func=_bench)

    p = cmds.add_parser("report", help="recompute the report of a results file")
    p.add_argument("results")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_report)

    p = cmds.add_parser("classify", help="classify one argument with a baseline")
    p.add_argument("text")
    p.add_argument("--method", default="zero", choices=["zero", "few", "cot"])
    model_args(p)
    add_run_args(p)
    p.set_defaults(func=_classify)

    p = cmds.add_parser("deliberate", help="let agents deliberate about one argument")
    p.add_argument("text")
    model_args(p)
    add_run_args(p)
    p.set_defaults(func=_deliberate)

    p = cmds.add_parser("fetch", help="download a public dataset (needs internet)")
    p.add_argument("source", choices=SOURCES)
    p.add_argument(
        "--split", default="test", help="train, dev or test (where the source has splits)"
    )
    p.add_argument("--out", default=None, help="also write it in our JSONL format here")
    p.add_argument("--url", default=None, help="download from this URL (a mirror) instead")
    p.add_argument("--refresh", action="store_true", help="download again even if cached")
    p.set_defaults(func=_fetch)
