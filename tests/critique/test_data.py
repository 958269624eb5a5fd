"""Dataset type and loaders: our JSON Lines, ACORN-style exports, a class's ratings table."""

from __future__ import annotations

import json

import pytest

from argnb.critique.data import (
    CritiqueDataset,
    DataError,
    load,
    load_acorn,
    load_class_ratings,
    load_jsonl,
)
from argnb.critique.rubric import DIMENSIONS, Rating, canonical, clean_ratings


def test_example_data_is_varied_enough_for_the_metrics(examples: CritiqueDataset):
    groups = examples.by_position()
    assert len(groups) == 6 and len(examples) == 21
    sizes = sorted(len(v) for v in groups.values())
    assert sizes[0] == 1 and all(3 <= n <= 5 for n in sizes[1:])  # one single-critique position
    assert len(examples.raters()) >= 3
    for it in examples:
        assert len(it.ratings) >= 3
        assert all(set(r) == set(DIMENSIONS) for r in it.ratings.values())
    overall = [r["overall"] for r in examples.reference().values()]
    assert min(overall) < 0.05 and max(overall) > 0.6  # weak and strong critiques
    # raters disagree, sometimes by a lot
    spread = [
        max(r["overall"] for r in it.ratings.values())
        - min(r["overall"] for r in it.ratings.values())
        for it in examples
    ]
    assert max(spread) >= 0.15


def test_reference_mean_and_named_rater(examples: CritiqueDataset):
    it = examples["det-1"]
    mean = it.reference()
    assert mean["overall"] == pytest.approx((0.65 + 0.5 + 0.75 + 0.6) / 4)
    assert it.reference("dev")["overall"] == 0.6
    assert examples.reference("dev").keys() < examples.reference().keys()  # dev rated a subset


def test_rubric_names_and_validation():
    assert canonical("Dead weight") == "dead_weight" == canonical("dead-weight")
    assert canonical("single_issue") == "single_issue" and canonical("timestamp") is None
    assert clean_ratings({"overall": "0.5", "notes": "x", "clarity": None}) == {"overall": 0.5}
    with pytest.raises(ValueError, match="outside"):
        clean_ratings({"strength": 1.5})
    full = {d: 0.5 for d in DIMENSIONS}
    assert Rating.from_mapping({**full, "dead weight": 0.1}).dead_weight == 0.1
    assert Rating.from_mapping(full | {"centrality": 0.8}).refutation == pytest.approx(0.4)
    with pytest.raises(ValueError, match="lacks strength"):
        Rating.from_mapping({d: 0.5 for d in DIMENSIONS if d != "strength"})


def test_roundtrip_and_clear_errors(tmp_path, examples):
    p = examples.save_jsonl(tmp_path / "copy.jsonl")
    again = load_jsonl(p)
    assert again.ids == examples.ids and again["maj-3"].ratings == examples["maj-3"].ratings
    bad = tmp_path / "bad.jsonl"
    rec = {"position_id": "p", "position": "P", "critique_id": "c", "critique": "C"}
    bad.write_text(json.dumps({**rec, "ratings": {"ann": {"overall": 3}}}) + "\n")
    with pytest.raises(DataError, match=r"record 1.*outside"):
        load_jsonl(bad)
    bad.write_text(json.dumps(rec) + "\n" + json.dumps(rec) + "\n")
    with pytest.raises(DataError, match="duplicate critique_id 'c'"):
        load_jsonl(bad)
    bad.write_text("{not json\n")
    with pytest.raises(DataError, match=r"bad\.jsonl:1"):
        load_jsonl(bad)
    with pytest.raises(DataError, match="no such file"):
        load_jsonl(tmp_path / "missing.jsonl")


POSITION = "Free trade always benefits every country that takes part."
ACORN_RECORDS = [
    {
        "messages": [POSITION, "Workers in protected industries can lose out."],
        "ratings": {
            "R1": [
                {"centrality": 1, "strength": 0.2, "overall": 0.2, "dead weight": 0},
                {"centrality": 1, "strength": 0.4, "overall": 0.35, "dead weight": 0},
            ],
            "R2": [{"centrality": 0.8, "strength": 0.5, "overall": 0.4, "single issue": 1}],
        },
        "source": "hand-written",
    },
    {
        "messages": [{"role": "user", "content": POSITION}, {"content": "Comparative advantage."}],
        "ratings": {"R1": [{"overall": 0.0, "clarity": 0.3}], "R3": []},
    },
    {
        "messages": ["A different position.", "A critique of it."],
        "ratings": {"R2": {"overall": 0.7}},
    },
]


def test_load_acorn_release_shape(tmp_path):
    p = tmp_path / "release.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in ACORN_RECORDS) + "\n")
    data = load_acorn(p)
    assert data.ids == ["acorn-0", "acorn-1", "acorn-2"]
    first = data["acorn-0"]
    assert first.ratings["R1"] == {
        "centrality": 1.0,
        "strength": 0.4,
        "dead_weight": 0.0,
        "overall": 0.35,
    }  # the latest revision
    assert first.ratings["R2"]["single_issue"] == 1.0
    assert first.meta == {"source": "hand-written"}
    assert data["acorn-1"].critique == "Comparative advantage."
    assert "R3" not in data["acorn-1"].ratings  # a rater with no rating is left out
    # critiques of the same position text share a position id, others do not
    assert data["acorn-0"].position_id == data["acorn-1"].position_id != data["acorn-2"].position_id
    assert load_acorn(p, revision="first")["acorn-0"].ratings["R1"]["overall"] == 0.2
    assert load(p).ids == data.ids  # auto-detected


def test_load_acorn_yaml_and_json_exports(tmp_path):
    import yaml

    y = tmp_path / "sample.yaml"
    y.write_text(
        yaml.safe_dump(
            [
                {
                    "description": "case 1",
                    "vars": {"position": POSITION, "critique": "Some lose."},
                    "metadata": {"human_ratings": {"overall": 0.2, "dead_weight": 0.0}},
                }
            ]
        )
    )
    data = load(y)
    assert data.items[0].ratings == {"human": {"overall": 0.2, "dead_weight": 0.0}}
    j = tmp_path / "sample.json"
    j.write_text(json.dumps({"data": [{"argument": POSITION, "response": "R", "id": 17}]}))
    d2 = load(j)
    assert d2.ids == ["17"] and d2.items[0].position == POSITION and d2.items[0].ratings == {}
    y.write_text("- {vars: {position: only a position}}\n")
    with pytest.raises(DataError, match="record 1: no position and critique"):
        load(y)


def test_load_class_ratings(tmp_path):
    csv = tmp_path / "class.csv"
    csv.write_text(
        "student,critique_id,centrality,strength,dead weight,overall\n"
        "kim,det-1,1,0.7,0,0.6\n"
        "kim,det-2,0.2,,0,0.05\n"
        "lou,det-1,0.9,0.5,0.1,0.5\n"
    )
    table = load_class_ratings(csv)
    assert table == {
        "kim": {
            "det-1": {"centrality": 1.0, "strength": 0.7, "dead_weight": 0.0, "overall": 0.6},
            "det-2": {"centrality": 0.2, "dead_weight": 0.0, "overall": 0.05},
        },
        "lou": {"det-1": {"centrality": 0.9, "strength": 0.5, "dead_weight": 0.1, "overall": 0.5}},
    }
    csv.write_text("student,critique_id,overall\nkim,det-1,7\n")
    with pytest.raises(DataError, match=r"row 2 \(kim, det-1\)"):
        load_class_ratings(csv)
    csv.write_text("who,overall\nkim,0.5\n")
    with pytest.raises(DataError, match="learner column"):
        load_class_ratings(csv)


def test_example_class_table_scores_like_a_judge(examples):
    from argnb.critique.data import ASSETS
    from argnb.critique.metrics import score_many

    table = load_class_ratings(ASSETS / "class_ratings.csv")
    assert len(table) >= 3
    assert all(set(r) <= set(examples.ids) for r in table.values())
    df = score_many(examples, table, n_boot=50)
    assert list(df.index[-2:]) == ["mean baseline", "random judge"]
    assert set(table) <= set(df.index)
    assert df.loc[list(table), "custom_loss"].notna().all()
