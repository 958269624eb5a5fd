"""Run every benchmark and print one table each (``make bench``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_cache
import bench_concurrency
import bench_debate_annotation
import bench_debate_latency
import bench_debate_next
import bench_debate_retrieval
import bench_debate_reuse
import bench_grammar_sampling
import bench_import
import bench_memory
import bench_overhead
import bench_prefix_cache
import bench_roundtable_prefix
import bench_streaming
import bench_widget_first_text
import fallacy_protocol
import roundtable_session
from _common import table

if __name__ == "__main__":
    print(table("import time", bench_import.run()))
    print(table("memory", bench_memory.run()))
    print(table("structured-call overhead", bench_overhead.run()))
    print(table("response cache", bench_cache.run()))
    print(table("batch runner concurrency (200 ms per request)", bench_concurrency.run()))
    print(table("fallacy protocol", fallacy_protocol.run()))
    print(table("prefix cache, fallacy ensemble (local)", bench_prefix_cache.run()))
    print(table("streaming, time to first chunk (local)", bench_streaming.run()))
    print(table("greedy decoding under a grammar (local, 1 thread)", bench_grammar_sampling.run()))
    print(table("roundtable protocol (scripted models)", roundtable_session.run()))
    rows, steps = bench_roundtable_prefix.compare()
    print(table("roundtable, 12 turns on the embedded model, prefix reuse off vs on", rows))
    print(table("roundtable tokens per step (prompt tokens are the same off and on)", steps))
    print(table("widget time to first visible text (browser)", bench_widget_first_text.run()))
    print(table("debate retrieval on IBM claim-stance", bench_debate_retrieval.run()))
    print(table("debate retrieval latency", bench_debate_latency.run()))
    print(table("debate annotation on the embedded model", bench_debate_annotation.run()))
    print(table("debate next turn on 10 IQ2 debates (cut 4)", bench_debate_next.run()))
    print(
        table(
            "rdebater next turn, prefix cache off vs on (local, 10 IQ2 debates)",
            bench_debate_reuse.run(),
        )
    )
