"""``argnb critique judge`` (rate a dataset with a model) and ``argnb critique score`` (metrics + CIs)."""

from __future__ import annotations

import argparse
import time

from argnb.cli_common import print_json


def _judge(args: argparse.Namespace) -> int:
    from argnb.cli_common import backend_from_args, output_path
    from argnb.critique.data import load
    from argnb.critique.judge import Judge, run_judge

    data = load(args.data)
    if args.limit:
        data = data.subset(data.ids[: args.limit])
    output_path(args.out)
    backend = backend_from_args(args)
    judge = Judge(backend, args.judge, few_shot=args.few_shot)
    start = time.perf_counter()
    records = run_judge(
        judge, data, out=args.out, concurrency=args.concurrency, progress=not args.quiet
    )
    wall = time.perf_counter() - start
    failed = sum(1 for r in records if r.get("error"))
    tokens = sum(sum((r.get("usage") or {}).values()) for r in records)
    print(
        f"{len(records)}/{len(data)} critiques rated by the {judge.name} judge on "
        f"{backend.name}:{backend.model} in {wall:.1f} s ({failed} invalid answers, "
        f"{tokens} tokens in all) -> {args.out}"
    )
    return 0


def _score(args: argparse.Namespace) -> int:
    from argnb.critique.data import load
    from argnb.critique.judge import read_predictions
    from argnb.critique.metrics import score

    data = load(args.data)
    records = read_predictions(args.pred)
    models = sorted({f"{r.get('backend', '?')}:{r.get('model', '?')}" for r in records})
    judges = sorted({str(r.get("judge", "?")) for r in records})
    s = score(
        data,
        records,
        human=args.human,
        n_boot=args.bootstrap,
        seed=args.seed,
        recalibrated=args.recalibrate,
        judge_name=f"{'/'.join(judges)} ({', '.join(models)})",
    )
    s.info["invalid_answers"] = sum(1 for r in records if r.get("error"))
    s.info["models"] = models
    print(s)
    if args.json:
        print_json(s.to_dict())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from argnb.cli_common import add_backend_args, add_run_args, positive_int

    p = sub.add_parser("critique", help="rate critiques on the 7-dimension rubric; score judges")
    cmds = p.add_subparsers(dest="critique_command", required=True)

    j = cmds.add_parser(
        "judge",
        help="rate every critique of a data file with a model (resumable)",
        description="Rate every critique with the baseline judge (overall only) or the full-rubric "
        "judge (all seven dimensions). Each finished critique is appended to --out at once; "
        "running the same command again skips what is done.",
    )
    j.add_argument("--data", required=True, help="critiques: our JSON Lines, or an ACORN export")
    j.add_argument("--judge", choices=["baseline", "rubric"], default="baseline")
    j.add_argument("--few-shot", action="store_true", help="show the judge two worked examples")
    add_backend_args(j)
    add_run_args(
        j,
        out="predictions file (JSON Lines, appended to)",
        out_required=True,
        limit=True,
        concurrency=True,
    )
    j.set_defaults(func=_judge)

    s = cmds.add_parser(
        "score",
        help="score predictions against human ratings (every metric with a 95%% CI)",
        description="Pairwise and weighted pairwise ranking error, custom weighted loss, MSE and "
        "Kendall's tau on overall, each with a bootstrap 95%% CI over positions, next to a judge "
        "that always predicts the mean and a random judge. With --json the last line is one JSON "
        "object (metric -> value).",
    )
    s.add_argument("--data", required=True)
    s.add_argument("--pred", required=True, help="predictions file written by `critique judge`")
    s.add_argument("--human", default="mean", help="a rater's name, or 'mean' of all raters")
    s.add_argument("--recalibrate", action="store_true", help="map scores onto the human spread")
    s.add_argument(
        "--bootstrap", type=positive_int, default=1000, help="bootstrap resamples (default 1000)"
    )
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--json", action="store_true", help="print the metrics as JSON on the last line")
    s.set_defaults(func=_score)
