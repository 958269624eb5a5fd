"""Retrieval-augmented debate, first half: the argumentative memory a debater recalls from.

Argumentation schemes as data (with Walton's critical questions), an SQLite memory of real
debate utterances with the schemes they use and a quality label per scheme, builders for the
IQ2 and IBM corpora (and any table, and argnb's own debate transcripts), the scheme annotation,
scoring and keyword agents, agreement metrics against a gold set, and traced hybrid retrieval
(keywords -> BM25 -> cosine re-rank -> scheme priors).

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
    "akeywords": "argnb.debate.annotate",
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
}

__getattr__ = lazy_getattr(__name__, _LAZY)

__all__ = sorted(_LAZY)
