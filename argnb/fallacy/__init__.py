"""Fallacy detection with deliberating agents.

Baselines (zero-shot, few-shot, chain-of-thought), a deliberation protocol between agents that
each have their own backend, the agreement-based ensemble that deliberates only where two
baselines disagree, dataset loaders and a resumable benchmark runner with per-source metrics.

    >>> from argnb import fallacy
    >>> from argnb.llm import ScriptedBackend
    >>> fallacy.classify("Everyone does it, so it is fine.", ScriptedBackend([{"label": 1}])).label
    1
"""

from __future__ import annotations

from argnb._lazy import lazy_getattr

_LAZY = {
    "Agent": "argnb.agents",
    "Deliberation": "argnb.fallacy.deliberation",
    "DeliberationResult": "argnb.fallacy.deliberation",
    "deliberate": "argnb.fallacy.deliberation",
    "parse_agents": "argnb.agents",
    "Baseline": "argnb.fallacy.baselines",
    "Example": "argnb.fallacy.baselines",
    "Prediction": "argnb.fallacy.baselines",
    "classify": "argnb.fallacy.baselines",
    "aclassify": "argnb.fallacy.baselines",
    "build_messages": "argnb.fallacy.baselines",
    "Ensemble": "argnb.fallacy.ensemble",
    "EnsembleResult": "argnb.fallacy.ensemble",
    "Vote": "argnb.fallacy.protocol",
    "Decision": "argnb.fallacy.protocol",
    "bench": "argnb.fallacy.benchmark",
    "abench": "argnb.fallacy.benchmark",
    "report": "argnb.fallacy.benchmark",
    "results_frame": "argnb.fallacy.benchmark",
    "summarize": "argnb.fallacy.metrics",
    "load_any": "argnb.fallacy.data",
    "load_jsonl": "argnb.fallacy.data",
    "INVALID": "argnb.fallacy.schemas",
    "classify_widget": "argnb.fallacy.views",
    "report_html": "argnb.fallacy.views",
    "Report": "argnb.fallacy.views",
}

__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = sorted(_LAZY)
