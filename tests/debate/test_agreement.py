"""Agreement metrics against values computed by hand (worked out in the comments)."""

from __future__ import annotations

import json

import pytest

from argnb.debate.agreement import agreement, read_annotations, scheme_agreement, score_agreement
from argnb.errors import ArgnbError

# Two schemes x, y; four passages.       A (reference)   B (other)
A = {"1": {"x": None}, "2": {"x": None, "y": None}, "3": {}, "4": {"y": None}}
B = {"1": {"x": None}, "2": {"x": None}, "3": {"y": None}, "4": {"y": None}}


def test_set_metrics_by_hand():
    m = scheme_agreement(A, B, ["x", "y"])
    # Jaccard per passage: 1/1, 1/2, 0/1, 1/1 -> mean 2.5/4
    assert m.jaccard == 0.625
    # precision |A&B|/|B|: 1, 1, 0 (B found y, A nothing), 1 -> 0.75
    assert m.precision == 0.75
    # recall |A&B|/|A|: 1, 1/2, 0 (A empty, B not), 1 -> 0.625
    assert m.recall == 0.625
    # 8 decisions, 2 differ (passage 2: y; passage 3: y)
    assert m.hamming_loss == 0.25
    # pooled: A = 1 0 1 1 0 0 0 1, B = 1 0 1 0 0 1 0 1; p_o = 6/8; both 50% ones: p_e = 1/2
    # kappa = (0.75 - 0.5) / (1 - 0.5) = 0.5
    assert m.kappa_micro == 0.5
    # per scheme: x identical -> 1; y: A 0 1 0 1, B 0 0 1 1 -> p_o 1/2 = p_e -> 0; macro 0.5
    assert m.kappa_per_scheme == {"x": 1.0, "y": 0.0} and m.kappa_macro == 0.5
    # Krippendorff nominal, 2 coders, 16 values (8 ones, 8 zeros), 2 disagreeing units:
    # alpha = 1 - (n - 1) * (o01 + o10) / (2 n0 n1) = 1 - 15 * 4 / (2 * 8 * 8) = 0.53125
    assert m.alpha == pytest.approx(0.53125, abs=1e-4)


def test_perfect_and_constant_cases():
    same = scheme_agreement(A, A, ["x", "y"])
    assert (same.jaccard, same.hamming_loss, same.kappa_micro, same.alpha) == (1.0, 0.0, 1.0, 1.0)
    empty = {"1": {}, "2": {}}
    m = scheme_agreement(empty, empty, ["x"])
    # nothing found by anyone: Jaccard and precision 1 by convention, kappa/alpha undefined
    assert (m.jaccard, m.precision, m.kappa_micro, m.kappa_macro, m.alpha) == (
        1.0,
        1.0,
        None,
        None,
        None,
    )


def test_label_correlations_by_hand():
    ref = {
        "a": {"x": "poor"},
        "b": {"x": "general"},
        "c": {"x": "good"},
        "d": {"x": "excellent"},
        "e": {"x": None, "y": "good"},
    }
    other = {
        "a": {"x": "general"},
        "b": {"x": "poor"},
        "c": {"x": "excellent"},
        "d": {"x": "good"},
        "e": {"x": "good"},
    }
    s = score_agreement(ref, other)
    # pairs labelled on both sides: (1,2) (2,1) (3,4) (4,3); e is unscored in ref, y absent in other
    assert s.n == 4
    # deviations -1.5 -.5 .5 1.5 vs -.5 -1.5 1.5 .5: sum of products 3, sums of squares 5 -> 0.6
    assert s.pearson == pytest.approx(0.6) and s.spearman == pytest.approx(0.6)
    # 6 pairs: 4 concordant, 2 discordant -> tau = 2/6
    assert s.kendall == pytest.approx(1 / 3, abs=1e-4)
    assert score_agreement({"a": {"x": "good"}}, {"a": {"x": "good"}}).pearson is None


def _write(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_files_invalid_rows_and_missing_ids(tmp_path):
    ref = _write(tmp_path / "ref.jsonl", [{"id": k, "schemes": v} for k, v in A.items()])
    rows = [{"id": k, "schemes": v, "annotator": "m"} for k, v in B.items()]
    rows[0]["valid"] = False  # an invalid answer counts as "no scheme"
    rows.append({"id": "extra", "schemes": ["x"]})  # list form; not in the reference
    other = _write(tmp_path / "b.jsonl", rows)
    a = agreement(ref, other, ["x", "y"])
    assert a.invalid_other == 1 and a.only_other == 1 and a.schemes.n == 4
    assert a.schemes.jaccard == pytest.approx((0 + 0.5 + 0 + 1) / 4)
    assert "Jaccard" in str(a) and a.to_frame()["metric"].iloc[0].startswith("Jaccard")
    json.dumps(a.to_dict())


def test_bad_files(tmp_path):
    with pytest.raises(ArgnbError, match="unknown label"):
        read_annotations(_write(tmp_path / "x.jsonl", [{"id": 1, "schemes": {"x": "great"}}]))
    with pytest.raises(ArgnbError, match="no 'id'"):
        read_annotations(_write(tmp_path / "y.jsonl", [{"schemes": {}}]))
    a = _write(tmp_path / "a.jsonl", [{"id": 1, "schemes": {}}])
    b = _write(tmp_path / "b.jsonl", [{"id": 2, "schemes": {}}])
    with pytest.raises(ArgnbError, match="share no ids"):
        agreement(a, b)
