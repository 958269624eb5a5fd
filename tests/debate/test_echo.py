"""A small model echoes the prompt's labelled history ("P1: … P2: …"): the spoken turn does not."""

from __future__ import annotations

from argnb.debate.generate import Debater
from argnb.llm import ScriptedBackend
from argnb.words import drop_repeats


def test_label_prefixed_near_repeats_are_repeats_and_the_labels_go():
    echo = (
        "P1: Cars fill the centre with fumes. P2: Cars fill the centre with fumes. "
        'C1 (against): "Shops need drivers." P3 (for): Cars fill the centre with fumes!'
    )
    d = Debater(ScriptedBackend([echo]), method="llm")
    u = d.next("Ban cars", [("pro", "Cars pollute."), ("con", "Shops need drivers.")])
    assert u.text == 'Cars fill the centre with fumes. "Shops need drivers."'
    # a label inside a sentence, or a word that only looks like one, is left alone
    kept = "We answer P1: it was wrong. PC1: no label."
    assert drop_repeats(kept) == kept
