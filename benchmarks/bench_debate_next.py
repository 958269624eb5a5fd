"""Next-utterance generation on real debates, per method, on the embedded model.

python benchmarks/bench_debate_next.py [N_DEBATES] [CUT]

The paper's experiment 1 on ``../shared/data``: the first N IQ2 debates (default 10), each cut
after its first CUT argumentative turns (default 4); the next turn is generated for the side that
really spoke next, by ``llm``, ``naive-rag`` and ``rdebater`` on SmolLM2-135M (local backend),
each utterance checked for the stance predicate. Memory: the IBM debate speeches and the IQ2
debates (BM25 retrieval, lexical keywords for naive-rag, the keyword agent for rdebater); the
debated motion itself is never recalled. The memory is not annotated by a capable model, so the
scheme priors stay empty and ``rdebater`` plans without schemes (its trace says so) -- the row
still measures the logic agent and the judge loop. Runs are resumable (results kept in the bench
cache); then both judges evaluate the same utterances (``argnb.debate.evaluate``), Debatrix with
the sides swapped.
"""

from __future__ import annotations

import sys
import time

from _common import table
from bench_debate_common import CACHE, DATA, have_data, local, skipped

METHODS = ("llm", "naive-rag", "rdebater")


def _memory():
    from argnb.debate.corpora import build
    from argnb.debate.memory import Store

    CACHE.mkdir(parents=True, exist_ok=True)
    store = Store(CACHE / "debate-next-memory.db")
    build(store, "ibm-speeches", DATA / "ibm-debate-speeches" / "items.jsonl")
    build(store, "iq2", DATA / "iq2-debates" / "items.jsonl")
    return store


def run(n: int = 10, cut: int = 4) -> list[dict]:
    if not have_data():
        return skipped("debate next", "../shared/data is not present")
    backend = local()
    if backend is None:
        return skipped("debate next", "the embedded model is not installed")
    from argnb.debate.generate import Debater
    from argnb.debate.inputs import read_debates
    from argnb.debate.next_experiment import next_items, next_run
    from argnb.debate.retrieve import Retriever

    store = _memory()
    items = next_items(read_debates(DATA / "iq2-debates" / "items.jsonl"), cut, limit=n)
    retriever = Retriever(store, None, method="bm25", k=3)
    rows = []
    for method in METHODS:
        d = Debater(backend, method, retriever if method != "llm" else None, words=80, k=3)
        t0 = time.perf_counter()
        out = CACHE / f"debate-next-{method}-{n}x{cut}.jsonl"
        s = next_run(items, d, out=out, check=backend, progress=False).to_dict()
        rows.append(
            {
                "method": method,
                "model": f"{backend.name}:{backend.model}",
                "n": s["n"],
                "invalid": s["invalid"],
                "calls/utt": s["calls_per_utterance"],
                "prompt tok/utt": s["prompt_tokens_per_utterance"],
                "compl tok/utt": s["completion_tokens_per_utterance"],
                "s/utt (model)": s["seconds_per_utterance"],
                "words/utt": s["words_per_utterance"],
                "accepted": s["acceptance_rate"],
                "revisions/utt": s["revisions_per_utterance"],
                "bound hits": s["bound_hits"],
                "stance fails": f"{s['stance_failures']}/{s['stance_checked']}",
                "wall s (this run)": round(time.perf_counter() - t0, 1),
            }
        )
    return rows


def evaluate(n: int = 10, cut: int = 4) -> list[dict]:
    """Both judges over the results files :func:`run` wrote (resumable too)."""
    backend = local()
    if not have_data() or backend is None:
        return skipped("debate evaluation", "no data or no embedded model")
    from argnb.debate.evaluate import evaluate_file

    rows = []
    for method in METHODS:
        res = CACHE / f"debate-next-{method}-{n}x{cut}.jsonl"
        if not res.exists():
            continue
        for judge in ("inspire", "debatrix"):
            out = CACHE / f"debate-eval-{judge}-{method}-{n}x{cut}.jsonl"
            s = evaluate_file(res, judge, backend, out=out, progress=False).to_dict()
            rows.append({"method": method, "judge": judge, **_flat(s)})
    return rows


def _flat(d: dict) -> dict:
    keep = {}
    for k, v in d.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                keep[f"{k}.{kk}"] = vv
        elif not isinstance(v, list):
            keep[k] = v
    return keep


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    cut = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    print(table(f"debate next on {n} IQ2 debates (cut {cut})", run(n, cut)))
    for r in evaluate(n, cut):
        print(r)
