"""``argnb debate ...``: build and inspect the memory, annotate, measure agreement, retrieve."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError


def _print(args: argparse.Namespace, *lines: object) -> None:
    if not getattr(args, "quiet", False):
        for line in lines:
            print(line)


def _store(path: str, *, must_exist: bool = True, readonly: bool = False) -> Any:
    from argnb.debate.memory import open_store

    return open_store(path, must_exist=must_exist, readonly=readonly)


def _connect_kw(args: argparse.Namespace) -> dict[str, Any]:
    from argnb.cli_common import connect_kw

    return connect_kw(args)


def _confirm_or_fail(p: Any, yes: bool) -> bool:
    """Ask on a terminal, refuse elsewhere, when a run is above the threshold."""
    if not p.needs_confirmation or yes:
        return True
    if sys.stdin.isatty():
        answer = input(f"{p}\nRun it? [y/N] ").strip().lower()
        return answer in ("y", "yes")
    return False


def _annotator(args: argparse.Namespace) -> Any:
    from argnb.cli_common import backend_from_args
    from argnb.debate.annotate import Annotator

    return Annotator(backend_from_args(args), score=not getattr(args, "no_score", False))


def _run_annotation(args: argparse.Namespace, store: Any) -> None:
    from argnb.debate.annotate import annotate_store, plan

    annotator = _annotator(args)
    todo = store.unannotated(args.limit or None)
    p = plan(annotator, [(r.text, r.topic, r.stance) for r in todo])
    _print(args, p)
    if not _confirm_or_fail(p, args.yes):
        raise ArgnbError(
            "annotation not started: the estimated cost is above the threshold",
            hint="add --yes to run it, or --limit N to annotate fewer records",
        )
    summary = annotate_store(
        store,
        annotator,
        limit=args.limit or None,
        concurrency=args.concurrency,
        yes=True,
        progress=not args.quiet,
    )
    _print(args, summary)


def _embedder(args: argparse.Namespace, store: Any = None) -> Any:
    from argnb.debate.embed import embedder_from_spec

    spec = getattr(args, "embedder", None)
    if not spec and store is not None:
        models = list(store.embedding_models())
        if len(models) == 1:
            spec = models[0]
        elif len(models) > 1:
            raise ArgnbError(
                f"{store.path} holds embeddings of several models: {', '.join(models)}",
                hint="choose one with --embedder",
            )
        else:
            return None
    return embedder_from_spec(spec or "local", **_connect_kw(args))


# -- memory ------------------------------------------------------------------------------
def _build(args: argparse.Namespace) -> int:
    from argnb.debate.corpora import build
    from argnb.debate.embed import embed_store

    if args.from_ != "example" and not args.path:
        raise ArgnbError(f"--from {args.from_} needs the corpus path", hint="add PATH")
    _check_corpus(args)  # before the memory is opened: bad input leaves no file behind
    store = _store(args.db, must_exist=False)
    with store:
        rep = build(
            store,
            args.from_,
            args.path,
            max_words=args.max_words,
            min_words=args.min_words,
            debate=args.debate,
        )
        _print(args, rep)
        if args.annotate:
            _run_annotation(args, store)
        if args.embed:
            _print(args, embed_store(store, _embedder(args), progress=not args.quiet))
        info = store.info()
        _print(args, info)
        if args.json:
            print(json.dumps({"added": rep.added, "existing": rep.existing, **info.to_dict()}))
    return 0


#: the layout and fields each table ``--from`` reads (transcript and example are not tables)
CORPUS_TABLES = {
    "iq2": ("jsonl", ("debate_id", "topic", "stance", "text")),
    "ibm-speeches": ("jsonl", ("debate_id", "topic", "stance", "text")),
    "claims": ("jsonl", ("topic", "stance", "text")),
    "jsonl": ("jsonl", ("topic", "stance", "text")),
    "csv": ("csv", ("topic", "stance", "text")),
}


def _check_corpus(args: argparse.Namespace) -> None:
    """Refuse a corpus that would add nothing: an empty file, another layout than ``--from``
    says, rows without the fields, a ``--debate`` it does not hold, rows that are all skipped."""
    from argnb.datafiles import DataError, table_rows
    from argnb.debate.corpora import BuildReport, records

    if args.from_ in CORPUS_TABLES:
        kind, fields = CORPUS_TABLES[args.from_]
        table_rows(args.path, "PATH", kind=kind, required=fields, said=f"--from {args.from_}")
    report = BuildReport(args.from_)
    kw = {"max_words": args.max_words, "min_words": args.min_words, "debate": args.debate}
    ids = {r.debate_id for r in records(args.from_, args.path, report, **kw)}
    if args.debate is not None and args.debate not in ids:
        raise DataError(
            f"no debate {args.debate!r} in {args.path or 'the example'}",
            hint="check --debate (the debate_id column), or leave it out to add every debate",
        )
    if not ids:
        skipped = ", ".join(f"{n} {why}" for why, n in report.skipped.most_common()) or "nothing"
        raise DataError(
            f"{args.path} gives no records (skipped: {skipped})",
            hint="check --from, --min-words and the stance column (pro/con)",
        )


def _annotate_memory(args: argparse.Namespace) -> int:
    with _store(args.db) as store:
        if args.redo:
            n = store.clear_annotations()
            _print(args, f"forgot {n} annotations")
        _run_annotation(args, store)
    return 0


def _embed(args: argparse.Namespace) -> int:
    from argnb.debate.embed import embed_store

    with _store(args.db) as store:
        emb = _embedder(args)
        _print(args, embed_store(store, emb, limit=args.limit or None, progress=not args.quiet))
    return 0


def _info(args: argparse.Namespace) -> int:
    with _store(args.db, readonly=True) as store:
        info = store.info()
        _print(args, info)
        if args.json:
            print(json.dumps(info.to_dict()))
    return 0


def _export(args: argparse.Namespace) -> int:
    with _store(args.db, readonly=True) as store:
        n = store.export_annotations(args.out)
    _print(args, f"{n} annotations -> {args.out}")
    return 0


# -- annotate a file, agreement ----------------------------------------------------------
def _annotate_file(args: argparse.Namespace) -> int:
    from argnb.debate.annotate import annotate_file, plan
    from argnb.debate.inputs import read_rows

    if bool(args.data) == bool(args.gold):
        raise ArgnbError("give either --data FILE or --gold", hint="--gold annotates our gold set")
    if args.gold:
        from argnb.debate.corpora import gold_rows

        rows = gold_rows()
    else:
        rows = list(read_rows(args.data))
    for n, r in enumerate(rows, 1):
        if "id" not in r or not str(r.get("text", "")).strip():
            raise ArgnbError(f"row {n} needs an 'id' and a 'text'", hint="JSON Lines: id, text")
    if args.limit:
        rows = rows[: args.limit]
    given = None
    if args.schemes_from:
        from argnb.debate.agreement import read_annotations

        given = {i: list(lab) for i, lab in read_annotations(args.schemes_from).labels.items()}
    annotator = _annotator(args)
    p = plan(annotator, [(r["text"], r.get("topic", ""), r.get("stance", "")) for r in rows])
    _print(args, p)
    if not _confirm_or_fail(p, args.yes):
        raise ArgnbError(
            "annotation not started: the estimated cost is above the threshold",
            hint="add --yes to run it, or --limit N to annotate fewer rows",
        )
    s = annotate_file(
        rows,
        annotator,
        args.out,
        given=given,
        concurrency=args.concurrency,
        yes=True,
        progress=not args.quiet,
    )
    _print(args, f"{s} -> {args.out}")
    if args.json:
        print(json.dumps(s.to_dict()))
    return 0


def _agreement(args: argparse.Namespace) -> int:
    from argnb.debate.agreement import agreement
    from argnb.debate.corpora import gold_annotations

    files = list(args.files)
    if args.gold:
        if len(files) != 1:
            raise ArgnbError(
                "with --gold give one file: the annotation to compare",
                hint="argnb debate agreement --gold model.jsonl",
            )
        a = agreement(gold_annotations(), files[0])
    else:
        if len(files) != 2:
            raise ArgnbError(
                "give two annotation files (reference first), or --gold and one file",
                hint="argnb debate agreement gold.jsonl model.jsonl",
            )
        a = agreement(files[0], files[1])
    _print(args, a)
    if args.json:
        print(json.dumps(a.to_dict()))
    return 0


# -- retrieval ---------------------------------------------------------------------------
def read_history(path: str) -> list[str]:
    """Utterances from a file: JSON Lines rows with ``text``, an argnb transcript (``.json``),
    or plain text with one utterance per paragraph."""
    p = Path(path)
    if not p.is_file():
        raise ArgnbError(f"no history file at {p}", hint="check the path")
    if p.suffix == ".jsonl":
        from argnb.debate.inputs import read_rows

        return [str(r.get("text", "")) for r in read_rows(p) if r.get("text")]
    if p.suffix == ".json":
        from argnb.transcript import Transcript

        try:
            return [t.text for t in Transcript.load(p).turns if t.text]
        except ValueError as exc:
            raise ArgnbError(f"{p} is not an argnb transcript: {exc}") from None
    from argnb.datafiles import read_text

    text = read_text(p, "--history")
    return [u.strip() for u in text.split("\n\n") if u.strip()]


def _retrieve(args: argparse.Namespace) -> int:
    from argnb.debate.retrieve import Retriever

    if bool(args.text) == bool(args.history):
        raise ArgnbError("give --text TEXT or --history FILE", hint="one of them")
    history = [args.text] if args.text else read_history(args.history)
    with _store(args.db, readonly=True) as store:
        emb = None if args.method == "bm25" else _embedder(args, store)
        method = args.method if emb is not None else "bm25"
        if method != args.method:
            _print(args, f"(no embeddings in {args.db}: BM25 only; add some with `memory embed`)")
        kb = None
        if args.keywords == "agent":
            from argnb.cli_common import backend_from_args

            kb = backend_from_args(args)
        r = Retriever(
            store, emb, kb, method, k=args.k, candidates=args.candidates, threshold=args.threshold
        )
        trace = r.retrieve(history, stance=args.stance)
        _print(args, trace)
        if args.json:
            d = trace.to_dict()
            d["cost"] = trace.cost.model_dump()
            print(json.dumps(d, ensure_ascii=False))
    return 0


def _schemes(args: argparse.Namespace) -> int:
    from argnb.debate.schemes import load_schemes

    s = load_schemes(args.file)
    if args.json:
        print(json.dumps([x.model_dump() for x in s]))
        return 0
    for x in s:
        print(f"{x.id} -- {x.name}\n  {x.definition}\n{x.pattern()}\n{x.questions()}\n")
    return 0


# -- parser ------------------------------------------------------------------------------
def _common(p: argparse.ArgumentParser, **run: Any) -> None:
    """The shared ``--json --quiet`` (and, as asked, ``--out --limit --concurrency``)."""
    from argnb.cli_common import add_run_args

    add_run_args(p, **run)


def _annotation_args(p: argparse.ArgumentParser) -> None:
    from argnb.cli_common import add_backend_args

    p.add_argument("--yes", action="store_true", help="run even above the cost threshold")
    p.add_argument("--no-score", action="store_true", help="scheme annotation only, no labels")
    add_backend_args(p)


def register(sub: argparse._SubParsersAction) -> None:
    from argnb.cli_common import add_backend_args, positive_int
    from argnb.debate.corpora import FORMATS, MAX_WORDS, MIN_WORDS

    p = sub.add_parser(
        "debate",
        help="argumentative memory and debate: build, annotate, retrieve, next, simulate, evaluate",
    )
    cmds = p.add_subparsers(dest="debate_command", required=True)

    m = cmds.add_parser("memory", help="build and inspect a memory (one SQLite file)")
    mc = m.add_subparsers(dest="memory_command", required=True)

    b = mc.add_parser(
        "build",
        help="add a corpus to a memory (created if missing; records already there are kept)",
        description="Add a corpus to the memory: moderator/host/audience turns dropped, long "
        "turns split into units of at most --max-words words, units under --min-words "
        "dropped. Optionally annotate (the scheme and scoring agents; the cost is printed "
        "first) and embed the new records. Running it again adds only what is missing.",
    )
    b.add_argument("--from", dest="from_", choices=FORMATS, required=True)
    b.add_argument("path", nargs="?", help="the corpus file (not needed for --from example)")
    b.add_argument("--db", required=True, help="the memory file (SQLite)")
    b.add_argument("--debate", help="add only this debate id")
    b.add_argument("--max-words", type=positive_int, default=MAX_WORDS)
    b.add_argument("--min-words", type=positive_int, default=MIN_WORDS)
    b.add_argument("--annotate", action="store_true", help="annotate records not yet annotated")
    b.add_argument("--embed", action="store_true", help="embed records not yet embedded")
    b.add_argument(
        "--embedder",
        default=None,
        help="minilm, local, ollama:MODEL or openai:MODEL (default local)",
    )
    _annotation_args(b)
    _common(b, limit=True, concurrency=True)
    b.set_defaults(func=_build)

    a = mc.add_parser("annotate", help="annotate the records that have no annotation (resumable)")
    a.add_argument("--db", required=True)
    a.add_argument("--redo", action="store_true", help="forget all annotations first")
    _annotation_args(a)
    _common(a, limit=True, concurrency=True)
    a.set_defaults(func=_annotate_memory)

    e = mc.add_parser("embed", help="embed the records not yet embedded by a model (resumable)")
    e.add_argument("--db", required=True)
    e.add_argument("--embedder", default="local", help="minilm, local, ollama:MODEL, openai:MODEL")
    add_backend_args(e)
    _common(e, limit=True)
    e.set_defaults(func=_embed)

    i = mc.add_parser("info", help="counts per source, stance, scheme and label; models used")
    i.add_argument("--db", required=True)
    _common(i)
    i.set_defaults(func=_info)

    x = mc.add_parser("export", help="write the annotations as JSON Lines (for agreement)")
    x.add_argument("--db", required=True)
    _common(x, out="the annotations file to write (JSON Lines)", out_required=True)
    x.set_defaults(func=_export)

    r = cmds.add_parser(
        "retrieve",
        help="keywords -> BM25 candidates -> cosine re-rank -> top k -> scheme priors",
        description="Retrieve exemplars and scheme priors for a debate history and print every "
        "step. With --json the last line is one JSON object: keywords, candidates, records "
        "(ids, scores, schemes, labels), priors, timings.",
    )
    r.add_argument("--db", required=True)
    r.add_argument("--text", help="the debate history as one text")
    r.add_argument("--history", help="a file: JSON Lines with 'text', a transcript, or paragraphs")
    r.add_argument("--stance", choices=["pro", "con"], help="only records of this stance")
    r.add_argument("-k", type=positive_int, default=5, help="records to keep (default 5)")
    r.add_argument("--method", choices=["hybrid", "bm25", "embedding"], default="hybrid")
    r.add_argument(
        "--keywords",
        choices=["lexical", "agent"],
        default="lexical",
        help="lexical (no model) or the keyword agent on --backend/--model",
    )
    r.add_argument(
        "--embedder", default=None, help="the memory's embedding model (default: the one it holds)"
    )
    r.add_argument(
        "--candidates", type=positive_int, default=50, help="coarse pool size (default 50)"
    )
    r.add_argument("--threshold", type=float, default=2.0, help="prior threshold (default 2)")
    add_backend_args(r)
    _common(r)
    r.set_defaults(func=_retrieve)

    n = cmds.add_parser(
        "annotate",
        help="annotate passages of a JSON Lines file into an annotation file (resumable)",
        description="Run the scheme annotation and scoring agents over rows with id and text "
        "(or over our gold set with --gold) and append one annotation per row to --out; "
        "running it again skips the rows already there. --schemes-from FILE scores the "
        "schemes given in FILE instead (the scoring agent alone).",
    )
    n.add_argument("--data", help="JSON Lines with id, text (topic, stance optional)")
    n.add_argument("--gold", action="store_true", help="annotate our gold set (30 passages)")
    n.add_argument("--schemes-from", help="score the schemes of this annotation file")
    _annotation_args(n)
    _common(
        n,
        out="annotation file (JSON Lines, appended to)",
        out_required=True,
        limit=True,
        concurrency=True,
    )
    n.set_defaults(func=_annotate_file)

    g = cmds.add_parser(
        "agreement",
        help="agreement of two scheme annotations and two scorings (Jaccard ... Kendall)",
        description="Jaccard, precision, recall, Hamming loss, Cohen's kappa (micro, macro), "
        "Krippendorff's alpha on the scheme sets; Pearson, Spearman, Kendall on the labels. "
        "The first file is the reference; with --gold the reference is our gold set.",
    )
    g.add_argument("files", nargs="+", help="reference.jsonl other.jsonl (or one file with --gold)")
    g.add_argument("--gold", action="store_true", help="compare one file against our gold set")
    _common(g)
    g.set_defaults(func=_agreement)

    s = cmds.add_parser("schemes", help="the argumentation schemes and their critical questions")
    s.add_argument("--file", help="an adapted schemes.yaml")
    _common(s)
    s.set_defaults(func=_schemes)

    from argnb.debate.cli_generate import register_generation

    register_generation(cmds)
