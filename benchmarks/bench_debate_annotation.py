"""The scheme annotation and scoring agents on the embedded model, against our gold set.

python benchmarks/bench_debate_annotation.py [N]      (N gold passages, default 10 of 30)

Runs both agents (scheme annotation, then scoring of the schemes found) on SmolLM2-135M over
the first N passages of our gold set (``assets/debate/memory.jsonl``, ``gold: true``), no
response cache, and reports speed (records/s, tokens per record), the invalid rate and the
agreement with our labels. A 135M model is not expected to annotate schemes well: this measures
how far it is from usable, and what a run costs.
"""

from __future__ import annotations

import sys

from _common import table
from bench_debate_common import CACHE, local, skipped


def run(n: int = 10) -> list[dict]:
    backend = local()
    if backend is None:
        return skipped("debate annotation", "the embedded model is not installed")
    from argnb.debate.agreement import agreement
    from argnb.debate.annotate import Annotator, annotate_file
    from argnb.debate.corpora import gold_annotations, gold_rows

    rows = gold_rows()[:n]
    # kept between runs: an interrupted run resumes (speed is measured on the rows it ran)
    CACHE.mkdir(parents=True, exist_ok=True)
    out = CACHE / "debate-gold-smollm2.jsonl"
    s = annotate_file(rows, Annotator(backend), out, yes=True, progress=False)
    a = agreement(gold_annotations(), out)
    d = s.to_dict()

    def f(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    return [
        {
            "benchmark": f"annotate + score gold passages ({d['annotated']} run now, "
            f"{d['already_done']} from an earlier run)",
            "model": f"local:{backend.model}",
            "records/s": d["records_per_s"],
            "tokens/record": d["tokens_per_record"],
            "calls": d["calls"],
            "invalid": f"{d['invalid']} ({d['invalid_rate']:.0%})",
            "Jaccard": f(a.schemes.jaccard),
            "precision": f(a.schemes.precision),
            "kappa micro": f(a.schemes.kappa_micro),
            "alpha": f(a.schemes.alpha),
            "Spearman (labels)": f"{f(a.scores.spearman)} (n={a.scores.n})",
        }
    ]


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    print(table("debate annotation agents on the embedded model vs our gold set", run(n)))
