"""The annotation agents and retrieval on the real embedded model (slower: marked ``model``)."""

from __future__ import annotations

import pytest

from argnb.debate.annotate import Annotator
from argnb.debate.corpora import example_memory, gold_rows
from argnb.debate.embed import BackendEmbedder, embed_store
from argnb.debate.retrieve import Retriever
from argnb.debate.schemes import LABELS, load_schemes


@pytest.mark.model
@pytest.mark.full  # make test-all only (docs/testing.md)
def test_annotation_on_the_embedded_model_is_well_formed_and_reproducible(local):
    row = gold_rows()[0]
    a = Annotator(local).annotate(row["text"], topic=row["topic"], stance=row["stance"])
    b = Annotator(local).annotate(row["text"], topic=row["topic"], stance=row["stance"])
    assert (a.labels, a.error) == (b.labels, b.error)
    assert 1 <= a.cost.calls <= 4 and a.cost.usage.prompt_tokens > 500
    assert set(a.labels) <= set(load_schemes().ids)
    if a.valid:
        assert all(lab in LABELS for lab in a.labels.values())


@pytest.mark.model
def test_retrieval_with_the_embedded_model_embeddings(local):
    s = example_memory()
    emb = BackendEmbedder(local)
    assert embed_store(s, emb, progress=False).embedded == 40
    tr = Retriever(s, emb, k=3).retrieve(
        "Cars in the city centre make the air dirty and children get asthma.", stance="pro"
    )
    assert len(tr.hits) == 3 and all(h.stance == "pro" for h in tr.hits)
    assert tr.embed_model == "local:smollm2-135m" and -1 <= tr.hits[0].cosine <= 1
