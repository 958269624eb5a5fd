"""Greedy decoding under a JSON schema's grammar: llama-cpp-python's chain vs argnb's sampler.

python benchmarks/bench_grammar_sampling.py     (no target: it shows where a reply's time goes)

The embedded model (SmolLM2-135M, llama.cpp, one thread), the critique baseline judge's request
on three critiques (~700 prompt tokens, up to 1,024 answer tokens, temperature 0), each from an
empty context, with ``fast_grammar`` off (the grammar checks all ~49,000 tokens at every step)
and on (argnb/llm/sampling.py: the best token first). The replies must be byte-identical.
"""

from __future__ import annotations

import time

from _common import median, table


def run(ids: tuple[str, ...] = ("det-1", "det-2", "wager-1")) -> list[dict]:
    from argnb.critique import Judge, load_examples
    from argnb.llm import LocalBackend

    data = load_examples()
    backend = LocalBackend(n_threads=1)
    llm = backend.llm
    judge = Judge(backend, "baseline")
    schema = judge.schema.model_json_schema()
    from argnb.llm.local import grammar_safe

    fmt = {"type": "json_object", "schema": grammar_safe(schema)}
    rows, replies = [], {}
    for fast in (False, True):
        llm.fast_grammar = fast
        took, tokens = [], 0
        for cid in ids:
            item = data[cid]
            msgs = [m.model_dump() for m in judge.messages(item.position, item.critique)]
            llm.reset()
            start = time.perf_counter()
            out = llm.create_chat_completion(
                messages=msgs, response_format=fmt, temperature=0.0, max_tokens=1024, seed=42
            )
            took.append(time.perf_counter() - start)
            tokens += out["usage"]["completion_tokens"]
            replies.setdefault(cid, set()).add(out["choices"][0]["message"]["content"])
        rows.append(
            {
                "sampler": "argnb (best token first)" if fast else "llama-cpp-python chain",
                "replies": len(ids),
                "answer tokens": tokens,
                "median reply s": f"{median(took):.1f}",
                "total s": f"{sum(took):.1f}",
            }
        )
    same = all(len(v) == 1 for v in replies.values())
    for r in rows:
        r["byte-identical"] = "yes" if same else "NO"
    return rows


if __name__ == "__main__":
    print(table("greedy decoding under a grammar (local, smollm2-135m, 1 thread)", run()))
