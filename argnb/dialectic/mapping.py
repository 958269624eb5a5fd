"""A dialectic transcript as an :class:`argnb.maps.ArgumentMap`.

Each argument ``A<n>`` becomes one inference node per rule (the last one is called ``A<n>``,
earlier ones ``A<n>.r<k>``), its premises and assumptions become statement nodes feeding them, and
each consequent a claim node. A rebut is an edge from the attacker's conclusion to the conclusion
it contradicts; an undercut an edge from the attacker's conclusion to the inference whose
assumption it shows false. Inference and conclusion nodes carry the argument's grounded status.
"""

from __future__ import annotations

from argnb.dialectic.novelty import normalise
from argnb.dialectic.record import DialogueRecord
from argnb.maps import ArgumentMap
from argnb.transcript import Transcript


def dialogue_map(tr: Transcript, *, symmetric_rebuts: bool = False) -> ArgumentMap:
    """Build the map of a finished (or partial) dialogue, coloured by grounded semantics."""
    m = ArgumentMap(tr.title)
    record = DialogueRecord.of(tr)
    labels = record.labelling(symmetric_rebuts=symmetric_rebuts)
    records = record.arguments
    claim_of: dict[tuple[str, str], str] = {}  # (arg id, normalised consequent) -> node id
    rule_of_assumption: dict[tuple[str, str], tuple[str, str]] = {}  # -> (inference id, node)
    final_claim: dict[str, str] = {}

    for rec in records.values():
        move = f"m{rec.turn}"
        turn = tr.turns[rec.turn]
        m.add_move(move, rec.agent, turn.text)
        status = labels.get(rec.id)
        derived: dict[str, str] = {}
        rules = rec.argument.rules
        for k, rule in enumerate(rules, start=1):
            prem_ids = []
            for i, p in enumerate(rule.antecedent.strong, start=1):
                key = normalise(p)
                if key in derived:  # an earlier consequent of this argument
                    prem_ids.append(derived[key])
                    continue
                pid = m.add_premise(f"{rec.id}.r{k}.p{i}", p, agent=rec.agent, move=move)
                prem_ids.append(pid)
            ass_ids = []
            for i, a in enumerate(rule.antecedent.weak_negation, start=1):
                ass_ids.append(
                    m.add_assumption(f"{rec.id}.r{k}.a{i}", a, agent=rec.agent, move=move)
                )
            last = k == len(rules)
            cid = m.add_claim(
                f"{rec.id}.c{k}",
                rule.consequent,
                agent=rec.agent,
                status=status,
                move=move,
                label="final answer" if rec.role == "synthesis" and last else None,
            )
            inf = rec.id if last else f"{rec.id}.{rule.id}"
            m.add_argument(
                inf,
                premises=prem_ids,
                assumptions=ass_ids,
                conclusion=cid,
                agent=rec.agent,
                status=status,
                move=move,
                text=f"{rec.id} ({rec.role}) by {rec.agent}",
                label=rec.id if last else f"{rec.id}·{rule.id}",
            )
            derived[normalise(rule.consequent)] = cid
            claim_of[(rec.id, normalise(rule.consequent))] = cid
            for aid, a in zip(ass_ids, rule.antecedent.weak_negation, strict=True):
                rule_of_assumption[(rec.id, normalise(a))] = (inf, aid)
            if last:
                final_claim[rec.id] = cid

    for att in record.attacks:
        if att.attacker not in final_claim or att.target not in records:
            continue
        move = f"m{records[att.attacker].turn}"
        src = final_claim[att.attacker]
        if att.kind == "rebut":
            dst = claim_of.get((att.target, normalise(att.on)), final_claim[att.target])
            m.add_rebut(src, dst, move=move)
        else:
            inf, aid = rule_of_assumption.get((att.target, normalise(att.on)), (att.target, None))
            m.add_undercut(src, inf, on=aid, move=move)
    return m
