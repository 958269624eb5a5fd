"""The memory's lexical index and its on-disk cache: what retrieval searches, built once.

One :class:`MemoryIndex` per memory generation and embedding model holds the BM25 index
(``bm25s``), document frequencies, the normalised embedding matrix and the label matrix; it is
built on first use, kept in the process, and the BM25 part is cached next to the database file
(rebuilt when the memory's generation changes). The retrieval steps are in
:mod:`argnb.debate.retrieve`.
"""

from __future__ import annotations

import json
import math
import shutil
import threading
import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from argnb.debate.memory import Store
from argnb.debate.schemes import LABELS, load_schemes
from argnb.errors import ArgnbError

if TYPE_CHECKING:
    import numpy as np

#: talk that carries no argument (added to scikit-learn's English stop words)
_FILLER_WORDS = """think know going say said says saying really just well yes yeah okay ok oh um
    uh let like want got get gets make makes made way thing things lot lots actually mean means
    point right thank thanks sure look kind sort maybe gonna come came tell told talk talking
    talked question questions debate motion opponents opponent side team points"""
FILLERS = frozenset(_FILLER_WORDS.split())


def _stopwords() -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS | FILLERS)


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased word tokens without stop words (the same for documents and queries)."""
    import bm25s

    return bm25s.tokenize(list(texts), return_ids=False, stopwords=_STOP, show_progress=False)  # type: ignore[return-value]


_STOP: list[str] = []


def _init_stop() -> None:
    if not _STOP:
        _STOP.extend(_stopwords())


# -- the index ---------------------------------------------------------------------------
@dataclass
class MemoryIndex:
    """Everything retrieval needs, precomputed for one memory generation and embedding model."""

    generation: int
    ids: list[str]
    texts: list[str]
    topics: list[str]
    sources: list[str]
    stance: np.ndarray  # "pro"/"con" per record
    bm25: Any
    df: dict[str, int]
    scheme_ids: tuple[str, ...]
    scores: np.ndarray  # records x schemes, 0 (unused / unscored) .. 4
    labels: list[dict[str, str | None]]
    annotated: np.ndarray  # bool per record
    embed_model: str | None
    emb: np.ndarray | None  # records x dim, unit rows; zero rows where missing
    has_emb: np.ndarray | None

    @property
    def n(self) -> int:
        return len(self.ids)

    @cached_property
    def topic_array(self) -> np.ndarray:
        """The topics as an array, built once per index (the motion filter compares them)."""
        import numpy as np

        return np.asarray(self.topics, dtype=object)

    @classmethod
    def build(cls, store: Store, embed_model: str | None = None) -> MemoryIndex:
        import numpy as np

        _init_stop()
        gen = store.generation
        cols = store.columns()
        if not cols["id"]:
            raise ArgnbError(
                f"the memory {store.path} is empty",
                hint="add records with `argnb debate memory build --from ... PATH --db FILE`",
            )
        bm25, df = _bm25(store, cols["text"], gen)
        ann = store.annotations()
        known = list(load_schemes().ids)
        extra = sorted({s for a in ann.values() for s in a.labels} - set(known))
        scheme_ids = tuple(known + extra)
        col = {s: j for j, s in enumerate(scheme_ids)}
        scores = np.zeros((len(cols["id"]), len(scheme_ids)), dtype=np.int8)
        labels: list[dict[str, str | None]] = []
        annotated = np.zeros(len(cols["id"]), dtype=bool)
        for i, rid in enumerate(cols["id"]):
            a = ann.get(rid)
            labels.append(dict(a.labels) if a else {})
            if a:
                annotated[i] = True
                for s, lab in a.labels.items():
                    scores[i, col[s]] = 0 if lab is None else LABELS.index(lab) + 1
        emb = has = None
        if embed_model is not None:
            eids, mat = store.embeddings(embed_model)
            pos = {rid: i for i, rid in enumerate(cols["id"])}
            emb = np.zeros((len(cols["id"]), mat.shape[1]), dtype=np.float32)
            has = np.zeros(len(cols["id"]), dtype=bool)
            rows = np.fromiter((pos[r] for r in eids), dtype=np.int64, count=len(eids))
            emb[rows] = mat
            has[rows] = True
        return cls(
            generation=gen,
            ids=cols["id"],
            texts=cols["text"],
            topics=cols["topic"],
            sources=cols["source"],
            stance=np.array(cols["stance"]),
            bm25=bm25,
            df=df,
            scheme_ids=scheme_ids,
            scores=scores,
            labels=labels,
            annotated=annotated,
            embed_model=embed_model,
            emb=emb,
            has_emb=has,
        )

    def idf(self, term: str) -> float:
        return math.log(1 + (self.n - self.df.get(term, 0) + 0.5) / (self.df.get(term, 0) + 0.5))


def _cache_dir(store: Store) -> Path | None:
    if store.path == ":memory:":
        return None
    return Path(store.path + ".index")


def _bm25(store: Store, texts: list[str], gen: int) -> tuple[Any, dict[str, int]]:
    """The BM25 index and document frequencies: from the cache next to the database when it
    was built at this generation, else built (and saved there)."""
    import bm25s

    folder = _cache_dir(store)
    if folder is not None and (folder / "meta.json").is_file():
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            if meta.get("generation") == gen and meta.get("n") == len(texts):
                bm25 = bm25s.BM25.load(str(folder / "bm25"), show_progress=False, verbosity=0)
                df = json.loads((folder / "df.json").read_text(encoding="utf-8"))
                return bm25, df
        except (OSError, ValueError, KeyError):
            pass  # a damaged cache is rebuilt
    # "_" stands in for a text made only of stop words (the tokenizer never produces it)
    tokens = [t or ["_"] for t in tokenize(texts)]
    df: Counter[str] = Counter()
    for toks in tokens:
        df.update(set(toks))
    bm25 = bm25s.BM25()
    bm25.index(tokens, show_progress=False)
    if folder is not None:
        try:
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            bm25.save(str(folder / "bm25"), show_progress=False)
            (folder / "df.json").write_text(json.dumps(df), encoding="utf-8")
            (folder / "meta.json").write_text(
                json.dumps({"generation": gen, "n": len(texts)}), encoding="utf-8"
            )
        except OSError:
            pass  # a read-only place: the index still works, it is just not cached
    return bm25, dict(df)


_INDEXES: dict[tuple[str, str | None], MemoryIndex] = {}
_INDEX_LOCK = threading.Lock()


def index_for(store: Store, embed_model: str | None = None) -> MemoryIndex:
    """The index of ``store`` for ``embed_model`` (built once per generation, then cached)."""
    key = (store.cache_key, embed_model)
    with _INDEX_LOCK:
        idx = _INDEXES.get(key)
        if idx is None or idx.generation != store.generation:
            if idx is None and store.path == ":memory:":
                # a memory store's index dies with it: nothing else can ever ask for it
                weakref.finalize(store, _INDEXES.pop, key, None)
            idx = _INDEXES[key] = MemoryIndex.build(store, embed_model)
        return idx
