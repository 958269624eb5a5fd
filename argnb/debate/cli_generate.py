"""``argnb debate next``, ``simulate`` and ``evaluate``: generation and judging on the command line.

Defaults are chosen here (the backend from the shared flags, the memory's own embedding model),
never in the protocol modules.
"""

from __future__ import annotations

import argparse
from typing import Any

from argnb.errors import ArgnbError


def _say(args: argparse.Namespace, *lines: object) -> None:
    if not getattr(args, "quiet", False):
        for line in lines:
            print(line)


def _retriever(args: argparse.Namespace, store: Any) -> Any:
    """BM25 + the memory's own embeddings when it has some (hybrid), BM25 alone otherwise."""
    from argnb.cli_common import connect_kw
    from argnb.debate.embed import embedder_from_spec
    from argnb.debate.retrieve import Retriever

    spec = args.embedder
    if spec is None:
        models = list(store.embedding_models())
        if len(models) > 1:
            raise ArgnbError(
                f"{store.path} holds embeddings of several models: {', '.join(models)}",
                hint="choose one with --embedder",
            )
        spec = models[0] if models else None
    emb = embedder_from_spec(spec, **connect_kw(args)) if spec else None
    if emb is None:
        _say(args, f"(no embeddings in {store.path}: BM25 retrieval only)")
    return Retriever(store, emb, method="hybrid" if emb else "bm25", k=args.k)


def debater_spec(spec: str, default: Any, args: argparse.Namespace) -> tuple[str, Any]:
    """``METHOD[@backend:model]`` -> (method, backend); without ``@`` the shared flags' backend.

    >>> debater_spec("llm", "B", argparse.Namespace())
    ('llm', 'B')
    """
    from argnb.agents import method_backend

    if "@" not in spec:
        return method_backend(spec, default)
    from argnb.cli_common import connect_kw

    return method_backend(spec, default, **connect_kw(args))


def _debater(args: argparse.Namespace, method: str, backend: Any, store: Any, name: str) -> Any:
    from argnb.debate.generate import Debater, method_of

    m = method_of(method)
    retriever = _retriever(args, store) if m.retrieval != "none" else None
    return Debater(
        backend,
        m,
        retriever,
        name=name,
        max_revisions=args.max_revisions,
        words=args.words,
        k=args.k,
        keyword_agent=args.keywords == "agent",
    )


def _memory(args: argparse.Namespace, needed: bool) -> Any:
    from argnb.debate.memory import open_store

    if args.db is None:
        if needed:
            raise ArgnbError(
                "this method retrieves from a memory: give --db FILE",
                hint="build one: argnb debate memory build --from example --db memory.db",
            )
        return None
    return open_store(args.db, readonly=True)


def _next(args: argparse.Namespace) -> int:
    from argnb.cli_common import backend_from_args, output_path, print_json
    from argnb.debate.generate import method_of
    from argnb.debate.inputs import read_debates
    from argnb.debate.next_experiment import next_items, next_run

    out = output_path(args.out)
    items = next_items(read_debates(args.debates), args.cut, debate=args.debate, limit=args.limit)
    store = _memory(args, method_of(args.method).retrieval != "none")
    backend = backend_from_args(args)
    debater = _debater(args, args.method, backend, store, args.method)
    summary = next_run(
        items,
        debater,
        out=out,
        check=None if args.no_stance_check else backend,
        concurrency=args.concurrency,
        progress=not args.quiet,
    )
    if not args.quiet:
        for r in summary.records[:3]:
            print(f"[{r['id']}] {r['stance']}: {r['text'][:300]}")
    _say(args, summary, *([f"results -> {out}"] if out else []))
    if args.json:
        print_json(summary.to_dict())
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from argnb.cli_common import backend_from_args, history_cut, output_path, print_json
    from argnb.debate.generate import method_of
    from argnb.debate.record import utterances
    from argnb.debate.simulate import simulate

    out = output_path(args.out)
    map_path = output_path(args.map, "--map", suffixes=(".html", ".png"))
    history: list[Any] = []
    topic = args.topic
    if args.history:
        from argnb.debate.inputs import read_debates

        debates = read_debates(args.history)
        if args.debate and args.debate not in debates:
            raise ArgnbError(f"no debate {args.debate!r} in {args.history}", hint="check --debate")
        d = debates[args.debate] if args.debate else next(iter(debates.values()))
        history = history_cut(d.turns, args.cut, f"debate {d.id!r}")
        topic = topic or d.topic
    elif args.cut or args.debate:
        raise ArgnbError("--cut and --debate choose from --history", hint="add --history FILE")
    if not topic:
        raise ArgnbError("give the motion with --topic", hint='--topic "Ban homework"')
    default = backend_from_args(args)  # every check above ran before any model is touched
    pro_m, pro_b = debater_spec(args.pro, default, args)
    con_m, con_b = debater_spec(args.con, default, args)
    needs = method_of(pro_m).retrieval != "none" or method_of(con_m).retrieval != "none"
    store = _memory(args, needs)
    pro = _debater(args, pro_m, pro_b, store, f"pro ({pro_m})")
    con = _debater(args, con_m, con_b, store, f"con ({con_m})")

    def show(event: Any) -> None:
        turn = event.turn
        if event.kind != "turn" or turn is None:
            return
        if turn.role == "utterance" and not args.quiet:
            print(f"\n[{turn.payload.stance}] {turn.speaker}: {turn.text}")
        elif turn.payload.kind == "debate.stance_check" and not args.quiet:
            print(f"   stance check: {'ok' if turn.payload.ok else 'FAILED'}")

    tr = simulate(
        topic,
        pro,
        con,
        turns=args.turns,
        history=history,
        check=not args.no_stance_check,
        stop_when_concluded=not args.all_turns,
        on_event=show,
    )
    if out:
        tr.save(out)
    if map_path is not None:
        from argnb.debate.mapping import debate_map

        m = debate_map(tr)
        path = map_path
        assert path is not None
        m.save(path)
        _say(args, f"map -> {path}")
    cost = tr.cost
    result = {
        **tr.outcome,
        "speakers": [t.speaker for t in utterances(tr)],
        "calls": cost.calls,
        "tokens": cost.usage.total_tokens,
        "seconds": round(cost.latency_s, 2),
        "out": str(out) if out else None,
    }
    _say(args, f"\n{tr.outcome} -- {cost}")
    if args.json:
        print_json(result)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from argnb.cli_common import backend_from_args, output_path, print_json
    from argnb.debate.evaluate import evaluate_file
    from argnb.debate.inputs import read_items

    out = output_path(args.out)
    read_items(args.utterances, args.judge)  # a wrong file fails before any model is loaded
    summary = evaluate_file(
        args.utterances,
        args.judge,
        backend_from_args(args),
        out=out,
        limit=args.limit,
        concurrency=args.concurrency,
        progress=not args.quiet,
    )
    d = summary.to_dict()
    if args.judge == "inspire":
        _say(
            args,
            f"{d['n']} utterances ({d['invalid']} invalid): InspireScore {d['score']}; "
            f"subjective {d['subjective']}, logic {d['logic']}, fact {d['fact']} "
            f"(claims {d['claims']}; {d['without_claims']} utterances without factual claims)",
        )
    else:
        _say(
            args,
            f"{d['n']} debates ({d['invalid']} invalid): wins {d['wins']}; "
            f"verdict flipped when the sides were swapped: {d['flip_rate']}; "
            f"pro {d['pro']}; con {d['con']}",
        )
    if args.json:
        print_json(d)
    return 0


def _generation_args(p: argparse.ArgumentParser) -> None:
    from argnb.cli_common import add_backend_args, positive_int
    from argnb.debate.generate import MAX_REVISIONS, WORDS

    p.add_argument("--db", help="the memory to retrieve from (needed by every method but llm)")
    p.add_argument(
        "--embedder", default=None, help="the memory's embedding model (default: the one it holds)"
    )
    p.add_argument("-k", type=positive_int, default=5, help="passages to retrieve (default 5)")
    p.add_argument(
        "--keywords",
        choices=["agent", "lexical"],
        default="agent",
        help="the keyword agent (default) or lexical keywords (no model)",
    )
    p.add_argument(
        "--max-revisions",
        type=int,
        choices=range(0, 11),
        metavar="{0..10}",
        default=MAX_REVISIONS,
        help=f"judge -> revise rounds at most (default {MAX_REVISIONS})",
    )
    p.add_argument(
        "--words", type=positive_int, default=WORDS, help=f"word budget (default {WORDS})"
    )
    p.add_argument("--no-stance-check", action="store_true", help="skip the stance predicate")
    add_backend_args(p)


def register_generation(cmds: argparse._SubParsersAction) -> None:
    """Add ``next``, ``simulate`` and ``evaluate`` to ``argnb debate``."""
    from argnb.cli_common import add_backend_args, add_run_args, positive_int
    from argnb.debate.generate import METHODS

    n = cmds.add_parser(
        "next",
        help="generate the next turn of real debates (resumable; llm, naive-rag, rdebater, ...)",
        description="Cut each debate of a file in the IQ2 layout after its first --cut "
        "argumentative turns and generate the next turn for the side whose turn it is. Each "
        "result holds the utterance and its full trace; run it again to resume. Methods: "
        + "; ".join(f"{m.name}: {m.about}" for m in METHODS.values()),
    )
    n.add_argument("--debates", required=True, help="JSON Lines: debate_id, topic, turn, stance…")
    n.add_argument("--debate", help="only this debate id")
    n.add_argument(
        "--cut", type=positive_int, required=True, help="turns of history (the rest is hidden)"
    )
    n.add_argument("--method", choices=list(METHODS), default="rdebater")
    _generation_args(n)
    add_run_args(n, out="results file (JSON Lines, appended to)", limit=True, concurrency=True)
    n.set_defaults(func=_next)

    s = cmds.add_parser(
        "simulate",
        help="two debaters alternate pro and con for N turns or until both conclude",
        description="Each side is METHOD[@backend:model] (default backend: the shared flags). "
        "Every turn is checked for the stance predicate. --out saves the transcript (JSON), "
        "--map the argument map (.html or .png).",
    )
    s.add_argument("--topic", help="the motion (default: the motion of --history)")
    s.add_argument("--pro", default="rdebater", help="METHOD[@backend:model] for the pro side")
    s.add_argument("--con", default="rdebater", help="METHOD[@backend:model] for the con side")
    s.add_argument("--turns", type=positive_int, default=6, help="turns to generate (default 6)")
    s.add_argument("--history", help="start from a debate of this file (IQ2 layout)")
    s.add_argument("--debate", help="which debate of --history (default: the first)")
    s.add_argument("--cut", type=positive_int, help="use only its first N turns")
    s.add_argument("--map", help="write the argument map (.html or .png)")
    s.add_argument(
        "--all-turns",
        action="store_true",
        help="run all --turns even when both sides have concluded (repeat themselves) earlier",
    )
    _generation_args(s)
    add_run_args(s, out="the transcript file to write (JSON)")
    s.set_defaults(func=_simulate)

    e = cmds.add_parser(
        "evaluate",
        help="judge utterances (inspire) or whole debates (debatrix, sides swapped)",
        description="--utterances takes the results of `argnb debate next` (.jsonl), a saved "
        "debate transcript (.json: simulate --out, or the widget's) or a debates file in the "
        "IQ2 layout. inspire: subjective, logic and fact in [0, 1] per utterance "
        "(claims the evidence does not settle are unverifiable, not true). debatrix: argument, "
        "source, language, overall per side and a winner, judged twice with the sides swapped; "
        "the flip rate says how often the verdict changed. Resumable with --out.",
    )
    e.add_argument("--utterances", required=True, help="the file to evaluate")
    e.add_argument("--judge", choices=["inspire", "debatrix"], required=True)
    add_backend_args(e)
    add_run_args(
        e, out="evaluation records (JSON Lines, appended to)", limit=True, concurrency=True
    )
    e.set_defaults(func=_evaluate)
