"""Streaming on the embedded model: how soon the first words appear vs the whole reply.

python benchmarks/bench_streaming.py     (no target: it shows what a reader waits for)

Local backend (SmolLM2-135M, llama.cpp), a ~150-token prompt answered in 64 tokens, median
of 5 runs each: with the prefix cache off (every run evaluates the whole prompt before the first
word) and on (the repeated prompt's blocks are restored, only its last block is evaluated).
"""

from __future__ import annotations

from _common import median, table

SYSTEM = (
    "You are a debate moderator. Summarise the speaker's point in two sentences, then ask one "
    "question that tests its weakest premise. Be neutral and brief. "
) * 3
SPEAKER = (
    "Cities should make buses free. Fares pay for a small share of running costs, free buses "
    "would take cars off the road, and people with the least money would gain the most."
)


def run(n: int = 5) -> list[dict]:
    from argnb.llm import Ledger, LocalBackend, Options

    opts = Options(max_tokens=64)
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": SPEAKER}]
    rows = []
    for prefix_cache in (False, True):
        b = LocalBackend(prefix_cache=prefix_cache, ledger=Ledger())
        b.chat(msgs, options=opts)  # load the model; with the cache on, this saves the prefix
        first, full, tokens = [], [], 0
        for _ in range(n):
            s = b.stream(msgs, options=opts)
            chunks = list(s)
            first.append(s.reply.first_chunk_s)
            full.append(s.reply.latency_s)
            tokens = s.reply.usage
        rows.append(
            {
                "prefix cache": "on" if prefix_cache else "off",
                "runs": n,
                "prompt+completion tokens": f"{tokens.prompt_tokens}+{tokens.completion_tokens}",
                "chunks": len(chunks),
                "first_chunk_s": f"{median(first):.3f}",
                "full_reply_s": f"{median(full):.3f}",
                "first/full": f"{median(first) / median(full):.2f}",
            }
        )
    return rows


if __name__ == "__main__":
    print(table("streaming, time to first chunk (local, smollm2-135m)", run()))
