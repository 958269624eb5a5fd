"""Metrics for binary fallacy detection, computed from a results table (no model involved).

Conventions (the paper's): an ``"invalid"`` prediction is simply wrong. For macro-F1 it is a
miss for the gold class and a false alarm for neither class; the average runs over the labels
that occur in the gold or the valid predictions (as scikit-learn does).

    >>> accuracy([1, 0, 1, 0], [1, 0, 0, "invalid"])
    0.5
    >>> round(macro_f1([1, 1, 0, 0], [1, 0, 0, 0]), 4)
    0.7333
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

LABELS = (0, 1)


def accuracy(gold: Sequence[int], pred: Sequence[Any]) -> float:
    """Share of items whose prediction equals the gold label (0.0 for no items)."""
    if len(gold) != len(pred):
        raise ValueError("gold and pred differ in length")
    if not gold:
        return 0.0
    return sum(1 for g, p in zip(gold, pred, strict=True) if p == g) / len(gold)


def f1_per_class(gold: Sequence[int], pred: Sequence[Any]) -> dict[int, float]:
    """F1 of each label that occurs in the gold labels or the valid predictions."""
    present = sorted({g for g in gold} | {p for p in pred if p in LABELS})
    out = {}
    for c in present:
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p == c)
        fp = sum(1 for g, p in zip(gold, pred, strict=True) if g != c and p == c)
        fn = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p != c)
        out[c] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return out


def macro_f1(gold: Sequence[int], pred: Sequence[Any]) -> float:
    """Unweighted mean of the per-class F1 scores (0.0 for no items)."""
    if len(gold) != len(pred):
        raise ValueError("gold and pred differ in length")
    scores = f1_per_class(gold, pred)
    return sum(scores.values()) / len(scores) if scores else 0.0


def confusion(gold: Sequence[int], pred: Sequence[Any]) -> dict[str, dict[str, int]]:
    """Counts by gold label (rows) and prediction (0, 1, invalid)."""
    table = {str(g): {"0": 0, "1": 0, "invalid": 0} for g in LABELS}
    for g, p in zip(gold, pred, strict=True):
        table[str(g)][str(p) if p in LABELS else "invalid"] += 1
    return table


def histogram(values: Iterable[float], bins: int = 10) -> dict[str, int]:
    """Counts in equal-width bins over [0, 1]; the last bin includes 1.0."""
    edges = [round(i / bins, 6) for i in range(bins + 1)]
    counts = {f"{edges[i]:.1f}-{edges[i + 1]:.1f}": 0 for i in range(bins)}
    keys = list(counts)
    for v in values:
        i = min(int(float(v) * bins + 1e-9), bins - 1)
        counts[keys[max(i, 0)]] += 1
    return counts


def _rate(num: float, den: float) -> float:
    return num / den if den else 0.0


def _group_accuracy(records: Sequence[dict], key: str, pred: str = "pred") -> dict[str, dict]:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(str(r.get(key)), []).append(r)
    return {
        k: {
            "n": len(rs),
            "accuracy": round(accuracy([r["label"] for r in rs], [r[pred] for r in rs]), 4),
            "gold_fallacious": sum(1 for r in rs if r["label"] == 1),
        }
        for k, rs in sorted(groups.items())
    }


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The benchmark report, from the records :mod:`argnb.fallacy.benchmark` writes."""
    n = len(records)
    gold = [r["label"] for r in records]
    pred = [r["pred"] for r in records]
    outputs = sum(r.get("outputs", 0) for r in records)
    invalid_outputs = sum(r.get("invalid_outputs", 0) for r in records)
    rep: dict[str, Any] = {
        "n": n,
        "method": records[0].get("method") if records else None,
        "accuracy": round(accuracy(gold, pred), 4),
        "macro_f1": round(macro_f1(gold, pred), 4),
        "per_source": _group_accuracy(records, "source"),
        "confusion": confusion(gold, pred),
        "invalid_rate": round(_rate(sum(1 for p in pred if p not in LABELS), n), 4),
        "invalid_output_rate": round(_rate(invalid_outputs, outputs), 4),
        "outputs": outputs,
        "invalid_outputs": invalid_outputs,
        "calls_per_item": round(_rate(sum(r.get("calls", 0) for r in records), n), 3),
        "prompt_tokens_per_item": round(
            _rate(sum(r.get("prompt_tokens", 0) for r in records), n), 1
        ),
        "completion_tokens_per_item": round(
            _rate(sum(r.get("completion_tokens", 0) for r in records), n), 1
        ),
        "model_seconds_per_item": round(_rate(sum(r.get("latency_s", 0.0) for r in records), n), 3),
    }
    if any("resolution" in r for r in records):
        rep["resolutions"] = dict(Counter(r.get("resolution") for r in records).most_common())
        rounds = [r.get("rounds", 0) for r in records if r.get("rounds")]
        rep["rounds"] = {str(k): v for k, v in sorted(Counter(rounds).items())}
        confs = [c for r in records for c in r.get("confidences") or []]
        rep["confidence_histogram"] = histogram(confs)
        rep["confidences"] = len(confs)
        rep["confidence_share_0.8_0.9"] = round(
            _rate(sum(1 for c in confs if 0.8 <= c <= 0.9), len(confs)), 4
        )
    if any("members" in r for r in records):
        rep.update(_ensemble_part(records))
    return rep


def _ensemble_part(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    n = len(records)
    gold = [r["label"] for r in records]
    names = [m["name"] for m in records[0]["members"]]
    members = {}
    for i, name in enumerate(names):
        mp = [r["members"][i]["pred"] for r in records]
        members[name] = {
            "accuracy": round(accuracy(gold, mp), 4),
            "invalid_rate": round(_rate(sum(1 for p in mp if p not in LABELS), n), 4),
        }
    agree = [r for r in records if r.get("agree")]
    dis = [r for r in records if r.get("disagree")]
    dgold = [r["label"] for r in dis]
    out: dict[str, Any] = {
        "members": members,
        "agreement_rate": round(_rate(len(agree), n), 4),
        "agreed": len(agree),
        "agreed_accuracy": round(
            accuracy([r["label"] for r in agree], [r["pred"] for r in agree]), 4
        ),
        "disagreed": len(dis),
        "one_or_both_invalid": n - len(agree) - len(dis),
        "accuracy_random_tiebreak": round(accuracy(gold, [r["pred_random"] for r in records]), 4),
        "disagreement": {
            "n": len(dis),
            "accuracy": round(accuracy(dgold, [r["pred"] for r in dis]), 4),
            "macro_f1": round(macro_f1(dgold, [r["pred"] for r in dis]), 4),
            "accuracy_random": round(accuracy(dgold, [r["pred_random"] for r in dis]), 4),
            "macro_f1_random": round(macro_f1(dgold, [r["pred_random"] for r in dis]), 4),
            "resolutions": dict(Counter(r.get("resolution") for r in dis).most_common()),
        },
    }
    return out


def run_on(rep: dict[str, Any]) -> str:
    """Which backends and models produced a report (from its ``config``), e.g.
    ``zero@local:smollm2-135m + few@local:smollm2-135m; agents local:smollm2-135m x2``."""
    cfg = rep.get("config") or {}

    def where(d: dict[str, Any]) -> str:
        return f"{d.get('backend')}:{d.get('model')}"

    parts = []
    if cfg.get("members"):
        parts.append(" + ".join(m.get("name") or where(m) for m in cfg["members"]))
    elif cfg.get("backend"):
        parts.append(f"{cfg.get('method')}@{where(cfg)}")
    if cfg.get("agents"):
        names = [where(a) for a in cfg["agents"]]
        same = len(set(names)) == 1
        parts.append("agents " + (f"{names[0]} x{len(names)}" if same else ", ".join(names)))
    return "; ".join(parts) or "unknown (no configuration recorded)"


def format_report(rep: dict[str, Any]) -> str:
    """A plain-text rendering of :func:`summarize`'s report for the terminal."""
    lines = [
        f"method {rep.get('method')}  ·  {rep['n']} items  ·  on {run_on(rep)}",
        f"accuracy {rep['accuracy']:.3f}   macro-F1 {rep['macro_f1']:.3f}   "
        f"invalid items {rep['invalid_rate']:.1%}   invalid model outputs "
        f"{rep['invalid_output_rate']:.1%} ({rep['invalid_outputs']}/{rep['outputs']})",
        f"per item: {rep['calls_per_item']} calls, {rep['prompt_tokens_per_item']} prompt + "
        f"{rep['completion_tokens_per_item']} completion tokens, "
        f"{rep['model_seconds_per_item']} s of call latency (incl. waiting for a busy model)",
        "",
        "per source        n    acc    gold=1",
    ]
    for src, s in rep["per_source"].items():
        lines.append(f"  {src:<14} {s['n']:>4}  {s['accuracy']:.3f}  {s['gold_fallacious']:>5}")
    c = rep["confusion"]
    lines += [
        "",
        "confusion (rows gold, cols pred)   0     1   invalid",
        f"  gold 0                        {c['0']['0']:>5} {c['0']['1']:>5} {c['0']['invalid']:>5}",
        f"  gold 1                        {c['1']['0']:>5} {c['1']['1']:>5} {c['1']['invalid']:>5}",
    ]
    if "members" in rep:
        lines += ["", "ensemble members:"]
        for name, m in rep["members"].items():
            lines.append(f"  {name}: accuracy {m['accuracy']:.3f}, invalid {m['invalid_rate']:.1%}")
        d = rep["disagreement"]
        agreed_acc = f"{rep['agreed_accuracy']:.3f}" if rep["agreed"] else "n/a"
        lines += [
            f"agreement rate {rep['agreement_rate']:.1%} ({rep['agreed']} items, accuracy "
            f"{agreed_acc}); disagreements {rep['disagreed']}; one or both invalid "
            f"{rep['one_or_both_invalid']}",
        ]
        if d["n"]:
            lines += [
                f"ensemble + random tie-break accuracy {rep['accuracy_random_tiebreak']:.3f}   "
                f"ensemble + resolver accuracy {rep['accuracy']:.3f}",
                f"on the {d['n']} disagreements: accuracy {d['accuracy']:.3f}, macro-F1 "
                f"{d['macro_f1']:.3f} (random: {d['accuracy_random']:.3f} / "
                f"{d['macro_f1_random']:.3f})",
                f"  resolved by: {d['resolutions']}",
            ]
        else:  # undefined, not zero: nothing was deliberated
            lines.append("no disagreements in this sample: no deliberation ran")
    if "resolutions" in rep:
        lines += [
            "",
            f"resolutions (all items): {rep['resolutions']}",
            f"rounds used: {rep['rounds']}",
        ]
        if not rep["confidences"]:
            lines.append("confidences: none (no agent voted)")
        else:
            lines.append(
                f"confidences: {rep['confidences']} votes, "
                f"{rep['confidence_share_0.8_0.9']:.1%} in [0.8, 0.9]"
            )
            hist = rep["confidence_histogram"]
            top = max(hist.values()) or 1
            for k, v in hist.items():
                lines.append(f"  {k}  {'#' * round(30 * v / top):<30} {v}")
    return "\n".join(lines)
