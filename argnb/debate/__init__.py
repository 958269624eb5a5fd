"""Retrieval-augmented debate (after R-Debater): an argumentative memory and debaters who use it.

First half, the memory: argumentation schemes as data (with Walton's critical questions), an
SQLite memory of real debate utterances with the schemes they use and a quality label per
scheme, builders for the IQ2 and IBM corpora (and any table, and argnb's own debate
transcripts), the scheme annotation, scoring and keyword agents, agreement metrics against a gold
set, and traced hybrid retrieval (keywords -> BM25 -> cosine re-rank -> scheme priors).

Second half, the debate: the logic agent (predicates -> reasoning chain -> flaws), the
generate -> summarize -> judge -> revise loop with a bound, the llm / naive-rag / rdebater methods
and ablations on one :class:`Debater`, the stance predicate, multi-turn simulation, evaluation
(InspireScore- and Debatrix-style judges, sides swapped), the debate map and the learner's widget.

    >>> from argnb import debate
    >>> "retrieve" in debate.__all__ and "Store" in debate.__all__
    True
"""

from __future__ import annotations

from argnb._lazy import lazy_getattr

_LAZY = {
    "Scheme": "argnb.debate.schemes",
    "SchemeSet": "argnb.debate.schemes",
    "load_schemes": "argnb.debate.schemes",
    "LABELS": "argnb.debate.schemes",
    "Store": "argnb.debate.memory",
    "Record": "argnb.debate.memory",
    "MemoryInfo": "argnb.debate.memory",
    "build": "argnb.debate.corpora",
    "split_units": "argnb.debate.corpora",
    "from_transcript": "argnb.debate.corpora",
    "example_memory": "argnb.debate.corpora",
    "gold_annotations": "argnb.debate.corpora",
    "gold_rows": "argnb.debate.corpora",
    "Annotator": "argnb.debate.annotate",
    "AnnotationResult": "argnb.debate.annotate",
    "annotate_store": "argnb.debate.annotate",
    "annotate_file": "argnb.debate.annotate",
    "akeywords": "argnb.debate.retrieve",
    "plan": "argnb.debate.annotate",
    "agreement": "argnb.debate.agreement",
    "read_annotations": "argnb.debate.agreement",
    "Embedder": "argnb.debate.embed",
    "BackendEmbedder": "argnb.debate.embed",
    "MiniLMEmbedder": "argnb.debate.embed",
    "embedder_from_spec": "argnb.debate.embed",
    "embed_store": "argnb.debate.embed",
    "Retriever": "argnb.debate.retrieve",
    "RetrievalTrace": "argnb.debate.retrieve",
    "retrieve": "argnb.debate.retrieve",
    "lexical_keywords": "argnb.debate.retrieve",
    "index_for": "argnb.debate.retrieve",
    "LogicAgent": "argnb.debate.logic",
    "LogicResult": "argnb.debate.logic",
    "Debater": "argnb.debate.generate",
    "Method": "argnb.debate.generate",
    "METHODS": "argnb.debate.generate",
    "NextUtterance": "argnb.debate.generate",
    "worst_case_calls": "argnb.debate.generate",
    "asimulate": "argnb.debate.simulate",
    "debate_map": "argnb.debate.mapping",
    "DebateWidget": "argnb.debate.widget",
    "read_debates": "argnb.debate.inputs",
    "next_items": "argnb.debate.next_experiment",
    "next_run": "argnb.debate.next_experiment",
}

__getattr__ = lazy_getattr(__name__, _LAZY)

__all__ = sorted(_LAZY)
