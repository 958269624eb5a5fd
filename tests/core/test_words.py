"""A passage shortened for display is cut at a word, with an ellipsis, by one helper."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from argnb.words import shorten

ROOT = Path(__file__).resolve().parents[2]
#: the code that shows text to a learner (views, maps, widgets, traces)
DISPLAY = [
    *sorted((ROOT / "argnb").glob("*/views.py")),
    *sorted((ROOT / "argnb").glob("*/widget.py")),
    *sorted((ROOT / "argnb" / "maps").glob("*.py")),
    *sorted((ROOT / "argnb" / "widgets").glob("*.py")),
    ROOT / "argnb" / "debate" / "retrieve.py",
]
# a text attribute or value sliced to a fixed length: ``x.text[:300]``, ``str(...)[:200]``
SLICED = re.compile(r"(\.text|\))\[:\s*\d+\s*\]")


@given(st.text(alphabet=st.sampled_from("ab c,."), max_size=80), st.integers(2, 60))
def test_shorten_keeps_whole_words_and_marks_the_cut(text: str, limit: int) -> None:
    flat = " ".join(text.split())
    out = shorten(text, limit)
    assert len(out) <= limit
    if len(flat) <= limit:
        assert out == flat
        return
    assert out.endswith("…")
    kept = out[:-1]
    words = flat.split(" ")
    if " " in flat[: limit - 1]:  # there was a word boundary to cut at: only whole words remain
        assert all(w in words for w in kept.rstrip(" ,;:.").split(" ")[:-1])
        assert flat.startswith(kept)
        rest = flat[len(kept) :]
        assert rest == "" or rest[0] in " ,;:.", (flat, out)


def test_shorten_never_cuts_inside_a_word() -> None:
    out = shorten("Banning cars rebuts the claim that streets are for traffic", 32)
    assert out == "Banning cars rebuts the claim…"


def test_display_code_shortens_text_with_the_one_helper() -> None:
    """No view, map, widget or trace slices a passage to a fixed length (mid-word, no "…")."""
    found = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in DISPLAY
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if SLICED.search(line)
    ]
    assert found == []
