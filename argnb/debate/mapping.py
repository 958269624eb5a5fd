"""A debate transcript as an :class:`argnb.maps.ArgumentMap`.

Each utterance is a claim node labelled ``P1, C1, P2, ...`` and coloured by side (agent ``pro``
or ``con``). A generated utterance attacks the opponent turns its logic agent found flaws in (the
``targets`` of its ``debate.utterance`` payload; the edge is labelled with the flaw's kind); an
utterance without such targets -- a corpus turn, a human's, or a method without the logic agent --
answers the opponent's latest turn (edge label ``reply``). Reading the turns as arguments and the
attacks as defeats, each node gets its grounded status (IN / OUT / UNDEC, via
:mod:`argnb.dialectic.semantics`): which turns stand unanswered at the end.

    >>> from argnb.debate.record import utterance_turn
    >>> from argnb.transcript import Transcript
    >>> tr = Transcript(kind="debate", title="Ban homework")
    >>> for side, text in [("pro", "It causes stress."), ("con", "Some stress helps.")]:
    ...     _ = tr.add(utterance_turn(side, text, "Ban homework"))
    >>> m = debate_map(tr)
    >>> [(u, v, d["label"]) for u, v, d in m.edges("rebut")], m.node("C1")["status"]
    ([('C1', 'P1', 'reply')], 'IN')
"""

from __future__ import annotations

from argnb.debate.record import as_history, utterances
from argnb.dialectic.semantics import grounded_labelling
from argnb.maps import ArgumentMap
from argnb.transcript import Transcript


def debate_map(tr: Transcript) -> ArgumentMap:
    """The map of a (finished or partial) debate; see the module docstring."""
    m = ArgumentMap(tr.title)
    turns = [t for t in utterances(tr) if t.valid and t.text.strip()]
    labels = [s.label for s in as_history(turns)]
    flaw_kinds = _flaw_kinds(tr)
    attacks: list[tuple[str, str, str]] = []
    last_of: dict[str, str] = {}
    for i, (turn, label) in enumerate(zip(turns, labels, strict=True)):
        p = turn.payload
        move = f"m{i}"
        m.add_move(move, p.stance, turn.text)  # the side speaks (one colour per side)
        m.add_claim(label, turn.text, agent=p.stance, move=move, label=label)
        opponent = "con" if p.stance == "pro" else "pro"
        known = [t for t in getattr(p, "targets", []) if t in labels[:i]]
        if known:
            kinds = flaw_kinds.get(i, "rebut")
            attacks += [(label, t, kinds) for t in known]
        elif opponent in last_of:
            attacks.append((label, last_of[opponent], "reply"))
        last_of[p.stance] = label
    for src, dst, kind in attacks:
        m.add_rebut(src, dst, move=m.node(src)["move"], label=kind)
    status = grounded_labelling(labels, [(s, d) for s, d, _ in attacks])
    m.set_status(status)
    return m


def _flaw_kinds(tr: Transcript) -> dict[int, str]:
    """Per utterance (its index among the utterances), the kinds of flaw its logic agent found,
    joined -- read from the ``debate.flaws`` turns recorded before it."""
    out: dict[int, str] = {}
    kinds: list[str] = []
    n = 0
    for t in tr.turns:
        if t.payload.kind == "debate.flaws" and t.valid:
            kinds = [f.kind for f in t.payload.flaws]
        elif t.role == "utterance" and t.payload.kind == "debate.utterance":
            if t.valid and t.text.strip():
                if kinds:
                    out[n] = ", ".join(dict.fromkeys(kinds))
                n += 1
            kinds = []
    return out
